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
 *
 * Beside it: its options (card-cache-options.ts), what it holds (cache-content.ts), the RFC 9111
 * headers (http-validators.ts), entries and their times (cache-entries.ts) and its events
 * (result-events.ts).
 */
import type CachePolicy from 'http-cache-semantics';
import type { AgentCardModel, CardProtocolVersion, CheckCardOptions } from '../card/index.js';
import { sha256Hex } from '../card/index.js';
import { toPeerCredentials } from '../fetch/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardOutcome } from '../events/index.js';
import type { FetchResult } from '../fetch/index.js';
import { LEGACY_CARD_PATH } from '../fetch/index.js';
import { BoundedMemo } from '../fetch/bounded-memo.js';
import { originOfNormalized } from '../rules/origins.js';
import type { SpanScope } from '../telemetry/index.js';
import { ATTR, SPAN, spanError, spanUrl, withSpan } from '../telemetry/index.js';
import type { CacheContent } from './cache-content.js';
import { cardContent } from './cache-content.js';
import { readDirectives } from './cache-control.js';
import { acceptedCardModel } from '../card/parse-agent-card.js';
import { clampedLifetime, entryOf, errorData, lazyModel, modelSlot, retryDelay, serverLifetime, usableEntry, withFields } from './cache-entries.js';
import type { CardCacheOptions, RefreshOptions, ResolvedCacheOptions } from './card-cache-options.js';
import { withDefaults } from './card-cache-options.js';
import type { CacheEntry } from './card-store.js';
import { ExtendedCards } from './extended-cards.js';
import type { PolicyRequest } from './http-validators.js';
import { clockedPolicy, conditionalOf, isPrecomputed, policyHeaders, sameValidators, updatedHeaders, validatorsOf, withConditional, withoutValidators } from './http-validators.js';
import { Limiter } from './limiter.js';
import type { HitTally, ResultDetail } from './result-events.js';
import { ResultEvents } from './result-events.js';
import type { WellKnownFetch } from './well-known.js';
import { afterNotFound } from './well-known.js';

export type { AcceptedContent, CacheContent, DigestPins } from './cache-content.js';
export type { CardCacheOptions, RefreshOptions } from './card-cache-options.js';

const NO_PROBLEMS: readonly never[] = Object.freeze([]);

/** A refresh's span, and whether a failure was already recorded on it. */
interface FetchTrace {
  readonly span: SpanScope;
  failed: boolean;
  /** The origin's fetch slot the refresh took before it began. */
  readonly slot: FetchSlot;
}

/** A refresh's fetch slot: taken before the refresh begins, given back once (after its fetch, or when it ends). */
interface FetchSlot {
  readonly origin: string;
  held: boolean;
}

/** The span's cache decision for a failed refresh: refused before the network, invalid bytes, served stale, or nothing to serve. */
function failedDecision(error: DiscoveryError, outcome: 'stale' | 'invalid', old: unknown): string {
  if (error.failure === 'policy') return 'refused';
  if (outcome === 'invalid') return 'invalid';
  return old !== undefined ? 'stale' : 'failed';
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
  readonly #o: ResolvedCacheOptions<C, V>;
  readonly #content: CacheContent<C, V>;
  /** The default content's checks, changed in place by {@link recheck} (the content reads them at each check). */
  readonly #check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  readonly #customContent: boolean;
  /**
   * Keys of the entries this cache wrote, judged by the host policy's rules of `#judgedGeneration`
   * (freed with the entry), each with its tally of counted hits: a fresh hit finds both with one
   * lookup.
   */
  readonly #judged = new Map<string, HitTally>();
  #judgedGeneration = -1;
  /** The name of each refresh's span. */
  readonly #spanName: string;
  readonly #inflight = new Map<string, Promise<CacheEntry<C, V>>>();
  /**
   * The server's freshness lifetime of the stored headers objects this cache built (held weakly,
   * freed with their entries): a 304 that leaves them as they are reuses it (see `#unchangedLifetime`).
   */
  readonly #serverLifetimes = new WeakMap<object, number>();
  readonly #neverSeen = new Map<string, NeverSeenFailure>();
  /** The caching header values the stored headers share (see `policyHeaders`). */
  readonly #headerValues = new BoundedMemo<string>(HEADER_VALUES);
  /**
   * The card fetches in flight (and the extended cards' calls): at most so many at once, and per
   * origin. A refresh takes its origin's slot before it begins (its span, its store read, its
   * request) and gives it back when its fetch is done: a wave of a thousand due cards waits as a
   * queue of keys, not as a thousand spans and promise chains parked here that outlive the young
   * generation (issue 43: a turn's p99 during revalidation waves).
   */
  readonly #limiter: Limiter;
  readonly #Policy: typeof CachePolicy;
  /** The headers of every card request (validators are added per entry). */
  readonly #requestHeaders: Readonly<Record<string, string>>;
  readonly #results: ResultEvents;
  /** Agent-card caches given credentials: the extended cards of their entries. */
  readonly #extended: ExtendedCards | undefined;
  /**
   * How an agent-card cache builds a card's model again from its bytes: its entries hold the
   * model weakly (the bytes are kept anyway), so a card nobody uses costs its bytes, not both.
   * Undefined for other content (an AI Catalog), held as it is.
   */
  readonly #rebuild: ((body: string, cardUrl: string) => AgentCardModel) | undefined;
  #closed = false;

  constructor(options: CardCacheOptions<C, V>) {
    this.#o = withDefaults(options);
    this.#check = { ...options.check };
    this.#customContent = options.content !== undefined;
    this.#content = options.content ?? (cardContent(options.hostPolicy, this.#check) as unknown as CacheContent<C, V>);
    this.#rebuild = options.content === undefined ? acceptedCardModel : undefined;
    this.#spanName = this.#content.span ?? SPAN.cardFetch;
    const { foreground, maxConcurrentFetches } = this.#o;
    const duringTurns = Math.min(this.#o.maxConcurrentFetchesDuringTurns, maxConcurrentFetches);
    this.#limiter = new Limiter({ max: foreground === undefined ? maxConcurrentFetches : () => (foreground.busy ? duringTurns : maxConcurrentFetches), perKey: this.#o.maxFetchesPerOrigin });
    this.#requestHeaders = Object.freeze({ accept: 'application/json', ...this.#o.requestHeaders });
    this.#results = new ResultEvents(this.#o.events, this.#o.hitEvents);
    // http-cache-semantics reads time through `now()`; give it the injected clock.
    this.#Policy = clockedPolicy(this.#o.clock);
    const credentials = options.extendedCards?.credentials;
    this.#extended =
      credentials === undefined || options.content !== undefined
        ? undefined
        : new ExtendedCards({
            credentials: toPeerCredentials(credentials),
            fetcher: this.#o.fetcher,
            hostPolicy: this.#o.hostPolicy,
            content: this.#content as unknown as CacheContent<AgentCardModel, CardProtocolVersion>,
            limiter: this.#limiter,
            clock: this.#o.clock,
            events: this.#o.events,
            limits: this.#o.check,
          });
  }

  /**
   * The key of an endpoint: its normalized base URL, or, for a URL whose path ends in `.json`,
   * its normalized card URL (see `HostPolicy.normalizeEndpoint`). Throws the policy's refusal.
   */
  key(endpoint: string): string {
    return this.#judgedTally(endpoint) === undefined ? this.#judgeKey(endpoint) : endpoint;
  }

  /** The tally of a key this cache wrote under the policy's rules in force, or undefined (then {@link #judgeKey}). */
  #judgedTally(endpoint: string): HitTally | undefined {
    return this.#judgedGeneration === this.#o.hostPolicy.generation ? this.#judged.get(endpoint) : undefined;
  }

  /**
   * The key of an endpoint that is not a key this cache wrote under the rules in force: judged by
   * the policy. (A key this cache holds an entry under is itself: the loop names endpoints by their
   * keys, and the policy's memo of URLs is bounded and forgets past its size.) After the rules
   * changed, every key is judged again.
   */
  #judgeKey(endpoint: string): string {
    const policy = this.#o.hostPolicy;
    if (this.#judgedGeneration !== policy.generation) {
      for (const tally of this.#judged.values()) this.#results.release(tally);
      this.#judged.clear();
      this.#judgedGeneration = policy.generation;
    }
    return this.#o.exactUrls ? policy.normalizeDocumentUrl(endpoint) : policy.normalizeEndpoint(endpoint);
  }

  /**
   * A usable entry for the endpoint: a fresh one as is; otherwise one refresh (shared with
   * every concurrent caller). While a failing endpoint backs off, its stale entry is returned
   * without a request. Throws (a {@link DiscoveryError}) only when no card was ever obtained.
   */
  get(baseUrl: string): Promise<CacheEntry<C, V>> {
    // Not an async function: a refresh's own promise is the answer as it is (an async function
    // would wrap it in another, two turns later; issue 43: the 304 path's turns).
    try {
      const tally = this.#judgedTally(baseUrl);
      const key = tally === undefined ? this.#judgeKey(baseUrl) : baseUrl;
      const stored = this.#o.store.get(key);
      // A synchronous store (the memory store) is not awaited: a fresh hit costs no extra turn.
      if (stored instanceof Promise) return stored.then((entry) => this.#answer(key, entry, tally));
      return this.#answer(key, stored, tally);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link get}'s answer for the entry stored under `key` (a refused or unknown endpoint throws, as get() rejects). */
  #answer(key: string, entry: CacheEntry<C, V> | undefined, tally: HitTally | undefined): Promise<CacheEntry<C, V>> {
    // A fresh entry is the answer as it stands, even while a forced refresh of it runs.
    if (entry !== undefined && !entry.stale && this.#recentNow() < entry.expiresAt && !this.#pinBroken(key, entry)) return Promise.resolve(this.#hit(key, entry, tally));
    const now = this.#o.clock.now();
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
    const tally = this.#judgedTally(baseUrl);
    const key = tally === undefined ? this.#judgeKey(baseUrl) : baseUrl;
    const entry = this.#o.store.get(key);
    if (entry === undefined || entry instanceof Promise || entry.stale || this.#recentNow() >= entry.expiresAt || this.#pinBroken(key, entry)) return undefined;
    return this.#hit(key, entry, tally);
  }

  /** The time a fresh hit is judged by: the clock's {@link Clock.recentNow} (a read at most about a millisecond old), else `now()`. */
  #recentNow(): number {
    const clock = this.#o.clock;
    return clock.recentNow === undefined ? clock.now() : clock.recentNow();
  }

  /** Whether a stored entry's bytes contradict a pin on its endpoint (it is then refreshed, never served). */
  #pinBroken(key: string, entry: CacheEntry<C, V>): boolean {
    const pins = this.#o.pins;
    if (pins === undefined || pins.size === 0) return false;
    const pin = pins.pinFor(key);
    return pin !== undefined && pin.sha256 !== entry.rawSha256;
  }

  #hit(key: string, entry: CacheEntry<C, V>, tally: HitTally | undefined): CacheEntry<C, V> {
    this.#results.hit(key, entry.failures, tally);
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
    const tally = this.#judged.get(key);
    if (tally !== undefined) this.#results.release(tally);
    this.#judged.delete(key);
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

  /** Fetches in flight now, the most ever in flight at once, and the refreshes waiting for a slot (to begin, or to fetch). */
  get concurrency(): { running: number; peak: number; waiting: number } {
    return { running: this.#limiter.running, peak: this.#limiter.peak, waiting: this.#limiter.waiting };
  }

  /** Publishes the hits counted so far (`hitEvents: 'counted'`); runs by itself after each burst. */
  flushHits(): void {
    this.#results.flush();
  }

  /**
   * Judges every stored card again with new content checks (new trust keys, another signature
   * mode), which apply to every later card too; no request is made. An entry whose verdict or
   * warnings changed is replaced; one that no longer passes is forgotten, with a `card.result`
   * event saying why (outcome `invalid`), so the next read fetches it and reports it as any refused
   * card. Only a cache of agent cards (without a `content` of its own) has checks to change.
   */
  async recheck(check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>): Promise<{ checked: number; changed: number; refused: number }> {
    if (this.#customContent) throw new DiscoveryError('ERR_INTERNAL', 'this cache judges its documents with a content of its own; its checks cannot change');
    const live = this.#check as Record<string, unknown>;
    for (const k of Object.keys(live)) delete live[k];
    Object.assign(this.#check, check);
    const counts = { checked: 0, changed: 0, refused: 0 };
    for (const key of await this.#o.store.keys()) {
      const entry = await this.#o.store.get(key);
      if (entry === undefined) continue;
      counts.checked++;
      const r = await this.#content.check(Buffer.from(entry.body, 'utf8'), entry.cardUrl).catch((err: unknown) => ({ ok: false as const, error: toDiscoveryError(err, 'ERR_CARD_INVALID', { url: entry.cardUrl, stage: 'parse' }) }));
      // A refresh may have replaced the entry meanwhile: it was judged by the new checks already.
      if ((await this.#o.store.get(key)) !== entry) continue;
      if (!r.ok) {
        counts.refused++;
        await this.forgetKey(key);
        this.#results.emit(key, 'invalid', { rawSha256: entry.rawSha256 }, entry.failures, r.error);
      } else if (r.signature !== entry.signature || JSON.stringify(r.warnings) !== JSON.stringify(entry.warnings)) {
        counts.changed++;
        const judged = withFields(entry, { card: r.card, signature: r.signature, warnings: r.warnings.length > 0 ? r.warnings : NO_PROBLEMS });
        // Held as a new card is: its model weakly, through a slot of its own (a new identity for the memos).
        await this.#o.store.set(key, this.#rebuild === undefined ? judged : entryOf(judged, lazyModel(r.card as AgentCardModel, judged.body, this.#rebuild)));
      }
    }
    return counts;
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
    // The origin's fetch slot first, then the refresh (see #limiter); the fetch gives it back.
    // (No closure is named per refresh: `tsx`, which runs the benchmarks, would name each one.)
    const slot: FetchSlot = { origin: originOfNormalized(key), held: false };
    const begun = this.#limiter.enter(slot.origin) ? this.#begin(key, options, slot) : this.#limiter.wait(slot.origin).then(() => this.#begin(key, options, slot));
    // A refresh that ended before its fetch (a store that failed) gives its slot back here.
    // (`then` with two handlers, not `finally`: that costs two more promises and turns.)
    const p: Promise<CacheEntry<C, V>> = begun.then(
      (entry) => {
        this.#settled(key, slot, p);
        return entry;
      },
      (error: unknown) => {
        this.#settled(key, slot, p);
        throw error;
      },
    );
    this.#inflight.set(key, p);
    return p;
  }

  #begin(key: string, options: RefreshOptions, slot: FetchSlot): Promise<CacheEntry<C, V>> {
    slot.held = true;
    return this.#traced(key, options, slot);
  }

  #settled(key: string, slot: FetchSlot, refresh: Promise<CacheEntry<C, V>>): void {
    this.#leave(slot);
    if (this.#inflight.get(key) === refresh) this.#inflight.delete(key);
  }

  /** One request of a refresh: its span's URL attributes, the `card.fetch` event, the fetch. */
  #request(t: FetchTrace, key: string, url: string, headers: Record<string, string>, conditional: boolean): Promise<FetchResult> {
    if (t.span.recording) t.span.set({ [ATTR.urlFull]: spanUrl(url), [ATTR.conditional]: conditional });
    this.#o.events?.emit({ type: 'card.fetch', endpoint: key, url, conditional });
    return this.#o.fetcher.fetch(url, { headers });
  }

  #leave(slot: FetchSlot): void {
    if (!slot.held) return;
    slot.held = false;
    this.#limiter.leave(slot.origin);
  }

  /**
   * One refresh in its span (a card fetch, or the content's own span name: an AI Catalog read).
   * The span is failed here, with URLs in the message redacted, never by `withSpan` (which would
   * record the raw message).
   */
  #traced(key: string, options: RefreshOptions, slot: FetchSlot): Promise<CacheEntry<C, V>> {
    let recording = false;
    const r = withSpan(this.#spanName, { kind: 'client' }, (span) => {
      const t: FetchTrace = { span, failed: false, slot };
      // A span that records nothing (no tracer provider, or not sampled): the refresh's promise
      // is the answer as it is, without a layer of its own (issue 43: the 304 path's turns).
      if (!span.recording) return this.#refresh(key, options, t);
      recording = true;
      span.set({ [ATTR.endpoint]: spanUrl(key) });
      // The failure passes withSpan as a value: withSpan would record its raw message.
      return this.#refresh(key, options, t).catch((error: unknown) => {
        if (!t.failed) span.fail(spanError(error));
        return new FailedRefresh(error) as never;
      });
    });
    return recording ? r.then(rethrowFailed) : r;
  }

  async #refresh(key: string, options: RefreshOptions, t: FetchTrace): Promise<CacheEntry<C, V>> {
    const { hostPolicy } = this.#o;
    // A synchronous store (the memory store) is not awaited: a turn of the microtask queue saved per refresh.
    const got = this.#o.store.get(key);
    const stored = got instanceof Promise ? await got : got;
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

    let url = cardUrl;
    let res: FetchResult;
    let fallback: WellKnownFetch['fallback'];
    try {
      // The first request in the slot the refresh took, given back as soon as it answers (no
      // promise of its own; issue 43: the 304 path's turns); a second fetch takes a slot anew.
      if (t.slot.held) {
        try {
          res = await this.#request(t, key, cardUrl, headers, conditional);
        } finally {
          this.#leave(t.slot);
        }
      } else res = await this.#limiter.run(t.slot.origin, () => this.#request(t, key, cardUrl, headers, conditional));
      if (res.status === 404 && otherUrl !== undefined) {
        const first = res;
        ({ cardUrl: url, res, fallback } = await this.#limiter.run(t.slot.origin, () => afterNotFound(cardUrl, first, otherUrl(), (u) => this.#request(t, key, u, plain, false))));
      }
    } catch (err) {
      return this.#fail(t, key, old, toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: cardUrl, stage: 'fetch' }), 'stale');
    }
    const common = { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength };
    if (t.span.recording) t.span.set({ [ATTR.httpStatus]: res.status, [ATTR.bytes]: res.body.byteLength });

    if (res.status === 304) {
      if (revalidating === undefined || !conditional || url !== cardUrl) {
        return this.#fail(t, key, old, statusError(res, url, 'answered 304 Not Modified to a request that had no validator'), 'stale', common);
      }
      let answer = policyHeaders(res.headers, this.#headerValues);
      // RFC 9111 §4.3.4: a 304 updates the stored response only if its validators match it. One
      // that carries no validator at all answers the conditional request we sent about the one
      // stored response (we keep one per card URL), so it is read as carrying that response's.
      if (answer.etag === undefined && answer['last-modified'] === undefined) answer = Object.assign(answer, validatorsOf(revalidating.cacheHeaders));
      const request = { url: cardUrl, method: 'GET', headers };
      let policy: CachePolicy;
      if (storedPolicy === undefined && sameValidators(answer, revalidating.cacheHeaders)) {
        // The 304 changes none of the stored headers: the same policy, so the same lifetime and
        // directives, without building it again (issue 43: the 304 path's bookkeeping).
        const lifetime = this.#unchangedLifetime(revalidating.cacheHeaders, answer);
        if (lifetime !== undefined) return this.#store(t, key, this.#revalidated(revalidating, lifetime), 'revalidated', common, revalidating);
        // The 304 repeats the stored validators, which http-cache-semantics always selects: build
        // the updated policy directly, as its revalidatedPolicy() would (one policy, not two).
        policy = new this.#Policy(request, { status: 200, headers: updatedHeaders(revalidating.cacheHeaders, answer) }, { shared: false });
      } else {
        const updated = (storedPolicy ?? this.#storedPolicy(revalidating, request)).revalidatedPolicy(request, { status: 304, headers: answer });
        // A 304 for another representation says nothing about ours: fetch the whole card.
        if (!updated.matches) return this.#refresh(key, { unconditional: true }, t);
        policy = updated.policy;
      }
      const merged = policyHeaders(policy.responseHeaders() as Record<string, string>, this.#headerValues);
      return this.#store(t, key, this.#freshEntry(revalidating, policy, merged, request, 'revalidated'), 'revalidated', common, revalidating);
    }

    if (res.status !== 200) {
      const hint = res.status === 401 || res.status === 403 ? ' (the card endpoint wants credentials for this origin)' : '';
      const tried = fallback === undefined ? '' : ` (and ${fallback.url} answered ${fallback.status === undefined ? 'with a network error' : `HTTP ${fallback.status}`})`;
      return this.#fail(t, key, old, statusError(res, url, `answered HTTP ${res.status}${hint}${tried}`), 'stale', common);
    }

    const request = { url, method: 'GET', headers: url === cardUrl ? headers : plain };
    const cacheHeaders = policyHeaders(res.headers, this.#headerValues);
    const policy = new this.#Policy(request, { status: 200, headers: cacheHeaders }, { shared: false });
    const rawSha256 = sha256Hex(res.body);
    if (pin !== undefined && pin.sha256 !== rawSha256) {
      const error = new DiscoveryError(
        'ERR_DIGEST_MISMATCH',
        `${url}: the card's SHA-256 is ${rawSha256}, but its publisher pinned ${pin.sha256} (${pin.from}); the card is refused`,
        { url, stage: 'signature', path: '$', problems: [{ path: '$', message: `SHA-256 ${rawSha256} differs from the pinned ${pin.sha256} (${pin.from})` }] },
      );
      return this.#fail(t, key, pinned, error, 'invalid', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256, expectedSha256: pin.sha256 });
    }
    const where = { baseUrl: key, cardUrl: url };
    if (old !== undefined && old.rawSha256 === rawSha256) {
      return this.#store(t, key, this.#freshEntry(withFields(old, where), policy, cacheHeaders, request, 'unchanged'), 'unchanged', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256 }, old);
    }
    let check: Awaited<ReturnType<CacheContent<C, V>['check']>>;
    try {
      check = await this.#content.check(res.body, url);
    } catch (err) {
      // A reader that throws refuses the body like any invalid one: backoff, the last good entry kept.
      check = { ok: false, error: toDiscoveryError(err, 'ERR_CARD_INVALID', { url, stage: 'parse' }) };
    }
    if (!check.ok) return this.#fail(t, key, old, check.error, 'invalid', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256 });
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
      extended: old?.extended,
    };
    if (check.entries !== undefined && t.span.recording) t.span.set({ [ATTR.catalogEntries]: check.entries });
    const slot = this.#rebuild === undefined ? undefined : lazyModel(check.card as AgentCardModel, card.body, this.#rebuild);
    return this.#store(t, key, this.#freshEntry(card, policy, cacheHeaders, request, 'changed', slot), 'changed', { status: res.status, durationMs: res.durationMs, bytes: res.body.byteLength, rawSha256, warnings: card.warnings });
  }

  /**
   * The server's freshness lifetime of stored headers, when a 304 carrying `answer` leaves them as
   * the updated policy would store them: each header it repeats has the stored value, the stored
   * `Age` is there (a policy's headers always carry one), and nothing depends on the time of the
   * answer (no `Date`: no Expires or Last-Modified lifetime). Undefined otherwise.
   */
  #unchangedLifetime(stored: Readonly<Record<string, string>>, answer: Readonly<Record<string, string>>): number | undefined {
    const lifetime = this.#serverLifetimes.get(stored);
    if (lifetime === undefined || stored.date !== undefined || stored.age === undefined) return undefined;
    for (const k in answer) if (k in stored && answer[k] !== stored[k]) return undefined;
    return lifetime;
  }

  /** The entry a 304 that changed none of its headers makes of `old`: fresh again for `serverLifetime` (before bounds and jitter). */
  #revalidated(old: CacheEntry<C, V>, serverLifetime: number): CacheEntry<C, V> {
    const { clock } = this.#o;
    return withFields(old, {
      expiresAt: clock.now() + clampedLifetime(serverLifetime, this.#o),
      failures: 0,
      stale: false,
      usable: true,
      nextAttemptAt: undefined,
      lastOutcome: 'revalidated',
      lastError: undefined,
      validatedAtWall: clock.wallNow(),
    });
  }

  /** The policy of the stored response, as it was received for the request it answered. */
  #storedPolicy(old: CacheEntry<C, V>, request: PolicyRequest): CachePolicy {
    return new this.#Policy({ ...request, headers: old.varyRequest ?? request.headers }, { status: 200, headers: { ...old.cacheHeaders } }, { shared: false });
  }

  /**
   * A successful entry: the card fields from `card` (the stored entry on a 304 or the same
   * bytes), the rest from the response's policy. The model is held through `slot` (a new card),
   * or as `card` holds it (its slot, when it holds it lazily).
   */
  #freshEntry(
    card: Pick<CacheEntry<C, V>, 'baseUrl' | 'cardUrl' | 'card' | 'protocolVersion' | 'body' | 'rawSha256' | 'canonicalSha256' | 'fetchedAtWall' | 'warnings' | 'signature' | 'extended'>,
    policy: CachePolicy,
    responseHeaders: Readonly<Record<string, string>>,
    request: PolicyRequest,
    outcome: CardOutcome,
    slot = modelSlot(card),
  ): CacheEntry<C, V> {
    const directives = readDirectives(policy);
    // RFC 9111 §5.2.2.5 no-store: no validator is kept, so none is ever sent for this card.
    const cacheHeaders = directives.noStore ? withoutValidators(responseHeaders) : responseHeaders;
    // §4.1: the request headers the response varies on are compared on the next request.
    const varies = cacheHeaders.vary !== undefined && !directives.noStore;
    const { clock } = this.#o;
    const lifetime = serverLifetime(policy, directives.explicit, this.#o.defaultTtlMs);
    if (!varies) this.#serverLifetimes.set(cacheHeaders, lifetime);
    return entryOf(
      {
        baseUrl: card.baseUrl,
        cardUrl: card.cardUrl,
        card: slot === undefined ? card.card : (undefined as C),
        protocolVersion: card.protocolVersion,
        // Held by the slot (packed): reading `card.body` of a lazily held card would unpack it.
        body: slot === undefined ? card.body : (undefined as unknown as string),
        rawSha256: card.rawSha256,
        canonicalSha256: card.canonicalSha256,
        etag: cacheHeaders.etag,
        lastModified: cacheHeaders['last-modified'],
        cacheHeaders,
        varyRequest: varies ? request.headers : undefined,
        // The next request's validators, as the library derives them from this policy (§4.3.1);
        // with Vary they depend on that request, so the policy is rebuilt then.
        conditional: varies ? undefined : conditionalOf(policy.revalidationHeaders({ url: request.url, method: request.method, headers: this.#requestHeaders })),
        expiresAt: clock.now() + clampedLifetime(lifetime, this.#o),
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
        extended: card.extended,
      },
      slot,
    );
  }

  /**
   * Stores a successful refresh; `kept`: the stored entry whose card it kept (a 304, the same
   * bytes). Synchronous when the store is (the memory store) and there is no extended card: a
   * refresh's answer then takes no promise and no turn of its own here.
   */
  #store(t: FetchTrace, key: string, fetched: CacheEntry<C, V>, outcome: CardOutcome, detail: ResultDetail, kept?: CacheEntry<C, V>): CacheEntry<C, V> | Promise<CacheEntry<C, V>> {
    if (t.span.recording) t.span.set({ [ATTR.outcome]: 'ok', [ATTR.cacheDecision]: outcome, [ATTR.cardSha256]: fetched.rawSha256 });
    // With every refresh of the public card, its extended card (an agent-card cache only).
    if (this.#extended !== undefined) {
      return this.#extended.update(key, fetched as unknown as CacheEntry).then((entry) => this.#stored(key, entry as unknown as CacheEntry<C, V>, outcome, detail, kept));
    }
    return this.#stored(key, fetched, outcome, detail, kept);
  }

  #stored(key: string, entry: CacheEntry<C, V>, outcome: CardOutcome, detail: ResultDetail, kept: CacheEntry<C, V> | undefined): CacheEntry<C, V> | Promise<CacheEntry<C, V>> {
    const put = this.#put(key, entry, kept);
    if (put !== undefined) return put.then(() => this.#refreshed(key, entry, outcome, detail));
    return this.#refreshed(key, entry, outcome, detail);
  }

  #refreshed(key: string, entry: CacheEntry<C, V>, outcome: CardOutcome, detail: ResultDetail): CacheEntry<C, V> {
    if (this.#neverSeen.size > 0) this.#neverSeen.delete(key);
    this.#results.emit(key, outcome, detail, 0);
    return entry;
  }

  async #fail(
    t: FetchTrace,
    key: string,
    old: CacheEntry<C, V> | undefined,
    error: DiscoveryError,
    outcome: 'stale' | 'invalid',
    detail: ResultDetail = {},
  ): Promise<CacheEntry<C, V>> {
    t.failed = true;
    if (t.span.recording) {
      t.span.set({ [ATTR.outcome]: 'failed', [ATTR.cacheDecision]: failedDecision(error, outcome, old), [ATTR.cardSha256]: detail.rawSha256 });
      t.span.fail(spanError(error));
    }
    const now = this.#o.clock.now();
    const lastError = errorData(error);
    if (old !== undefined) {
      const failures = old.failures + 1;
      const delay = retryDelay(failures, this.#o);
      const entry: CacheEntry<C, V> = usableEntry(withFields(old, { failures, stale: true, nextAttemptAt: now + delay, lastOutcome: outcome, lastError }), now, this.#o.maxStaleMs);
      await this.#put(key, entry, old);
      this.#results.emit(key, outcome, detail, failures, error);
      this.#o.events?.emit({ type: 'card.backoff', endpoint: key, failures, retryInMs: delay });
      return entry;
    }
    const failures = (this.#neverSeen.get(key)?.failures ?? 0) + 1;
    const delay = retryDelay(failures, this.#o);
    this.#neverSeen.set(key, { failures, nextAttemptAt: now + delay, error });
    this.#results.emit(key, outcome === 'invalid' ? 'invalid' : 'failed', detail, failures, error);
    this.#o.events?.emit({ type: 'card.backoff', endpoint: key, failures, retryInMs: delay });
    throw error;
  }

  async #withUsability(key: string, entry: CacheEntry<C, V>, now: number): Promise<CacheEntry<C, V>> {
    const updated = usableEntry(entry, now, this.#o.maxStaleMs);
    if (updated !== entry) await this.#put(key, updated, entry);
    return updated;
  }

  /**
   * Writes an entry. One that keeps the card of `kept`, the entry stored under its key (a 304, a
   * failure, an aged entry; and its extended card too), changes only freshness: a store that can
   * write just that (`touch`) is asked to.
   */
  #put(key: string, entry: CacheEntry<C, V>, kept: CacheEntry<C, V> | undefined): void | Promise<void> {
    const { store } = this.#o;
    if (this.#judgedGeneration === this.#o.hostPolicy.generation && !this.#judged.has(key)) this.#judged.set(key, this.#results.tallyFor(key));
    return kept !== undefined && store.touch !== undefined && entry.extended === kept.extended ? store.touch(key, entry) : store.set(key, entry);
  }

}

const LEGACY_SUFFIX = `/${LEGACY_CARD_PATH}`;

/** A refresh's error carried through its recording span as a value (see #traced). */
class FailedRefresh {
  constructor(readonly error: unknown) {}
}

function rethrowFailed<T>(value: T): T {
  if (value instanceof FailedRefresh) throw value.error;
  return value;
}

/** Distinct caching header values shared at most (a fleet has a handful; a hostile one cannot grow it past this). */
const HEADER_VALUES = 256;

function statusError(res: FetchResult, url: string, what: string): DiscoveryError {
  return new DiscoveryError('ERR_FETCH_STATUS', `${url} ${what}`, { url, stage: 'fetch', status: res.status });
}
