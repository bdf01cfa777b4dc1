/**
 * Revalidation against raw undici, each side in a process of its own (issue 43: an independent
 * harness beside `npm run bench`'s benchmark 1, where both sides share one process): 2,000
 * endpoints over 64 origins answering 304 (`public, max-age=300`, ETag), concurrency 32, one
 * keep-alive connection per origin. The fault servers run in one child process for the whole
 * run. Each round starts a fresh process per side, in an order rotated per round; each process
 * warms (the 200s, untimed), then times BENCH_SWEEPS sweeps. Ratios are paired within a round:
 * throughput (CardCache ÷ raw, target ≥ 1.0) and client CPU per request (CardCache ÷ raw,
 * target ≤ 1.0).
 *
 * Environment: BENCH_ROUNDS (default 7), BENCH_SWEEPS (default 10), BENCH_PROFILE (a directory:
 * each side's process writes the CPU profile of its timed sweeps there, `<side>-<pid>.cpuprofile`).
 * Run: `npm run bench:revalidation` (about two minutes). Writes bench/results/revalidation.json.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineMeta, writeResults } from './lib/results.js';
import { ROOT, startServerChild } from './lib/server.js';
import { fmt, fmtSummary, summarize, table } from './lib/stats.js';
import { envCount } from './lib/env.js';

const ROUNDS = envCount('BENCH_ROUNDS', 7, 100);
const SWEEPS = envCount('BENCH_SWEEPS', 10, 1_000);
/** BENCH_PROFILE=<directory>: each side's process writes the CPU profile of its timed sweeps there. */
const PROFILE = process.env['BENCH_PROFILE'] === undefined ? undefined : resolve(process.env['BENCH_PROFILE']);
if (PROFILE !== undefined) mkdirSync(PROFILE, { recursive: true });
const TARGETS = 2_000;
const ORIGINS = 64;
const CHILD = fileURLToPath(new URL('./lib/revalidation-child.ts', import.meta.url));

interface SideResult {
  requestsPerSecond: number;
  cpuUsPerRequest: number;
}

function runSide(side: 'raw' | 'cache', origins: readonly string[]): Promise<SideResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify({ side, origins, targets: TARGETS, sweeps: SWEEPS, ...(PROFILE !== undefined && { profileDir: PROFILE }) })], { cwd: ROOT, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${side}: ${err.message}\n${stderr.slice(-1000)}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as SideResult);
    });
  });
}

const started = new Date();
const loadBefore = os.loadavg();
const server = await startServerChild({ origins: ORIGINS, perOrigin: Math.ceil(TARGETS / ORIGINS), soloEndpoints: 1, cacheControl: 'public, max-age=300', noCacheTwins: 0, noCacheControl: 'public, no-cache' }, 120_000);
const rounds: Array<{ order: string[]; raw: SideResult; cache: SideResult }> = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const order: Array<'raw' | 'cache'> = r % 2 === 0 ? ['raw', 'cache'] : ['cache', 'raw'];
    const got: Partial<Record<'raw' | 'cache', SideResult>> = {};
    for (const side of order) got[side] = await runSide(side, server.ready.origins);
    rounds.push({ order, raw: got.raw!, cache: got.cache! });
    console.log(`round ${r + 1}/${ROUNDS}: raw ${fmt(got.raw!.requestsPerSecond, 0)} req/s, ${fmt(got.raw!.cpuUsPerRequest, 1)} µs; CardCache ${fmt(got.cache!.requestsPerSecond, 0)} req/s, ${fmt(got.cache!.cpuUsPerRequest, 1)} µs`);
  }
} finally {
  await server.close();
}
const throughput = summarize(rounds.map((r) => r.cache.requestsPerSecond / r.raw.requestsPerSecond));
const cpu = summarize(rounds.map((r) => r.cache.cpuUsPerRequest / r.raw.cpuUsPerRequest));
const loadAfter = os.loadavg();
console.log(`\nRevalidation, each side in its own process: ${fmt(TARGETS, 0)} endpoints over ${ORIGINS} origins, all 304, concurrency 32, ${SWEEPS} sweeps per process, ${ROUNDS} rounds; load average ${fmt(loadBefore[0]!, 2)} → ${fmt(loadAfter[0]!, 2)}`);
console.log(
  table(
    ['side', 'requests/s', 'client CPU µs/req'],
    (['raw', 'cache'] as const).map((s) => [s === 'raw' ? 'raw undici.request' : 'CardCache', fmtSummary(summarize(rounds.map((r) => r[s].requestsPerSecond)), 0), fmtSummary(summarize(rounds.map((r) => r[s].cpuUsPerRequest)), 1)]),
  ),
);
console.log(`CardCache ÷ raw: throughput ${fmtSummary(throughput, 2)} (target ≥ 1.0: ${throughput.median >= 1 ? 'met' : 'missed'}); client CPU per request ${fmtSummary(cpu, 2)} (target ≤ 1.0: ${cpu.median <= 1 ? 'met' : 'missed'})`);
console.log(writeResults('revalidation.json', { meta: machineMeta(started, loadBefore), targets: TARGETS, origins: ORIGINS, sweeps: SWEEPS, rounds, throughputRatio: throughput, cpuRatio: cpu }));
