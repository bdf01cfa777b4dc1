/**
 * Staged rollouts of snapshots: what may be published at once, what rolls out by steps, and the
 * decisions taken on the figures of real calls.
 *
 * @module
 */
export { Rollouts } from './rollouts.js';
export type { RolloutPolicy, RolloutStatus, RolloutDecision, RolloutState, RolloutFigures } from './rollouts.js';
export { planRollout, rolloutBucket } from './rollout-plan.js';
export type { RolloutChange, RolloutTrigger } from './rollout-plan.js';
