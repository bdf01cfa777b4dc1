/**
 * Per-endpoint health with consecutive-result thresholds (anti-flapping).
 *
 * @module
 */
export { HealthTracker, isMember } from './health-tracker.js';
export type {   HealthStatus, HealthOptions, HealthObservation, HealthTransition } from './health-tracker.js';
