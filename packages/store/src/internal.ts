/**
 * @a2a-discovery/store/internal: what the service (`@a2a-discovery/service`) shares with the store.
 *
 * NOT PUBLIC. No semver promise: any name here may change or disappear in a patch release. The
 * lint refuses this entry outside `packages/` (eslint.config.js).
 *
 * @module
 */
export { journalOrCounter } from './journal.js';
export { MAX_SHARED_TURNS } from './rollout-record.js';
