/**
 * The clients compared in the refresh benchmarks, behind one interface:
 * - raw: `undici.request` on its own Agent, If-None-Match from a first unconditional GET;
 * - cache: `CardCache.get()` on a VirtualClock moved past max-age before each timed round, so
 *   every entry is due and each get() is one conditional refresh;
 * - undici cache: `undici.request` through undici 7's own RFC 9111 cache interceptor
 *   (`interceptors.cache` + `MemoryCacheStore`) composed on an Agent; its endpoints answer
 *   `Cache-Control: public, no-cache` (undici reads the real clock, so every use must revalidate);
 * - ADK JS today: `new DefaultAgentCardResolver().resolve(baseUrl)` of @a2a-js/sdk 0.3.14 (the copy
 *   @google/adk 2.0 depends on), a full GET through the global `fetch` on every call.
 * Every side reads the whole response, keeps connections alive and counts what it got.
 */
import { DefaultAgentCardResolver } from 'a2a-sdk-0314/client';
import { Agent, cacheStores, interceptors, request, type Dispatcher } from 'undici';
import type { CardStore } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { createCardFetcher, type CardFetcher, type HostPolicy } from '../../packages/core/src/fetch/index.js';
import { runPool } from './pool.js';

export interface Target {
  baseUrl: string;
  cardUrl: string;
}

export interface SweepCounts {
  /** Responses of the expected kind (304 for raw, a `revalidated` entry for the cache). */
  ok: number;
  unexpected: number;
  errors: number;
  timedOut: boolean;
  firstProblem?: string;
}

export interface Side {
  readonly name: string;
  /** Untimed: first contact (200s), connections opened, validators learned. */
  warm(deadlineMs: number): Promise<SweepCounts>;
  /** Untimed preparation of the next timed sweep. */
  prepare(): Promise<void>;
  /** The timed part: one conditional request per target. */
  sweep(deadlineMs: number): Promise<SweepCounts>;
  close(): Promise<void>;
}

/** Headers the card fetcher sends (minus If-None-Match), so both sides send the same request. */
const BASE_HEADERS = { accept: 'application/json', 'a2a-version': '1.0', 'user-agent': 'a2a-discovery-bench', 'accept-encoding': 'identity' };

export function rawSide(name: string, targets: readonly Target[], concurrency: number, connectionsPerOrigin: number): Side {
  const agent = new Agent({ connections: connectionsPerOrigin, headersTimeout: 5_000, bodyTimeout: 5_000, connectTimeout: 5_000 });
  const etags = new Map<string, string>();
  const sweep = async (deadlineMs: number, conditional: boolean): Promise<SweepCounts> => {
    let ok = 0;
    let unexpected = 0;
    let firstProblem: string | undefined;
    const r = await runPool(targets, concurrency, deadlineMs, async (t) => {
      const etag = etags.get(t.cardUrl);
      const headers = conditional && etag !== undefined ? { ...BASE_HEADERS, 'if-none-match': etag } : BASE_HEADERS;
      const res = await request(t.cardUrl, { dispatcher: agent, method: 'GET', headers });
      await res.body.arrayBuffer();
      const expected = conditional ? 304 : 200;
      if (res.statusCode === expected) ok++;
      else {
        unexpected++;
        firstProblem ??= `${t.cardUrl}: HTTP ${res.statusCode}`;
      }
      if (!conditional && typeof res.headers.etag === 'string') etags.set(t.cardUrl, res.headers.etag);
    });
    if (r.firstError !== undefined) firstProblem ??= String(r.firstError);
    return { ok, unexpected, errors: r.errors, timedOut: r.timedOut, ...(firstProblem !== undefined && { firstProblem }) };
  };
  return {
    name,
    warm: (deadlineMs) => sweep(deadlineMs, false),
    prepare: async () => undefined,
    sweep: (deadlineMs) => sweep(deadlineMs, true),
    close: () => agent.close(),
  };
}

/**
 * The library's card fetcher alone (no cache): the same conditional GET as raw, through
 * `createCardFetcher().fetch()`; tells how much of the cache's cost is the fetcher's.
 */
export function fetcherSide(name: string, targets: readonly Target[], policy: HostPolicy, concurrency: number, connectionsPerOrigin: number): Side {
  const fetcher = createCardFetcher({ policy, maxConnectionsPerOrigin: connectionsPerOrigin });
  const etags = new Map<string, string>();
  const sweep = async (deadlineMs: number, conditional: boolean): Promise<SweepCounts> => {
    let ok = 0;
    let unexpected = 0;
    let firstProblem: string | undefined;
    const r = await runPool(targets, concurrency, deadlineMs, async (t) => {
      const etag = etags.get(t.cardUrl);
      const headers: Record<string, string> = { accept: 'application/json', 'a2a-version': '1.0' };
      if (conditional && etag !== undefined) headers['if-none-match'] = etag;
      const res = await fetcher.fetch(t.cardUrl, { headers });
      const expected = conditional ? 304 : 200;
      if (res.status === expected) ok++;
      else {
        unexpected++;
        firstProblem ??= `${t.cardUrl}: HTTP ${res.status}`;
      }
      if (!conditional && res.headers.etag !== undefined) etags.set(t.cardUrl, res.headers.etag);
    });
    if (r.firstError !== undefined) firstProblem ??= String(r.firstError);
    return { ok, unexpected, errors: r.errors, timedOut: r.timedOut, ...(firstProblem !== undefined && { firstProblem }) };
  };
  return {
    name,
    warm: (deadlineMs) => sweep(deadlineMs, false),
    prepare: async () => undefined,
    sweep: (deadlineMs) => sweep(deadlineMs, true),
    close: () => fetcher.close(),
  };
}

export interface CacheSideOptions {
  policy: HostPolicy;
  concurrency: number;
  /** `maxConnectionsPerOrigin` of the card fetcher. */
  connectionsPerOrigin: number;
  /** How far the virtual clock moves before each sweep: past max-age, so every entry is due. */
  advanceMs: number;
  /** Wraps the fetcher (to count upstream requests). */
  wrap?: (f: CardFetcher) => CardFetcher;
  /** The cache's store (default: its own memory store), opened on `clock`, then the side's clock. */
  store?: CardStore;
  clock?: VirtualClock;
}

export function cacheSide(name: string, targets: readonly Target[], o: CacheSideOptions): Side & { cache: CardCache; clock: VirtualClock } {
  const clock = o.clock ?? new VirtualClock({ wallStart: Date.now() });
  const inner = createCardFetcher({ policy: o.policy, maxConnectionsPerOrigin: o.connectionsPerOrigin });
  const fetcher = o.wrap ? o.wrap(inner) : inner;
  const cache = new CardCache({
    fetcher,
    hostPolicy: o.policy,
    clock,
    minTtlMs: 0,
    maxConcurrentFetches: o.concurrency,
    check: { allowLoopback: true },
    ...(o.store !== undefined && { store: o.store }),
  });
  const sweep = async (deadlineMs: number, expected: string): Promise<SweepCounts> => {
    let ok = 0;
    let unexpected = 0;
    let firstProblem: string | undefined;
    const r = await runPool(targets, o.concurrency, deadlineMs, async (t) => {
      const e = await cache.get(t.baseUrl);
      if (e.lastOutcome === expected && !e.stale) ok++;
      else {
        unexpected++;
        firstProblem ??= `${t.baseUrl}: ${e.lastOutcome}${e.lastError ? ` ${e.lastError.message}` : ''}`;
      }
    });
    if (r.firstError !== undefined) firstProblem ??= String(r.firstError);
    return { ok, unexpected, errors: r.errors, timedOut: r.timedOut, ...(firstProblem !== undefined && { firstProblem }) };
  };
  return {
    name,
    cache,
    clock,
    warm: (deadlineMs) => sweep(deadlineMs, 'changed'),
    prepare: () => clock.advance(o.advanceMs),
    sweep: (deadlineMs) => sweep(deadlineMs, 'revalidated'),
    async close() {
      await cache.close();
      await fetcher.close();
    },
  };
}

/**
 * A MemoryCacheStore large enough to hold every card of a benchmark: its defaults (1,024 entries,
 * 100 MB) would evict, and an evicted entry is a full GET, not a revalidation.
 */
export function bigMemoryCacheStore(): InstanceType<typeof cacheStores.MemoryCacheStore> {
  return new cacheStores.MemoryCacheStore({ maxCount: 10_000_000, maxSize: 4 * 1024 ** 3 });
}

/**
 * Below undici's cache, removes `Cache-Control` from 304 responses. The fault server sends the
 * endpoint's caching headers on every response, 304 included (as RFC 9110 §15.4.5 asks), and
 * undici 7's cache deletes the stored entry when a 304 carries `Cache-Control`
 * (`revalidationResponseUpdatesCacheControl`): its next use would be a full GET, not a
 * revalidation. Without the header the entry is kept, served, and revalidated on every use.
 */
const drop304CacheControl: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) =>
  dispatch(opts, {
    onRequestStart: (c, context) => handler.onRequestStart?.(c, context),
    onRequestUpgrade: (c, status, headers, socket) => handler.onRequestUpgrade?.(c, status, headers, socket),
    onResponseStart(c, status, headers, message) {
      if (status !== 304 || headers['cache-control'] === undefined) return handler.onResponseStart?.(c, status, headers, message);
      const { 'cache-control': _dropped, ...rest } = headers;
      return handler.onResponseStart?.(c, status, rest, message);
    },
    onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
    onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
    onResponseError: (c, err) => handler.onResponseError?.(c, err),
  });

/**
 * An Agent with `connectionsPerOrigin` connections, undici's cache interceptor composed on it
 * (over {@link drop304CacheControl}, so that a 304 keeps the entry).
 */
export function undiciCachingAgent(connectionsPerOrigin: number, store = bigMemoryCacheStore()): { agent: Agent; dispatcher: Dispatcher; store: typeof store } {
  const agent = new Agent({ connections: connectionsPerOrigin, headersTimeout: 5_000, bodyTimeout: 5_000, connectTimeout: 5_000 });
  return { agent, dispatcher: agent.compose(drop304CacheControl, interceptors.cache({ store, methods: ['GET'] })), store };
}

/**
 * undici 7's own HTTP cache: the same `request()` as raw, through `interceptors.cache` with a
 * `MemoryCacheStore`, on an Agent with the same connections per origin. The targets must answer
 * `Cache-Control: public, no-cache` (+ ETag): the warm-up stores every card (200), and each later
 * use is a conditional request (If-None-Match) answered 304, served from the store (status 200,
 * the stored body). The server's request count (checked by the benchmark) proves each use went
 * upstream; the `age` header undici adds to what it serves from the store (never to a response
 * passed through), with a body of the right length, proves it came from the store.
 */
export function undiciCacheSide(name: string, targets: readonly Target[], concurrency: number, connectionsPerOrigin: number): Side & { store: ReturnType<typeof bigMemoryCacheStore> } {
  const { agent, dispatcher, store } = undiciCachingAgent(connectionsPerOrigin);
  const lengths = new Map<string, number>();
  const sweep = async (deadlineMs: number, first: boolean): Promise<SweepCounts> => {
    let ok = 0;
    let unexpected = 0;
    let firstProblem: string | undefined;
    const r = await runPool(targets, concurrency, deadlineMs, async (t) => {
      const res = await request(t.cardUrl, { dispatcher, method: 'GET', headers: BASE_HEADERS });
      const body = await res.body.arrayBuffer();
      if (first && res.statusCode === 200) lengths.set(t.cardUrl, body.byteLength);
      const fromStore = res.headers.age !== undefined;
      if (res.statusCode === 200 && body.byteLength === lengths.get(t.cardUrl) && fromStore !== first) ok++;
      else {
        unexpected++;
        firstProblem ??= `${t.cardUrl}: HTTP ${res.statusCode}, ${body.byteLength} B, ${fromStore ? 'from the store' : 'not from the store'}`;
      }
    });
    if (r.firstError !== undefined) firstProblem ??= String(r.firstError);
    return { ok, unexpected, errors: r.errors, timedOut: r.timedOut, ...(firstProblem !== undefined && { firstProblem }) };
  };
  return {
    name,
    store,
    warm: (deadlineMs) => sweep(deadlineMs, true),
    prepare: async () => undefined,
    sweep: (deadlineMs) => sweep(deadlineMs, false),
    close: () => agent.close(),
  };
}

/**
 * What ADK JS does today for a remote agent given by URL (`RemoteA2AAgent` → `resolveAgentCard`):
 * `new DefaultAgentCardResolver().resolve(url)`, a full GET through the global `fetch` (Node's
 * bundled undici and its global dispatcher) and `response.json()`, every time, no cache.
 */
export function adkResolverSide(name: string, targets: readonly Target[], concurrency: number): Side {
  const sweep = async (deadlineMs: number): Promise<SweepCounts> => {
    let ok = 0;
    let unexpected = 0;
    let firstProblem: string | undefined;
    const r = await runPool(targets, concurrency, deadlineMs, async (t) => {
      const card = await new DefaultAgentCardResolver().resolve(t.baseUrl);
      if (typeof card.name === 'string' && card.name.length > 0) ok++;
      else {
        unexpected++;
        firstProblem ??= `${t.baseUrl}: a card without a name`;
      }
    });
    if (r.firstError !== undefined) firstProblem ??= String(r.firstError);
    return { ok, unexpected, errors: r.errors, timedOut: r.timedOut, ...(firstProblem !== undefined && { firstProblem }) };
  };
  return { name, warm: sweep, prepare: async () => undefined, sweep, close: async () => undefined };
}
