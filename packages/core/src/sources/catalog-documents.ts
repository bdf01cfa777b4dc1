/**
 * AI Catalog documents as the AI Catalog source caches and stores them: the entry type a catalog
 * cache (and `StateStore.catalogs`) holds, the cache's content rule (a catalog read with its
 * bounds, its signature checked, its RFC 8785 digest), the digest of the rules a stored copy was
 * accepted under (the prefix of a source's keys in a shared store), and pruning a shared store.
 *
 * @module
 */
import type { AcceptedContent, CacheContent, CacheEntry, CardStore } from '../cache/index.js';
import type { SignatureOptions } from '../card/index.js';
import { canonicalJson, sha256Hex, verifyDetachedSignature } from '../card/index.js';
import type { CachedAiCatalog, CatalogLimits } from '../catalog/index.js';
import { readAiCatalogPaced } from '../catalog/ai-catalog.js';
import { Pacer, pacedCanonicalJson, pacedCanonicalSha256 } from '../catalog/paced.js';
import { DiscoveryError, type Problem } from '../errors.js';
import { SPAN } from '../telemetry/index.js';
import { CATALOG_DEFAULTS } from '../rules/defaults.js';

/** A cached AI Catalog document (see `StateStore.catalogs`). */
export type CatalogEntry = CacheEntry<CachedAiCatalog, string>;

/** The rules that decide whether a source accepts a catalog document. */
export interface AcceptanceRules {
  signatures: SignatureOptions;
  /** The source's own bound on a document's bytes, if it has one. */
  maxBytes: number | undefined;
  /** Entries one walk reads over every catalog. */
  maxEntries: number;
}

/**
 * Deletes from a shared catalog store (`StateStore.catalogs`) the entries under none of
 * `prefixes` (the `storePrefix` of the AI Catalog sources configured now): those of a
 * source removed from the configuration, or written under acceptance rules no longer in force.
 * Returns how many were deleted.
 *
 * @example
 * await pruneCatalogStore(state.catalogs, [source.storePrefix]);
 */
export async function pruneCatalogStore(store: CardStore<CatalogEntry>, prefixes: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const key of [...(await store.keys())]) {
    if (prefixes.some((p) => key.startsWith(p))) continue;
    await store.delete(key);
    deleted++;
  }
  return deleted;
}

/** What decides whether a catalog document is accepted, as a short digest (the middle of `AiCatalogSource.storePrefix`). */
export function acceptanceDigest(s: AcceptanceRules): string {
  const { mode = 'if-present', keys = [], algorithms = null, allowedJku = [] } = s.signatures;
  const trust = keys.map((k) => ({ kid: k.kid, jwk: canonicalJson(k.jwk), origins: k.origins ?? null }));
  const { maxBytes = null, maxEntries } = readerLimits(s);
  return sha256Hex(JSON.stringify({ mode, trust, algorithms, allowedJku, maxBytes, maxEntries })).slice(0, 16);
}

/** The bounds one catalog document is read under. It may list more than a walk reads (the walk stops at maxEntries with a problem). */
export function readerLimits(s: Omit<AcceptanceRules, 'signatures'>): { maxBytes?: number; maxEntries: number } {
  return { ...(s.maxBytes !== undefined && { maxBytes: s.maxBytes }), maxEntries: Math.max(s.maxEntries, CATALOG_DEFAULTS.maxEntries) };
}

/** The catalog cache's content: a catalog document, its signature checked. */
export function catalogContent(signatures: SignatureOptions, limits: { maxBytes?: number; maxEntries: number }): CacheContent<CachedAiCatalog, string> {
  return {
    span: SPAN.catalogRead,
    async check(body, url): Promise<AcceptedContent<CachedAiCatalog, string> | { ok: false; error: DiscoveryError }> {
      // Read, checked and digested in slices: a document of thousands of entries lets the event loop run.
      const pacer = new Pacer();
      // The fetcher already bounded the bytes (its maxBodyBytes); the source's own bound, when it has one, applies too.
      const read = await readAiCatalogPaced(body, { maxBytes: limits.maxBytes ?? body.byteLength, maxEntries: limits.maxEntries } satisfies CatalogLimits, pacer);
      if (!read.ok) return { ok: false, error: documentError(read.code, url, read.problems, 'is not a usable AI Catalog') };
      await pacer.tick();
      const signature = await verifyDetachedSignature(read.catalog.raw, { ...signatures, origin: url }, (value) => pacedCanonicalJson(value, pacer));
      if (!signature.ok) {
        const problems = signature.problems.length > 0 ? signature.problems : [{ path: 'signature', message: 'the catalog is not signed, and signatures are required for it' }];
        return { ok: false, error: documentError(signature.status === 'unsigned' ? 'ERR_SIGNATURE_MISSING' : 'ERR_SIGNATURE_INVALID', url, problems, 'is refused by its signature check', 'signature') };
      }
      await pacer.tick();
      let canonicalSha256: string;
      try {
        canonicalSha256 = await pacedCanonicalSha256(read.catalog.raw, pacer);
      } catch (err) {
        // A number JSON cannot hold (1e400) or another value RFC 8785 cannot write.
        return { ok: false, error: documentError('ERR_CARD_MALFORMED', url, [{ path: '$', message: `has no RFC 8785 form: ${err instanceof Error ? err.message : String(err)}` }], 'is not a usable AI Catalog') };
      }
      // Kept without its raw object (the cache holds the bytes): a third less to hold and to store.
      const { raw: _raw, ...document } = read.catalog;
      return {
        ok: true,
        card: Object.freeze(document),
        protocolVersion: read.catalog.specVersion,
        canonicalSha256,
        text: read.text,
        warnings: [...read.warnings, ...signature.problems],
        signature: signature.status,
        entries: document.entries.length,
      };
    },
  };
}

function documentError(code: DiscoveryError['code'], url: string, problems: readonly Problem[], what: string, stage: 'source' | 'signature' = 'source'): DiscoveryError {
  const shown = problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return new DiscoveryError(code, `catalog ${url} ${what}: ${shown}${more}`, { url, stage, path: problems[0]?.path ?? '$', problems });
}
