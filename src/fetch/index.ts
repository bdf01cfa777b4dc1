/**
 * Safe fetching of agent cards: the allowlist ({@link HostPolicy}), the connect-time address
 * guard and the bounded fetcher. The only code in the library that touches the network for
 * discovery.
 *
 * @module
 */
export { HostPolicy, isCardUrl, inlineCardKey, catalogCardUrl, isInlineCardKey, CATALOG_CARD_FRAGMENT, CARD_PATH, LEGACY_CARD_PATH } from './host-policy.js';
export type { HostPolicyOptions, HostVerdict } from './host-policy.js';
export { isLoopbackHost } from '../rules/origins.js';
export { createGuardedLookup, systemResolver } from './address-guard.js';
export type { GuardedLookupOptions, ResolvedAddress, Resolver } from './address-guard.js';
export { createCardFetcher } from './card-fetcher.js';
export type { CardFetcher, CardFetcherOptions, FetchResult } from './card-fetcher.js';
export { NetworkOptionCheck } from './option-check.js';
