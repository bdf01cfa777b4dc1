/**
 * The durable write path (`npm run bench:store`, issue 29; see docs/benchmarks.md "Durable write
 * path (issue 29)"): a revalidation sweep of 10,000 loopback endpoints, every one answering 304,
 * through `CardCache` with the memory store (the baseline), the SQLite store (a file in a
 * temporary directory) and the PostgreSQL store (a server the test helper starts; skipped with
 * the reason printed when it cannot).
 *
 * Each side has its own cache, card fetcher and virtual clock, over the same fault servers (a
 * child process, 127.0.0.1). Warm-up: one sweep of 200s fills every store. Each round moves every
 * side's clock past max-age and times one sweep per side, in an order rotated per round; a sweep
 * is `n` `cache.get()` calls at a fixed concurrency and ends when every call has resolved and the
 * store has written them all (the SQL stores write a 304's freshness behind the cache: the sweep
 * ends with one awaited write, which commits after every write queued before it). Checked: the
 * servers saw `n` requests, every entry came back revalidated.
 *
 * Bytes written per 304:
 * - SQLite: `wchar` of /proc/self/io (bytes this process handed to write(): SQLite's WAL frames
 *   and checkpoints, the driver's thread included) during the SQLite sweep, minus the same during
 *   the memory sweep of the round (the HTTP requests both send), per request;
 * - PostgreSQL: how far the server's WAL position (`pg_current_wal_lsn()`) moved during the
 *   sweep, per request;
 * - both: the row bytes the store keeps for what a 304 changes (the freshness row when the store
 *   has them, else the whole entry's JSON), averaged over the rows (characters of JSON text).
 *
 * Environment: BENCH_STORE_N (default 10,000), BENCH_ROUNDS (default 5). Prints a table; writes
 * bench/results/store-sweep.json.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import { CardCache } from '../packages/core/src/cache/index.js';
import { VirtualClock } from '../packages/core/src/clock/index.js';
import { createCardFetcher, HostPolicy } from '../packages/core/src/fetch/index.js';
import { openStateStore, type StateStore } from '../packages/store/src/index.js';
import type { TestPostgres } from '../test/helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../test/helpers/postgres.js';
import { runPool } from './lib/pool.js';
import { machineMeta, writeResults } from './lib/results.js';
import { startServerChild, type ServerHandle } from './lib/server.js';
import { fmt, fmtSummary, summarize, table, type Summary } from './lib/stats.js';
import { envCount } from './lib/env.js';

const N = envCount('BENCH_STORE_N', 10_000, 1_000_000);
const ROUNDS = envCount('BENCH_ROUNDS', 5, 100);
const ORIGINS = 64;
const CONCURRENCY = 32;
const MAX_AGE_S = 300;
const ADVANCE_MS = (MAX_AGE_S + 100) * 1000;
/** Bound on one sweep (real time). */
const SWEEP_LIMIT_MS = 120_000;
/** The key of the write each timed sweep ends with (see `timed`). */
const SENTINEL = 'bench sentinel';
/** Targets of issue 29: revalidation throughput ÷ the memory store's. */
const TARGETS: Record<string, number> = { sqlite: 0.8, postgres: 0.6 };

const log = (s: string) => process.stderr.write(`${s}\n`);

/** Bytes this process handed to write() so far (Linux), or NaN. */
function wchar(): number {
  try {
    const m = /^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

interface Side {
  name: string;
  store: StateStore;
  cache: CardCache;
  clock: VirtualClock;
  close(): Promise<void>;
  /** The server's WAL bytes so far (PostgreSQL). */
  walBytes?: () => Promise<number>;
  /** Average row bytes kept for what a 304 changes. */
  rowBytes?: () => Promise<number>;
}

interface SweepResult {
  side: string;
  seconds: number;
  requestsPerSecond: number;
  wcharBytes: number;
  walBytes: number;
}

const started = new Date();
const loadBefore = os.loadavg();
log(`starting fault servers: ${ORIGINS} origins, ${N} endpoints`);
const server: ServerHandle = await startServerChild({ origins: ORIGINS, perOrigin: Math.ceil(N / ORIGINS), soloEndpoints: 1, cacheControl: `public, max-age=${MAX_AGE_S}` });
const policy = HostPolicy.from({ allow: [...server.ready.origins], allowLoopback: true });
const targets: string[] = [];
for (let j = 0; targets.length < N; j++) for (const o of server.ready.origins) if (targets.length < N) targets.push(`${o}/a${j}/`);

const dir = await mkdtemp(join(os.tmpdir(), 'a2ad-bench-store-'));
let pg: TestPostgres | undefined;
let pgSkip: string | undefined = POSTGRES_SKIP;
const sides: Side[] = [];
const knexes: Knex[] = [];

async function side(name: string, open: (clock: VirtualClock) => Promise<StateStore>, extra: Partial<Side> = {}): Promise<Side> {
  const clock = new VirtualClock({ wallStart: Date.now() });
  const store = await open(clock);
  const fetcher = createCardFetcher({ policy, maxConnectionsPerOrigin: 1 });
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, minTtlMs: 0, maxConcurrentFetches: CONCURRENCY, check: { allowLoopback: true }, store: store.cards });
  return {
    name,
    store,
    cache,
    clock,
    async close() {
      await cache.close();
      await fetcher.close();
      await store.close();
    },
    ...extra,
  };
}

/**
 * Average bytes per row of what a 304 changes: the freshness row (`a2ad_card_freshness`, issue 29)
 * where one exists, else the whole entry's JSON (the store before issue 29 has only that).
 */
async function rowBytesOf(db: Knex): Promise<number> {
  const q = (await db.schema.hasTable('a2ad_card_freshness'))
    ? db('a2ad_card_freshness').select(db.raw('AVG(LENGTH(freshness)) AS n'))
    : db('a2ad_card_entries').select(db.raw('AVG(LENGTH(entry)) AS n'));
  const rows = (await q) as Array<{ n: unknown }>;
  return Number(rows[0]!.n);
}

async function sweep(s: Side, expected: string): Promise<{ ok: number; bad: number; first?: string; timedOut: boolean }> {
  let ok = 0;
  let bad = 0;
  let first: string | undefined;
  const r = await runPool(targets, CONCURRENCY, performance.now() + SWEEP_LIMIT_MS, async (t) => {
    const e = await s.cache.get(t);
    if (e.lastOutcome === expected && !e.stale) ok++;
    else {
      bad++;
      first ??= `${t}: ${e.lastOutcome}${e.lastError ? ` ${e.lastError.message}` : ''}`;
    }
  });
  if (r.firstError !== undefined) first ??= String(r.firstError);
  return { ok, bad: bad + r.errors, ...(first !== undefined && { first }), timedOut: r.timedOut };
}

function check(what: string, c: { ok: number; bad: number; first?: string; timedOut: boolean }): void {
  if (c.ok !== N || c.bad > 0 || c.timedOut) throw new Error(`${what}: ${c.ok}/${N} as expected, ${c.bad} not${c.timedOut ? ', timed out' : ''}; first: ${c.first ?? '-'}`);
}

async function timed(s: Side): Promise<SweepResult> {
  await s.clock.advance(ADVANCE_MS);
  const h0 = (await server.stats()).hits;
  const wal0 = s.walBytes ? await s.walBytes() : NaN;
  const w0 = wchar();
  const t0 = performance.now();
  const c = await sweep(s, 'revalidated');
  // Until the store has written the sweep: a SQL store writes freshness behind the cache; an
  // awaited write of one more key commits after every write queued before it.
  await s.store.cards.set(SENTINEL, (await s.cache.peek(targets[0]!))!);
  const t1 = performance.now();
  const w1 = wchar();
  const wal1 = s.walBytes ? await s.walBytes() : NaN;
  const requests = (await server.stats()).hits - h0;
  check(`${s.name} sweep`, c);
  if (requests !== N) throw new Error(`${s.name} sweep: the servers saw ${requests} requests, expected ${N}`);
  const seconds = (t1 - t0) / 1000;
  return { side: s.name, seconds, requestsPerSecond: N / seconds, wcharBytes: w1 - w0, walBytes: wal1 - wal0 };
}

const rounds: Array<{ round: number; order: string[]; results: SweepResult[] }> = [];
try {
  sides.push(await side('memory', () => openStateStore('memory')));
  const sqliteFile = join(dir, 'bench.sqlite');
  const sqliteReader = knexFactory({ client: 'sqlite3', connection: { filename: sqliteFile }, useNullAsDefault: true, pool: { min: 0, max: 1 } });
  knexes.push(sqliteReader);
  sides.push(await side('sqlite', (clock) => openStateStore(`sqlite:${sqliteFile}`, { clock }), { rowBytes: () => rowBytesOf(sqliteReader) }));
  if (pgSkip === undefined) {
    try {
      pg = await startPostgres();
    } catch (err) {
      pgSkip = `PostgreSQL did not start: ${(err as Error).message}`;
    }
  }
  if (pg !== undefined) {
    const schema = pg.schema();
    const reader = knexFactory({ client: 'pg', connection: pg.url, searchPath: [schema], pool: { min: 0, max: 1 } });
    knexes.push(reader);
    sides.push(
      await side('postgres', (clock) => openStateStore(pg!.url, { clock, schema }), {
        walBytes: async () => Number(((await reader.raw("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS n")) as { rows: Array<{ n: unknown }> }).rows[0]!.n),
        rowBytes: () => rowBytesOf(reader),
      }),
    );
  } else log(`PostgreSQL side skipped: ${pgSkip}`);

  for (const s of sides) {
    log(`warm-up: ${s.name}`);
    check(`${s.name} warm-up`, await sweep(s, 'changed'));
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
    const results: SweepResult[] = [];
    for (const s of order) results.push(await timed(s));
    rounds.push({ round, order: order.map((s) => s.name), results });
    log(`round ${round + 1}/${ROUNDS}: ${results.map((r) => `${r.side} ${fmt(r.requestsPerSecond, 0)}/s`).join(', ')}`);
  }

  const per = (name: string, f: (r: SweepResult, memory: SweepResult) => number): Summary =>
    summarize(rounds.map((r) => f(r.results.find((x) => x.side === name)!, r.results.find((x) => x.side === 'memory')!)));
  const report: Record<string, unknown> = {};
  const rows: string[][] = [];
  for (const s of sides) {
    const throughput = per(s.name, (r) => r.requestsPerSecond);
    const ratio = per(s.name, (r, m) => r.requestsPerSecond / m.requestsPerSecond);
    const wcharPer = per(s.name, (r, m) => (r.wcharBytes - m.wcharBytes) / N);
    const walPer = per(s.name, (r) => r.walBytes / N);
    const rowBytes = s.rowBytes ? await s.rowBytes() : NaN;
    const target = TARGETS[s.name];
    const verdict = target === undefined ? 'baseline' : ratio.median >= target ? `met (≥ ${target})` : `MISSED (≥ ${target})`;
    report[s.name] = { throughput, ratio, wcharBytesPer304: wcharPer, walBytesPer304: walPer, rowBytesPer304: rowBytes, target, verdict };
    rows.push([
      s.name,
      fmtSummary(throughput, 0),
      s.name === 'memory' ? '1' : fmtSummary(ratio, 2),
      s.name === 'sqlite' ? fmtSummary(wcharPer, 0) : '–',
      s.name === 'postgres' ? fmtSummary(walPer, 0) : '–',
      Number.isNaN(rowBytes) ? '–' : fmt(rowBytes, 0),
      verdict,
    ]);
  }
  const load = os.loadavg();
  console.log(`\nRevalidation sweep, ${fmt(N, 0)} endpoints (all 304) over ${ORIGINS} loopback origins, concurrency ${CONCURRENCY}, ${ROUNDS} rounds (rotated), median [min–max]`);
  console.log(table(['store', '304/s', '÷ memory', 'write() B/304', 'WAL B/304', 'row B/304', 'target'], rows));
  if (pg === undefined) console.log(`PostgreSQL: skipped (${pgSkip})`);
  console.log(`load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${load.map((x) => x.toFixed(2)).join(' ')}`);
  const file = writeResults('store-sweep.json', { meta: machineMeta(started, loadBefore), n: N, origins: ORIGINS, concurrency: CONCURRENCY, rounds, summary: report, ...(pg === undefined && { postgresSkipped: pgSkip }) });
  log(`wrote ${file}`);
} finally {
  for (const s of sides) await s.close().catch(() => undefined);
  for (const k of knexes) await k.destroy().catch(() => undefined);
  await pg?.close().catch(() => undefined);
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
