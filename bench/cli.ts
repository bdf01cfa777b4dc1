/**
 * What the command line costs to start (issue 43; figures in docs/benchmarks.md, "Issue 43: the
 * command line"): the CPU time (user + system, read by the child itself at exit) of the built CLI
 * for `--version`, the root `--help`, every command's `--help` and `probe` of a card file,
 * against bare `node -e 0` in the same rounds (order shuffled per round), as a ratio and in ms.
 * Targets: `--version` and every `--help` ≤ 150 ms, `probe <file>` ≤ 400 ms.
 *
 * Environment: BENCH_ROUNDS (default 7). Needs `npm run build` first.
 * Run: `npm run bench:cli` (about a minute). Writes bench/results/cli.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../packages/service/src/cli/flags.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, shuffled, summarize, table } from './lib/stats.js';
import { envCount } from './lib/env.js';

const ROUNDS = envCount('BENCH_ROUNDS', 7, 100);
const CLI = fileURLToPath(new URL('../packages/service/dist/cli/main.js', import.meta.url));
const CARD = fileURLToPath(new URL('../examples/cards/billing-agent.json', import.meta.url));
if (!existsSync(CLI)) throw new Error('build first: npm run build');

/** Prints the process's own CPU time (µs) on stderr as it exits: no external `time`, and nothing of the parent's. */
const CPU_AT_EXIT = `data:text/javascript,${encodeURIComponent("import { writeSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); writeSync(2, '\\nCPU_US ' + (u.user + u.system) + '\\n'); });")}`;

const CASES: ReadonlyArray<{ name: string; args: readonly string[]; limitMs?: number }> = [
  { name: 'node -e 0 (baseline)', args: ['-e', '0'] },
  { name: '--version', args: [CLI, '--version'], limitMs: 150 },
  { name: '--help', args: [CLI, '--help'], limitMs: 150 },
  ...Object.keys(COMMANDS).map((c) => ({ name: `${c} --help`, args: [CLI, c, '--help'], limitMs: 150 })),
  { name: 'probe <card file>', args: [CLI, 'probe', CARD], limitMs: 400 },
];

function cpuMs(args: readonly string[]): number {
  const run = spawnSync(process.execPath, ['--import', CPU_AT_EXIT, ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 60_000 });
  const m = /CPU_US (\d+)/.exec(run.stderr);
  if (m === null) throw new Error(`${args.join(' ')}: no CPU time (exit ${run.status}): ${run.stderr.slice(0, 300)}`);
  return Number(m[1]) / 1000;
}

const started = new Date();
const loadBefore = os.loadavg();
const ms = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
const ratio = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
for (let r = 0; r < ROUNDS; r++) {
  const round = new Map<string, number>();
  for (const c of shuffled(CASES, r + 1)) round.set(c.name, cpuMs(c.args));
  const base = round.get(CASES[0]!.name)!;
  for (const [name, v] of round) {
    ms.get(name)!.push(v);
    ratio.get(name)!.push(v / base);
  }
}
const rows = CASES.map((c) => {
  const s = summarize(ms.get(c.name)!);
  return [c.name, fmtSummary(s, 0), fmtSummary(summarize(ratio.get(c.name)!), 2), c.limitMs === undefined ? '' : `${s.median <= c.limitMs ? 'met' : 'missed'} (≤ ${c.limitMs})`];
});
console.log(`CPU time of the built CLI, ms, median [range] of ${ROUNDS} rounds; load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
console.log(table(['command', 'CPU ms', '× node -e 0', 'target'], rows));
console.log(
  writeResults('cli.json', {
    meta: machineMeta(started, loadBefore),
    rounds: ROUNDS,
    cases: CASES.map((c) => ({ name: c.name, limitMs: c.limitMs, cpuMs: summarize(ms.get(c.name)!), vsNode: summarize(ratio.get(c.name)!) })),
  }),
);
