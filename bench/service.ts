/**
 * The service end to end (`npm run bench:service`, issue 29): `a2a-discovery serve` (the built CLI,
 * packages/service/dist: run `npm run build` first) on a SQLite store in a temporary directory,
 * discovering 10,000 loopback endpoints through a paged registry, under a steady chat load.
 *
 * Processes (all on 127.0.0.1): the card fleet and its registry (bench/lib/service-child.ts
 * `cards`: fault servers over `BENCH_SERVICE_ORIGINS` origins), one A2A 1.0 peer (`peer`: the
 * @a2a-js/sdk 1.x server, timing itself per turn), `serve`, and this process (the load, the
 * samples, an OTLP receiver for the cycle spans). The configuration is what a deployment of that
 * size would write: a registry source (`maxEntries` raised to the fleet), a reviewed vocabulary
 * and two needs, the peer as a critical static agent, the routed root (no model: the keyword
 * router over reviewed tags picks the agent) with the peer as its fallback, sessions on the store.
 *
 * Measured over the window (`BENCH_SERVICE_MINUTES`, default 10), after the fleet is fetched and a
 * warm-up that lasts until the first cycle over the whole fleet has ended (its span received): the
 * loop's cycle time (the cycle spans), `/api/chat` wall time and the routing overhead EXCLUDING the
 * peer (the peer's own time, measured at the peer, subtracted per turn), against the same turns
 * sent straight to the peer in the same run (interleaved, half a period apart), the service's RSS
 * every 10 s (first, last, max, slope), the errors, the load average.
 * Exit 1 with the reason when the service does not start, the fleet is not fetched, or a turn fails;
 * 2 when the run overruns its bound. Every child is stopped by its pid within a bound.
 *
 * Environment: BENCH_SERVICE_MINUTES (default 10; 0.5–60), BENCH_SERVICE_ENDPOINTS (10,000),
 * BENCH_SERVICE_ORIGINS (100), BENCH_SERVICE_RATE (turns/s per side, 5), BENCH_SERVICE_CONCURRENCY
 * (turns in flight per side, 16), BENCH_SERVICE_MAX_AGE (the cards' max-age, s, 120),
 * BENCH_SERVICE_HISTORY (`store`, the default: conversations in the SQLite store; `memory`: in the
 * process, to see what the durable history costs a turn), BENCH_SERVICE_NAMES (`words`, the
 * default: three-word agent names; `numbered`: `fleet-agent-e123`, a numbered series),
 * BENCH_SERVICE_STORE (`sqlite`, the default; `postgres`: a PostgreSQL server this run starts on
 * loopback, as the test suite does: test/helpers/postgres.ts, fsync off), BENCH_SERVICE_PROFILE
 * (a directory: serve writes a CPU profile of its whole run there when it stops).
 * Writes bench/results/service.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { killAll, startCards, startPeer, startServe } from './lib/service-children.js';
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import type { CardsHandle, PeerHandle, ServeHandle } from './lib/service-children.js';
import { ChatLoad, TURNS_PER_SESSION } from './lib/service-load.js';
import type { Side, Turn } from './lib/service-load.js';
import { startCycleReceiver } from './lib/service-otlp.js';
import type { CycleReceiver, CycleSpan } from './lib/service-otlp.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, percentile, summarize, table } from './lib/stats.js';
import { envNumber } from './lib/env.js';

const num = (name: string, fallback: number, min: number, max: number, integer = true): number => envNumber(name, fallback, { min, max, integer });
const MINUTES = num('BENCH_SERVICE_MINUTES', 10, 0.5, 60, false);
const ENDPOINTS = num('BENCH_SERVICE_ENDPOINTS', 10_000, 1, 50_000);
const ORIGINS = Math.min(num('BENCH_SERVICE_ORIGINS', 100, 1, 1_000), ENDPOINTS);
const RATE = num('BENCH_SERVICE_RATE', 5, 0.1, 50, false);
const CONCURRENCY = num('BENCH_SERVICE_CONCURRENCY', 16, 1, 256);
const MAX_AGE_S = num('BENCH_SERVICE_MAX_AGE', 120, 30, 3_600);
const HISTORY = process.env['BENCH_SERVICE_HISTORY'] === 'memory' ? 'memory' : 'store';
const STORE: 'sqlite' | 'postgres' = process.env['BENCH_SERVICE_STORE'] === 'postgres' ? 'postgres' : 'sqlite';
const STORE_NAME = STORE === 'postgres' ? 'PostgreSQL' : 'SQLite';
const NAMES = process.env['BENCH_SERVICE_NAMES'] === 'numbered' ? 'numbered' : 'words';
const PER_ORIGIN = Math.ceil(ENDPOINTS / ORIGINS);
const PAGE_SIZE = 500;
const RSS_EVERY_MS = 10_000;
const WARMUP_TURNS = 20;
const START_LIMIT_MS = 60_000;
const FLEET_LIMIT_MS = 20 * 60_000;
// The whole run: the window, plus starting, fetching the fleet, warming up and stopping.
const TOTAL_LIMIT_MS = MINUTES * 60_000 + FLEET_LIMIT_MS + 4 * 60_000;

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench:service +${((performance.now() - t00) / 1000).toFixed(0)}s] ${msg}\n`);
const dir = mkdtempSync(join(os.tmpdir(), 'a2a-bench-service-'));
const cleanupNow = () => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
};
const watchdog = setTimeout(() => {
  console.error(`[bench:service] aborted: the run exceeded ${fmt(TOTAL_LIMIT_MS / 60_000, 0)} minutes; children killed`);
  cleanupNow();
  process.exit(2);
}, TOTAL_LIMIT_MS);
watchdog.unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    console.error(`[bench:service] ${signal}: children killed`);
    cleanupNow();
    process.exit(130);
  });

/** Sum of every sample of a Prometheus metric (all label sets). */
function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: res.status, text: await res.text() };
}

interface Sample {
  tSec: number;
  rssMB: number;
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const sxy = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const sxx = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return sxy / sxx;
}

const pct = (values: readonly number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99), n: values.length });

/**
 * `GET /healthz` once a second, the next probe only after the last answered: a stalled event loop
 * shows as one long probe. `phase` labels each probe (the fleet's fetch, the window).
 */
function healthProber(url: string) {
  const probes: Array<{ phase: string; ms: number }> = [];
  let phase = 'fleet';
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const t = performance.now();
      const p = phase;
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(FLEET_LIMIT_MS) }).then(
        async (r) => (await r.text(), r.status === 200),
        () => false,
      );
      if (ok) probes.push({ phase: p, ms: performance.now() - t });
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    set phase(value: string) {
      phase = value;
    },
    figures(which: string) {
      const ms = probes.filter((x) => x.phase === which).map((x) => x.ms);
      return { probes: ms.length, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), maxMs: ms.length ? Math.max(...ms) : NaN };
    },
    stop() {
      stopped = true;
      return Promise.race([done, new Promise((r) => setTimeout(r, 2_000))]);
    },
  };
}

const started = new Date();
const loadStart = os.loadavg();
let cards: CardsHandle | undefined;
let peer: PeerHandle | undefined;
let serve: ServeHandle | undefined;
let receiver: CycleReceiver | undefined;
let load: ChatLoad | undefined;
let failure: string | undefined;
const rss: Sample[] = [];
let loadAtWindowStart: number[] = [];
let loadAtWindowEnd: number[] = [];
let windowStartEpochMs = 0;
/** serve's CPU time over the window, ms (its CPU at the start until the window ends). */
let serveCpuMs = 0;
let windowEndEpochMs = 0;
let fleetSeconds = NaN;
let metricsBefore = '';
let metricsAfter = '';
let peerTimes: Record<string, number> = {};
let peerUnlabelled = 0;
let configDoc: Record<string, unknown> = {};
let health: ReturnType<typeof healthProber> | undefined;
let pg: TestPostgres | undefined;

try {
  if (STORE === 'postgres') {
    log('starting PostgreSQL (test/helpers/postgres.ts)');
    pg = await startPostgres();
  }
  log(`starting the fleet: ${fmt(ENDPOINTS, 0)} endpoints over ${ORIGINS} origins (${PER_ORIGIN} each), cards max-age ${MAX_AGE_S} s, a registry of ${Math.ceil(ENDPOINTS / PAGE_SIZE)} pages; and the A2A peer`);
  [cards, peer, receiver] = await Promise.all([
    startCards({ origins: ORIGINS, perOrigin: PER_ORIGIN, cacheControl: `public, max-age=${MAX_AGE_S}`, pageSize: PAGE_SIZE, names: NAMES }, 180_000),
    startPeer(60_000),
    startCycleReceiver(),
  ]);
  const endpoints = cards.ready.endpoints;

  const vocabulary = [
    { tag: 'billing', description: 'Invoices, refunds and payment schedules.', keywords: ['invoice', 'refund', 'payment', 'bill'] },
    { tag: 'warranty', description: 'Warranty status, coverage and claims for hardware.', keywords: ['warranty', 'serial', 'repair', 'claim', 'covered'] },
  ];
  configDoc = {
    // Every turn comes from one address: its per-client shares are raised so the load measures the
    // service, not the fair-share limits.
    server: { host: '127.0.0.1', port: 0, limits: { maxSessionsPerClient: 10_000, maxTurnsPerClient: 256 } },
    allow: [...cards.ready.origins, new URL(peer.ready.baseUrl).origin],
    allowLoopback: true,
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag, inputModes: ['text/plain'], outputModes: ['text/plain'] })),
    static: [{ name: 'warranty_agent', url: peer.ready.baseUrl, description: 'Answers warranty questions for hardware orders.', tags: ['warranty'], critical: true }],
    sources: { registries: [{ id: 'fleet', url: cards.ready.registryUrl, pollIntervalMs: 300_000, maxPages: Math.ceil(endpoints / PAGE_SIZE) + 5, maxEntries: endpoints + 100 }] },
    loop: { startupTimeoutMs: 10_000 },
    root: { kind: 'routed', name: 'orchestrator', fallback: 'warranty_agent' },
    sessions: { history: HISTORY },
    dataDir: join(dir, 'data'),
    store: pg !== undefined ? pg.url : 'sqlite',
  };
  const configFile = join(dir, 'discovery.yaml');
  writeFileSync(configFile, `# Generated by bench/service.ts\n${stringify(configDoc)}`);

  log(`starting serve (packages/service/dist) on ${STORE_NAME}`);
  const t1 = performance.now();
  serve = await startServe(
    configFile,
    {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl,
      OTEL_METRICS_EXPORTER: 'none',
      // A cycle that fetches every card records a few spans per card (fetch, validate, ...): room
      // for the whole fleet, or the cycle's own span, which ends last, is dropped.
      OTEL_BSP_MAX_QUEUE_SIZE: String(Math.max(2048, 5 * endpoints)),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048',
    },
    START_LIMIT_MS,
  );
  log(`serve pid ${serve.pid} at ${serve.url}; waiting for the ${fmt(endpoints, 0)} cards`);
  health = healthProber(serve.url);

  // The fleet fetched: every endpoint's card reached once (any outcome), and the snapshot holds the peer.
  for (;;) {
    if (!serve.alive()) throw new Error(`serve exited while fetching the fleet; its last lines:\n${serve.tail()}`);
    const m = await get(`${serve.url}/metrics`).catch(() => undefined);
    if (m === undefined) log('   /metrics did not answer within 30 s (the event loop is busy)');
    const fetched = m ? metricSum(m.text, 'a2a_discovery_card_fetches_total') : 0;
    const snap = await get(`${serve.url}/api/snapshot`).catch(() => undefined);
    const agents = snap?.status === 200 ? ((JSON.parse(snap.text) as { agents?: Array<{ localName: string }> }).agents ?? []) : [];
    if (fetched >= endpoints && agents.some((a) => a.localName === 'warranty_agent')) {
      fleetSeconds = (performance.now() - t1) / 1000;
      log(`fleet fetched in ${fmt(fleetSeconds, 1)} s (${fmt(fetched, 0)} card fetches; ${agents.length} agents in the snapshot)`);
      break;
    }
    if (performance.now() - t1 > FLEET_LIMIT_MS) {
      throw new Error(`the fleet was not fetched within ${FLEET_LIMIT_MS / 1000} s: ${m ? `${fmt(fetched, 0)} of ${fmt(endpoints, 0)} card fetches` : '/metrics did not answer'}, ${agents.length} agents in the snapshot`);
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }

  health.phase = 'warm-up';
  const fetchedAtEpochMs = Date.now();
  load = new ChatLoad({ serviceUrl: serve.url, peerCard: peer.ready.card, rate: RATE, concurrency: CONCURRENCY });
  log(`warm-up: ${WARMUP_TURNS} turns per side, and on until a cycle begun after the fleet was fetched has ended (the first that judges and publishes the whole fleet)`);
  await load.warmUp(WARMUP_TURNS);
  // The window measures a steady service: not the first cycle over the whole fleet (the fleet's
  // evaluation and its first snapshot, seconds of work once), whose turns /healthz's warm-up
  // figure covers. Its span reaches the receiver with the exporter's next batch (≤ 5 s).
  let warmUpTurns = WARMUP_TURNS;
  while (!receiver.cycles.some((c) => c.startMs >= fetchedAtEpochMs && c.endpoints >= endpoints)) {
    if (load.result.failure !== undefined || !serve.alive()) break;
    if (performance.now() - t1 > FLEET_LIMIT_MS) throw new Error(`no cycle over the fleet ended within ${FLEET_LIMIT_MS / 1000} s of serve's start`);
    await load.warmUp(5);
    warmUpTurns += 5;
  }
  if (load.result.failure !== undefined) throw new Error(load.result.failure);
  log(`   the first cycle over the fleet ended ${fmt((Date.now() - fetchedAtEpochMs) / 1000, 1)} s after the fetch; ${warmUpTurns} warm-up turns per side`);
  await peer.times(); // the warm-up's times are not the window's

  log(`window: ${fmt(MINUTES, 1)} min, ${RATE} turns/s per side (service, direct), at most ${CONCURRENCY} in flight per side`);
  metricsBefore = (await get(`${serve.url}/metrics`)).text;
  loadAtWindowStart = os.loadavg();
  windowStartEpochMs = Date.now();
  serveCpuMs = serve.cpuMs();
  health.phase = 'window';
  const w0 = performance.now();
  const s = serve;
  const sampleRss = () => rss.push({ tSec: (performance.now() - w0) / 1000, rssMB: s.rssMB() });
  sampleRss();
  const sampler = setInterval(() => {
    if (s.alive()) sampleRss();
  }, RSS_EVERY_MS);
  try {
    await load.run(MINUTES * 60_000, () => !s.alive());
  } finally {
    clearInterval(sampler);
  }
  if (s.alive()) sampleRss();
  windowEndEpochMs = Date.now();
  if (s.alive()) serveCpuMs = s.cpuMs() - serveCpuMs;
  health.phase = 'after';
  loadAtWindowEnd = os.loadavg();
  if (!s.alive()) throw new Error(`serve exited during the window; its last lines:\n${s.tail()}`);
  metricsAfter = (await get(`${serve.url}/metrics`)).text;
  const times = await peer.times();
  peerTimes = times.times;
  peerUnlabelled = times.unlabelled;
  if (load.result.failure !== undefined) throw new Error(load.result.failure);
} catch (err) {
  failure = err instanceof Error ? err.message : String(err);
} finally {
  log('stopping serve, the peer and the fleet');
  await health?.stop();
  await load?.close().catch(() => undefined);
  // serve first: on SIGTERM it flushes its buffered spans to the receiver.
  await serve?.close(10_000);
  await Promise.all([peer?.close(), cards?.close()]);
  await receiver?.close();
  await pg?.close();
  cleanupNow();
}

if (failure !== undefined) {
  console.error(`[bench:service] FAILED: ${failure}`);
  process.exit(1);
}

// ---- figures --------------------------------------------------------------------------------------

const turns = load!.result.turns;
const bySide = (side: Side) => turns.filter((t) => t.side === side);
const missingPeerTime = turns.filter((t) => peerTimes[t.id] === undefined).length;
const sideFigures = (side: Side) => {
  const ts = bySide(side).filter((t) => peerTimes[t.id] !== undefined);
  const wall = ts.map((t) => t.wallMs);
  const peerMs = ts.map((t) => peerTimes[t.id]!);
  const overhead = ts.map((t) => t.wallMs - peerTimes[t.id]!);
  return { turns: bySide(side).length, wallMs: pct(wall), peerMs: pct(peerMs), overheadMs: pct(overhead), overheadValues: overhead, wallValues: wall };
};
const service = sideFigures('service');
const direct = sideFigures('direct');

// Per minute of the window (rotated sides: both in every minute): the ratio of medians.
const minutes = Math.max(1, Math.round(MINUTES));
const bucketOf = (t: Turn) => Math.min(minutes - 1, Math.floor(t.atMs / ((MINUTES * 60_000) / minutes)));
const perBucket = (f: (svc: number[], dir: number[]) => number) => {
  const out: number[] = [];
  for (let b = 0; b < minutes; b++) {
    const svc = turns.filter((t) => t.side === 'service' && bucketOf(t) === b && peerTimes[t.id] !== undefined);
    const dir = turns.filter((t) => t.side === 'direct' && bucketOf(t) === b && peerTimes[t.id] !== undefined);
    if (svc.length > 0 && dir.length > 0) out.push(f(svc.map((t) => t.wallMs - peerTimes[t.id]!), dir.map((t) => t.wallMs - peerTimes[t.id]!)) );
  }
  return summarize(out);
};
const wallOf = (side: Side, b: number) => turns.filter((t) => t.side === side && bucketOf(t) === b).map((t) => t.wallMs);
const wallRatio = summarize(
  Array.from({ length: minutes }, (_, b) => summarize(wallOf('service', b)).median / summarize(wallOf('direct', b)).median).filter(Number.isFinite),
);
const overheadRatio = perBucket((svc, dir) => summarize(svc).median / summarize(dir).median);
const overheadAdded = perBucket((svc, dir) => summarize(svc).median - summarize(dir).median);

const inWindow = (c: CycleSpan) => c.startMs >= windowStartEpochMs && c.startMs <= windowEndEpochMs;
const cycles = receiver!.cycles.filter(inWindow);
const idle = cycles.filter((c) => c.due === 0);
const busy = cycles.filter((c) => c.due > 0);
const cycleStats = (cs: CycleSpan[]) => ({
  count: cs.length,
  ms: summarize(cs.map((c) => c.durationMs)),
  p99Ms: percentile(cs.map((c) => c.durationMs), 99),
  due: summarize(cs.map((c) => c.due)),
  usPerEndpoint: summarize(cs.map((c) => (c.durationMs * 1000) / c.endpoints)),
});
// The first cycle span received (the startup's first cycle, unless the exporter dropped it).
const cycleFigures = { all: cycleStats(cycles), nothingDue: cycleStats(idle), withDue: cycleStats(busy), firstReceived: receiver!.cycles[0] };

const rssValues = rss.map((x) => x.rssMB);
const rssFigures = {
  everyMs: RSS_EVERY_MS,
  firstMB: rssValues[0]!,
  lastMB: rssValues.at(-1)!,
  maxMB: Math.max(...rssValues),
  minMB: Math.min(...rssValues),
  slopeMBPerMinute: slope(rss.map((x) => [x.tSec / 60, x.rssMB] as const)),
  samples: rss,
};
const delta = (name: string) => metricSum(metricsAfter, name) - metricSum(metricsBefore, name);
const serviceCounters = {
  cardFetches: delta('a2a_discovery_card_fetches_total'),
  notModified: delta('a2a_discovery_card_not_modified_total'),
  cardFailures: delta('a2a_discovery_card_failures_total'),
  storeWrites: delta('a2a_discovery_store_writes'),
  storeFailedWrites: delta('a2a_discovery_store_failed_writes'),
  snapshotPublications: delta('a2a_discovery_snapshot_publications_total'),
  httpRefusals: delta('a2a_discovery_http_refusals_total'),
};
const healthz = { fleet: health!.figures('fleet'), warmUp: health!.figures('warm-up'), window: health!.figures('window') };
const errors = { failedTurns: 0, skippedTicks: load!.result.skipped, turnsWithoutPeerTime: missingPeerTime, peerRequestsWithoutTurnId: peerUnlabelled };

const out: string[] = [];
out.push(`a2a-discovery service end to end (issue 29) — ${started.toISOString()}`);
out.push(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}); load average at start ${loadAtWindowStart.map((x) => x.toFixed(2)).join(' ')}, at end ${loadAtWindowEnd.map((x) => x.toFixed(2)).join(' ')} (1/5/15 min)`);
out.push(
  `serve (dist) on ${STORE_NAME}, ${fmt(cards!.ready.endpoints, 0)} endpoints over ${ORIGINS} loopback origins from a paged registry (cards ${cards!.ready.cardBytes} B, max-age ${MAX_AGE_S} s; fetched in ${fmt(fleetSeconds, 1)} s), routed root (no model) → one A2A 1.0 peer; window ${fmt(MINUTES, 1)} min, ${RATE} turns/s per side, ≤ ${CONCURRENCY} in flight per side, conversations of ${TURNS_PER_SESSION} turns (history: ${HISTORY}; agent names: ${NAMES}).`,
);
out.push('');
out.push('Chat turns: wall time as the client sees it, the peer’s own time (measured at the peer), and the rest (wall − peer), ms');
const row = (label: string, f: typeof service) => [label, fmt(f.turns, 0), fmt(f.wallMs.p50, 2), fmt(f.wallMs.p99, 2), fmt(f.peerMs.p50, 2), fmt(f.overheadMs.p50, 2), fmt(f.overheadMs.p99, 2)];
out.push(table(['side', 'turns', 'wall p50', 'wall p99', 'peer p50', 'wall−peer p50', 'wall−peer p99'], [row('POST /api/chat (service)', service), row('straight to the peer (baseline)', direct)]));
out.push(`   service ÷ direct, per minute (median [min–max]): wall ${fmtSummary(wallRatio, 2)}; wall−peer ${fmtSummary(overheadRatio, 1)}; routing overhead added by the service (wall−peer, service − direct) ${fmtSummary(overheadAdded, 2)} ms`);
out.push(`   serve's CPU over the window (user + system, from /proc; its discovery loop included): ${fmt(serveCpuMs, 0)} ms, ${fmt(serveCpuMs / service.turns, 2)} ms per service turn`);
out.push('');
out.push(`Discovery loop cycles in the window (from the cycle spans), ${fmt(cards!.ready.endpoints + 1, 0)} endpoints each`);
const cycleRow = (label: string, c: ReturnType<typeof cycleStats>) => [label, fmt(c.count, 0), c.count ? fmtSummary(c.ms, 1) : '–', c.count ? fmt(c.p99Ms, 1) : '–', c.count ? fmt(c.usPerEndpoint.median, 2) : '–', c.count ? fmt(c.due.median, 0) : '–'];
out.push(
  table(
    ['cycles', 'count', 'ms median [min–max]', 'ms p99', 'µs/endpoint (median)', 'due (median)'],
    [cycleRow('nothing due', cycleFigures.nothingDue), cycleRow('with cards due (revalidations)', cycleFigures.withDue), cycleRow('all', cycleFigures.all)],
  ),
);
out.push('');
out.push(
  `RSS of serve, every ${RSS_EVERY_MS / 1000} s (${rss.length} samples): first ${fmt(rssFigures.firstMB, 0)} MB, last ${fmt(rssFigures.lastMB, 0)} MB, max ${fmt(rssFigures.maxMB, 0)} MB, slope ${fmt(rssFigures.slopeMBPerMinute, 2)} MB/min`,
);
out.push(
  `GET /healthz once a second: while the fleet was fetched, max ${fmt(healthz.fleet.maxMs, 0)} ms (${healthz.fleet.probes} probes); in the warm-up after it (the first cycle judging the fleet), max ${fmt(healthz.warmUp.maxMs, 0)} ms (${healthz.warmUp.probes} probes); in the window p50 ${fmt(healthz.window.p50Ms, 1)} ms, p99 ${fmt(healthz.window.p99Ms, 1)} ms, max ${fmt(healthz.window.maxMs, 0)} ms`,
);
out.push(
  `Errors: ${errors.failedTurns} failed turns; ticks skipped at the concurrency bound: service ${errors.skippedTicks.service}, direct ${errors.skippedTicks.direct}; turns without a peer time ${missingPeerTime}; card fetches in the window ${fmt(serviceCounters.cardFetches, 0)} (304s ${fmt(serviceCounters.notModified, 0)}, failures ${fmt(serviceCounters.cardFailures, 0)}); store writes ${fmt(serviceCounters.storeWrites, 0)} (failed ${fmt(serviceCounters.storeFailedWrites, 0)}); sessions ended ${load!.result.sessionsEnded}`,
);
console.log(out.join('\n'));

const json = {
  meta: { ...machineMeta(started, loadStart), loadAvgWindowStart: loadAtWindowStart, loadAvgWindowEnd: loadAtWindowEnd },
  setup: {
    minutes: MINUTES,
    endpoints: cards!.ready.endpoints,
    origins: ORIGINS,
    cardBytes: cards!.ready.cardBytes,
    maxAgeSeconds: MAX_AGE_S,
    ratePerSide: RATE,
    concurrencyPerSide: CONCURRENCY,
    turnsPerSession: TURNS_PER_SESSION,
    history: HISTORY,
    names: NAMES,
    warmupTurnsPerSide: WARMUP_TURNS,
    fleetFetchedSeconds: fleetSeconds,
    overheadMethod: 'wall time at the client minus the peer’s own time per turn (first byte of the JSON-RPC request to the end of its response, measured in the peer process)',
    cycleMethod: 'the a2a_discovery.cycle spans exported over OTLP/HTTP to a receiver in the bench; chat turns sent with an unsampled traceparent (not recorded)',
    config: configDoc,
  },
  chat: {
    service: { turns: service.turns, wallMs: service.wallMs, peerMs: service.peerMs, overheadMs: service.overheadMs },
    direct: { turns: direct.turns, wallMs: direct.wallMs, peerMs: direct.peerMs, overheadMs: direct.overheadMs },
    perMinute: { wallRatio, overheadRatio, overheadAddedMs: overheadAdded },
    serveCpuMs,
    serveCpuMsPerTurn: serveCpuMs / service.turns,
  },
  cycles: cycleFigures,
  rss: rssFigures,
  healthz,
  errors,
  serviceCounters,
};
log(`wrote ${writeResults('service.json', json)}`);
process.exit(0);
