/**
 * Lookalike index benchmark (`npm run bench:lookalike`, issue 43; see docs/benchmarks.md "Issue 43:
 * an agent leaving a large fleet"): the discovery loop's `LookalikeIndex` over a fleet named as
 * `bench:scale` names it (a card name `Agent <12 hex digits>` and a pseudo-random local name per
 * agent), in one process:
 *
 * 1. admission: every agent set and looked up in turn (the first cycle's lookalike pass);
 * 2. the inspector's question (`judge`) for 1,000 names nobody holds;
 * 3. a tenth of the fleet renamed, then a tenth removed (agents leaving a registry);
 * 4. the memory the index holds per agent (heap and array buffers, GC forced), and its postings.
 *
 * Each operation's cost is reported per call and as a ratio to an admission in the same round: a
 * removal or a rename should cost what an admission does, whatever the fleet's size.
 *
 * Environment: BENCH_LOOKALIKE_AGENTS (default 100,000), BENCH_ROUNDS (default 3). Prints a table;
 * writes bench/results/lookalike.json. Run with --expose-gc (the npm script does) for the heap.
 */
import os from 'node:os';
import { seededRandom } from '../packages/core/src/clock/index.js';
import { LookalikeIndex, type LookalikeEntry } from '../packages/core/src/rules/lookalike.js';
import { benchAgentName } from './lib/card.js';
import { envCount } from './lib/env.js';
import { benchLocalName } from './lib/loop.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, summarize, table } from './lib/stats.js';

const AGENTS = envCount('BENCH_LOOKALIKE_AGENTS', 100_000, 1_000_000);
const ROUNDS = envCount('BENCH_ROUNDS', 3, 20);
const JUDGED = 1_000;
const gc = (globalThis as { gc?: () => void }).gc;

interface Round {
  admitUs: number;
  judgeUs: number;
  renameUs: number;
  removeUs: number;
  heapBPerAgent: number | undefined;
  postingsPerAgent: number;
  flagged: number;
}

/** The heap in use and the array buffers' memory (the index's lists are typed arrays, outside the heap). */
function held(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** Microseconds per call of `f` over `items`. */
function per<T>(items: readonly T[], f: (item: T) => void): number {
  const t0 = performance.now();
  for (const item of items) f(item);
  return ((performance.now() - t0) * 1000) / items.length;
}

function round(r: number): Round {
  const random = seededRandom(17 + r);
  const fleet: LookalikeEntry[] = Array.from({ length: AGENTS }, (_, i) => {
    const origin = `https://o${i % 1000}.bench.example`;
    return { key: `${origin}/a${i}`, origin, names: [benchAgentName(origin, `a${i}`), benchLocalName(random, i)] };
  });
  gc?.();
  const heap0 = held();
  const index = new LookalikeIndex();
  let flagged = 0;
  const admitUs = per(fleet, (e) => {
    index.set(e);
    if (index.find(e.key) !== undefined) flagged++;
  });
  gc?.();
  const heapBPerAgent = gc === undefined ? undefined : (held() - heap0) / AGENTS;
  const postingsPerAgent = index.postings / AGENTS;
  const judgeUs = per(
    Array.from({ length: JUDGED }, (_, i) => ({ origin: 'https://inspected.example', names: [benchAgentName('https://inspected.example', `j${i}`)] })),
    (e) => index.judge(e),
  );
  const tenth = fleet.filter((_, i) => i % 10 === 3);
  const renameUs = per(tenth, (e) => index.set({ ...e, names: [e.names[0]!, `${e.names[1]!}-renamed`] }));
  const removeUs = per(
    fleet.filter((_, i) => i % 10 === 7),
    (e) => index.delete(e.key),
  );
  return { admitUs, judgeUs, renameUs, removeUs, heapBPerAgent, postingsPerAgent, flagged };
}

const started = new Date();
const loadBefore = os.loadavg();
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) rounds.push(round(r));
const s = (f: (x: Round) => number) => summarize(rounds.map(f));
const rows: string[][] = [
  ['admission: set and find, µs per agent (baseline)', fmtSummary(s((x) => x.admitUs)), '1'],
  ['judge (the inspector), µs per name', fmtSummary(s((x) => x.judgeUs)), fmtSummary(s((x) => x.judgeUs / x.admitUs))],
  ['rename (set with new names), µs per agent', fmtSummary(s((x) => x.renameUs)), fmtSummary(s((x) => x.renameUs / x.admitUs))],
  ['removal (delete), µs per agent', fmtSummary(s((x) => x.removeUs)), fmtSummary(s((x) => x.removeUs / x.admitUs))],
  ['heap and array buffers held per agent, B', gc === undefined ? 'run with --expose-gc' : fmtSummary(s((x) => x.heapBPerAgent!), 0), ''],
  ['postings per agent', fmt(rounds[0]!.postingsPerAgent, 1), ''],
];
console.log(`a2a-discovery lookalike benchmark — ${started.toISOString()}`);
console.log(`Node ${process.version}, ${os.cpus().length} CPUs, load avg at start ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
console.log(`${fmt(AGENTS, 0)} agents named as bench:scale names them, median [min–max] over ${ROUNDS} rounds; lookalikes flagged at admission: ${rounds[0]!.flagged}\n`);
console.log(table(['measure', 'value', '÷ admission'], rows));
console.log(`wrote ${writeResults('lookalike.json', { meta: machineMeta(started, loadBefore), agents: AGENTS, rounds })}`);
