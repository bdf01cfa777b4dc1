/**
 * Benchmark 5: the discovery loop's cost per refresh cycle, `n` endpoints answering 304.
 *
 * One static source lists `n` reviewed agents whose base URLs are on the fault servers (child
 * process), spread round-robin over the origins. The loop and its card cache share one
 * `VirtualClock`; `start()` is never called, so no timer runs a cycle behind the benchmark's
 * back: every cycle is an explicit `refreshNow()`. Warm-up: the first cycle fetches every card
 * (200s, full checks), every agent enters health and the first snapshot (all `n` agents) is
 * published; one due and one fresh cycle follow, untimed. Each timed round then has:
 *
 * - a due cycle: the clock moves past max-age, so every card is due and the cycle is `n`
 *   conditional requests (304) plus the whole evaluation;
 * - a fresh cycle: nothing is due (every `get()` is a hit), so it is the pure evaluation cost:
 *   resolve, health, selection, snapshot build and digest compare;
 * - the baseline: `n` raw `undici.request` 304s at the cache's concurrency, same servers.
 *
 * The order of the due cycle (with its fresh cycle) and the baseline alternates per round.
 * Every timed cycle is checked: the server saw exactly `n` (or 0) requests, every entry was
 * revalidated in this cycle, the snapshot still holds `n` agents and was not republished.
 */
import { CardCache } from '../../packages/core/src/cache/index.js';
import { seededRandom, VirtualClock } from '../../packages/core/src/clock/index.js';
import { createCardFetcher, type HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { assertClean, timedSweep, type SweepResult } from './measure.js';
import type { ServerHandle } from './server.js';
import { rawSide, type Target } from './sides.js';
import { summarize, type Summary } from './stats.js';

interface CycleResult {
  seconds: number;
  /** Bench-process CPU (user + system) during the cycle, ms. */
  cpuMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** cpuMs per endpoint, in µs. */
  cpuUsPerEndpoint: number;
  /** Requests the servers received during the cycle. */
  serverRequests: number;
  newConnections: number;
  serverCpuUsPerRequest: number;
  /** Entries revalidated (304) in this very cycle, not stale. */
  revalidated: number;
  snapshotVersion: number;
  snapshotAgents: number;
}

interface LoopRound {
  round: number;
  order: string[];
  due: CycleResult;
  fresh: CycleResult;
  raw: SweepResult;
  /** due cycle seconds ÷ raw sweep seconds. */
  timeRatio: number;
  /** due cycle CPU per endpoint ÷ raw CPU per request. */
  cpuRatio: number;
}

export interface LoopReport {
  endpoints: number;
  origins: number;
  concurrency: number;
  warmup: { firstCycleSeconds: number; firstCycleCpuMs: number; snapshotAgents: number };
  rounds: LoopRound[];
  summary: {
    dueSeconds: Summary;
    dueCpuMs: Summary;
    dueCpuUsPerEndpoint: Summary;
    freshSeconds: Summary;
    freshCpuMs: Summary;
    freshCpuUsPerEndpoint: Summary;
    /** Fresh cycle wall time per endpoint, µs. */
    freshWallUsPerEndpoint: Summary;
    rawSeconds: Summary;
    rawCpuUsPerRequest: Summary;
    timeRatio: Summary;
    cpuRatio: Summary;
    dueServerCpuUsPerRequest: Summary;
  };
}

export interface LoopOptions {
  concurrency: number;
  rounds: number;
  /** Clock jump before each due cycle: past max-age. */
  advanceMs: number;
  /** Bound on each cycle and each sweep (real time). */
  limitMs: number;
  /** Number of origins the targets are spread over (for the report). */
  origins: number;
}

/** Awaits `p`, or throws once `ms` of real time have passed. */
async function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Target of issue 16: a loop cycle with nothing due costs at most this much CPU per endpoint, µs. */
export const FRESH_CYCLE_LIMIT_US = 5;

/** The local name of the benchmarks' `i`th agent: pseudo-random, so the selection's and the snapshot's sorts do real work. */
export function benchLocalName(random: () => number, i: number): string {
  return `agent_${Math.floor(random() * 36 ** 6).toString(36)}_${i.toString(36)}`;
}

/**
 * The benchmark's discovery loop over `cache`: one static source listing every target as a
 * reviewed agent tagged `billing`, a selection keeping them all, no periodic resync. Never started:
 * every cycle is an explicit `refreshNow()`.
 */
export function benchLoop(o: { cache: CardCache; clock: VirtualClock; random: () => number; policy: HostPolicy; targets: readonly Target[] }): DiscoveryLoop {
  const { cache, clock, random, policy, targets } = o;
  const n = targets.length;
  const source = staticSource({
    id: 'bench',
    clock,
    agents: targets.map((t, i) => ({ name: benchLocalName(random, i), url: t.baseUrl, description: 'Answers billing questions.', tags: ['billing'] })),
  });
  return new DiscoveryLoop({
    sources: [source],
    hostPolicy: policy,
    cache,
    clock,
    random,
    select: {
      needs: [{ tag: 'billing' }],
      // Every tag the bench cards carry, so no unknown-tag alert is raised per endpoint.
      vocabulary: new TagVocabulary(['billing', 'finance', 's1', 's2', 's3', 's4'].map((tag) => ({ tag, description: `Handles ${tag} requests.` }))),
      maxAgents: n,
    },
    // No periodic unconditional resync within the benchmark: every due refresh is a 304.
    resyncIntervalMs: 1_000 * 86_400_000,
  });
}

export async function loopBenchmark(server: ServerHandle, policy: HostPolicy, targets: readonly Target[], o: LoopOptions): Promise<LoopReport> {
  const n = targets.length;
  const random = seededRandom(7);
  const clock = new VirtualClock({ wallStart: Date.now() });
  const fetcher = createCardFetcher({ policy, maxConnectionsPerOrigin: 1 });
  const cache = new CardCache({
    fetcher,
    hostPolicy: policy,
    clock,
    random,
    minTtlMs: 0,
    maxConcurrentFetches: o.concurrency,
    // maxFetchesPerOrigin: 1, the default (P10): the concurrency comes from the many origins.
    check: { allowLoopback: true },
  });
  const loop = benchLoop({ cache, clock, random, policy, targets });
  const raw = rawSide('raw undici', targets, o.concurrency, 1);

  const cycle = async (label: string, expectRequests: number): Promise<CycleResult> => {
    const s0 = await server.stats();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const snap = await within(label, o.limitMs, loop.refreshNow());
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    const s1 = await server.stats();
    const wall = clock.wallNow();
    let revalidated = 0;
    for (const t of targets) {
      const e = await cache.peek(t.baseUrl);
      if (e !== undefined && e.lastOutcome === 'revalidated' && !e.stale && e.validatedAtWall === wall) revalidated++;
    }
    const serverRequests = s1.hits - s0.hits;
    const r: CycleResult = {
      seconds: (t1 - t0) / 1000,
      cpuMs: (c1.user + c1.system) / 1000,
      cpuUserMs: c1.user / 1000,
      cpuSystemMs: c1.system / 1000,
      cpuUsPerEndpoint: (c1.user + c1.system) / n,
      serverRequests,
      newConnections: s1.connections - s0.connections,
      serverCpuUsPerRequest: (s1.cpuUserUs - s0.cpuUserUs + s1.cpuSystemUs - s0.cpuSystemUs) / Math.max(1, serverRequests),
      revalidated,
      snapshotVersion: snap?.version ?? 0,
      snapshotAgents: snap?.agents.length ?? 0,
    };
    const problems: string[] = [];
    if (serverRequests !== expectRequests) problems.push(`the servers saw ${serverRequests} requests, expected ${expectRequests}`);
    if (expectRequests > 0 && revalidated !== n) problems.push(`${revalidated}/${n} entries revalidated in this cycle`);
    if (r.snapshotAgents !== n) problems.push(`the snapshot holds ${r.snapshotAgents} agents, expected ${n}`);
    if (r.snapshotVersion !== 1) problems.push(`snapshot version ${r.snapshotVersion}: a 304 cycle must not republish`);
    if (problems.length > 0) throw new Error(`loop / ${label}: ${problems.join('; ')}`);
    return r;
  };

  try {
    // Warm-up, untimed: first contact (200s, checks), health, first publication.
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const first = await within('loop / first cycle', o.limitMs, loop.refreshNow());
    const firstCycleSeconds = (performance.now() - t0) / 1000;
    const c1 = process.cpuUsage(c0);
    if (first === undefined || first.agents.length !== n) throw new Error(`loop / first cycle: published ${first?.agents.length ?? 'no'} agents, expected ${n}`);
    assertClean('loop / raw warm-up', await raw.warm(performance.now() + o.limitMs), n);
    await clock.advance(o.advanceMs);
    await cycle('warm-up due cycle', n);
    await cycle('warm-up fresh cycle', 0);

    const rounds: LoopRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const rawFirst = r % 2 === 0;
      let rawResult: SweepResult | undefined;
      if (rawFirst) rawResult = await timedSweep(server, raw, o.limitMs);
      await clock.advance(o.advanceMs);
      const due = await cycle(`round ${r + 1} due cycle`, n);
      const fresh = await cycle(`round ${r + 1} fresh cycle`, 0);
      if (!rawFirst) rawResult = await timedSweep(server, raw, o.limitMs);
      assertClean(`loop / raw round ${r + 1}`, rawResult!, n);
      rounds.push({
        round: r + 1,
        order: rawFirst ? ['raw', 'due', 'fresh'] : ['due', 'fresh', 'raw'],
        due,
        fresh,
        raw: rawResult!,
        timeRatio: due.seconds / rawResult!.seconds,
        cpuRatio: due.cpuUsPerEndpoint / rawResult!.clientCpuUsPerRequest,
      });
    }
    const pick = (f: (x: LoopRound) => number) => summarize(rounds.map(f));
    return {
      endpoints: n,
      origins: o.origins,
      concurrency: o.concurrency,
      warmup: { firstCycleSeconds, firstCycleCpuMs: (c1.user + c1.system) / 1000, snapshotAgents: first.agents.length },
      rounds,
      summary: {
        dueSeconds: pick((x) => x.due.seconds),
        dueCpuMs: pick((x) => x.due.cpuMs),
        dueCpuUsPerEndpoint: pick((x) => x.due.cpuUsPerEndpoint),
        freshSeconds: pick((x) => x.fresh.seconds),
        freshCpuMs: pick((x) => x.fresh.cpuMs),
        freshCpuUsPerEndpoint: pick((x) => x.fresh.cpuUsPerEndpoint),
        freshWallUsPerEndpoint: pick((x) => (x.fresh.seconds * 1e6) / n),
        rawSeconds: pick((x) => x.raw.seconds),
        rawCpuUsPerRequest: pick((x) => x.raw.clientCpuUsPerRequest),
        timeRatio: pick((x) => x.timeRatio),
        cpuRatio: pick((x) => x.cpuRatio),
        dueServerCpuUsPerRequest: pick((x) => x.due.serverCpuUsPerRequest),
      },
    };
  } finally {
    await loop.stop();
    await cache.close();
    await fetcher.close();
    await raw.close();
  }
}
