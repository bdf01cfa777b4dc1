/**
 * The telemetry-cost section of `npm run bench` (benchmark 7, bench/lib/telemetry.ts) on its own:
 * `node --import tsx bench/telemetry.ts`. Starts the fault servers in a child process, runs the
 * three sides (no provider, sampling off, sampling on) in interleaved rounds, prints the table and
 * writes bench/results/telemetry.json. Environment: BENCH_ROUNDS (default 5).
 */
import os from 'node:os';
import { machineMeta, writeResults } from './lib/results.js';
import { startServerChild } from './lib/server.js';
import { telemetryBenchmark, telemetryTable } from './lib/telemetry.js';

const ROUNDS = Math.max(1, Number.parseInt(process.env['BENCH_ROUNDS'] ?? '', 10) || 5);
const ORIGINS = 16;
const N = 2_000;
const CONCURRENCY = 32;
const MAX_AGE_S = 300;

const started = new Date();
const loadBefore = os.loadavg();
const server = await startServerChild({ origins: ORIGINS, perOrigin: Math.ceil(N / ORIGINS), soloEndpoints: 0, cacheControl: `public, max-age=${MAX_AGE_S}` }, 120_000);
let report;
try {
  report = await telemetryBenchmark([...server.ready.origins], N, { concurrency: CONCURRENCY, rounds: ROUNDS, warmSweeps: 2, sweeps: 5, advanceMs: (MAX_AGE_S + 100) * 1000, limitMs: 60_000 });
} finally {
  await server.close();
}
console.log(`7. Telemetry cost: conditional refresh sweep (all 304), ${N.toLocaleString('en-US')} endpoints over ${ORIGINS} origins, concurrency ${CONCURRENCY}; one child process per side and round (a 200 sweep and ${report.warmSweepsPerChild} untimed 304 sweeps, then ${report.sweepsPerChild} timed), ${ROUNDS} rounds, order rotated; ratios paired per round`);
console.log(telemetryTable(report));
process.stderr.write(`wrote ${writeResults('telemetry.json', { meta: machineMeta(started, loadBefore), report })}\n`);
