/**
 * Staged rollouts of snapshots: what may be published at once, what rolls out by steps, and the
 * decisions taken on the figures of real calls.
 *
 * @module
 */
export { Rollouts, ALL_AGENTS } from './rollouts.js';
export type { RolloutPolicy, RolloutStatus, RolloutDecision, RolloutState, RolloutFigures, RolloutAction, RolloutsOptions } from './rollouts.js';
export { planRollout, rolloutBucket } from './rollout-plan.js';
export type { RolloutChange, RolloutPlan, RolloutTrigger } from './rollout-plan.js';
