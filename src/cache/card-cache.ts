/**
 * `CardCache`: agent cards kept fresh with real HTTP caching, for the discovery loop (never a
 * user's request path).
 *
 * - Freshness follows RFC 9111 through http-cache-semantics (max-age, Age, Expires, the
 *   Last-Modified heuristic, no-cache, no-store); a server that says nothing gets the default
 *   lifetime; every lifetime is clamped to [minTtlMs, maxTtlMs] and shortened by jitter.
 * - Revalidation sends If-None-Match / If-Modified-Since; a 304 refreshes the entry's lifetime.
 * - Change is decided on the bytes: the same bytes keep the parsed card (an ETag that changes on
 *   every response changes nothing); new bytes are checked once.
 * - Single-flight: concurrent callers for one base URL share one request.
 * - Stale on error: a card seen before keeps being served, marked stale, with a failure counter
 *   and capped exponential backoff with jitter, for at most max(stale-if-error, maxStaleMs)
 *   past its expiry (none with must-revalidate). A never-seen endpoint that fails throws, and is
 *   retried on the same backoff.
 * - Invalid content is never stored. A valid card that matches no need is (matching is not the
 *   cache's business).
 * - Every decision is an event on the discovery event stream.
 */
import CachePolicy from 'http-cache-semantics';
import type { CheckCardOptions } from '../card/index.js';
import { checkCard, parseFailure, sha256Hex } from '../card/index.js';
import type { Clock, Random } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardOutcome, EventStream } from '../events/index.js';
import type { CardFetcher, FetchResult, HostPolicy } from '../fetch/index.js';
import { readDirectives } from './cache-control.js';
import type { CacheEntry, CardStore, EntryError } from './card-store.js';
import { MemoryCardStore } from './card-store.js';
import { Limiter } from './limiter.js';

export interface CardCacheOptions {
  /** The only way the cache reaches the network. */
  fetcher: CardFetcher;
  /** Normalizes base URLs, builds card URLs, and judges the interfaces inside cards. */
  hostPolicy: HostPolicy;
  store?: CardStore;
  clock?: Clock;
  random?: Random;
  events?: EventStream;
  /** Lifetime when the server gives none (no max-age, Expires or Last-Modified). Default 300,000. */
  defaultTtlMs?: number;
  /** Floor for every lifetime, protecting peers from `max-age=0` hammering. Default 30,000. */
  minTtlMs?: number;
  /** Ceiling for every lifetime. Default 3,600,000. */
  maxTtlMs?: number;
  /** Expiry is shortened by up to this fraction, at random, so entries do not expire together. Default 0.1. */
  expiryJitter?: number;
  /** First retry delay after a failure; doubles per consecutive failure. Default 5,000. */
  backoffBaseMs?: number;
  /** Cap of the retry delay. Default 300,000. */
  backoffMaxMs?: number;
  /** Each retry delay is shortened by up to this fraction, at random. Default 0.5. */
  backoffJitter?: number;
  /** How long past its expiry a card may be served stale after errors (unless must-revalidate). Default 3,600,000. */
  maxStaleMs?: number;
  /** Card fetches in flight at once, over all hosts. Default 32. */
  maxConcurrentFetches?: number;
  /**
   * Card fetches in flight at once to one origin. Default 1: a peer never sees parallel requests
   * from us. Raise it (with the fetcher's `maxConnectionsPerOrigin`) for one host serving many agents.
   */
  maxFetchesPerOrigin?: number;
  /** Content checks applied to every new body (limits, signatures, loopback exemption). */
  check?: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  /** Extra request headers. Default `{ 'a2a-version': '1.0' }` (1.x servers then return the plain 1.0 card). */
  requestHeaders?: Record<string, string>;
}

export interface RefreshOptions {
  /** Send no validators (periodic resync, catching servers that answer 304 wrongly). */
  unconditional?: boolean;
}

interface Target {
  cardUrl: string;
  origin: string;
}

const NO_PROBLEMS: readonly never[] = Object.freeze([]);

/** A copy of an entry with some fields changed, keeping the fixed shape. */
function withFields(e: CacheEntry, changes: Partial<CacheEntry>): CacheEntry {
  const n = { ...e, ...changes };
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
  };
}

/** The response headers http-cache-semantics reads; the others are not kept in the policy. */
const POLICY_HEADERS = ['cache-control', 'expires', 'date', 'age', 'last-modified', 'etag', 'vary', 'pragma'] as const;

function policyHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  // `Date` only matters against `Expires` or `Last-Modified`; otherwise it is not kept.
  const dated = headers.expires !== undefined || headers['last-modified'] !== undefined;
  for (const name of POLICY_HEADERS) {
    const v = headers[name];
    if (v !== undefined && (name !== 'date' || dated)) out[name] = v;
  }
  return out;
}

interface NeverSeenFailure {
  failures: number;
  nextAttemptAt: number;
  error: DiscoveryError;
}

/**
 * The card cache. No I/O in the constructor; `close()` waits for in-flight refreshes.
 *
 * @example
 * const cache = new CardCache({ fetcher, hostPolicy, events });
 * const entry = await cache.get('https://billing.example.com/'); // fresh, or refreshed once
 */
export class CardCache {
  readonly #o: Required<Omit<CardCacheOptions, 'events' | 'check'>> & Pick<CardCacheOptions, 'events' | 'check'>;
  readonly #inflight = new Map<string, Promise<CacheEntry>>();
  readonly #neverSeen = new Map<string, NeverSeenFailure>();
  readonly #limiter: Limiter;
  readonly #Policy: typeof CachePolicy;
  #closed = false;

  constructor(options: CardCacheOptions) {
    this.#o = {
      store: new MemoryCardStore(),
      clock: systemClock,
      random: systemRandom,
      defaultTtlMs: 300_000,
      minTtlMs: 30_000,
      maxTtlMs: 3_600_000,
      expiryJitter: 0.1,
      backoffBaseMs: 5_000,
      backoffMaxMs: 300_000,
      backoffJitter: 0.5,
      maxStaleMs: 3_600_000,
      maxConcurrentFetches: 32,
      maxFetchesPerOrigin: 1,
      requestHeaders: { 'a2a-version': '1.0' },
      ...options,
    };
    this.#limiter = new Limiter({ max: this.#o.maxConcurrentFetches, perKey: this.#o.maxFetchesPerOrigin });
    const clock = this.#o.clock;
    // http-cache-semantics reads time through `now()`; give it the injected clock.
    this.#Policy = class ClockedPolicy extends CachePolicy {
      // Not in @types/http-cache-semantics, but part of the library's contract ("monkey-patch it").
      now(): number {
        return clock.wallNow();
      }
    };
  }

  /** The normalized base URL used as the key (throws the host policy's refusal). */
  key(baseUrl: string): string {
    return this.#o.hostPolicy.normalizeBaseUrl(baseUrl);
  }

  /** The card URL and origin of a key (a normalized base URL: origin + path ending in `/`). */
  #target(key: string): Target {
    // For a normalized key the policy's card URL is the key plus the well-known path; it is
    // derived, not stored, so idle keys cost nothing.
    return { cardUrl: `${key}.well-known/agent-card.json`, origin: key.slice(0, key.indexOf('/', key.indexOf('//') + 2)) };
  }

  /**
   * A usable entry for the endpoint: a fresh one as is; otherwise one refresh (shared with
   * every concurrent caller). While a failing endpoint backs off, its stale entry is returned
   * without a request. Throws (a {@link DiscoveryError}) only when no card was ever obtained.
   */
  async get(baseUrl: string): Promise<CacheEntry> {
    const key = this.key(baseUrl);
    const running = this.#inflight.get(key);
    if (running) return running;
    const entry = await this.#o.store.get(key);
    const now = this.#o.clock.now();
    if (entry !== undefined) {
      if (!entry.stale && now < entry.expiresAt) {
        this.#emitResult(key, 'hit', { failures: entry.failures });
        return entry;
      }
      if (entry.nextAttemptAt !== undefined && now < entry.nextAttemptAt) return this.#withUsability(key, entry, now);
    } else {
      const failed = this.#neverSeen.get(key);
      if (failed !== undefined && now < failed.nextAttemptAt) throw failed.error;
    }
    return this.#startRefresh(key, {});
  }

  /** Refreshes now, whatever the entry's freshness or backoff (single-flight). */
  refresh(baseUrl: string, options: RefreshOptions = {}): Promise<CacheEntry> {
    return this.#startRefresh(this.key(baseUrl), options);
  }

  /** The entry as it stands, without any I/O. */
  async peek(baseUrl: string): Promise<CacheEntry | undefined> {
    const key = this.key(baseUrl);
    const entry = await this.#o.store.get(key);
    return entry && this.#withUsability(key, entry, this.#o.clock.now());
  }

  /** Whether a refresh is due: expired, or never fetched, and not backing off. */
  async isDue(baseUrl: string): Promise<boolean> {
    const key = this.key(baseUrl);
    if (this.#inflight.has(key)) return false;
    const entry = await this.#o.store.get(key);
    const now = this.#o.clock.now();
    if (entry === undefined) return now >= (this.#neverSeen.get(key)?.nextAttemptAt ?? -Infinity);
    if (entry.nextAttemptAt !== undefined) return now >= entry.nextAttemptAt;
    return now >= entry.expiresAt;
  }

  /** The last failure of an endpoint that never delivered a card. */
  lastFailure(baseUrl: string): { failures: number; nextAttemptAt: number; error: DiscoveryError } | undefined {
    return this.#neverSeen.get(this.key(baseUrl));
  }

  /** Forgets an endpoint (it left discovery). */
  async evict(baseUrl: string): Promise<void> {
    const key = this.key(baseUrl);
    this.#neverSeen.delete(key);
    await this.#o.store.delete(key);
  }

  /** Every cached entry, for the API and the dashboard. */
  async entries(): Promise<CacheEntry[]> {
    const out: CacheEntry[] = [];
    const now = this.#o.clock.now();
    for (const key of await this.#o.store.keys()) {
      const e = await this.#o.store.get(key);
      if (e) out.push(await this.#withUsability(key, e, now));
    }
    return out;
  }

  /** Fetches in flight now, and the most ever in flight at once. */
  get concurrency(): { running: number; peak: number; waiting: number } {
    return { running: this.#limiter.running, peak: this.#limiter.peak, waiting: this.#limiter.waiting };
  }

  /** Stops accepting refreshes and waits for those in flight. Does not close the injected fetcher. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inflight.values()]);
  }

  #startRefresh(key: string, options: RefreshOptions): Promise<CacheEntry> {
    if (this.#closed) return Promise.reject(new DiscoveryError('ERR_INTERNAL', 'the card cache is closed'));
    const running = this.#inflight.get(key);
    if (running) return running;
    const p = this.#refresh(key, options).finally(() => {
      if (this.#inflight.get(key) === p) this.#inflight.delete(key);
    });
    this.#inflight.set(key, p);
    return p;
  }

  async #refresh(key: string, options: RefreshOptions): Promise<CacheEntry> {
    const { clock, hostPolicy, fetcher } = this.#o;
    const old = await this.#o.store.get(key);
    const target = this.#target(key);
    // Keep one card URL string per endpoint (the one the entry and the fetcher already hold).
    const cardUrl = old?.cardUrl ?? target.cardUrl;
    const origin = target.origin;
    const headers: Record<string, string> = { accept: 'application/json', ...this.#o.requestHeaders };
    const conditional = old !== undefined && !options.unconditional && !old.noStore;
    if (conditional) {
      if (old.etag !== undefined) headers['if-none-match'] = old.etag;
      if (old.lastModified !== undefined) headers['if-modified-since'] = old.lastModified;
    }
    // http-cache-semantics needs a request; only its headers matter here (no Vary matching is done).
    const policyRequest = { url: cardUrl, method: 'GET', headers };
    this.#o.events?.emit({ type: 'card.fetch', endpoint: key, url: cardUrl, conditional: conditional && (old.etag ?? old.lastModified) !== undefined });

    let res: FetchResult;
    try {
      res = await this.#limiter.run(origin, () => fetcher.fetch(cardUrl, { headers }));
    } catch (err) {
      return this.#fail(key, old, toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: cardUrl, stage: 'fetch' }), 'stale');
    }
    const common = { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength };

    if (res.status === 304) {
      if (old === undefined || !conditional) {
        return this.#fail(key, old, statusError(res, cardUrl, 'answered 304 Not Modified to a request that had no validator'), 'stale', common);
      }
      const previous = new this.#Policy(policyRequest, { status: 200, headers: { ...old.cacheHeaders } }, { shared: false });
      const { policy, modified } = previous.revalidatedPolicy(policyRequest, { status: 304, headers: policyHeaders(res.headers) });
      // RFC 9111 §4.3.4: a 304 whose validators do not match the stored response says nothing
      // about it; fetch the full card instead.
      if (modified) return this.#refresh(key, { unconditional: true });
      const merged = policyHeaders(policy.responseHeaders() as Record<string, string>);
      return this.#store(key, this.#freshEntry(old, old, policy, merged, 'revalidated'), 'revalidated', common);
    }

    if (res.status !== 200) {
      const hint = res.status === 401 || res.status === 403 ? ' (the card endpoint wants credentials for this origin)' : '';
      return this.#fail(key, old, statusError(res, cardUrl, `answered HTTP ${res.status}${hint}`), 'stale', common);
    }

    const cacheHeaders = policyHeaders(res.headers);
    const policy = new this.#Policy(policyRequest, { status: 200, headers: cacheHeaders }, { shared: false });
    const rawSha256 = sha256Hex(res.body);
    if (old !== undefined && old.rawSha256 === rawSha256) {
      return this.#store(key, this.#freshEntry(old, old, policy, cacheHeaders, 'unchanged'), 'unchanged', { ...common, rawSha256 });
    }
    const check = await checkCard(res.body, { ...this.#o.check, hostPolicy, sourceUrl: cardUrl });
    if (!check.ok || check.card === undefined || check.protocolVersion === undefined || check.canonicalSha256 === undefined) {
      return this.#fail(key, old, parseFailure(check, cardUrl), 'invalid', { ...common, rawSha256 });
    }
    const card = {
      card: check.card,
      protocolVersion: check.protocolVersion,
      body: check.text ?? res.body.toString('utf8'),
      rawSha256,
      canonicalSha256: check.canonicalSha256,
      fetchedAtWall: clock.wallNow(),
      warnings: check.warnings.length > 0 ? check.warnings : NO_PROBLEMS,
      signature: check.signature?.status,
    };
    return this.#store(key, this.#freshEntry({ baseUrl: key, cardUrl }, card, policy, cacheHeaders, 'changed'), 'changed', { ...common, rawSha256 });
  }

  /** A successful entry with a fixed shape (no spreads of stored entries, so it stays compact). */
  #freshEntry(
    where: Pick<CacheEntry, 'baseUrl' | 'cardUrl'>,
    card: Pick<CacheEntry, 'card' | 'protocolVersion' | 'body' | 'rawSha256' | 'canonicalSha256' | 'fetchedAtWall' | 'warnings' | 'signature'>,
    policy: CachePolicy,
    cacheHeaders: Readonly<Record<string, string>>,
    outcome: CardOutcome,
  ): CacheEntry {
    const directives = readDirectives(cacheHeaders);
    return {
      baseUrl: where.baseUrl,
      cardUrl: where.cardUrl,
      card: card.card,
      protocolVersion: card.protocolVersion,
      body: card.body,
      rawSha256: card.rawSha256,
      canonicalSha256: card.canonicalSha256,
      etag: cacheHeaders.etag,
      lastModified: cacheHeaders['last-modified'],
      cacheHeaders,
      expiresAt: this.#o.clock.now() + this.#ttl(policy, directives.explicit),
      failures: 0,
      stale: false,
      usable: true,
      nextAttemptAt: undefined,
      lastOutcome: outcome,
      lastError: undefined,
      noStore: directives.noStore,
      mustRevalidate: directives.mustRevalidate || directives.noCache,
      staleIfErrorMs: directives.staleIfErrorSeconds * 1000,
      fetchedAtWall: card.fetchedAtWall,
      validatedAtWall: this.#o.clock.wallNow(),
      warnings: card.warnings,
      signature: card.signature,
    };
  }

  async #store(key: string, entry: CacheEntry, outcome: CardOutcome, detail: ResultDetail): Promise<CacheEntry> {
    await this.#o.store.set(key, entry);
    if (this.#neverSeen.size > 0) this.#neverSeen.delete(key);
    this.#emitResult(key, outcome, { ...detail, failures: 0 });
    return entry;
  }

  async #fail(
    key: string,
    old: CacheEntry | undefined,
    error: DiscoveryError,
    outcome: 'stale' | 'invalid',
    detail: ResultDetail = {},
  ): Promise<CacheEntry> {
    const now = this.#o.clock.now();
    const lastError = errorData(error);
    if (old !== undefined) {
      const failures = old.failures + 1;
      const delay = this.#backoff(failures);
      const entry: CacheEntry = this.#usable(withFields(old, { failures, stale: true, nextAttemptAt: now + delay, lastOutcome: outcome, lastError }), now);
      await this.#o.store.set(key, entry);
      this.#emitResult(key, outcome, { ...detail, failures, error });
      this.#o.events?.emit({ type: 'card.backoff', endpoint: key, failures, retryInMs: delay });
      return entry;
    }
    const failures = (this.#neverSeen.get(key)?.failures ?? 0) + 1;
    const delay = this.#backoff(failures);
    this.#neverSeen.set(key, { failures, nextAttemptAt: now + delay, error });
    this.#emitResult(key, outcome === 'invalid' ? 'invalid' : 'failed', { ...detail, failures, error });
    this.#o.events?.emit({ type: 'card.backoff', endpoint: key, failures, retryInMs: delay });
    throw error;
  }

  /** Freshness lifetime in ms: the server's (or the default), clamped, minus jitter. */
  #ttl(policy: CachePolicy, explicit: boolean): number {
    const { defaultTtlMs, minTtlMs, maxTtlMs, expiryJitter, random } = this.#o;
    // http-cache-semantics: maxAge() honours max-age, Expires against Date (so a skewed server
    // clock does not matter), the Last-Modified heuristic, no-cache and no-store; age() adds Age
    // and the time since receipt.
    const serverTtl = explicit ? Math.max(0, policy.maxAge() - policy.age()) * 1000 : defaultTtlMs;
    const clamped = Math.min(maxTtlMs, Math.max(minTtlMs, serverTtl));
    return clamped * (1 - expiryJitter * random());
  }

  /** Capped exponential backoff with jitter: base·2^(k-1), at most max, shortened at random. */
  #backoff(failures: number): number {
    const { backoffBaseMs, backoffMaxMs, backoffJitter, random } = this.#o;
    const d = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.min(failures - 1, 30));
    return d * (1 - backoffJitter * random());
  }

  /** Recomputes `usable` for a stale entry: stale use is bounded (RFC 5861, must-revalidate). */
  #usable(entry: CacheEntry, now: number): CacheEntry {
    if (!entry.stale) return entry.usable ? entry : withFields(entry, { usable: true });
    const bound = entry.mustRevalidate ? 0 : Math.max(entry.staleIfErrorMs, this.#o.maxStaleMs);
    const usable = now - entry.expiresAt <= bound;
    return usable === entry.usable ? entry : withFields(entry, { usable });
  }

  async #withUsability(key: string, entry: CacheEntry, now: number): Promise<CacheEntry> {
    const updated = this.#usable(entry, now);
    if (updated !== entry) await this.#o.store.set(key, updated);
    return updated;
  }

  #emitResult(key: string, outcome: CardOutcome, d: ResultDetail & { failures: number; error?: DiscoveryError }): void {
    const events = this.#o.events;
    if (!events) return;
    events.emit({
      type: 'card.result',
      endpoint: key,
      outcome,
      failures: d.failures,
      ...(d.status !== undefined && { status: d.status }),
      ...(d.durationMs !== undefined && { durationMs: d.durationMs }),
      ...(d.bytes !== undefined && { bytes: d.bytes }),
      ...(d.rawSha256 !== undefined && { rawSha256: d.rawSha256 }),
      ...(d.error && {
        code: d.error.code,
        reason: d.error.message,
        ...(d.error.stage !== undefined && { stage: d.error.stage }),
        ...(d.error.problems.length > 0 && { problems: d.error.problems }),
      }),
    });
  }
}

interface ResultDetail {
  status?: number;
  durationMs?: number;
  bytes?: number;
  rawSha256?: string;
}

function statusError(res: FetchResult, url: string, what: string): DiscoveryError {
  return new DiscoveryError('ERR_FETCH_STATUS', `${url} ${what}`, { url, stage: 'fetch', status: res.status });
}

function errorData(error: DiscoveryError): EntryError {
  return {
    code: error.code,
    message: error.message,
    ...(error.stage !== undefined && { stage: error.stage }),
    ...(error.status !== undefined && { status: error.status }),
    ...(error.problems.length > 0 && { problems: error.problems }),
  };
}
