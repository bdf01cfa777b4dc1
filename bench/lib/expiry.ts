/**
 * Benchmark 2: mass expiry. Every one of `targets` entries expires at the same instant (the
 * virtual clock jumps past max-age), then `callers` concurrent callers each walk all endpoints
 * with get(), in their own shuffled order. Single-flight must turn that into exactly one
 * upstream request per endpoint. Baseline in the same round: a raw undici sweep of the same
 * endpoints at the cache's concurrency.
 */
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import type { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { assertClean, timedSweep, type SweepResult } from './measure.js';
import type { ServerHandle } from './server.js';
import { cacheSide, rawSide, type Target } from './sides.js';
import { percentile, shuffled, summarize, type Summary } from './stats.js';

interface ExpiryRound {
  round: number;
  order: string[];
  /** Upstream requests (counted at the fetcher) per endpoint. Must be 1. */
  upstreamPerEndpoint: number;
  /** Requests the server saw per endpoint. Must be 1. */
  serverRequestsPerEndpoint: number;
  callerCalls: number;
  callerErrors: number;
  /** get() answers that were not a freshly revalidated, non-stale entry. */
  callerUnexpected: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** From the clock jump to the end of the last upstream request. */
  refreshAllSeconds: number;
  /** From the clock jump to the last caller finishing its walk. */
  callersDoneSeconds: number;
  peakFetches: number;
  timedOut: boolean;
  raw: SweepResult;
  /** refreshAllSeconds / raw sweep seconds. */
  timeRatio: number;
}

export interface ExpiryReport {
  targets: number;
  callers: number;
  concurrency: number;
  rounds: ExpiryRound[];
  summary: {
    upstreamPerEndpoint: Summary;
    callerErrors: Summary;
    p50Ms: Summary;
    p99Ms: Summary;
    refreshAllSeconds: Summary;
    rawSweepSeconds: Summary;
    timeRatio: Summary;
  };
}

export async function expiryBenchmark(
  server: ServerHandle,
  policy: HostPolicy,
  targets: readonly Target[],
  o: { callers: number; concurrency: number; rounds: number; limitMs: number; advanceMs: number },
): Promise<ExpiryReport> {
  let upstream = 0;
  let lastFetchEnd = 0;
  const counting = (f: CardFetcher): CardFetcher => ({
    fetch(url, init) {
      upstream++;
      return f.fetch(url, init).finally(() => {
        lastFetchEnd = performance.now();
      });
    },
    close: () => f.close(),
  });
  const cache = cacheSide('cache', targets, { policy, concurrency: o.concurrency, connectionsPerOrigin: 1, advanceMs: o.advanceMs, wrap: counting });
  const raw = rawSide('raw', targets, o.concurrency, 1);
  const n = targets.length;
  try {
    assertClean('expiry / cache warm-up', await cache.warm(performance.now() + o.limitMs), n);
    assertClean('expiry / raw warm-up', await raw.warm(performance.now() + o.limitMs), n);
    const rounds: ExpiryRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const orders = Array.from({ length: o.callers }, (_, c) => shuffled(targets, 1_000 * (r + 1) + c));
      const rawFirst = r % 2 === 0;
      let rawResult: SweepResult | undefined;
      if (rawFirst) rawResult = await timedSweep(server, raw, o.limitMs);

      await cache.clock.advance(o.advanceMs);
      const s0 = await server.stats();
      const u0 = upstream;
      const t0 = performance.now();
      const { k, errors, unexpected, timedOut, lat } = await walkCallers(orders, t0 + o.limitMs, async (t) => {
        const e = await cache.cache.get(t.baseUrl);
        return e.lastOutcome === 'revalidated' && !e.stale;
      });
      const t1 = performance.now();
      const s1 = await server.stats();
      if (!rawFirst) rawResult = await timedSweep(server, raw, o.limitMs);
      assertClean(`expiry / raw round ${r + 1}`, rawResult!, n);
      const refreshAllSeconds = (lastFetchEnd - t0) / 1000;
      rounds.push({
        round: r + 1,
        order: rawFirst ? ['raw', 'cache'] : ['cache', 'raw'],
        upstreamPerEndpoint: (upstream - u0) / n,
        serverRequestsPerEndpoint: (s1.hits - s0.hits) / n,
        callerCalls: k,
        callerErrors: errors,
        callerUnexpected: unexpected,
        latencyMs: { p50: percentile(lat, 50), p99: percentile(lat, 99), max: percentile(lat, 100) },
        refreshAllSeconds,
        callersDoneSeconds: (t1 - t0) / 1000,
        peakFetches: cache.cache.concurrency.peak,
        timedOut,
        raw: rawResult!,
        timeRatio: refreshAllSeconds / rawResult!.seconds,
      });
    }
    const pick = (f: (x: ExpiryRound) => number) => summarize(rounds.map(f));
    return {
      targets: n,
      callers: o.callers,
      concurrency: o.concurrency,
      rounds,
      summary: {
        upstreamPerEndpoint: pick((x) => x.upstreamPerEndpoint),
        callerErrors: pick((x) => x.callerErrors),
        p50Ms: pick((x) => x.latencyMs.p50),
        p99Ms: pick((x) => x.latencyMs.p99),
        refreshAllSeconds: pick((x) => x.refreshAllSeconds),
        rawSweepSeconds: pick((x) => x.raw.seconds),
        timeRatio: pick((x) => x.timeRatio),
      },
    };
  } finally {
    await cache.close();
    await raw.close();
  }
}

/** Mass expiry through a peer that has no single-flight: what reaches the servers. */
interface PeerExpiryRound {
  round: number;
  /**
   * Requests the servers saw ÷ endpoints, per complete walk of every caller (hits × callers ÷
   * calls done: the same as hits ÷ endpoints when every call was made; 1 means coalesced,
   * `callers` means one request per call).
   */
  upstreamPerEndpoint: number;
  /** Requests the servers saw ÷ calls completed. */
  upstreamPerCall: number;
  callerCalls: number;
  callerErrors: number;
  callerUnexpected: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** From the start to the last caller finishing its walk. */
  callersDoneSeconds: number;
  /** Client CPU per call, µs. */
  clientCpuUsPerCall: number;
  timedOut: boolean;
}

export interface PeerExpiryReport {
  name: string;
  targets: number;
  callers: number;
  rounds: PeerExpiryRound[];
  summary: { upstreamPerEndpoint: Summary; callerErrors: Summary; p50Ms: Summary; p99Ms: Summary; callersDoneSeconds: Summary };
}

/**
 * The mass-expiry scenario for a peer client: after its warm-up, every entry needs a request
 * (for undici's cache: every card is `no-cache`, so each use must revalidate; for a client with no
 * cache: every call is a GET), then `callers` concurrent callers each walk every endpoint in their
 * own shuffled order (the same orders as the CardCache rounds). Bounded by `limitMs` per round.
 */
export async function peerExpiryBenchmark(
  server: ServerHandle,
  name: string,
  targets: readonly Target[],
  peer: { warm(deadlineMs: number): Promise<unknown>; call(t: Target): Promise<boolean>; close(): Promise<void> },
  o: { callers: number; rounds: number; limitMs: number },
): Promise<PeerExpiryReport> {
  const n = targets.length;
  try {
    await peer.warm(performance.now() + o.limitMs);
    const rounds: PeerExpiryRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const orders = Array.from({ length: o.callers }, (_, c) => shuffled(targets, 1_000 * (r + 1) + c));
      const s0 = await server.stats();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const { k, errors, unexpected, timedOut, lat } = await walkCallers(orders, t0 + o.limitMs, (t) => peer.call(t));
      const t1 = performance.now();
      const c1 = process.cpuUsage(c0);
      const s1 = await server.stats();
      const hits = s1.hits - s0.hits;
      rounds.push({
        round: r + 1,
        upstreamPerEndpoint: (hits * o.callers) / Math.max(1, k),
        upstreamPerCall: hits / Math.max(1, k),
        callerCalls: k,
        callerErrors: errors,
        callerUnexpected: unexpected,
        latencyMs: { p50: percentile(lat, 50), p99: percentile(lat, 99), max: percentile(lat, 100) },
        callersDoneSeconds: (t1 - t0) / 1000,
        clientCpuUsPerCall: (c1.user + c1.system) / Math.max(1, k),
        timedOut,
      });
    }
    const pick = (f: (x: PeerExpiryRound) => number) => summarize(rounds.map(f));
    return {
      name,
      targets: n,
      callers: o.callers,
      rounds,
      summary: {
        upstreamPerEndpoint: pick((x) => x.upstreamPerEndpoint),
        callerErrors: pick((x) => x.callerErrors),
        p50Ms: pick((x) => x.latencyMs.p50),
        p99Ms: pick((x) => x.latencyMs.p99),
        callersDoneSeconds: pick((x) => x.callersDoneSeconds),
      },
    };
  } finally {
    await peer.close();
  }
}

/**
 * The callers of a mass-expiry round: each walks its own order of the endpoints, one awaited call
 * at a time, until done or past `deadline`. `call` answers whether the result was the expected one.
 */
async function walkCallers(
  orders: ReadonlyArray<readonly Target[]>,
  deadline: number,
  call: (t: Target) => Promise<boolean>,
): Promise<{ k: number; errors: number; unexpected: number; timedOut: boolean; lat: Float64Array }> {
  const latencies = new Float64Array(orders.reduce((sum, o) => sum + o.length, 0));
  let k = 0;
  let errors = 0;
  let unexpected = 0;
  let timedOut = false;
  await Promise.all(
    orders.map(async (order) => {
      for (const t of order) {
        if (performance.now() > deadline) {
          timedOut = true;
          return;
        }
        const s = performance.now();
        try {
          if (!(await call(t))) unexpected++;
        } catch {
          errors++;
        }
        latencies[k++] = performance.now() - s;
      }
    }),
  );
  return { k, errors, unexpected, timedOut, lat: latencies.subarray(0, k) };
}
