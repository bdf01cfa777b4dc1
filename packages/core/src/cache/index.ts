/**
 * The HTTP-caching card cache: freshness and revalidation (RFC 9111), single-flight refresh,
 * stale-on-error with capped, jittered backoff, and a pluggable store.
 *
 * @module
 */
export { CardCache } from './card-cache.js';
export type { AcceptedContent, CacheContent, CardCacheOptions, DigestPins, RefreshOptions } from './card-cache.js';
export { acceptedEntry, MemoryCardStore, prefixedStore } from './card-store.js';
export type { CacheEntry, CardStore, EntryError,   } from './card-store.js';
export { cardKindOf, describeExtendedCardChange, effectiveEntry, extendedCardChange } from './extended-cards.js';
export type { ExtendedCardChange } from './extended-cards.js';
export { responseCacheControl } from './cache-control.js';
export { fetchWithLegacyFallback } from './well-known.js';
;
