/**
 * AI Catalog documents as the AI Catalog source caches and stores them: the entry type a catalog
 * cache (and `StateStore.catalogs`) holds.
 *
 * @module
 */
import type { CacheEntry } from '../cache/index.js';
import type { CachedAiCatalog } from '../catalog/index.js';

/** A cached AI Catalog document (see `StateStore.catalogs`). */
export type CatalogEntry = CacheEntry<CachedAiCatalog, string>;
