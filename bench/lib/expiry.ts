/**
 * Benchmark 2: mass expiry. Every one of `targets` entries expires at the same instant (the
 * virtual clock jumps past max-age), then `callers` concurrent callers each walk all endpoints
 * with get(), in their own shuffled order. Single-flight must turn that into exactly one
 * upstream request per endpoint. Baseline in the same round: a raw undici sweep of the same
 * endpoints at the cache's concurrency.
 */
import type { CardFetcher } from '../../src/fetch/index.js';
import type { HostPolicy } from '../../src/fetch/index.js';
import { assertClean, timedSweep, type SweepResult } from './measure.js';
import type { ServerHandle } from './server.js';
import { cacheSide, rawSide, type Target } from './sides.js';
import { percentile, shuffled, summarize, type Summary } from './stats.js';

export interface ExpiryRound {
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
      const latencies = new Float64Array(o.callers * n);
      let k = 0;
      let errors = 0;
      let unexpected = 0;
      let timedOut = false;
      const t0 = performance.now();
      const deadline = t0 + o.limitMs;
      await Promise.all(
        orders.map(async (order) => {
          for (const t of order) {
            if (performance.now() > deadline) {
              timedOut = true;
              return;
            }
            const s = performance.now();
            try {
              const e = await cache.cache.get(t.baseUrl);
              if (e.lastOutcome !== 'revalidated' || e.stale) unexpected++;
            } catch {
              errors++;
            }
            latencies[k++] = performance.now() - s;
          }
        }),
      );
      const t1 = performance.now();
      const s1 = await server.stats();
      if (!rawFirst) rawResult = await timedSweep(server, raw, o.limitMs);
      assertClean(`expiry / raw round ${r + 1}`, rawResult!, n);
      const lat = latencies.subarray(0, k);
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
