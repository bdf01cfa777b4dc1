/**
 * Cache entries: each one built with every field named in one place (one fixed shape), the error
 * data an entry keeps, and its times — how long it is fresh (the server's lifetime or the default,
 * clamped, shortened by jitter), when a failing one is tried again (capped exponential backoff
 * with jitter) and how long past its expiry a stale one may still be served.
 *
 * @module
 */
import type CachePolicy from 'http-cache-semantics';
import type { Random } from '../clock/index.js';
import type { DiscoveryError } from '../errors.js';
import type { CacheEntry, EntryError } from './card-store.js';

/**
 * The one place every {@link CacheEntry} field is named: each entry is built here, so entries
 * keep one fixed shape (compact in memory) whatever object the fields come from.
 */
export function entryOf<C, V extends string>(n: CacheEntry<C, V>): CacheEntry<C, V> {
  return {
    baseUrl: n.baseUrl,
    cardUrl: n.cardUrl,
    card: n.card,
    protocolVersion: n.protocolVersion,
    body: n.body,
    rawSha256: n.rawSha256,
    canonicalSha256: n.canonicalSha256,
    etag: n.etag,
    lastModified: n.lastModified,
    cacheHeaders: n.cacheHeaders,
    varyRequest: n.varyRequest,
    conditional: n.conditional,
    expiresAt: n.expiresAt,
    failures: n.failures,
    stale: n.stale,
    usable: n.usable,
    nextAttemptAt: n.nextAttemptAt,
    lastOutcome: n.lastOutcome,
    lastError: n.lastError,
    noStore: n.noStore,
    mustRevalidate: n.mustRevalidate,
    staleIfErrorMs: n.staleIfErrorMs,
    fetchedAtWall: n.fetchedAtWall,
    validatedAtWall: n.validatedAtWall,
    warnings: n.warnings,
    signature: n.signature,
    extended: n.extended,
  };
}

/** A copy of an entry with some fields changed. */
export function withFields<C, V extends string>(e: CacheEntry<C, V>, changes: Partial<CacheEntry<C, V>>): CacheEntry<C, V> {
  return entryOf(Object.assign({}, e, changes));
}

/** What an entry keeps of an error. */
export function errorData(error: DiscoveryError): EntryError {
  return {
    code: error.code,
    message: error.message,
    ...(error.stage !== undefined && { stage: error.stage }),
    ...(error.status !== undefined && { status: error.status }),
    ...(error.problems.length > 0 && { problems: error.problems }),
  };
}

/** Freshness lifetime in ms: the server's (or the default), clamped, minus jitter. */
export function freshnessLifetime(
  policy: CachePolicy,
  explicit: boolean,
  o: { defaultTtlMs: number; minTtlMs: number; maxTtlMs: number; expiryJitter: number; random: Random },
): number {
  const { defaultTtlMs, minTtlMs, maxTtlMs, expiryJitter, random } = o;
  // http-cache-semantics: maxAge() honours max-age, Expires against Date (so a skewed server
  // clock does not matter), the Last-Modified heuristic, no-cache and no-store; age() adds Age
  // and the time since receipt.
  const serverTtl = explicit ? Math.max(0, policy.maxAge() - policy.age()) * 1000 : defaultTtlMs;
  const clamped = Math.min(maxTtlMs, Math.max(minTtlMs, serverTtl));
  return clamped * (1 - expiryJitter * random());
}

/** Capped exponential backoff with jitter: base·2^(k-1), at most max, shortened at random. */
export function retryDelay(failures: number, o: { backoffBaseMs: number; backoffMaxMs: number; backoffJitter: number; random: Random }): number {
  const { backoffBaseMs, backoffMaxMs, backoffJitter, random } = o;
  const d = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.min(failures - 1, 30));
  return d * (1 - backoffJitter * random());
}

/**
 * Recomputes `usable` for a stale entry: stale use is bounded (RFC 5861, must-revalidate), and
 * a `no-store` card is never served after a failed refresh (nothing of it was kept).
 */
export function usableEntry<C, V extends string>(entry: CacheEntry<C, V>, now: number, maxStaleMs: number): CacheEntry<C, V> {
  if (!entry.stale) return entry.usable ? entry : withFields(entry, { usable: true });
  const bound = entry.mustRevalidate ? 0 : Math.max(entry.staleIfErrorMs, maxStaleMs);
  const usable = !entry.noStore && now - entry.expiresAt <= bound;
  return usable === entry.usable ? entry : withFields(entry, { usable });
}
