/**
 * The two clients compared in the refresh benchmarks, behind one interface:
 * - raw: `undici.request` on its own Agent, If-None-Match from a first unconditional GET;
 * - cache: `CardCache.get()` on a VirtualClock moved past max-age before each timed round, so
 *   every entry is due and each get() is one conditional refresh.
 * Both read the whole response, both keep connections alive, both count what they got.
 */
import { Agent, request } from 'undici';
import { CardCache } from '../../src/cache/index.js';
import { VirtualClock } from '../../src/clock/index.js';
import { createCardFetcher, type CardFetcher, type HostPolicy } from '../../src/fetch/index.js';
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
}

export function cacheSide(name: string, targets: readonly Target[], o: CacheSideOptions): Side & { cache: CardCache; clock: VirtualClock } {
  const clock = new VirtualClock({ wallStart: Date.now() });
  const inner = createCardFetcher({ policy: o.policy, maxConnectionsPerOrigin: o.connectionsPerOrigin });
  const fetcher = o.wrap ? o.wrap(inner) : inner;
  const cache = new CardCache({
    fetcher,
    hostPolicy: o.policy,
    clock,
    minTtlMs: 0,
    maxConcurrentFetches: o.concurrency,
    check: { allowLoopback: true },
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
