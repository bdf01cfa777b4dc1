/**
 * Publishing a snapshot to the durable store (`npm run bench:publish`, issue 43): what a
 * publication costs `serve` when its fleet is large and little of it changed.
 *
 * Per round and per engine (SQLite on a file in a temporary directory; a real PostgreSQL the test
 * helper starts, skipped with the reason when it cannot), a new store publishes three snapshots
 * of `BENCH_PUBLISH_AGENTS` agents (distinct ~1.3 KB cards, their models held, as a selection
 * holds them): the first (every card and link new: the baseline, what every publication cost
 * before a publication wrote only what the last one lacked), then one with a single agent's card
 * changed, then one with 1 % of the cards changed. Each is timed from the call to its commit:
 * wall time, this process's CPU (SQLite's driver threads included; PostgreSQL's server is not),
 * and the longest hold of the event loop (a 10 ms delay histogram over the publication).
 *
 * Reported per engine: each publication's figures (median [range] over the rounds) and the ratio
 * of the later ones to the first, paired per round.
 *
 * Environment: BENCH_PUBLISH_AGENTS (default 10,000), BENCH_ROUNDS (default 3). Writes
 * bench/results/publish.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseAgentCard } from '../packages/core/src/card/index.js';
import { buildSnapshot, type Snapshot, type SnapshotAgent } from '../packages/core/src/snapshot/index.js';
import { openStateStore, type StateStore } from '../packages/store/src/index.js';
import type { TestPostgres } from '../test/helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../test/helpers/postgres.js';
import { benchCard } from './lib/card.js';
import { envCount } from './lib/env.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, summarize, table } from './lib/stats.js';

const AGENTS = envCount('BENCH_PUBLISH_AGENTS', 10_000, 200_000);
const ROUNDS = envCount('BENCH_ROUNDS', 3, 20);
const log = (msg: string) => process.stderr.write(`[bench:publish] ${msg}\n`);

/** A selected agent for `id`, its card `edition` (a new edition is new bytes: a new card). */
function agentFor(i: number, edition = 0): SnapshotAgent {
  const origin = `https://h${i % 1000}.example`;
  const raw = benchCard(origin, `a${i}`);
  const text = JSON.stringify(edition === 0 ? raw : { ...raw, description: `${String(raw['description'])} (edition ${edition})` });
  const r = parseAgentCard(text);
  if (!r.ok) throw new Error(`bench card ${i}: ${JSON.stringify(r.problems)}`);
  return Object.freeze({
    localName: `agent_${i.toString(36)}`,
    description: 'Reviewed.',
    tags: ['billing'],
    critical: false,
    baseUrl: `${origin}/a${i}/`,
    sources: ['registry'],
    card: r.card!,
    body: text,
    canonicalSha256: r.canonicalSha256!,
    rawSha256: r.rawSha256,
    protocolVersion: r.protocolVersion!,
    degraded: false,
    stale: false,
  } as SnapshotAgent);
}

log(`building ${fmt(AGENTS, 0)} agents`);
const base = Array.from({ length: AGENTS }, (_, i) => agentFor(i));
const oneChanged = [...base];
oneChanged[0] = agentFor(0, 1);
const percentChanged = [...oneChanged];
for (let i = 0; i < AGENTS; i += 100) percentChanged[i] = agentFor(i, 2);
const PUBLICATIONS: ReadonlyArray<{ name: string; snapshot: Snapshot }> = [
  { name: 'first (every card new)', snapshot: buildSnapshot(base, 1, Date.now()) },
  { name: 'one card changed', snapshot: buildSnapshot(oneChanged, 2, Date.now()) },
  { name: '1 % of the cards changed', snapshot: buildSnapshot(percentChanged, 3, Date.now()) },
];

interface Timed {
  wallMs: number;
  cpuMs: number;
  holdMs: number;
}

async function timedPublish(store: StateStore, snapshot: Snapshot): Promise<Timed> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await store.publishSnapshot(snapshot);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setTimeout(r, 30));
  h.disable();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, holdMs: h.max / 1e6 };
}

const started = new Date();
const loadBefore = os.loadavg();
const dir = await mkdtemp(join(os.tmpdir(), 'a2a-bench-publish-'));
let pg: TestPostgres | undefined;
const pgSkip = POSTGRES_SKIP;
const engines: Array<{ name: string; open: (round: number) => Promise<StateStore> }> = [{ name: 'SQLite', open: (round) => openStateStore(`sqlite:${join(dir, `r${round}.sqlite`)}`) }];
const runs = new Map<string, Timed[][]>();
try {
  if (pgSkip === undefined) {
    pg = await startPostgres();
    engines.push({ name: 'PostgreSQL', open: () => openStateStore(pg!.url, { schema: pg!.schema() }) });
  } else log(`PostgreSQL skipped: ${pgSkip}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const engine of round % 2 === 0 ? engines : [...engines].reverse()) {
      const store = await engine.open(round);
      try {
        const timed: Timed[] = [];
        for (const p of PUBLICATIONS) timed.push(await timedPublish(store, p.snapshot));
        runs.set(engine.name, [...(runs.get(engine.name) ?? []), timed]);
        log(`round ${round + 1}/${ROUNDS} ${engine.name}: ${timed.map((t) => `${fmt(t.wallMs, 0)} ms`).join(', ')}`);
      } finally {
        await store.close();
      }
    }
  }
} finally {
  await pg?.close();
  await rm(dir, { recursive: true, force: true });
}

const report: Record<string, unknown> = {};
for (const [engine, rounds] of runs) {
  const rows = PUBLICATIONS.map((p, i) => {
    const of = (f: (t: Timed) => number) => summarize(rounds.map((r) => f(r[i]!)));
    const ratio = i === 0 ? undefined : summarize(rounds.map((r) => r[i]!.wallMs / r[0]!.wallMs));
    return { publication: p.name, wallMs: of((t) => t.wallMs), cpuMs: of((t) => t.cpuMs), holdMs: of((t) => t.holdMs), wallRatioToFirst: ratio };
  });
  report[engine] = rows;
  console.log(`\n${engine}: ${fmt(AGENTS, 0)} agents, ${rounds.length} rounds (median [range])`);
  console.log(
    table(
      ['publication', 'wall, ms', 'CPU of this process, ms', 'longest hold, ms', 'wall ÷ the first'],
      rows.map((r) => [r.publication, fmtSummary(r.wallMs, 0), fmtSummary(r.cpuMs, 0), fmtSummary(r.holdMs, 0), r.wallRatioToFirst === undefined ? '1 (baseline)' : fmtSummary(r.wallRatioToFirst, 3)]),
    ),
  );
}
const file = writeResults('publish.json', { meta: machineMeta(started, loadBefore), agents: AGENTS, rounds: ROUNDS, report, ...(pgSkip !== undefined && { postgresSkipped: pgSkip }) });
console.log(`\nload average ${loadBefore.map((l) => fmt(l, 2)).join(' ')} → ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}; written ${file}`);
