/**
 * The HTTP-caching card cache: freshness and revalidation (RFC 9111), single-flight refresh,
 * stale-on-error with capped, jittered backoff, and a pluggable store.
 *
 * @module
 */
export { CardCache } from './card-cache.js';
export type { CardCacheOptions, RefreshOptions } from './card-cache.js';
export { MemoryCardStore } from './card-store.js';
export type { CacheEntry, CardStore, EntryError } from './card-store.js';
export { readDirectives, parseCacheControl } from './cache-control.js';
export type { CacheDirectives } from './cache-control.js';
