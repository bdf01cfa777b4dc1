/**
 * `a2a-discovery/internal`: helpers the sibling packages (`@a2a-discovery/store`,
 * `@a2a-discovery/service`) share with the library, so that each rule is written once.
 *
 * **Not public.** Nothing here is covered by semantic versioning: names change or leave in any
 * release. Applications use the root entry `a2a-discovery` and its documented subpaths
 * (docs/library.md); the lint refuses this entry outside `packages/`.
 *
 * @packageDocumentation
 */
export { backoffDelay } from '../rules/backoff.js';
export type { BackoffOptions } from '../rules/backoff.js';
