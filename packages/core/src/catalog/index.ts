/**
 * The AI Catalog (`application/ai-catalog+json`, Agent-Card/ai-catalog 1.x): reading a catalog
 * document, choosing among versions of an entry, and judging an entry's Trust Manifest. The
 * `aiCatalogSource` (sources/) fetches and walks catalogs with these; the service publishes its
 * own. See docs/sources.md ("AI Catalog") and docs/interop.md.
 *
 * @module
 */
export {
  A2A_CARD_MEDIA_TYPE,
  AI_CATALOG_MEDIA_TYPE,
  AI_CATALOG_SPEC_VERSION,
  AI_CATALOG_WELL_KNOWN_PATH,
  ARD_WELL_KNOWN_PATH,
  CATALOG_WELL_KNOWN_PATHS,
  DEFAULT_CATALOG_LIMITS,
  readAiCatalog,
  
} from './ai-catalog.js';
export type { AiCatalog, AiCatalogEntry, CachedAiCatalog, CatalogLimits, ReadCatalogResult } from './ai-catalog.js';
export { AIR_URN_PREFIX, airIdentifier, canonicalIdentifier, relativeIdentifierProblem, sameIdentifier } from './identifiers.js';
export { judgeTrustManifest } from './trust-manifest.js';
export type { ManifestVerdict,  } from './trust-manifest.js';
export { isSemanticVersion, selectVersions } from './versions.js';
export type { Versioned } from './versions.js';
export { Pacer } from './paced.js';
