/**
 * Card-cache benchmarks (`npm run bench`). See docs/benchmarks.md.
 *
 * 1. 304 refresh sweep: CardCache vs raw undici.request (and the bare card fetcher), same
 *    endpoints, same concurrency, same servers, interleaved rounds; 1b the same on one origin.
 * 2. Mass expiry: 1,000 entries expire at once, 100 concurrent callers; single-flight must
 *    make it exactly one upstream request per endpoint.
 * 3. Retained heap per cached card (child processes with --expose-gc).
 *
 * The fault servers run in a child process (127.0.0.1 only); client and servers share the
 * machine's cores. Prints a table to stdout and writes bench/results/latest.json.
 * Environment: BENCH_ROUNDS (default 5), BENCH_HEAP_ROUNDS (default 3).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { HostPolicy } from '../src/fetch/index.js';
import { expiryBenchmark, type ExpiryReport } from './lib/expiry.js';
import { heapBenchmark, type HeapReport } from './lib/heap.js';
import { refreshBenchmark, type RefreshReport } from './lib/refresh.js';
import { startServerChild } from './lib/server.js';
import { cacheSide, fetcherSide, rawSide, type Target } from './lib/sides.js';
import { fmt, fmtSummary, table, type Summary } from './lib/stats.js';

const ROUNDS = positiveInt(process.env['BENCH_ROUNDS'], 5);
const HEAP_ROUNDS = positiveInt(process.env['BENCH_HEAP_ROUNDS'], 3);
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

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

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
} finally {
  await server.close();
}

// ---- report -------------------------------------------------------------------------------

const cacheRatio = multi.summary['CardCache']!.throughputRatio!;
const verdicts = {
  refreshThroughputAtLeast0_8OfRaw: cacheRatio.median >= 0.8,
  expiryExactlyOneUpstreamPerEndpoint: expiry.rounds.every((r) => r.upstreamPerEndpoint === 1 && r.serverRequestsPerEndpoint === 1),
  expiryNoCallerErrors: expiry.rounds.every((r) => r.callerErrors === 0 && r.callerUnexpected === 0),
  heapOverheadUnder4KB: heap.summary.overheadAboveBody.median < 4096,
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
out.push(`a2a-discovery card-cache benchmarks — ${started.toISOString()}`);
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
};
writeFileSync(`${resultsDir}latest.json`, `${JSON.stringify(json, null, 2)}\n`);
log(`wrote bench/results/latest.json in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
