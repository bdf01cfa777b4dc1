/**
 * Card-cache and discovery-pipeline benchmarks (`npm run bench`). See docs/benchmarks.md.
 *
 * 1. 304 refresh sweep: CardCache vs raw undici.request (and the bare card fetcher), with the
 *    peers a user would pick instead: undici 7's own cache interceptor (MemoryCacheStore) and
 *    ADK JS's DefaultAgentCardResolver (a full GET each time); same endpoints, same concurrency,
 *    same servers, interleaved rounds; 1b the same on one origin.
 * 2. Mass expiry: 1,000 entries expire at once, 100 concurrent callers; single-flight must
 *    make it exactly one upstream request per endpoint. The same callers through the peers.
 * 3. Retained heap + external memory per cached card at 1,000 and 100,000 cards (child processes
 *    with --expose-gc): CardCache, a Map of body + JSON.parse, undici's MemoryCacheStore.
 * 4. Pipeline CPU (a child with --expose-gc): snapshot build and digest for 1k, 10k and 100k
 *    agents with the n log n growth check; diff, selection and resolution over 10k.
 * 5. Discovery loop, 10,000 endpoints answering 304: CPU and wall time per refresh cycle (all
 *    due, and all fresh), against raw undici.request 304s in the same rounds.
 * 6. Hot path (a child process): ns per CardCache.get() hit (with and without an event stream)
 *    and per TreeFactory.rootFor() (1 and 10,000 sessions), against bare and awaited Map.get.
 * 7. Telemetry cost (child processes): the 304 refresh sweep of 1 with no tracer provider, with
 *    one and sampling off, and with sampling on, as ratios to no provider (also on its own:
 *    bench/telemetry.ts).
 *
 * Every target of issue 16 is printed with its verdict at the end and kept in `verdicts`; the
 * scale targets come from the last `npm run bench:scale` (bench/results/scale.json) when present.
 *
 * The fault servers run in a child process (127.0.0.1 only); client and servers share the
 * machine's cores. Prints a table to stdout and writes bench/results/latest.json.
 * Environment: BENCH_ROUNDS (default 5; also the loop's rounds), BENCH_HEAP_ROUNDS (default 3),
 * BENCH_PIPELINE_REPS (default 7), BENCH_EXPIRY_PEER_ROUNDS (default 1: 100,000 calls each),
 * BENCH_HOT_ROUNDS (default 21).
 */
import { existsSync, readFileSync } from 'node:fs';
import { machineMeta, writeResults } from './lib/results.js';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { HostPolicy } from '../packages/core/src/fetch/index.js';
import { DefaultAgentCardResolver } from 'a2a-sdk-0314/client';
import { request } from 'undici';
import { expiryBenchmark, peerExpiryBenchmark, type ExpiryReport, type PeerExpiryReport } from './lib/expiry.js';
import { BYTES_PER_CARD_LIMIT, heapBenchmark, type HeapReport } from './lib/heap.js';
import { AWAITED_BASELINE, BARE_BASELINE, CARD_CACHE_HOT_LIMIT, EVENTS_CASE, HOT_PATH_LIMIT, hotPathBenchmark, type HotPathReport } from './lib/hot-path.js';
import { FRESH_CYCLE_LIMIT_US, loopBenchmark, type LoopReport } from './lib/loop.js';
import { runPool } from './lib/pool.js';
import type { ScaleVerdicts } from './scale.js';
import { NLOGN_THRESHOLD, pipelineBenchmark, type GrowthRow, type PipelineReport } from './lib/pipeline.js';
import { refreshBenchmark, type RefreshReport } from './lib/refresh.js';
import { startServerChild } from './lib/server.js';
import { telemetryBenchmark, telemetryTable, type TelemetryReport } from './lib/telemetry.js';
import { adkResolverSide, cacheSide, fetcherSide, rawSide, undiciCacheSide, undiciCachingAgent, type Target } from './lib/sides.js';
import { fmt, fmtSummary, summarize, table, type Summary } from './lib/stats.js';
import { envCount } from './lib/env.js';

const ROUNDS = envCount('BENCH_ROUNDS', 5, 50);
const HEAP_ROUNDS = envCount('BENCH_HEAP_ROUNDS', 3, 50);
const EXPIRY_PEER_ROUNDS = envCount('BENCH_EXPIRY_PEER_ROUNDS', 1, 50);
const HOT_ROUNDS = envCount('BENCH_HOT_ROUNDS', 21, 50);
const PIPELINE_REPS = envCount('BENCH_PIPELINE_REPS', 7, 50);
const PIPELINE_SIZES = [1_000, 10_000, 100_000];
/** Agents per timed snapshot sample: a small size is called on this many agents' worth of different lists. */
const PIPELINE_AGENTS_PER_SAMPLE = 50_000;
const PIPELINE_LIMIT_MS = 90_000;
const LOOP_N = 10_000;
const ORIGINS = 64;
const REFRESH_N = 2_000;
const CONCURRENCY = 32;
const EXPIRY_N = 1_000;
const CALLERS = 100;
/** Cards held in the heap benchmark: (entries, child processes). */
const HEAP_SIZES: Array<[number, number, Array<'baseline' | 'undici'>]> = [
  [1_000, HEAP_ROUNDS, ['baseline', 'undici']],
  // The Map baseline barely depends on the count (see 1,000): left out to keep this process short.
  [100_000, 1, ['undici']],
];
const PER_ORIGIN = Math.ceil(Math.max(LOOP_N, ...HEAP_SIZES.map(([n]) => n)) / ORIGINS);
/** Endpoints per origin answering `no-cache`, for undici's cache (it reads the real clock). */
const NO_CACHE_PER_ORIGIN = Math.ceil(Math.max(REFRESH_N, EXPIRY_N) / ORIGINS);
const NO_CACHE = 'public, no-cache';
const MAX_AGE_S = 300;
const ADVANCE_MS = (MAX_AGE_S + 100) * 1000;
const SWEEP_LIMIT_MS = 60_000;
/** Bound on each peer's mass-expiry round (a client without single-flight makes 100,000 requests). */
const PEER_EXPIRY_LIMIT_MS = 30_000;
const TOTAL_LIMIT_MS = 15 * 60_000;

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench +${((performance.now() - t00) / 1000).toFixed(0)}s] ${msg}\n`);

// Every loop below is bounded; this is the bound on the whole run.
const watchdog = setTimeout(() => {
  console.error(`[bench] aborted: the run exceeded ${TOTAL_LIMIT_MS / 60_000} minutes`);
  process.exit(2);
}, TOTAL_LIMIT_MS);
watchdog.unref();

const started = new Date();
const loadBefore = os.loadavg();
log(`starting fault servers: ${ORIGINS} origins × (${PER_ORIGIN} + ${NO_CACHE_PER_ORIGIN} no-cache) endpoints + 1 origin × ${REFRESH_N}`);
const server = await startServerChild(
  { origins: ORIGINS, perOrigin: PER_ORIGIN, soloEndpoints: REFRESH_N, cacheControl: `public, max-age=${MAX_AGE_S}`, noCacheTwins: NO_CACHE_PER_ORIGIN, noCacheControl: NO_CACHE },
  120_000,
);
const { origins, solo, cardBytes } = server.ready;
const policy = HostPolicy.from({ allow: [...origins, solo], allowLoopback: true });
const target = (origin: string, id: string): Target => ({ baseUrl: `${origin}/${id}/`, cardUrl: `${origin}/${id}/.well-known/agent-card.json` });
/** Endpoints spread round-robin over the origins (`n…`: their no-cache twins, same cards). */
const spread = (n: number, prefix = 'a'): Target[] => {
  const out: Target[] = [];
  for (let j = 0; out.length < n; j++) for (const o of origins) if (out.length < n) out.push(target(o, `${prefix}${j}`));
  return out;
};
const UNDICI = 'undici cache';
const ADK = 'ADK JS today';

let multi: RefreshReport;
let single: RefreshReport;
let expiry: ExpiryReport;
let expiryPeers: PeerExpiryReport[];
const heaps: HeapReport[] = [];
let loop: LoopReport;
let telemetry: TelemetryReport;
try {
  log(`1. refresh sweep, ${fmt(REFRESH_N, 0)} endpoints over ${ORIGINS} origins, concurrency ${CONCURRENCY}, ${ROUNDS} rounds`);
  const multiTargets = spread(REFRESH_N);
  const sidesA = [
    rawSide('raw undici', multiTargets, CONCURRENCY, 1),
    fetcherSide('CardFetcher', multiTargets, policy, CONCURRENCY, 1),
    cacheSide('CardCache', multiTargets, { policy, concurrency: CONCURRENCY, connectionsPerOrigin: 1, advanceMs: ADVANCE_MS }),
    undiciCacheSide(UNDICI, spread(REFRESH_N, 'n'), CONCURRENCY, 1),
    adkResolverSide(ADK, multiTargets, CONCURRENCY),
  ];
  try {
    multi = await refreshBenchmark('refresh, many origins', server, sidesA, 'raw undici', { targets: REFRESH_N, concurrency: CONCURRENCY, rounds: ROUNDS, sweepLimitMs: SWEEP_LIMIT_MS });
  } finally {
    for (const s of sidesA) await s.close();
  }

  log(`1b. refresh sweep, ${fmt(REFRESH_N, 0)} endpoints on one origin, ${ROUNDS} rounds`);
  const soloTargets = Array.from({ length: REFRESH_N }, (_, j) => target(solo, `s${j}`));
  const sidesB = [
    rawSide('raw undici c1', soloTargets, 1, 1),
    rawSide(`raw undici c${CONCURRENCY}`, soloTargets, CONCURRENCY, CONCURRENCY),
    cacheSide(`CardCache c${CONCURRENCY}`, soloTargets, { policy, concurrency: CONCURRENCY, connectionsPerOrigin: CONCURRENCY, advanceMs: ADVANCE_MS }),
  ];
  try {
    single = await refreshBenchmark('refresh, one origin', server, sidesB, 'raw undici c1', { targets: REFRESH_N, concurrency: CONCURRENCY, rounds: ROUNDS, sweepLimitMs: SWEEP_LIMIT_MS });
  } finally {
    for (const s of sidesB) await s.close();
  }

  log(`2. mass expiry, ${EXPIRY_N} endpoints, ${CALLERS} callers, ${ROUNDS} rounds`);
  expiry = await expiryBenchmark(server, policy, spread(EXPIRY_N), { callers: CALLERS, concurrency: CONCURRENCY, rounds: ROUNDS, limitMs: SWEEP_LIMIT_MS, advanceMs: ADVANCE_MS });
  log(`2. mass expiry through the peers (${UNDICI}, ${ADK}), ${EXPIRY_PEER_ROUNDS} round(s)`);
  expiryPeers = [];
  {
    const twins = spread(EXPIRY_N, 'n');
    const { agent, dispatcher } = undiciCachingAgent(1);
    const get = async (t: Target) => {
      const res = await request(t.cardUrl, { dispatcher, method: 'GET', headers: { accept: 'application/json', 'a2a-version': '1.0' } });
      const body = await res.body.arrayBuffer();
      // Served from the store (undici adds `age` only there) after the revalidation the server counted.
      return res.statusCode === 200 && body.byteLength > 0 && res.headers.age !== undefined;
    };
    expiryPeers.push(
      await peerExpiryBenchmark(
        server,
        UNDICI,
        twins,
        {
          warm: (deadlineMs) =>
            runPool(twins, CONCURRENCY, deadlineMs, async (t) => {
              if (!(await get(t))) throw new Error(`${t.cardUrl}: warm-up failed`);
            }),
          call: get,
          close: () => agent.close(),
        },
        { callers: CALLERS, rounds: EXPIRY_PEER_ROUNDS, limitMs: PEER_EXPIRY_LIMIT_MS },
      ),
    );
    const adkTargets = spread(EXPIRY_N);
    const resolve = async (t: Target) => (await new DefaultAgentCardResolver().resolve(t.baseUrl)).name.length > 0;
    expiryPeers.push(
      await peerExpiryBenchmark(
        server,
        ADK,
        adkTargets,
        { warm: (deadlineMs) => runPool(adkTargets, CONCURRENCY, deadlineMs, async (t) => void (await resolve(t))), call: resolve, close: async () => undefined },
        { callers: CALLERS, rounds: EXPIRY_PEER_ROUNDS, limitMs: PEER_EXPIRY_LIMIT_MS },
      ),
    );
  }

  for (const [n, rounds, comparisons] of HEAP_SIZES) {
    log(`3. memory per cached card, ${fmt(n, 0)} entries (CardCache, ${comparisons.join(', ')}), ${rounds} child process(es)`);
    heaps.push(await heapBenchmark(origins, PER_ORIGIN, { n, concurrency: CONCURRENCY, rounds, limitMs: 180_000, comparisons }));
  }

  log(`5. discovery loop, ${fmt(LOOP_N, 0)} endpoints over ${ORIGINS} origins answering 304, ${ROUNDS} rounds`);
  loop = await loopBenchmark(server, policy, spread(LOOP_N), { concurrency: CONCURRENCY, rounds: ROUNDS, advanceMs: ADVANCE_MS, limitMs: SWEEP_LIMIT_MS, origins: ORIGINS });

  log(`7. telemetry cost: refresh sweep of ${fmt(REFRESH_N, 0)} endpoints without a provider, sampling off and on, ${ROUNDS} rounds (child processes)`);
  telemetry = await telemetryBenchmark([...origins], REFRESH_N, { concurrency: CONCURRENCY, rounds: ROUNDS, warmSweeps: 2, sweeps: 5, advanceMs: ADVANCE_MS, limitMs: SWEEP_LIMIT_MS });
} finally {
  await server.close();
}
log(`6. hot path: CardCache.get() hits and TreeFactory.rootFor(), ${HOT_ROUNDS} rounds (a child process)`);
const hot: HotPathReport = await hotPathBenchmark({ warmupRounds: 5, rounds: HOT_ROUNDS, syncBatch: 200_000, asyncBatch: 50_000, entries: 1_000, sessions: 10_000, limitMs: 90_000 });
log(`4. pipeline CPU: snapshots of ${PIPELINE_SIZES.map((n) => fmt(n, 0)).join(', ')} agents, diff/select/resolve over 10,000, ${PIPELINE_REPS} repetitions`);
const pipeline: PipelineReport = await pipelineBenchmark({
  sizes: PIPELINE_SIZES,
  reps: PIPELINE_REPS,
  warmupReps: 1,
  agentsPerSample: PIPELINE_AGENTS_PER_SAMPLE,
  n10k: 10_000,
  diffShare: 0.01,
  limitMs: PIPELINE_LIMIT_MS,
});

// ---- report -------------------------------------------------------------------------------

const cacheRatio = multi.summary['CardCache']!.throughputRatio!;
const cacheCpu = multi.summary['CardCache']!.cpuPerRequestRatio!;
const heapAt = (n: number) => heaps.find((h) => h.entries === n)!;
const hotRow = (name: string) => hot.rows.find((r) => r.name.startsWith(name))!;
const hotEvents = hotRow(EVENTS_CASE);
const hotRoot1 = hotRow('rootFor, 1 session');
const hotRoot10k = hotRow('rootFor, 10,000 sessions');

/** The scale targets, from the last `npm run bench:scale` (a separate script: 100,000 endpoints). */
const scalePath = fileURLToPath(new URL('./results/scale.json', import.meta.url));
function readScale(): { started: string; verdicts: ScaleVerdicts } | undefined {
  if (!existsSync(scalePath)) return undefined;
  try {
    const j = JSON.parse(readFileSync(scalePath, 'utf8')) as { meta?: { started?: string }; verdicts?: ScaleVerdicts };
    return j.verdicts && { started: j.meta?.started ?? '?', verdicts: j.verdicts };
  } catch {
    return undefined;
  }
}
const scaleRun = readScale();

const verdicts = {
  refreshThroughputAtLeast0_9OfRaw: cacheRatio.median >= 0.9,
  refreshClientCpuPer304AtMost1_3OfRaw: cacheCpu.median <= 1.3,
  expiryExactlyOneUpstreamPerEndpoint: expiry.rounds.every((r) => r.upstreamPerEndpoint === 1 && r.serverRequestsPerEndpoint === 1),
  expiryNoCallerErrors: expiry.rounds.every((r) => r.callerErrors === 0 && r.callerUnexpected === 0),
  hotPathCardCacheGetWithEventsAtMost1_5xAwaitedMapGet: hot.verdicts.cardCacheGetWithEventsAtMost1_5xAwaitedMapGet,
  hotPathRootFor1SessionAtMost2xMapGet: hot.verdicts.rootFor1SessionAtMost2xMapGet,
  hotPathRootFor10kSessionsAtMost2xMapGet: hot.verdicts.rootFor10kSessionsAtMost2xMapGet,
  memoryAtMost3000BytesPerCardAt1k: heapAt(1_000).summary.cacheTotalBytesPerEntry.median <= BYTES_PER_CARD_LIMIT,
  memoryAtMost3000BytesPerCardAt100k: heapAt(100_000).summary.cacheTotalBytesPerEntry.median <= BYTES_PER_CARD_LIMIT,
  snapshotBuildTimeWithin1_2OfNLogN: pipeline.verdicts.buildTimeWithinNLogN,
  snapshotDigestTimeWithin1_2OfNLogN: pipeline.verdicts.digestTimeWithinNLogN,
  snapshotBuildWorkWithin1_2OfNLogN: pipeline.verdicts.buildWorkWithinNLogN,
  snapshotDigestWorkWithin1_2OfNLogN: pipeline.verdicts.digestWorkWithinNLogN,
  snapshotDigestsAgree: pipeline.verdicts.digestsAgree,
  loopFreshCycleAtMost5UsPerEndpoint: loop.summary.freshCpuUsPerEndpoint.median <= FRESH_CYCLE_LIMIT_US,
  /** From bench/results/scale.json (`npm run bench:scale`); null when it was never run. */
  scale: scaleRun === undefined ? null : { ...scaleRun.verdicts, measuredAt: scaleRun.started },
};

const ok = (b: boolean) => (b ? 'met' : 'NOT MET');
/** `fmtSummary`, or a dash for a side not measured (NaN). */
const cell = (s: Summary, d?: number) => (Number.isNaN(s.median) ? '– (not measured)' : fmtSummary(s, d));
const opt = (s: Summary | undefined, d?: number) => (s === undefined ? '1 (baseline)' : fmtSummary(s, d));
function refreshTable(rep: RefreshReport): string {
  return table(
    ['client', 'requests/s', 'client CPU µs/req', 'server CPU µs/req', `throughput ÷ ${rep.baseline}`, `client CPU/req ÷ ${rep.baseline}`],
    Object.entries(rep.summary).map(([name, s]) => [
      name,
      fmtSummary(s.requestsPerSecond, 0),
      fmtSummary(s.clientCpuUsPerRequest, 0),
      fmtSummary(s.serverCpuUsPerRequest, 0),
      opt(s.throughputRatio, 2),
      opt(s.cpuPerRequestRatio, 2),
    ]),
  );
}

const out: string[] = [];
out.push(`a2a-discovery benchmarks (card cache, discovery pipeline) — ${started.toISOString()}`);
out.push(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load avg at start ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
out.push(
  `Fault servers in a child process, client here; both on the same cores; 127.0.0.1 only. Card body ${cardBytes} B (endpoint a0; others a few bytes more), Cache-Control: public, max-age=${MAX_AGE_S} (undici cache's endpoints: ${NO_CACHE}).`,
);
out.push(`Figures: median [min–max] over ${ROUNDS} interleaved rounds (heap: processes as stated). Trust the ratios more than the absolutes.`);
out.push('');
out.push(`1. Conditional refresh sweep, all 304: ${fmt(REFRESH_N, 0)} endpoints over ${ORIGINS} origins, concurrency ${CONCURRENCY}, 1 keep-alive connection per origin`);
out.push(
  `   ${UNDICI}: undici.request through interceptors.cache + MemoryCacheStore on an Agent with 1 connection per origin; its endpoints (the same cards, ids n…) send ${NO_CACHE}, so each use is a conditional request (304) served from the store. An interceptor below the cache drops Cache-Control from the 304s (undici deletes the entry on a 304 that carries it: the next use would be a full GET).`,
);
out.push(`   ${ADK}: new DefaultAgentCardResolver().resolve(baseUrl) (@a2a-js/sdk 0.3.14, as @google/adk 2.0 calls it): a full GET (200) through the global fetch every time.`);
out.push(refreshTable(multi));
out.push(`   CardCache ÷ raw throughput ${fmtSummary(cacheRatio, 2)} — target ≥ 0.9: ${ok(verdicts.refreshThroughputAtLeast0_9OfRaw)}`);
out.push(`   CardCache client CPU per 304 ÷ raw ${fmtSummary(cacheCpu, 2)} — target ≤ 1.3: ${ok(verdicts.refreshClientCpuPer304AtMost1_3OfRaw)}`);
out.push('');
out.push(`1b. Same sweep, ${fmt(REFRESH_N, 0)} endpoints on ONE origin (CardCache runs ≤ 1 fetch per origin by design, P10, whatever maxConnectionsPerOrigin says)`);
out.push(refreshTable(single));
out.push('');
out.push(`2. Mass expiry: ${fmt(EXPIRY_N, 0)} entries expire at once, ${CALLERS} concurrent callers each get() every endpoint (shuffled), maxConcurrentFetches ${CONCURRENCY}, ${ORIGINS} origins`);
const e = expiry.summary;
out.push(
  table(
    ['measure', 'median [min–max]'],
    [
      ['upstream requests ÷ endpoints (must be 1)', `${fmtSummary(e.upstreamPerEndpoint, 3)} — ${ok(verdicts.expiryExactlyOneUpstreamPerEndpoint)}`],
      ['caller errors (of ' + fmt(CALLERS * EXPIRY_N, 0) + ' calls)', `${fmtSummary(e.callerErrors, 0)} — ${ok(verdicts.expiryNoCallerErrors)}`],
      ['caller latency p50, ms', fmtSummary(e.p50Ms, 3)],
      ['caller latency p99, ms', fmtSummary(e.p99Ms, 1)],
      ['time to refresh all, s', fmtSummary(e.refreshAllSeconds, 3)],
      [`raw undici sweep of the same endpoints (c${CONCURRENCY}), s`, fmtSummary(e.rawSweepSeconds, 3)],
      ['refresh-all time ÷ raw sweep time', fmtSummary(e.timeRatio, 2)],
    ],
  ),
);
out.push(
  `   The same ${CALLERS} callers × ${fmt(EXPIRY_N, 0)} endpoints through the peers (${EXPIRY_PEER_ROUNDS} round(s), each bounded to ${PEER_EXPIRY_LIMIT_MS / 1000} s; ${UNDICI}: every entry ${NO_CACHE}, so every use must revalidate; Cache-Control dropped from 304s below undici's cache, which would delete the entry; ${ADK}: no cache). Upstream ÷ endpoints is per complete walk of all callers (requests × callers ÷ calls done).`,
);
out.push(
  table(
    ['client', 'upstream requests ÷ endpoints', `calls done (of ${fmt(CALLERS * EXPIRY_N, 0)})`, 'caller errors', 'p50 ms', 'p99 ms', 'callers done, s'],
    [
      ['CardCache', fmtSummary(e.upstreamPerEndpoint, 2), fmt(expiry.rounds[0]?.callerCalls ?? NaN, 0), fmtSummary(e.callerErrors, 0), fmtSummary(e.p50Ms, 3), fmtSummary(e.p99Ms, 1), fmtSummary(summarize(expiry.rounds.map((r) => r.callersDoneSeconds)), 2)],
      ...expiryPeers.map((x) => [
        x.name,
        fmtSummary(x.summary.upstreamPerEndpoint, 2),
        `${fmt(x.rounds[0]?.callerCalls ?? NaN, 0)}${x.rounds.some((r) => r.timedOut) ? ' (timed out)' : ''}`,
        fmtSummary(x.summary.callerErrors, 0),
        fmtSummary(x.summary.p50Ms, 3),
        fmtSummary(x.summary.p99Ms, 1),
        fmtSummary(x.summary.callersDoneSeconds, 2),
      ]),
    ],
  ),
);
out.push('');
out.push(`3. Retained memory per cached card (heap + external), GC forced (--expose-gc), servers in another process; target ≤ ${fmt(BYTES_PER_CARD_LIMIT, 0)} B in total per card`);
for (const hp of heaps) {
  const h = hp.summary;
  const met = hp.summary.cacheTotalBytesPerEntry.median <= BYTES_PER_CARD_LIMIT;
  out.push(`   ${fmt(hp.entries, 0)} cards, ${hp.rounds.length} process(es), card body ${fmt(hp.bodyBytes, 0)} B`);
  out.push(
    table(
      ['measure', 'median [min–max]'],
      [
        [`CardCache, heap + external bytes per card (target ≤ ${fmt(BYTES_PER_CARD_LIMIT, 0)})`, `${fmtSummary(h.cacheTotalBytesPerEntry, 0)} — ${ok(met)}`],
        ['  of which external', fmtSummary(h.cacheExternalBytesPerEntry, 0)],
        ['  of which compiled code (the code spaces grown during the pass: once per process, not per card)', fmtSummary(h.cacheCodeBytesPerEntry, 0)],
        ['baseline Map{body string, JSON.parse}, heap + external per card', cell(h.baselineTotalBytesPerEntry, 0)],
        [`${UNDICI} (MemoryCacheStore), heap + external per card`, cell(h.undiciTotalBytesPerEntry, 0)],
        ['  of which external', cell(h.undiciExternalBytesPerEntry, 0)],
        ['CardCache heap ÷ baseline heap', cell(h.ratioToBaseline, 2)],
        ['CardCache heap only, bytes per card', fmtSummary(h.cacheBytesPerEntry, 0)],
        ['  of which: entry objects in dictionary mode (freed by a copy of the same fields)', fmtSummary(h.breakdown.entryShape, 0)],
        ['  of which: the card model or its slot (+ what only it keeps alive)', fmtSummary(h.breakdown.card, 0)],
        ['  of which: cacheHeaders (caching headers kept)', fmtSummary(h.breakdown.cachePolicy, 0)],
        ['  of which: the body as held (packed when that pays)', fmtSummary(h.breakdown.body, 0)],
        ['  of which: the rest (entry, key, hashes, URLs, Map slot)', fmtSummary(h.breakdown.rest, 0)],
        [`time to populate ${fmt(hp.entries, 0)} entries (200s, full card checks), s`, fmtSummary(h.populateSecondsCache, 2)],
      ],
    ),
  );
}
out.push('');
const p = pipeline;
const growthCell = (r: GrowthRow) => `${fmt(r.normalized.median, 2)} [${fmt(r.normalized.min, 2)}–${fmt(r.normalized.max, 2)}]`;
out.push(
  `4. Snapshot build and digest, pure CPU (child process, GC before each sample, ${p.raw.repsDone} repetitions; each sample covers ${fmt(PIPELINE_AGENTS_PER_SAMPLE, 0)} agents, on different lists)`,
);
out.push(
  table(
    ['agents', 'buildSnapshot, ms', 'snapshotDigest, ms', 'digest of sorted input, ms', 'baseline: sort names as strings, ms'],
    p.build.map((r, i) => [fmt(r.n, 0), fmtSummary(r.ms, 2), fmtSummary(p.digest[i]!.ms, 2), fmtSummary(p.digestSorted[i]!.ms, 2), fmtSummary(p.plainSort[i]!.ms, 2)]),
  ),
);
out.push(`   Growth: cost per n·log2 n ÷ the ${fmt(PIPELINE_SIZES[0]!, 0)}-agent case (n log n gives 1; from 1k to 100k n^1.2 gives 1.5, n² gives 60)`);
out.push(
  table(
    ['agents', 'build, time', 'digest, time', 'baseline sort, time', 'build, localName reads', 'digest, localName reads'],
    p.build.map((r, i) => [
      fmt(r.n, 0),
      growthCell(r),
      growthCell(p.digest[i]!),
      growthCell(p.plainSort[i]!),
      fmt(p.readsNormalized.build[r.n]!, 2),
      fmt(p.readsNormalized.digest[r.n]!, 2),
    ]),
  ),
);
out.push(
  `   Grows no faster than n log n — in work (reads ≤ ${NLOGN_THRESHOLD}×): build ${ok(verdicts.snapshotBuildWorkWithin1_2OfNLogN)}, digest ${ok(verdicts.snapshotDigestWorkWithin1_2OfNLogN)}; ` +
    `in time (≤ ${NLOGN_THRESHOLD}×): build ${ok(verdicts.snapshotBuildTimeWithin1_2OfNLogN)}, digest ${ok(verdicts.snapshotDigestTimeWithin1_2OfNLogN)}. buildSnapshot digest = snapshotDigest: ${ok(verdicts.snapshotDigestsAgree)}`,
);
const sel = (name: string) => p.raw.select[name]!;
out.push('');
out.push('4b. Pipeline stages over 10,000 (one call per sample; median [min–max] ms)');
out.push(
  table(
    ['operation', 'ms', 'µs per item', 'result'],
    [
      [
        'diffSnapshots, two 10k snapshots differing in 1%',
        fmtSummary(p.diffMs, 2),
        fmt((p.diffMs.median * 1000) / p.raw.diff.agents, 2),
        `${p.raw.diff.changed} changed, ${p.raw.diff.added} added, ${p.raw.diff.removed} removed`,
      ],
      ...Object.entries(p.selectMs).map(([name, s]) => [
        `selectAgents, 10k candidates, ${name}`,
        fmtSummary(s, 1),
        fmt((s.median * 1000) / sel(name).candidates, 2),
        `${sel(name).selected} selected, ${sel(name).excluded} excluded, ${sel(name).unsuitable} unsuitable`,
      ]),
      ['resolveEndpoints, 10k records', fmtSummary(p.resolveMs, 1), fmt((p.resolveMs.median * 1000) / p.raw.resolve.records, 2), `${p.raw.resolve.admitted} admitted`],
      [
        `toSnapshotAgents + buildSnapshot of the ${fmt(p.raw.snapshotOfSelection.agents, 0)} selected`,
        fmtSummary(p.snapshotOfSelectionMs, 1),
        fmt((p.snapshotOfSelectionMs.median * 1000) / p.raw.snapshotOfSelection.agents, 2),
        'input already sorted by name',
      ],
    ],
  ),
);
out.push('');
const l = loop.summary;
const scaled = (x: Summary, k: number): Summary => ({ ...x, median: x.median * k, min: x.min * k, max: x.max * k });
out.push(
  `5. Discovery loop per refresh cycle: ${fmt(loop.endpoints, 0)} static agents on ${loop.origins} origins, all answering 304; cache maxConcurrentFetches ${loop.concurrency}, 1 fetch and 1 connection per origin; VirtualClock; ${ROUNDS} rounds`,
);
out.push(
  table(
    ['measure', 'median [min–max]'],
    [
      ['due cycle (every card due, 10k × 304), wall s', fmtSummary(l.dueSeconds, 2)],
      ['due cycle, bench-process CPU ms', fmtSummary(l.dueCpuMs, 0)],
      ['due cycle, CPU µs per endpoint', fmtSummary(l.dueCpuUsPerEndpoint, 0)],
      ['fresh cycle (nothing due: pure evaluation), wall ms', fmtSummary(scaled(l.freshSeconds, 1000), 0)],
      ['fresh cycle, CPU ms', fmtSummary(l.freshCpuMs, 0)],
      [`fresh cycle, CPU µs per endpoint (target ≤ ${FRESH_CYCLE_LIMIT_US})`, `${fmtSummary(l.freshCpuUsPerEndpoint, 1)} — ${ok(verdicts.loopFreshCycleAtMost5UsPerEndpoint)}`],
      ['fresh cycle, wall µs per endpoint', fmtSummary(l.freshWallUsPerEndpoint, 1)],
      [`raw undici, 10k × 304 at c${loop.concurrency}, wall s`, fmtSummary(l.rawSeconds, 2)],
      ['raw undici, client CPU µs per request', fmtSummary(l.rawCpuUsPerRequest, 0)],
      ['due cycle time ÷ raw sweep time', fmtSummary(l.timeRatio, 2)],
      ['due cycle CPU per endpoint ÷ raw CPU per request', fmtSummary(l.cpuRatio, 2)],
      ['server CPU µs per request (due cycle)', fmtSummary(l.dueServerCpuUsPerRequest, 0)],
      ['first cycle (10k × 200, full card checks, untimed warm-up), s / CPU ms', `${fmt(loop.warmup.firstCycleSeconds, 2)} / ${fmt(loop.warmup.firstCycleCpuMs, 0)}`],
    ],
  ),
);
out.push('');
out.push(
  `6. Hot path, ns per call (a child process; ${hot.raw.roundsDone} rounds of one batch per case, order rotated, after ${hot.input.warmupRounds} warm-up rounds; ${fmt(hot.input.syncBatch, 0)} calls per synchronous batch, ${fmt(hot.input.asyncBatch, 0)} per awaited one; ratios paired per round)`,
);
out.push(
  `   CardCache: ${fmt(hot.input.entries, 0)} fresh entries (max-age=3600, system clock), fetcher and server closed before timing (fetches during timing: ${hot.raw.fetchesDuringTiming}); events: an EventStream with one subscriber taking every event (events per call: ${Object.entries(hot.raw.eventsPerCall)
    .map(([k, v]) => `${k.slice(k.indexOf('hitEvents'))} ${fmt(v, 3)}`)
    .join(', ')}). Each timed batch ends with one turn of the event loop (counted hits are published then). rootFor: sessions pinned through rootFor, system clock, default idle timeout.`,
);
out.push(
  table(
    ['operation', 'ns per call', `÷ ${BARE_BASELINE}`, `÷ ${AWAITED_BASELINE}`],
    hot.rows.map((r) => [r.name, fmtSummary(r.ns, 1), fmtSummary(r.vsMapGet, 2), fmtSummary(r.vsAwaitedMapGet, 2)]),
  ),
);
out.push(`   CardCache.get with events ÷ awaited Map.get ${fmtSummary(hotEvents.vsAwaitedMapGet, 2)} — target ≤ ${CARD_CACHE_HOT_LIMIT}: ${ok(verdicts.hotPathCardCacheGetWithEventsAtMost1_5xAwaitedMapGet)}`);
out.push(`   rootFor ÷ Map.get: 1 session ${fmtSummary(hotRoot1.vsMapGet, 2)} — ${ok(verdicts.hotPathRootFor1SessionAtMost2xMapGet)}; 10,000 sessions ${fmtSummary(hotRoot10k.vsMapGet, 2)} — ${ok(verdicts.hotPathRootFor10kSessionsAtMost2xMapGet)} (target ≤ ${HOT_PATH_LIMIT})`);
out.push('');
out.push(
  `7. Telemetry cost: the sweep of 1 (${fmt(telemetry.targets, 0)} endpoints, all 304, one a2a_discovery.card.fetch span each), one child process per side and round (the OpenTelemetry globals cannot be switched back in a process), ${telemetry.rounds} rounds (per child: a 200 sweep and ${telemetry.warmSweepsPerChild} untimed 304 sweeps, then ${telemetry.sweepsPerChild} timed), order rotated; ratios paired per round. Sampling on: ParentBased(AlwaysOn), BatchSpanProcessor, spans dropped by the exporter (no export cost).`,
);
out.push(telemetryTable(telemetry));

// ---- every target of issue 16 -----------------------------------------------------------------
const build100k = p.build[p.build.length - 1]!;
const sv = verdicts.scale;
const scaleMeasured = (figure: string | undefined) => (sv === null || figure === undefined ? 'not run (npm run bench:scale)' : figure);
const scaleVerdict = (b: boolean | undefined) => (sv === null || b === undefined ? '' : `${ok(b)} (bench:scale, ${sv.measuredAt})`);
out.push('');
out.push('Targets of issue 16');
out.push(
  table(
    ['target', 'measured (median [min–max])', 'verdict'],
    [
      ['refresh sweep: CardCache throughput ≥ 0.9× raw', fmtSummary(cacheRatio, 2), ok(verdicts.refreshThroughputAtLeast0_9OfRaw)],
      ['refresh sweep: CardCache client CPU per 304 ≤ 1.3× raw', fmtSummary(cacheCpu, 2), ok(verdicts.refreshClientCpuPer304AtMost1_3OfRaw)],
      ['mass expiry: exactly 1 upstream request per endpoint', fmtSummary(e.upstreamPerEndpoint, 3), ok(verdicts.expiryExactlyOneUpstreamPerEndpoint)],
      ['mass expiry: no caller errors', fmtSummary(e.callerErrors, 0), ok(verdicts.expiryNoCallerErrors)],
      [`hot path: CardCache.get (fresh, events + subscriber, hitEvents 'counted' as the service) ≤ ${CARD_CACHE_HOT_LIMIT}× awaited Map.get`, fmtSummary(hotEvents.vsAwaitedMapGet, 2), ok(verdicts.hotPathCardCacheGetWithEventsAtMost1_5xAwaitedMapGet)],
      ['hot path: rootFor ≤ 2× Map.get, 1 session', fmtSummary(hotRoot1.vsMapGet, 2), ok(verdicts.hotPathRootFor1SessionAtMost2xMapGet)],
      ['hot path: rootFor ≤ 2× Map.get, 10,000 sessions', fmtSummary(hotRoot10k.vsMapGet, 2), ok(verdicts.hotPathRootFor10kSessionsAtMost2xMapGet)],
      ['memory: ≤ 3,000 B heap + external per card, 1,000 cards', fmtSummary(heapAt(1_000).summary.cacheTotalBytesPerEntry, 0), ok(verdicts.memoryAtMost3000BytesPerCardAt1k)],
      ['memory: ≤ 3,000 B heap + external per card, 100,000 cards', fmtSummary(heapAt(100_000).summary.cacheTotalBytesPerEntry, 0), ok(verdicts.memoryAtMost3000BytesPerCardAt100k)],
      [`snapshot build at 100k within ${NLOGN_THRESHOLD}× its n log n line (time)`, growthCell(build100k), ok(verdicts.snapshotBuildTimeWithin1_2OfNLogN)],
      [`loop cycle with nothing due ≤ ${FRESH_CYCLE_LIMIT_US} µs CPU per endpoint (${fmt(loop.endpoints, 0)} endpoints)`, fmtSummary(l.freshCpuUsPerEndpoint, 1), ok(verdicts.loopFreshCycleAtMost5UsPerEndpoint)],
      ['scale: 100,000 endpoints / 1,000 origins held in < 500 MB RSS', scaleMeasured(sv ? `${fmt(sv.rssMB, 0)} MB (${fmt(sv.endpoints, 0)} endpoints, ${fmt(sv.origins, 0)} origins)` : undefined), scaleVerdict(sv?.rssUnder500MB)],
      ['scale: full revalidation sweep ≥ 0.9× raw throughput', scaleMeasured(sv ? fmt(sv.sweepThroughputRatio, 2) : undefined), scaleVerdict(sv?.sweepAtLeast0_9OfRaw)],
      [`scale: loop cycle with nothing due ≤ ${FRESH_CYCLE_LIMIT_US} µs CPU per endpoint at 100,000`, scaleMeasured(sv ? `${fmt(sv.freshCpuUsPerEndpoint, 1)} µs` : undefined), scaleVerdict(sv?.freshCycleAtMost5UsPerEndpoint)],
    ],
  ),
);
const text = out.join('\n');
console.log(text);

const json = {
  meta: {
    ...machineMeta(started, loadBefore),
    rounds: ROUNDS,
    heapRounds: HEAP_ROUNDS,
    origins: ORIGINS,
    cardBytes,
    cacheControl: `public, max-age=${MAX_AGE_S}`,
    undiciCacheControl: NO_CACHE,
    expiryPeerRounds: EXPIRY_PEER_ROUNDS,
    setup: 'fault servers (test/helpers/fault-server.ts) in one child process on 127.0.0.1; client in this process; same cores',
  },
  verdicts,
  refreshManyOrigins: multi,
  refreshOneOrigin: single,
  massExpiry: expiry,
  massExpiryPeers: expiryPeers,
  heap: heaps,
  pipeline,
  loop,
  hotPath: hot,
  telemetry,
};
log(`wrote ${writeResults('latest.json', json)} in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
