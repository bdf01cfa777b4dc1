/**
 * Per-endpoint health with consecutive-result thresholds (anti-flapping), and the active check
 * that calls each agent on a schedule.
 *
 * @module
 */
export { HealthTracker, isMember } from './health-tracker.js';
export type {   HealthStatus, HealthOptions, HealthObservation, HealthTransition } from './health-tracker.js';
export { ActiveCheck } from './active-check.js';
export type { ActiveCheckOptions, ActiveCheckResult, ActiveCheckErrorClass, ActiveCheckStats, ActiveCheckTarget } from './active-check.js';
