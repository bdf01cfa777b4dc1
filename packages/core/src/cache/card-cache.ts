/**
 * `CardCache`: agent cards kept fresh with real HTTP caching, for the discovery loop (never a
 * user's request path).
 *
 * - Freshness follows RFC 9111 through http-cache-semantics (max-age, Age, Expires, the
 *   Last-Modified heuristic, no-cache, no-store); a server that says nothing gets the default
 *   lifetime; every lifetime is clamped to [minTtlMs, maxTtlMs] and shortened by jitter.
 * - Revalidation headers come from the stored policy (`revalidationHeaders`): none for
 *   `no-store`, for `Vary: *`, or when a `Vary`-nominated request header changed. A 304 updates
 *   the stored response only when its validators match it (RFC 9111 §4.3.4); one that carries no
 *   validator answers our conditional request about the one stored response. Otherwise the card
 *   is fetched in full.
 * - Card URLs: a base URL's card is at `.well-known/agent-card.json`; on a 404 there the A2A 0.2
 *   path `.well-known/agent.json` is tried, and the entry remembers which one answered. An
 *   endpoint given by its card URL is fetched exactly there.
 * - Change is decided on the bytes: the same bytes keep the parsed card (an ETag that changes on
 *   every response changes nothing); new bytes are checked once.
 * - Single-flight: concurrent callers for one base URL share one request.
 * - Stale on error: a card seen before keeps being served, marked stale, with a failure counter
 *   and capped exponential backoff with jitter, for at most max(stale-if-error, maxStaleMs)
 *   past its expiry (none with must-revalidate). A never-seen endpoint that fails throws, and is
 *   retried on the same backoff.
 * - Invalid content is never stored. A valid card that matches no need is (matching is not the
 *   cache's business).
 * - Pinned digests (`pins`, an AI Catalog's signed Trust Manifests): bytes with another SHA-256
 *   are refused (`ERR_DIGEST_MISMATCH`), and a stored entry contradicting its pin is not served.
 * - Every decision is an event on the discovery event stream.
 *
 * The cache is generic over what it holds (`content`): agent cards by default; the AI Catalog
 * source caches its catalogs with the same rules (`exactUrls`, its own reader).
 */
import CachePolicy from 'http-cache-semantics';
import type { AgentCardModel, CardProtocolVersion, CheckCardOptions } from '../card/index.js';
import { checkCard, parseFailure, sha256Hex } from '../card/index.js';
import type { Clock, Random } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';
import type { CardOutcome, CardResultEvent, EventInput, EventStream } from '../events/index.js';
import type { CardFetcher, FetchResult, HostPolicy } from '../fetch/index.js';
import { LEGACY_CARD_PATH } from '../fetch/index.js';
import { readDirectives } from './cache-control.js';
import type { CacheEntry, CardStore, EntryError } from './card-store.js';
import { MemoryCardStore } from './card-store.js';
import { Limiter } from './limiter.js';
import type { WellKnownFetch } from './well-known.js';
import { fetchWithLegacyFallback } from './well-known.js';

export interface CardCacheOptions<C = AgentCardModel, V extends string = CardProtocolVersion> {
  /** The only way the cache reaches the network. */
  fetcher: CardFetcher;
  /** Normalizes endpoint URLs, builds card URLs, and judges the interfaces inside cards. */
  hostPolicy: HostPolicy;
  store?: CardStore<CacheEntry<C, V>>;
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
  /**
   * For an endpoint given by base URL, try the A2A 0.2 path `.well-known/agent.json` when
   * `.well-known/agent-card.json` answers 404 (and the other way round once an endpoint answered
   * at agent.json). Default true.
   */
  legacyCardPath?: boolean;
  /**
   * `'each'` (default): one `card.result` event per fresh hit. `'counted'`: hits are counted per
   * endpoint and published together once the current burst of calls is over (one event per
   * endpoint with `count`), so a hit costs a counter, not an event (the service's setting).
   */
  hitEvents?: 'each' | 'counted';
  /**
   * What the cached documents are and how new bytes are judged. Default: agent cards, through
   * `checkCard` with `check` (parse, schema, interface policy, signatures). A catalog source
   * caches its catalogs with the same HTTP rules by giving its own reader here.
   */
  content?: CacheContent<C, V>;
  /**
   * Keys are exact document URLs (`HostPolicy.normalizeDocumentUrl`: path and query as given),
   * never base URLs with a well-known path under them. For caches of other documents (catalogs).
   * Default false.
   */
  exactUrls?: boolean;
  /**
   * Digests publishers pinned for some endpoints (an AI Catalog's signed Trust Manifest): a body
   * whose SHA-256 differs is refused as invalid (`ERR_DIGEST_MISMATCH`, never stored), and a
   * stored entry that does not match its pin is neither served as fresh nor kept.
   */
  pins?: DigestPins;
}

/** A document accepted by {@link CacheContent}: the fields an entry takes from it. */
export interface AcceptedContent<C, V extends string> {
  readonly ok: true;
  readonly card: C;
  readonly protocolVersion: V;
  readonly canonicalSha256: string;
  /** The body as text, when the reader decoded it (else the bytes are decoded as UTF-8). */
  readonly text?: string | undefined;
  readonly warnings: readonly Problem[];
  /** A signature verdict, when one ran. */
  readonly signature?: string | undefined;
}

/** How a cache judges a new body: accept it, or refuse it with the error to report. */
export interface CacheContent<C, V extends string> {
  check(body: Buffer, url: string): Promise<AcceptedContent<C, V> | { readonly ok: false; readonly error: DiscoveryError }>;
}

/** Expected SHA-256 digests per endpoint key. */
export interface DigestPins {
  /** The pin on an endpoint, or undefined. Called on every refresh, and on reads while any pin exists. */
  pinFor(key: string): { readonly sha256: string; readonly from: string } | undefined;
  /** How many pins there are (0: reads skip the check). */
  readonly size: number;
}

export interface RefreshOptions {
  /** Send no validators (periodic resync, catching servers that answer 304 wrongly). */
  unconditional?: boolean;
}

const NO_PROBLEMS: readonly never[] = Object.freeze([]);
const NO_DETAIL: ResultDetail = Object.freeze({});

/**
 * The one place every {@link CacheEntry} field is named: each entry is built here, so entries
 * keep one fixed shape (compact in memory) whatever object the fields come from.
 */
function entryOf<C, V extends string>(n: CacheEntry<C, V>): CacheEntry<C, V> {
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
  };
}

/** A copy of an entry with some fields changed. */
function withFields<C, V extends string>(e: CacheEntry<C, V>, changes: Partial<CacheEntry<C, V>>): CacheEntry<C, V> {
  return entryOf(Object.assign({}, e, changes));
}

/** The origin of a normalized endpoint URL (scheme://host[:port], no path). */
function originOf(key: string): string {
  return key.slice(0, key.indexOf('/', key.indexOf('//') + 2));
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
export class CardCache<C = AgentCardModel, V extends string = CardProtocolVersion> {
  readonly #o: Required<Omit<CardCacheOptions<C, V>, 'events' | 'check' | 'content' | 'pins'>> & Pick<CardCacheOptions<C, V>, 'events' | 'check' | 'pins'>;
  readonly #content: CacheContent<C, V>;
  readonly #inflight = new Map<string, Promise<CacheEntry<C, V>>>();
  readonly #neverSeen = new Map<string, NeverSeenFailure>();
  readonly #limiter: Limiter;
  readonly #Policy: typeof CachePolicy;
  /** The headers of every card request (validators are added per entry). */
  readonly #requestHeaders: Readonly<Record<string, string>>;
  /** Counted hits not yet published, per endpoint (`hitEvents: 'counted'`); at most one per entry. */
  readonly #pendingHits = new Map<string, number>();
  #hitFlush: NodeJS.Immediate | undefined;
  /** `hitEvents: 'counted'` with an event stream: a hit is a counter. */
  readonly #countHits: boolean;
  #closed = false;

  constructor(options: CardCacheOptions<C, V>) {
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
      legacyCardPath: true,
      hitEvents: 'each',
      exactUrls: false,
      ...options,
    };
    this.#content = options.content ?? (cardContent(options.hostPolicy, options.check) as unknown as CacheContent<C, V>);
    this.#limiter = new Limiter({ max: this.#o.maxConcurrentFetches, perKey: this.#o.maxFetchesPerOrigin });
    this.#requestHeaders = Object.freeze({ accept: 'application/json', ...this.#o.requestHeaders });
    this.#countHits = this.#o.hitEvents === 'counted' && this.#o.events !== undefined;
    const clock = this.#o.clock;
    // http-cache-semantics reads time through `now()`; give it the injected clock.
    this.#Policy = class ClockedPolicy extends CachePolicy {
      // Not in @types/http-cache-semantics, but part of the library's contract ("monkey-patch it").
      now(): number {
        return clock.wallNow();
      }
    };
  }

  /**
   * The key of an endpoint: its normalized base URL, or, for a URL whose path ends in `.json`,
   * its normalized card URL (see `HostPolicy.normalizeEndpoint`). Throws the policy's refusal.
   */
  key(endpoint: string): string {
    return this.#o.exactUrls ? this.#o.hostPolicy.normalizeDocumentUrl(endpoint) : this.#o.hostPolicy.normalizeEndpoint(endpoint);
  }

  /**
   * A usable entry for the endpoint: a fresh one as is; otherwise one refresh (shared with
   * every concurrent caller). While a failing endpoint backs off, its stale entry is returned
   * without a request. Throws (a {@link DiscoveryError}) only when no card was ever obtained.
   */
  async get(baseUrl: string): Promise<CacheEntry<C, V>> {
    const key = this.key(baseUrl);
    const stored = this.#o.store.get(key);
    // A synchronous store (the memory store) is not awaited: a fresh hit costs no extra turn.
    const entry = stored instanceof Promise ? await stored : stored;
    const now = this.#o.clock.now();
    // A fresh entry is the answer as it stands, even while a forced refresh of it runs.
    if (entry !== undefined && !entry.stale && now < entry.expiresAt && !this.#pinBroken(key, entry)) return this.#hit(key, entry);
    const running = this.#inflight.get(key);
    if (running) return running;
    if (entry !== undefined && !this.#pinBroken(key, entry)) {
      if (entry.nextAttemptAt !== undefined && now < entry.nextAttemptAt) return this.#withUsability(key, entry, now);
    } else {
      const failed = this.#neverSeen.get(key);
      if (failed !== undefined && now < failed.nextAttemptAt) throw failed.error;
    }
    return this.#startRefresh(key, {});
  }

  /**
   * The entry when it is fresh, synchronously, counted as a hit exactly as {@link get} would
   * answer it; undefined when `get()` would have to do more (refresh, backoff, an asynchronous
   * store). Lets a caller with many endpoints skip a promise per fresh one.
   */
  fresh(baseUrl: string): CacheEntry<C, V> | undefined {
    const key = this.key(baseUrl);
    const entry = this.#o.store.get(key);
    if (entry === undefined || entry instanceof Promise || entry.stale || this.#o.clock.now() >= entry.expiresAt || this.#pinBroken(key, entry)) return undefined;
    return this.#hit(key, entry);
  }

  /** Whether a stored entry's bytes contradict a pin on its endpoint (it is then refreshed, never served). */
  #pinBroken(key: string, entry: CacheEntry<C, V>): boolean {
    const pins = this.#o.pins;
    if (pins === undefined || pins.size === 0) return false;
    const pin = pins.pinFor(key);
    return pin !== undefined && pin.sha256 !== entry.rawSha256;
  }

  #hit(key: string, entry: CacheEntry<C, V>): CacheEntry<C, V> {
    if (this.#countHits) this.#countHit(key);
    else this.#emitResult(key, 'hit', NO_DETAIL, entry.failures);
    return entry;
  }

  /** Refreshes now, whatever the entry's freshness or backoff (single-flight). */
  refresh(baseUrl: string, options: RefreshOptions = {}): Promise<CacheEntry<C, V>> {
    return this.#startRefresh(this.key(baseUrl), options);
  }

  /** The entry as it stands, without any I/O. */
  async peek(baseUrl: string): Promise<CacheEntry<C, V> | undefined> {
    const key = this.key(baseUrl);
    const entry = await this.#o.store.get(key);
    return entry && this.#withUsability(key, entry, this.#o.clock.now());
  }

  /** The last failure of an endpoint that never delivered a card. */
  lastFailure(baseUrl: string): { failures: number; nextAttemptAt: number; error: DiscoveryError } | undefined {
    return this.#neverSeen.get(this.key(baseUrl));
  }

  /** Forgets an endpoint (it left discovery). */
  async evict(baseUrl: string): Promise<void> {
    await this.forgetKey(this.key(baseUrl));
  }

  /**
   * Forgets a key exactly as given (one {@link key} or an entry's `baseUrl` gave), without judging
   * it again: an endpoint on a host the allowlist no longer names can be forgotten too.
   */
  async forgetKey(key: string): Promise<void> {
    this.#neverSeen.delete(key);
    await this.#o.store.delete(key);
  }

  /** Every cached entry, for the API and the dashboard. */
  async entries(): Promise<CacheEntry<C, V>[]> {
    const out: CacheEntry<C, V>[] = [];
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

  /** Publishes the hits counted so far (`hitEvents: 'counted'`); runs by itself after each burst. */
  flushHits(): void {
    if (this.#hitFlush !== undefined) clearImmediate(this.#hitFlush);
    this.#hitFlush = undefined;
    const events = this.#o.events;
    if (events !== undefined) for (const [endpoint, count] of this.#pendingHits) events.emit({ type: 'card.result', endpoint, outcome: 'hit', failures: 0, count });
    this.#pendingHits.clear();
  }

  /** Stops accepting refreshes and waits for those in flight. Does not close the injected fetcher. */
  async close(): Promise<void> {
    this.flushHits();
    this.#closed = true;
    await Promise.allSettled([...this.#inflight.values()]);
  }

  #startRefresh(key: string, options: RefreshOptions): Promise<CacheEntry<C, V>> {
    if (this.#closed) return Promise.reject(new DiscoveryError('ERR_INTERNAL', 'the card cache is closed'));
    const running = this.#inflight.get(key);
    if (running) return running;
    const p = this.#refresh(key, options).finally(() => {
      if (this.#inflight.get(key) === p) this.#inflight.delete(key);
    });
    this.#inflight.set(key, p);
    return p;
  }

  async #refresh(key: string, options: RefreshOptions): Promise<CacheEntry<C, V>> {
    const { hostPolicy, fetcher, events } = this.#o;
    const stored = await this.#o.store.get(key);
    // A pinned endpoint keeps nothing that does not match its pin: such an entry is forgotten,
    // and the card is fetched unconditionally.
    const pin = this.#o.pins?.pinFor(key);
    const pinned = pin !== undefined && stored !== undefined && stored.rawSha256 !== pin.sha256 ? undefined : stored;
    if (pinned !== stored) await this.#o.store.delete(key);
    const old = pinned;
    // A base URL ends in `/`; anything else is a card URL given directly (or a card inside a
    // catalog, whose key has a fragment), fetched exactly there.
    const wellKnown = !this.#o.exactUrls && key.endsWith('/') && !key.includes('#');
    // Keep one card URL string per endpoint (the one the entry and the fetcher already hold).
    const cardUrl = old?.cardUrl ?? (wellKnown ? hostPolicy.cardUrl(key) : key);
    const plain = this.#requestHeaders;
    // RFC 9111 §4.3.1: validators come from the stored response, and only when it may be reused
    // for this request (none for no-store, `Vary: *`, or a changed Vary-nominated header).
    const revalidating = old !== undefined && !options.unconditional ? old : undefined;
    // The validators http-cache-semantics derived for our request when the entry was stored; the
    // stored policy is rebuilt only when they depend on the request (Vary) or were not kept.
    const storedPolicy = revalidating !== undefined && !isPrecomputed(revalidating) ? this.#storedPolicy(revalidating, { url: cardUrl, method: 'GET', headers: plain }) : undefined;
    const headers =
      revalidating === undefined
        ? plain
        : storedPolicy !== undefined
          ? // Our request headers are all strings, so the revalidation headers are too.
            (storedPolicy.revalidationHeaders({ url: cardUrl, method: 'GET', headers: plain }) as Record<string, string>)
          : withConditional(plain, revalidating.conditional!);
    const conditional = headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined;
    // A2A 0.2 served the card at agent.json: on a 404 try the other well-known path, unconditionally.
    const otherUrl = wellKnown && this.#o.legacyCardPath ? () => hostPolicy.cardUrl(key, { legacyPath: !cardUrl.endsWith(LEGACY_SUFFIX) }) : undefined;

    let url: string;
    let res: FetchResult;
    let fallback: WellKnownFetch['fallback'];
    try {
      ({ cardUrl: url, res, fallback } = await this.#limiter.run(originOf(key), () =>
        fetchWithLegacyFallback(cardUrl, otherUrl, (u, first) => {
          events?.emit({ type: 'card.fetch', endpoint: key, url: u, conditional: first && conditional });
          return fetcher.fetch(u, { headers: first ? headers : plain });
        }),
      ));
    } catch (err) {
      return this.#fail(key, old, toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: cardUrl, stage: 'fetch' }), 'stale');
    }
    const common = { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength };

    if (res.status === 304) {
      if (revalidating === undefined || !conditional || url !== cardUrl) {
        return this.#fail(key, old, statusError(res, url, 'answered 304 Not Modified to a request that had no validator'), 'stale', common);
      }
      let answer = policyHeaders(res.headers);
      // RFC 9111 §4.3.4: a 304 updates the stored response only if its validators match it. One
      // that carries no validator at all answers the conditional request we sent about the one
      // stored response (we keep one per card URL), so it is read as carrying that response's.
      if (answer.etag === undefined && answer['last-modified'] === undefined) answer = Object.assign(answer, validatorsOf(revalidating.cacheHeaders));
      const request = { url: cardUrl, method: 'GET', headers };
      let policy: CachePolicy;
      if (storedPolicy === undefined && sameValidators(answer, revalidating.cacheHeaders)) {
        // The 304 repeats the stored validators, which http-cache-semantics always selects: build
        // the updated policy directly, as its revalidatedPolicy() would (one policy, not two).
        policy = new this.#Policy(request, { status: 200, headers: updatedHeaders(revalidating.cacheHeaders, answer) }, { shared: false });
      } else {
        const updated = (storedPolicy ?? this.#storedPolicy(revalidating, request)).revalidatedPolicy(request, { status: 304, headers: answer });
        // A 304 for another representation says nothing about ours: fetch the whole card.
        if (!updated.matches) return this.#refresh(key, { unconditional: true });
        policy = updated.policy;
      }
      const merged = policyHeaders(policy.responseHeaders() as Record<string, string>);
      return this.#store(key, this.#freshEntry(revalidating, policy, merged, request, 'revalidated'), 'revalidated', common);
    }

    if (res.status !== 200) {
      const hint = res.status === 401 || res.status === 403 ? ' (the card endpoint wants credentials for this origin)' : '';
      const tried = fallback === undefined ? '' : ` (and ${fallback.url} answered ${fallback.status === undefined ? 'with a network error' : `HTTP ${fallback.status}`})`;
      return this.#fail(key, old, statusError(res, url, `answered HTTP ${res.status}${hint}${tried}`), 'stale', common);
    }

    const request = { url, method: 'GET', headers: url === cardUrl ? headers : plain };
    const cacheHeaders = policyHeaders(res.headers);
    const policy = new this.#Policy(request, { status: 200, headers: cacheHeaders }, { shared: false });
    const rawSha256 = sha256Hex(res.body);
    if (pin !== undefined && pin.sha256 !== rawSha256) {
      const error = new DiscoveryError(
        'ERR_DIGEST_MISMATCH',
        `${url}: the card's SHA-256 is ${rawSha256}, but its publisher pinned ${pin.sha256} (${pin.from}); the card is refused`,
        { url, stage: 'signature', path: '$', problems: [{ path: '$', message: `SHA-256 ${rawSha256} differs from the pinned ${pin.sha256} (${pin.from})` }] },
      );
      return this.#fail(key, pinned, error, 'invalid', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256, expectedSha256: pin.sha256 });
    }
    const where = { baseUrl: key, cardUrl: url };
    if (old !== undefined && old.rawSha256 === rawSha256) {
      return this.#store(key, this.#freshEntry(Object.assign({}, old, where), policy, cacheHeaders, request, 'unchanged'), 'unchanged', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256 });
    }
    let check: Awaited<ReturnType<CacheContent<C, V>['check']>>;
    try {
      check = await this.#content.check(res.body, url);
    } catch (err) {
      // A reader that throws refuses the body like any invalid one: backoff, the last good entry kept.
      check = { ok: false, error: toDiscoveryError(err, 'ERR_CARD_INVALID', { url, stage: 'parse' }) };
    }
    if (!check.ok) return this.#fail(key, old, check.error, 'invalid', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256 });
    const card = {
      ...where,
      card: check.card,
      protocolVersion: check.protocolVersion,
      body: check.text ?? res.body.toString('utf8'),
      rawSha256,
      canonicalSha256: check.canonicalSha256,
      fetchedAtWall: this.#o.clock.wallNow(),
      warnings: check.warnings.length > 0 ? check.warnings : NO_PROBLEMS,
      signature: check.signature,
    };
    return this.#store(key, this.#freshEntry(card, policy, cacheHeaders, request, 'changed'), 'changed', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256, warnings: card.warnings });
  }

  /** The policy of the stored response, as it was received for the request it answered. */
  #storedPolicy(old: CacheEntry<C, V>, request: PolicyRequest): CachePolicy {
    return new this.#Policy({ ...request, headers: old.varyRequest ?? request.headers }, { status: 200, headers: { ...old.cacheHeaders } }, { shared: false });
  }

  /**
   * A successful entry: the card fields from `card` (the stored entry on a 304 or the same
   * bytes), the rest from the response's policy.
   */
  #freshEntry(
    card: Pick<CacheEntry<C, V>, 'baseUrl' | 'cardUrl' | 'card' | 'protocolVersion' | 'body' | 'rawSha256' | 'canonicalSha256' | 'fetchedAtWall' | 'warnings' | 'signature'>,
    policy: CachePolicy,
    responseHeaders: Readonly<Record<string, string>>,
    request: PolicyRequest,
    outcome: CardOutcome,
  ): CacheEntry<C, V> {
    const directives = readDirectives(policy);
    // RFC 9111 §5.2.2.5 no-store: no validator is kept, so none is ever sent for this card.
    const cacheHeaders = directives.noStore ? withoutValidators(responseHeaders) : responseHeaders;
    // §4.1: the request headers the response varies on are compared on the next request.
    const varies = cacheHeaders.vary !== undefined && !directives.noStore;
    const { clock } = this.#o;
    return entryOf({
      baseUrl: card.baseUrl,
      cardUrl: card.cardUrl,
      card: card.card,
      protocolVersion: card.protocolVersion,
      body: card.body,
      rawSha256: card.rawSha256,
      canonicalSha256: card.canonicalSha256,
      etag: cacheHeaders.etag,
      lastModified: cacheHeaders['last-modified'],
      cacheHeaders,
      varyRequest: varies ? request.headers : undefined,
      // The next request's validators, as the library derives them from this policy (§4.3.1);
      // with Vary they depend on that request, so the policy is rebuilt then.
      conditional: varies ? undefined : conditionalOf(policy.revalidationHeaders({ url: request.url, method: request.method, headers: this.#requestHeaders })),
      expiresAt: clock.now() + this.#ttl(policy, directives.explicit),
      failures: 0,
      stale: false,
      usable: true,
      nextAttemptAt: undefined,
      lastOutcome: outcome,
      lastError: undefined,
      noStore: directives.noStore,
      mustRevalidate: directives.mustRevalidate,
      staleIfErrorMs: directives.staleIfErrorSeconds * 1000,
      fetchedAtWall: card.fetchedAtWall,
      validatedAtWall: clock.wallNow(),
      warnings: card.warnings,
      signature: card.signature,
    });
  }

  async #store(key: string, entry: CacheEntry<C, V>, outcome: CardOutcome, detail: ResultDetail): Promise<CacheEntry<C, V>> {
    await this.#o.store.set(key, entry);
    if (this.#neverSeen.size > 0) this.#neverSeen.delete(key);
    this.#emitResult(key, outcome, detail, 0);
    return entry;
  }

  async #fail(
    key: string,
    old: CacheEntry<C, V> | undefined,
    error: DiscoveryError,
    outcome: 'stale' | 'invalid',
    detail: ResultDetail = {},
  ): Promise<CacheEntry<C, V>> {
    const now = this.#o.clock.now();
    const lastError = errorData(error);
    if (old !== undefined) {
      const failures = old.failures + 1;
      const delay = this.#backoff(failures);
      const entry: CacheEntry<C, V> = this.#usable(withFields(old, { failures, stale: true, nextAttemptAt: now + delay, lastOutcome: outcome, lastError }), now);
      await this.#o.store.set(key, entry);
      this.#emitResult(key, outcome, detail, failures, error);
      this.#o.events?.emit({ type: 'card.backoff', endpoint: key, failures, retryInMs: delay });
      return entry;
    }
    const failures = (this.#neverSeen.get(key)?.failures ?? 0) + 1;
    const delay = this.#backoff(failures);
    this.#neverSeen.set(key, { failures, nextAttemptAt: now + delay, error });
    this.#emitResult(key, outcome === 'invalid' ? 'invalid' : 'failed', detail, failures, error);
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

  /**
   * Recomputes `usable` for a stale entry: stale use is bounded (RFC 5861, must-revalidate), and
   * a `no-store` card is never served after a failed refresh (nothing of it was kept).
   */
  #usable(entry: CacheEntry<C, V>, now: number): CacheEntry<C, V> {
    if (!entry.stale) return entry.usable ? entry : withFields(entry, { usable: true });
    const bound = entry.mustRevalidate ? 0 : Math.max(entry.staleIfErrorMs, this.#o.maxStaleMs);
    const usable = !entry.noStore && now - entry.expiresAt <= bound;
    return usable === entry.usable ? entry : withFields(entry, { usable });
  }

  async #withUsability(key: string, entry: CacheEntry<C, V>, now: number): Promise<CacheEntry<C, V>> {
    const updated = this.#usable(entry, now);
    if (updated !== entry) await this.#o.store.set(key, updated);
    return updated;
  }

  #countHit(key: string): void {
    const n = this.#pendingHits.get(key);
    this.#pendingHits.set(key, n === undefined ? 1 : n + 1);
    if (this.#hitFlush === undefined) {
      this.#hitFlush = setImmediate(() => this.flushHits());
      this.#hitFlush.unref();
    }
  }

  #emitResult(key: string, outcome: CardOutcome, d: ResultDetail, failures: number, error?: DiscoveryError): void {
    const events = this.#o.events;
    if (!events) return;
    // Built field by field: object spreads cost microseconds per event on Node 20 (see EventStream.emit).
    const e: EventInput<CardResultEvent> = { type: 'card.result', endpoint: key, outcome, failures };
    if (d.status !== undefined) e.status = d.status;
    if (d.durationMs !== undefined) e.durationMs = d.durationMs;
    if (d.bytes !== undefined) e.bytes = d.bytes;
    if (d.rawSha256 !== undefined) e.rawSha256 = d.rawSha256;
    if (d.expectedSha256 !== undefined) e.expectedSha256 = d.expectedSha256;
    if (d.warnings !== undefined && d.warnings.length > 0) e.warnings = d.warnings;
    if (error !== undefined) {
      e.code = error.code;
      e.reason = error.message;
      if (error.stage !== undefined) e.stage = error.stage;
      if (error.problems.length > 0) e.problems = error.problems;
    }
    events.emit(e);
  }

}

interface PolicyRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
}

interface ResultDetail {
  status?: number;
  durationMs?: number;
  bytes?: number;
  rawSha256?: string;
  /** The digest a publisher pinned, when the body did not match it. */
  expectedSha256?: string;
  /** Notes on an accepted card (changed outcome), each with its JSON path. */
  warnings?: readonly Problem[];
}

const LEGACY_SUFFIX = `/${LEGACY_CARD_PATH}`;

const NO_CONDITIONAL: Readonly<Record<string, string>> = Object.freeze({});

/** The validator headers among revalidation headers (the rest are ours). */
function conditionalOf(headers: Readonly<Record<string, unknown>>): Readonly<Record<string, string>> {
  const inm = headers['if-none-match'];
  const ims = headers['if-modified-since'];
  if (typeof inm !== 'string' && typeof ims !== 'string') return NO_CONDITIONAL;
  return { ...(typeof inm === 'string' && { 'if-none-match': inm }), ...(typeof ims === 'string' && { 'if-modified-since': ims }) };
}

/** Whether an entry's validators were derived when it was stored (no Vary, and kept). */
function isPrecomputed(entry: Pick<CacheEntry<unknown, string>, 'conditional' | 'varyRequest'>): boolean {
  return entry.conditional !== undefined && entry.varyRequest === undefined;
}

function withConditional(plain: Readonly<Record<string, string>>, conditional: Readonly<Record<string, string>>): Record<string, string> {
  return conditional === NO_CONDITIONAL ? (plain as Record<string, string>) : Object.assign({}, plain, conditional);
}

/** Whether a 304 carries exactly the stored response's validators. */
function sameValidators(answer: Readonly<Record<string, string>>, stored: Readonly<Record<string, string>>): boolean {
  return answer.etag === stored.etag && answer['last-modified'] === stored['last-modified'];
}

/**
 * The stored response's headers updated by a matching 304, as http-cache-semantics'
 * `revalidatedPolicy()` updates them: each stored header takes the 304's value when it has one;
 * headers the stored response lacked are not added. (Body headers are never among ours.)
 */
function updatedHeaders(stored: Readonly<Record<string, string>>, answer: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in stored) out[k] = k in answer ? answer[k]! : stored[k]!;
  return out;
}

/** The validators of stored response headers. */
function validatorsOf(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers.etag !== undefined) out.etag = headers.etag;
  if (headers['last-modified'] !== undefined) out['last-modified'] = headers['last-modified'];
  return out;
}

function withoutValidators(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (headers.etag === undefined && headers['last-modified'] === undefined) return headers;
  const { etag: _etag, 'last-modified': _lastModified, ...rest } = headers;
  return rest;
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

/** The default content: agent cards, through every check `checkCard` runs. */
function cardContent(hostPolicy: HostPolicy, check: CardCacheOptions['check']): CacheContent<AgentCardModel, CardProtocolVersion> {
  return {
    async check(body, url) {
      const r = await checkCard(body, { ...check, hostPolicy, sourceUrl: url });
      if (!r.ok || r.card === undefined || r.protocolVersion === undefined || r.canonicalSha256 === undefined) return { ok: false, error: parseFailure(r, url) };
      return { ok: true, card: r.card, protocolVersion: r.protocolVersion, canonicalSha256: r.canonicalSha256, text: r.text, warnings: r.warnings, signature: r.signature?.status };
    },
  };
}
