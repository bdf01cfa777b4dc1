/**
 * Safe fetching of agent cards: the allowlist ({@link HostPolicy}), the guarded connection every
 * outgoing request of discovery and of A2A calls goes through, and the bounded card fetcher.
 *
 * @module
 */
export { isCardUrl } from '../rules/urls.js';
export { HostPolicy, inlineCardKey, catalogCardUrl, isInlineCardKey, CATALOG_CARD_FRAGMENT, CARD_PATH, LEGACY_CARD_PATH } from './host-policy.js';
export type { ConnectionPolicy, HostPolicyOptions, HostVerdict } from './host-policy.js';
export { exactOriginPolicy } from './host-policy.js';
export { isLoopbackHost, originOf, secureOrLoopback, inRangeOrigin, looksLikeRangeOrigin, parseRangeOrigin } from '../rules/origins.js';
export type { RangeOrigin } from '../rules/origins.js';
export { createGuardedLookup } from './address-guard.js';
export type { GuardedLookupOptions, ResolvedAddress, Resolver } from './address-guard.js';
export type { TrustedCa } from './guarded-connection.js';
export { toPeerCredentials } from '../rules/credentials.js';
export type { OriginCredentials, PeerCredentials, PresentableScheme, CredentialsInput } from '../rules/credentials.js';
export { createCardFetcher } from './card-fetcher.js';
export type { CardFetcher, CardFetcherOptions, FetchInit, FetchResult } from './card-fetcher.js';
export { OriginBudget } from './origin-budget.js';
export type { OriginBudgetOptions, OriginBudgetStats } from './origin-budget.js';
export { NetworkOptionCheck } from './option-check.js';
export { redactUrl, REDACTED } from '../rules/redaction.js';
export { createDeploymentFetch, createGuardedFetch, createOriginFetch } from './guarded-fetch.js';
export type { DeploymentFetchOptions, GuardedFetch, GuardedFetchOptions, OriginFetchOptions } from './guarded-fetch.js';
export { readBoundedStream } from './body-cap.js';
