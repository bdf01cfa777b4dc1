/**
 * Safe fetching of agent cards: the allowlist ({@link HostPolicy}), the guarded connection every
 * outgoing request of discovery and of A2A calls goes through, and the bounded card fetcher.
 *
 * @module
 */
export { isCardUrl } from '../rules/urls.js';
export { HostPolicy, inlineCardKey, catalogCardUrl, isInlineCardKey, CATALOG_CARD_FRAGMENT, CARD_PATH, LEGACY_CARD_PATH } from './host-policy.js';
export type {  HostPolicyOptions, HostVerdict } from './host-policy.js';
export { exactOriginPolicy } from './host-policy.js';
export { isLoopbackHost, originOf, secureOrLoopback, inRangeOrigin, looksLikeRangeOrigin, parseRangeOrigin } from '../rules/origins.js';
export type { RangeOrigin } from '../rules/origins.js';
export { createGuardedLookup } from './address-guard.js';
export type {  ResolvedAddress, Resolver } from './address-guard.js';
export type { TrustedCa } from './guarded-connection.js';
export { toPeerCredentials } from '../rules/credentials.js';
export type { OriginCredentials, PeerCredentials, PresentableScheme, CredentialsInput } from '../rules/credentials.js';
export { createCardFetcher } from './card-fetcher.js';
export type { CardFetcher, CardFetcherOptions,  FetchResult } from './card-fetcher.js';
export { OriginBudget } from './origin-budget.js';
export type {  OriginBudgetStats } from './origin-budget.js';
export { NetworkOptionCheck } from './option-check.js';
export { redactUrl,  } from '../rules/redaction.js';
export { createDeploymentFetch, createGuardedFetch, createOriginFetch } from './guarded-fetch.js';
export type {  GuardedFetch,   } from './guarded-fetch.js';
export { readBoundedStream } from './body-cap.js';
