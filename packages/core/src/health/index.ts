/**
 * Per-endpoint health with consecutive-result thresholds (anti-flapping), from the card cache's
 * fetches and from real calls, and the active check that calls each agent on a schedule.
 *
 * @module
 */
export { HEALTH_STATES, HealthTracker, isMember } from './health-tracker.js';
export { ENDPOINT_CAUSES, causeOf, causeRefuses } from './endpoint-causes.js';
export type { EndpointCause } from './endpoint-causes.js';
export type { HealthStatus, HealthOptions, HealthObservation, HealthTransition } from './health-tracker.js';
export type { CallFiguresView } from './call-figures.js';
export { CallHealth } from './call-health.js';
export type { RecordedCall, AgentCallHealth } from './call-health.js';
export { ActiveCheck } from './active-check.js';
export type { ActiveCheckOptions, ActiveCheckResult, ActiveCheckErrorClass, ActiveCheckStats, ActiveCheckTarget } from './active-check.js';
