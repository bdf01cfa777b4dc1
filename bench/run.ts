/**
 * Card-cache and discovery-pipeline benchmarks (`npm run bench`). See docs/benchmarks.md.
 *
 * 1. 304 refresh sweep: CardCache vs raw undici.request (and the bare card fetcher), same
 *    endpoints, same concurrency, same servers, interleaved rounds; 1b the same on one origin.
 * 2. Mass expiry: 1,000 entries expire at once, 100 concurrent callers; single-flight must
 *    make it exactly one upstream request per endpoint.
 * 3. Retained heap per cached card (child processes with --expose-gc).
 * 4. Pipeline CPU (a child with --expose-gc): snapshot build and digest for 1k, 10k and 100k
 *    agents with the n log n growth check; diff, selection and resolution over 10k.
 * 5. Discovery loop, 10,000 endpoints answering 304: CPU and wall time per refresh cycle (all
 *    due, and all fresh), against raw undici.request 304s in the same rounds.
 *
 * The fault servers run in a child process (127.0.0.1 only); client and servers share the
 * machine's cores. Prints a table to stdout and writes bench/results/latest.json.
 * Environment: BENCH_ROUNDS (default 5; also the loop's rounds), BENCH_HEAP_ROUNDS (default 3),
 * BENCH_PIPELINE_REPS (default 7).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { HostPolicy } from '../src/fetch/index.js';
import { expiryBenchmark, type ExpiryReport } from './lib/expiry.js';
import { heapBenchmark, type HeapReport } from './lib/heap.js';
import { loopBenchmark, type LoopReport } from './lib/loop.js';
import { NLOGN_THRESHOLD, pipelineBenchmark, type GrowthRow, type PipelineReport } from './lib/pipeline.js';
import { refreshBenchmark, type RefreshReport } from './lib/refresh.js';
import { startServerChild } from './lib/server.js';
import { cacheSide, fetcherSide, rawSide, type Target } from './lib/sides.js';
import { fmt, fmtSummary, table, type Summary } from './lib/stats.js';

const ROUNDS = positiveInt(process.env['BENCH_ROUNDS'], 5);
const HEAP_ROUNDS = positiveInt(process.env['BENCH_HEAP_ROUNDS'], 3);
const PIPELINE_REPS = positiveInt(process.env['BENCH_PIPELINE_REPS'], 7);
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
const HEAP_N = 10_000;
const PER_ORIGIN = Math.ceil(HEAP_N / ORIGINS);
const MAX_AGE_S = 300;
const ADVANCE_MS = (MAX_AGE_S + 100) * 1000;
const SWEEP_LIMIT_MS = 60_000;
const TOTAL_LIMIT_MS = 10 * 60_000;

function positiveInt(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return Number.isInteger(n) && n > 0 && n <= 50 ? n : fallback;
}

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
log(`starting fault servers: ${ORIGINS} origins × ${PER_ORIGIN} endpoints + 1 origin × ${REFRESH_N}`);
const server = await startServerChild({ origins: ORIGINS, perOrigin: PER_ORIGIN, soloEndpoints: REFRESH_N, cacheControl: `public, max-age=${MAX_AGE_S}` });
const { origins, solo, cardBytes } = server.ready;
const policy = HostPolicy.from({ allow: [...origins, solo], allowLoopback: true });
const target = (origin: string, id: string): Target => ({ baseUrl: `${origin}/${id}/`, cardUrl: `${origin}/${id}/.well-known/agent-card.json` });
/** Endpoints spread round-robin over the origins. */
const spread = (n: number): Target[] => {
  const out: Target[] = [];
  for (let j = 0; out.length < n; j++) for (const o of origins) if (out.length < n) out.push(target(o, `a${j}`));
  return out;
};

let multi: RefreshReport;
let single: RefreshReport;
let expiry: ExpiryReport;
let heap: HeapReport;
let loop: LoopReport;
try {
  log(`1. refresh sweep, ${fmt(REFRESH_N, 0)} endpoints over ${ORIGINS} origins, concurrency ${CONCURRENCY}, ${ROUNDS} rounds`);
  const multiTargets = spread(REFRESH_N);
  const sidesA = [
    rawSide('raw undici', multiTargets, CONCURRENCY, 1),
    fetcherSide('CardFetcher', multiTargets, policy, CONCURRENCY, 1),
    cacheSide('CardCache', multiTargets, { policy, concurrency: CONCURRENCY, connectionsPerOrigin: 1, advanceMs: ADVANCE_MS }),
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

  log(`3. heap per cached card, ${HEAP_N} entries, ${HEAP_ROUNDS} child processes`);
  heap = await heapBenchmark(origins, PER_ORIGIN, { n: HEAP_N, concurrency: CONCURRENCY, rounds: HEAP_ROUNDS, limitMs: 120_000 });

  log(`5. discovery loop, ${fmt(LOOP_N, 0)} endpoints over ${ORIGINS} origins answering 304, ${ROUNDS} rounds`);
  loop = await loopBenchmark(server, policy, spread(LOOP_N), { concurrency: CONCURRENCY, rounds: ROUNDS, advanceMs: ADVANCE_MS, limitMs: SWEEP_LIMIT_MS, origins: ORIGINS });
} finally {
  await server.close();
}
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
const verdicts = {
  refreshThroughputAtLeast0_8OfRaw: cacheRatio.median >= 0.8,
  expiryExactlyOneUpstreamPerEndpoint: expiry.rounds.every((r) => r.upstreamPerEndpoint === 1 && r.serverRequestsPerEndpoint === 1),
  expiryNoCallerErrors: expiry.rounds.every((r) => r.callerErrors === 0 && r.callerUnexpected === 0),
  heapOverheadUnder4KB: heap.summary.overheadAboveBody.median < 4096,
  snapshotBuildTimeWithinNLogN: pipeline.verdicts.buildTimeWithinNLogN,
  snapshotDigestTimeWithinNLogN: pipeline.verdicts.digestTimeWithinNLogN,
  snapshotBuildWorkWithinNLogN: pipeline.verdicts.buildWorkWithinNLogN,
  snapshotDigestWorkWithinNLogN: pipeline.verdicts.digestWorkWithinNLogN,
  snapshotDigestsAgree: pipeline.verdicts.digestsAgree,
};

const ok = (b: boolean) => (b ? 'met' : 'NOT MET');
const opt = (s: Summary | undefined, d?: number) => (s === undefined ? '1 (baseline)' : fmtSummary(s, d));
function refreshTable(rep: RefreshReport): string {
  return table(
    ['client', 'requests/s', 'client CPU µs/req', 'server CPU µs/req', `throughput ÷ ${rep.baseline}`, `CPU/req of ${rep.baseline} ÷ this`],
    Object.entries(rep.summary).map(([name, s]) => [
      name,
      fmtSummary(s.requestsPerSecond, 0),
      fmtSummary(s.clientCpuUsPerRequest, 0),
      fmtSummary(s.serverCpuUsPerRequest, 0),
      opt(s.throughputRatio, 2),
      opt(s.cpuRatio, 2),
    ]),
  );
}

const out: string[] = [];
out.push(`a2a-discovery benchmarks (card cache, discovery pipeline) — ${started.toISOString()}`);
out.push(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load avg at start ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
out.push(`Fault servers in a child process, client here; both on the same cores; 127.0.0.1 only. Card body ${cardBytes} B (endpoint a0; others a few bytes more), Cache-Control: public, max-age=${MAX_AGE_S}.`);
out.push(`Figures: median [min–max] over ${ROUNDS} interleaved rounds (heap: ${HEAP_ROUNDS} processes). Trust the ratios more than the absolutes.`);
out.push('');
out.push(`1. Conditional refresh sweep, all 304: ${fmt(REFRESH_N, 0)} endpoints over ${ORIGINS} origins, concurrency ${CONCURRENCY}, 1 keep-alive connection per origin`);
out.push(refreshTable(multi));
out.push(`   CardCache ÷ raw throughput ${fmtSummary(cacheRatio, 2)} — target ≥ 0.8: ${ok(verdicts.refreshThroughputAtLeast0_8OfRaw)}`);
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
out.push('');
out.push(`3. Retained heap per cached card: ${fmt(HEAP_N, 0)} entries, GC forced (--expose-gc), servers in another process`);
const h = heap.summary;
out.push(
  table(
    ['measure', 'median [min–max]'],
    [
      ['CardCache, bytes per entry', fmtSummary(h.cacheBytesPerEntry, 0)],
      ['baseline Map{body string, JSON.parse}, bytes per entry', fmtSummary(h.baselineBytesPerEntry, 0)],
      ['card body, bytes', fmt(heap.bodyBytes, 0)],
      ['CardCache above the body, bytes (target < 4,096)', `${fmtSummary(h.overheadAboveBody, 0)} — ${ok(verdicts.heapOverheadUnder4KB)}`],
      ['CardCache ÷ baseline', fmtSummary(h.ratioToBaseline, 2)],
      ['  of which: entry objects in dictionary mode (freed by { ...entry })', fmtSummary(h.breakdown.entryShape, 0)],
      ['  of which: parsed card model (+ what only it keeps alive)', fmtSummary(h.breakdown.card, 0)],
      ['  of which: cacheHeaders (caching headers kept)', fmtSummary(h.breakdown.cachePolicy, 0)],
      ['  of which: body string', fmtSummary(h.breakdown.body, 0)],
      ['  of which: the rest (entry, key, hashes, URLs, Map slot)', fmtSummary(h.breakdown.rest, 0)],
      [`time to populate ${fmt(HEAP_N, 0)} entries (200s, full card checks), s`, fmtSummary(h.populateSecondsCache, 2)],
    ],
  ),
);
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
  `   Grows no faster than n log n — in work (reads ≤ ${NLOGN_THRESHOLD}×): build ${ok(verdicts.snapshotBuildWorkWithinNLogN)}, digest ${ok(verdicts.snapshotDigestWorkWithinNLogN)}; ` +
    `in time (≤ ${NLOGN_THRESHOLD}×): build ${ok(verdicts.snapshotBuildTimeWithinNLogN)}, digest ${ok(verdicts.snapshotDigestTimeWithinNLogN)}. buildSnapshot digest = snapshotDigest: ${ok(verdicts.snapshotDigestsAgree)}`,
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
      ['fresh cycle, CPU µs per endpoint', fmtSummary(l.freshCpuUsPerEndpoint, 1)],
      [`raw undici, 10k × 304 at c${loop.concurrency}, wall s`, fmtSummary(l.rawSeconds, 2)],
      ['raw undici, client CPU µs per request', fmtSummary(l.rawCpuUsPerRequest, 0)],
      ['due cycle time ÷ raw sweep time', fmtSummary(l.timeRatio, 2)],
      ['due cycle CPU per endpoint ÷ raw CPU per request', fmtSummary(l.cpuRatio, 2)],
      ['server CPU µs per request (due cycle)', fmtSummary(l.dueServerCpuUsPerRequest, 0)],
      ['first cycle (10k × 200, full card checks, untimed warm-up), s / CPU ms', `${fmt(loop.warmup.firstCycleSeconds, 2)} / ${fmt(loop.warmup.firstCycleCpuMs, 0)}`],
    ],
  ),
);
const text = out.join('\n');
console.log(text);

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const json = {
  meta: {
    started: started.toISOString(),
    finished: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAvgBefore: loadBefore,
    loadAvgAfter: os.loadavg(),
    rounds: ROUNDS,
    heapRounds: HEAP_ROUNDS,
    origins: ORIGINS,
    cardBytes,
    cacheControl: `public, max-age=${MAX_AGE_S}`,
    setup: 'fault servers (test/helpers/fault-server.ts) in one child process on 127.0.0.1; client in this process; same cores',
  },
  verdicts,
  refreshManyOrigins: multi,
  refreshOneOrigin: single,
  massExpiry: expiry,
  heap,
  pipeline,
  loop,
};
writeFileSync(`${resultsDir}latest.json`, `${JSON.stringify(json, null, 2)}\n`);
log(`wrote bench/results/latest.json in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
