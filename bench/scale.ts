/**
 * Scale benchmark (`npm run bench:scale`, issue 16): 100,000 endpoints over 1,000 loopback
 * origins, held by one CardCache in this process.
 *
 * 1. Populate: every card fetched once (200s, full card checks), then GC: the process's RSS,
 *    heap and external memory while it holds them all (target: < 500 MB RSS).
 * 2. Full revalidation sweep, all 304: CardCache (its VirtualClock moved past max-age before each
 *    timed sweep) against raw `undici.request` with If-None-Match, same endpoints, same
 *    concurrency, 1 connection per origin each, order alternating per round (target ≥ 0.9×).
 * 3. A discovery-loop cycle with nothing due over the same 100,000 entries (all fresh): CPU µs per
 *    endpoint (target ≤ 5 µs). Then one cycle after every card expired: it revalidates all of them
 *    (304s, new entries with the same cards) and keeps the published snapshot. Memory after the
 *    loop published (GC forced), then again after BENCH_SCALE_SETTLE_SECONDS (default 30) of a
 *    steady service: a cycle with nothing due every 5 s and no forced GC, the RSS a dashboard shows.
 *
 * The fault servers run in a child process (one process hosts every origin; 127.0.0.1 only). The
 * number of origins is capped by the open-file limit (`ulimit -n`): the servers need a listening
 * socket plus one connection per client per origin. Environment: BENCH_SCALE_ROUNDS (default 3),
 * BENCH_SCALE_ENDPOINTS (default 100,000), BENCH_SCALE_ORIGINS (default 1,000), BENCH_SCALE_STORE
 * (`memory`, the default, or `sqlite`: the cache's store is the `cards` of a SQLite state store
 * in a temporary file, which persists every entry it is given), BENCH_SCALE_PROFILE (a directory:
 * the CPU profiles of the first loop cycle, of the next (nothing due, the first after the snapshot)
 * and of the first timed cycle with nothing due (a steady one) are written there as
 * first-cycle.cpuprofile, fresh-cycle.cpuprofile and steady-cycle.cpuprofile, with what each
 * allocated, garbage included, in a .heapprofile beside it, for DevTools),
 * BENCH_SCALE_FRESH_CYCLES (the timed cycles with nothing due, default 7), BENCH_SCALE_HEAP (a file: a
 * heap snapshot written after the loop published, for DevTools' Memory panel), BENCH_SCALE_HEAP_GROWTH
 * (V8's heap growth in percent, as `serve`'s `server.heapGrowthPercent` sets it; default 0, V8's own). Run with
 * `--expose-gc` (the npm script does) so memory is read after a full GC. Writes
 * bench/results/scale.json (scale-sqlite.json with the SQLite store); `npm run bench` shows the
 * verdicts of scale.json with its own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openStateStore, type StateStore } from '@a2a-discovery/store';
import { VirtualClock } from '../packages/core/src/clock/index.js';
import { machineMeta, writeResults } from './lib/results.js';
import os from 'node:os';
import { writeHeapSnapshot } from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../packages/core/src/clock/index.js';
import { HostPolicy } from '../packages/core/src/fetch/index.js';
import { assertClean } from './lib/measure.js';
import { benchLoop, FRESH_CYCLE_LIMIT_US } from './lib/loop.js';
import { refreshBenchmark, type RefreshReport } from './lib/refresh.js';
import { startServerChild } from './lib/server.js';
import { cacheSide, rawSide, type Target } from './lib/sides.js';
import { fmt, fmtSummary, summarize, table, type Summary } from './lib/stats.js';
import { envCount, envNumber } from './lib/env.js';
import { HEAP_DEFAULTS } from '../packages/core/src/rules/defaults.js';
import { setHeapGrowth } from '../packages/service/src/cli/heap-growth.js';

/** What `npm run bench` reads back from bench/results/scale.json. */
export interface ScaleVerdicts {
  endpoints: number;
  origins: number;
  rssMB: number;
  rssUnder500MB: boolean;
  sweepThroughputRatio: number;
  sweepAtLeast0_9OfRaw: boolean;
  freshCpuUsPerEndpoint: number;
  freshCycleAtMost5UsPerEndpoint: boolean;
  /** Issue 43's target: ≤ 2 µs at 100,000 endpoints. */
  freshCycleAtMost2UsPerEndpoint: boolean;
}

/** Issue 43: a cycle with nothing due at 100,000 endpoints costs at most this much CPU per endpoint, µs. */
const FRESH_CYCLE_TARGET_US = 2;

const ROUNDS = envCount('BENCH_SCALE_ROUNDS', 3, 20);
/** BENCH_SCALE_FRESH_CYCLES: the timed cycles with nothing due (a fifth of a second each at 100,000: the median of one or three was the host's noise). */
const FRESH_CYCLES = envCount('BENCH_SCALE_FRESH_CYCLES', 7, 50);
const ENDPOINTS = envCount('BENCH_SCALE_ENDPOINTS', 100_000, 200_000);
const WANTED_ORIGINS = envCount('BENCH_SCALE_ORIGINS', 1_000, 5_000);
const STORE = process.env['BENCH_SCALE_STORE'] === 'sqlite' ? 'sqlite' : 'memory';
/** BENCH_SCALE_PROFILE=<directory>: the first two loop cycles are profiled (node:inspector) into it. */
const PROFILE = process.env['BENCH_SCALE_PROFILE'];
/** BENCH_SCALE_LOOP=0 leaves out step 3 (its first cycle finds every lookalike, which is long at this size). */
const LOOP = process.env['BENCH_SCALE_LOOP'] !== '0';
/** BENCH_SCALE_SETTLE_SECONDS: how long the loop runs as a steady service before the settled reading (default 30, 0 for none). */
const SETTLE_S = envNumber('BENCH_SCALE_SETTLE_SECONDS', 30, { min: 0, max: 300 });
/** BENCH_SCALE_HEAP_GROWTH: V8's heap growth in percent, as `serve` sets it (`server.heapGrowthPercent`; default 0, V8's own heuristics). */
const HEAP_GROWTH = envNumber('BENCH_SCALE_HEAP_GROWTH', HEAP_DEFAULTS.heapGrowthPercent, { min: 0, max: HEAP_DEFAULTS.maxHeapGrowthPercent, integer: true });
// As serve: 0 leaves V8's own growth (or a node flag's).
if (HEAP_GROWTH > 0) setHeapGrowth(HEAP_GROWTH);
const CONCURRENCY = 32;
const MAX_AGE_S = 300;
const ADVANCE_MS = (MAX_AGE_S + 100) * 1000;
const RSS_LIMIT_MB = 500;
const SWEEP_LIMIT_MS = 120_000;
const TOTAL_LIMIT_MS = 10 * 60_000;

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench:scale +${((performance.now() - t00) / 1000).toFixed(0)}s] ${msg}\n`);
const watchdog = setTimeout(() => {
  console.error(`[bench:scale] aborted: the run exceeded ${TOTAL_LIMIT_MS / 60_000} minutes`);
  process.exit(2);
}, TOTAL_LIMIT_MS);
watchdog.unref();

/** The soft open-file limit of this process (the server child inherits it). */
function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) ? soft : 1024;
  } catch {
    return 1024;
  }
}
const fdLimit = openFileLimit();
// Server child: 1 listening socket + 2 accepted connections (cache, raw) per origin, + slack.
const ORIGINS = Math.max(1, Math.min(WANTED_ORIGINS, Math.floor((fdLimit - 256) / 3)));
const PER_ORIGIN = Math.ceil(ENDPOINTS / ORIGINS);

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = globalThis.gc;
  for (let i = 0; i < 4; i++) {
    gc?.();
    await tick();
  }
  return process.memoryUsage();
}
const MB = 1024 * 1024;

/** A CPU profile of this process from now until `stop(file)`, which writes it and returns the file. */
async function startProfile(): Promise<{ stop(file: string): Promise<string> }> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  // What the cycle allocates, garbage included (a sample every 32 KB): the heap it makes V8 reserve.
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      const { profile: allocations } = await session.post('HeapProfiler.stopSampling');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      writeFileSync(file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(allocations));
      session.disconnect();
      return `${file} and its .heapprofile`;
    },
  };
}

const started = new Date();
const loadBefore = os.loadavg();
const memStart = await settle();
log(`open-file limit ${fdLimit}: ${ORIGINS} origins${ORIGINS < WANTED_ORIGINS ? ` (of ${WANTED_ORIGINS} wanted)` : ''} × ${PER_ORIGIN} endpoints; starting the fault servers`);
const server = await startServerChild({ origins: ORIGINS, perOrigin: PER_ORIGIN, soloEndpoints: 0, cacheControl: `public, max-age=${MAX_AGE_S}` }, 180_000);
const { origins, cardBytes } = server.ready;
const policy = HostPolicy.from({ allow: origins, allowLoopback: true });
const targets: Target[] = [];
for (let j = 0; targets.length < ENDPOINTS; j++)
  for (const o of origins) if (targets.length < ENDPOINTS) targets.push({ baseUrl: `${o}/a${j}/`, cardUrl: `${o}/a${j}/.well-known/agent-card.json` });

interface Memory {
  rssMB: number;
  heapUsedMB: number;
  /** The heap V8 has reserved (used, and freed but not returned to the system). */
  heapTotalMB: number;
  externalMB: number;
  /** heapUsed + external above the process's start, per endpoint. */
  bytesPerEndpoint: number;
}
const memory = (m: NodeJS.MemoryUsage): Memory => ({
  rssMB: m.rss / MB,
  heapUsedMB: m.heapUsed / MB,
  heapTotalMB: m.heapTotal / MB,
  externalMB: m.external / MB,
  bytesPerEndpoint: (m.heapUsed + m.external - memStart.heapUsed - memStart.external) / ENDPOINTS,
});

// With BENCH_SCALE_STORE=sqlite the cache keeps its entries in a SQLite state store (opened on the
// cache's clock, which it translates stored times with), in a temporary directory removed at the end.
const cacheClock = new VirtualClock({ wallStart: Date.now() });
const sqliteDir = STORE === 'sqlite' ? mkdtempSync(join(os.tmpdir(), 'a2ad-scale-')) : undefined;
const state: StateStore | undefined = sqliteDir === undefined ? undefined : await openStateStore(`sqlite:${join(sqliteDir, 'scale.sqlite')}`, { clock: cacheClock });
const cache = cacheSide('CardCache', targets, { policy, concurrency: CONCURRENCY, connectionsPerOrigin: 1, advanceMs: ADVANCE_MS, clock: cacheClock, ...(state && { store: state.cards }) });
const raw = rawSide('raw undici', targets, CONCURRENCY, 1);
let populateSeconds: number;
let held: Memory;
let sweep: RefreshReport;
const fresh: Array<{ seconds: number; cpuUsPerEndpoint: number; serverRequests: number; snapshotAgents: number; snapshotVersion: number }> = [];
let firstCycleSeconds = NaN;
/** The event-loop delay during the first cycle (monitorEventLoopDelay, 10 ms resolution). */
let firstCycleLoopDelay: { p99Ms: number; maxMs: number } | undefined;
let afterWave: (typeof fresh)[number] | undefined;
let afterLoop: Memory | undefined;
let settled: Memory | undefined;
try {
  log(`1. populating the CardCache: ${fmt(ENDPOINTS, 0)} cards (200s, full checks)`);
  const t0 = performance.now();
  assertClean('scale / populate', await cache.warm(performance.now() + 300_000), ENDPOINTS);
  populateSeconds = (performance.now() - t0) / 1000;
  held = memory(await settle());
  log(`   ${fmt(populateSeconds, 1)} s; RSS ${fmt(held.rssMB, 0)} MB, heap ${fmt(held.heapUsedMB, 0)} MB (of ${fmt(held.heapTotalMB, 0)} MB reserved), external ${fmt(held.externalMB, 0)} MB`);

  log(`2. full revalidation sweeps: CardCache vs raw undici, ${ROUNDS} rounds`);
  sweep = await refreshBenchmark('scale sweep', server, [raw, cache], 'raw undici', {
    targets: ENDPOINTS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    sweepLimitMs: SWEEP_LIMIT_MS,
    alreadyWarm: new Set(['CardCache']),
  });

  if (LOOP) {
    log(`3. discovery loop over the same ${fmt(ENDPOINTS, 0)} entries, nothing due`);
    const loop = benchLoop({ cache: cache.cache, clock: cache.clock, random: seededRandom(7), policy, targets });
    const cycle = async () => {
      const s0 = await server.stats();
      const c0 = process.cpuUsage();
      const t1 = performance.now();
      const snap = await loop.refreshNow();
      const seconds = (performance.now() - t1) / 1000;
      const c1 = process.cpuUsage(c0);
      const s1 = await server.stats();
      return { seconds, cpuUsPerEndpoint: (c1.user + c1.system) / ENDPOINTS, serverRequests: s1.hits - s0.hits, snapshotAgents: snap?.agents.length ?? 0, snapshotVersion: snap?.version ?? 0 };
    };
    try {
      const profiled = async (name: string) => {
        const profiler = PROFILE === undefined ? undefined : await startProfile();
        const c = await cycle();
        if (profiler) log(`   ${name}: ${await profiler.stop(join(PROFILE!, `${name}.cpuprofile`))}`);
        return c;
      };
      // How long the first cycle (every card evaluated, the lookalikes found, the snapshot built
      // and published) holds the event loop in one piece: /healthz and every request wait that long.
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      await sleep(30);
      const first = await profiled('first-cycle');
      await sleep(30);
      delay.disable();
      firstCycleLoopDelay = { p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 };
      firstCycleSeconds = first.seconds;
      if (first.snapshotAgents !== ENDPOINTS || first.serverRequests !== 0) throw new Error(`scale / first loop cycle: ${first.snapshotAgents} agents published, ${first.serverRequests} requests`);
      await profiled('fresh-cycle');
      for (let r = 0; r < FRESH_CYCLES && performance.now() - t00 < TOTAL_LIMIT_MS - 60_000; r++) {
        // The first of them profiled too: the cycle the target is about (a steady one, its pass repeating the last).
        const c = r === 0 ? await profiled('steady-cycle') : await cycle();
        if (c.serverRequests !== 0 || c.snapshotAgents !== ENDPOINTS || c.snapshotVersion !== 1) {
          throw new Error(`scale / fresh cycle ${r + 1}: ${c.serverRequests} requests, ${c.snapshotAgents} agents, snapshot version ${c.snapshotVersion}`);
        }
        fresh.push(c);
      }
      // Every card expired: the cycle revalidates all of them (304s) and keeps the snapshot.
      await cacheClock.advance(ADVANCE_MS);
      afterWave = await cycle();
      if (afterWave.serverRequests !== ENDPOINTS || afterWave.snapshotAgents !== ENDPOINTS || afterWave.snapshotVersion !== 1) {
        throw new Error(`scale / cycle after a wave of 304s: ${afterWave.serverRequests} requests, ${afterWave.snapshotAgents} agents, snapshot version ${afterWave.snapshotVersion}`);
      }
      afterLoop = memory(await settle());
      if (process.env['BENCH_SCALE_HEAP']) log(`   heap snapshot: ${writeHeapSnapshot(process.env['BENCH_SCALE_HEAP'])}`);
      // A service between its cycles: a cycle with nothing due every 5 s, and no forced GC. V8's
      // memory reducer returns the heap the process no longer needs once its allocation slows;
      // this is the RSS an operator's dashboard shows for a steady fleet.
      log(`   ${SETTLE_S} s of a steady service (a cycle with nothing due every 5 s)`);
      for (let s = 0; s < SETTLE_S; s += 5) {
        await sleep(5_000);
        await loop.refreshNow();
      }
      settled = memory(process.memoryUsage());
    } finally {
      await loop.stop();
    }
  }
} finally {
  await cache.close();
  await state?.close();
  if (sqliteDir !== undefined) rmSync(sqliteDir, { recursive: true, force: true });
  await raw.close();
  await server.close();
}

const ratio = sweep.summary['CardCache']!.throughputRatio!;
const cpuRatio = sweep.summary['CardCache']!.cpuPerRequestRatio!;
const freshCpu: Summary = summarize(fresh.map((c) => c.cpuUsPerEndpoint));
const freshWall: Summary = summarize(fresh.map((c) => (c.seconds * 1e6) / ENDPOINTS));
const verdicts: ScaleVerdicts = {
  endpoints: ENDPOINTS,
  origins: ORIGINS,
  rssMB: held.rssMB,
  rssUnder500MB: held.rssMB < RSS_LIMIT_MB,
  sweepThroughputRatio: ratio.median,
  sweepAtLeast0_9OfRaw: ratio.median >= 0.9,
  freshCpuUsPerEndpoint: freshCpu.median,
  freshCycleAtMost5UsPerEndpoint: freshCpu.median <= FRESH_CYCLE_LIMIT_US,
  freshCycleAtMost2UsPerEndpoint: freshCpu.median <= FRESH_CYCLE_TARGET_US,
};
const peakRssMB = process.resourceUsage().maxRSS / 1024;

const ok = (b: boolean) => (b ? 'met' : 'NOT MET');
const out: string[] = [];
out.push(`a2a-discovery scale benchmark — ${started.toISOString()}`);
out.push(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load avg at start ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
out.push(
  `${fmt(ENDPOINTS, 0)} endpoints over ${fmt(ORIGINS, 0)} loopback origins${ORIGINS < WANTED_ORIGINS ? ` (${fmt(WANTED_ORIGINS, 0)} wanted; the open-file limit ${fdLimit} allows ${ORIGINS})` : ''} (open-file limit ${fdLimit}), fault servers in one child process; card body ${cardBytes} B, Cache-Control: public, max-age=${MAX_AGE_S}.`,
);
out.push(`The cache's store: ${STORE === 'sqlite' ? 'SQLite (a state store on a temporary file; every entry written)' : 'memory'}.`);
out.push(`GC ${globalThis.gc ? 'forced before each memory reading' : 'NOT forced (run with --expose-gc)'}; V8's heap growth ${HEAP_GROWTH === 0 ? "by V8's own heuristics" : `${HEAP_GROWTH} %`} (serve's server.heapGrowthPercent; BENCH_SCALE_HEAP_GROWTH); median [min–max] over ${ROUNDS} rounds.`);
out.push('');
out.push(`1. Holding ${fmt(ENDPOINTS, 0)} cards in one CardCache (populated in ${fmt(populateSeconds, 1)} s: 200s, full card checks)`);
out.push(
  table(
    ['measure', 'value'],
    [
      [`RSS of this process holding them (target < ${RSS_LIMIT_MB} MB)`, `${fmt(held.rssMB, 0)} MB — ${ok(verdicts.rssUnder500MB)}`],
      ['heap used / reserved / external', `${fmt(held.heapUsedMB, 0)} MB / ${fmt(held.heapTotalMB, 0)} MB / ${fmt(held.externalMB, 0)} MB`],
      ['heap + external above the process start, per endpoint', `${fmt(held.bytesPerEndpoint, 0)} B`],
      [`RSS after the loop published its ${fmt(ENDPOINTS, 0)}-agent snapshot`, afterLoop === undefined ? 'not measured (BENCH_SCALE_LOOP=0)' : `${fmt(afterLoop.rssMB, 0)} MB (heap ${fmt(afterLoop.heapUsedMB, 0)} MB used of ${fmt(afterLoop.heapTotalMB, 0)} MB reserved)`],
      [
        `RSS of the steady service, ${SETTLE_S} s later (target < ${RSS_LIMIT_MB} MB)`,
        settled === undefined ? 'not measured' : `${fmt(settled.rssMB, 0)} MB (heap ${fmt(settled.heapUsedMB, 0)} MB used of ${fmt(settled.heapTotalMB, 0)} MB reserved) — ${ok(settled.rssMB < RSS_LIMIT_MB)}`,
      ],
      ['peak RSS of the run (includes the sweeps and the loop)', `${fmt(peakRssMB, 0)} MB`],
      ['RSS at start, before any card', `${fmt(memStart.rss / MB, 0)} MB`],
    ],
  ),
);
out.push('');
out.push(`2. Full revalidation sweep, all 304: ${fmt(ENDPOINTS, 0)} endpoints, concurrency ${CONCURRENCY}, 1 keep-alive connection per origin each`);
out.push(
  table(
    ['client', 'requests/s', 'client CPU µs/req', 'server CPU µs/req', 'throughput ÷ raw', 'client CPU/req ÷ raw'],
    Object.entries(sweep.summary).map(([name, s]) => [
      name,
      fmtSummary(s.requestsPerSecond, 0),
      fmtSummary(s.clientCpuUsPerRequest, 0),
      fmtSummary(s.serverCpuUsPerRequest, 0),
      s.throughputRatio ? fmtSummary(s.throughputRatio, 2) : '1 (baseline)',
      s.cpuPerRequestRatio ? fmtSummary(s.cpuPerRequestRatio, 2) : '1 (baseline)',
    ]),
  ),
);
out.push(`   CardCache ÷ raw throughput ${fmtSummary(ratio, 2)} — target ≥ 0.9: ${ok(verdicts.sweepAtLeast0_9OfRaw)}; client CPU per 304 ÷ raw ${fmtSummary(cpuRatio, 2)}`);
out.push('');
out.push(`3. Discovery loop cycle with nothing due, ${fmt(ENDPOINTS, 0)} endpoints (first cycle, publishing, ${fmt(firstCycleSeconds, 1)} s; ${fresh.length} timed cycles)`);
if (firstCycleLoopDelay) out.push(`   the event loop during the first cycle: delay p99 ${fmt(firstCycleLoopDelay.p99Ms, 0)} ms, longest ${fmt(firstCycleLoopDelay.maxMs, 0)} ms (issue 24's bound on a long piece of work: 100 ms)`);
out.push(
  table(
    ['measure', 'median [min–max]'],
    [
      [`CPU µs per endpoint (target ≤ ${FRESH_CYCLE_LIMIT_US}; issue 43: ≤ ${FRESH_CYCLE_TARGET_US})`, `${fmtSummary(freshCpu, 2)} — ${ok(verdicts.freshCycleAtMost5UsPerEndpoint)}; issue 43: ${ok(verdicts.freshCycleAtMost2UsPerEndpoint)}`],
      ['wall µs per endpoint', fmtSummary(freshWall, 2)],
      ['cycle wall time, s', fmtSummary(summarize(fresh.map((c) => c.seconds)), 2)],
    ],
  ),
);
if (afterWave) out.push(`   a cycle after every card expired (${fmt(afterWave.serverRequests, 0)} revalidations, 304s; the snapshot kept): ${fmt(afterWave.seconds, 1)} s, CPU ${fmt(afterWave.cpuUsPerEndpoint, 1)} µs per endpoint`);
const text = out.join('\n');
console.log(text);

const json = {
  meta: {
    ...machineMeta(started, loadBefore),
    rounds: ROUNDS,
    endpoints: ENDPOINTS,
    origins: ORIGINS,
    originsWanted: WANTED_ORIGINS,
    openFileLimit: fdLimit,
    gcForced: globalThis.gc !== undefined,
    cardBytes,
    store: STORE,
  },
  verdicts,
  memory: { start: memory(memStart), held, afterLoop, settled, peakRssMB },
  populateSeconds,
  sweep,
  loop: { firstCycleSeconds, firstCycleLoopDelay, fresh, freshCpuUsPerEndpoint: freshCpu, freshWallUsPerEndpoint: freshWall, afterWave },
};
log(`wrote ${writeResults(STORE === 'sqlite' ? 'scale-sqlite.json' : 'scale.json', json)} in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
