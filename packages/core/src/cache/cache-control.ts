/**
 * What the card cache reads from a response's caching headers, all of it through
 * http-cache-semantics (no header parsing here): whether the response may be kept (RFC 9111
 * §5.2.2.5 `no-store`), whether it may be served stale after an error (§5.2.2.2
 * `must-revalidate`, §5.2.2.4 `no-cache`, RFC 5861 §4 `stale-if-error`) and whether it gave a
 * lifetime at all (§4.2.1, or the §4.2.2 Last-Modified heuristic).
 */
import type CachePolicy from 'http-cache-semantics';

export interface CacheDirectives {
  /** `no-store` (the policy is not storable): keep no validator, never serve it stale. */
  noStore: boolean;
  /** `must-revalidate` or `no-cache`: never serve it stale once expired (RFC 9111 §4.2.4). */
  mustRevalidate: boolean;
  /** Seconds a stale response may be used after an error (RFC 5861 §4), 0 when absent. */
  staleIfErrorSeconds: number;
  /** Whether the response said anything about its lifetime; otherwise the cache's default applies. */
  explicit: boolean;
}

/**
 * The Cache-Control directives of the response behind a policy, as http-cache-semantics parsed
 * them. The library has no public accessor for `must-revalidate` or `stale-if-error`; its
 * documented serialized form (`toObject()`, version 1) carries the parsed directives as `rescc`.
 */
export function responseCacheControl(policy: CachePolicy): Readonly<Record<string, string | boolean>> {
  return policy.toObject().rescc;
}

/**
 * Reads the directives of a private cache's policy. `proxy-revalidate` and `s-maxage` apply to
 * shared caches only (§5.2.2.8, §5.2.2.10) and are ignored here, as the policy ignores them.
 */
export function readDirectives(policy: CachePolicy): CacheDirectives {
  const cc = responseCacheControl(policy);
  const headers = policy.toObject().resh as Readonly<Record<string, string | undefined>>;
  const noStore = !policy.storable();
  // The library sets `no-cache` for `Pragma: no-cache` without Cache-Control (§5.4).
  const noCache = 'no-cache' in cc;
  const staleIfError = Number.parseInt(String(cc['stale-if-error'] ?? ''), 10);
  return {
    noStore,
    mustRevalidate: 'must-revalidate' in cc || noCache,
    staleIfErrorSeconds: Number.isFinite(staleIfError) && staleIfError > 0 ? staleIfError : 0,
    explicit:
      noStore ||
      noCache ||
      'max-age' in cc ||
      headers.expires !== undefined ||
      headers['last-modified'] !== undefined ||
      // §4.1: a stored response with `Vary: *` never matches a later request.
      headers.vary?.trim() === '*',
  };
}
