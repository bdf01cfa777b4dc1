/**
 * Replica and restart benchmarks (`npm run bench:replicas`, issue #14; see docs/benchmarks.md
 * "Replicas and restart"). `a2a-discovery serve` runs as child processes (the built
 * `packages/service/dist/cli/main.js`: run `npm run build` first) on a real PostgreSQL started by
 * the test helper (loopback, non-root) or on SQLite; card peers are HTTP servers in this process,
 * on 127.0.0.1.
 *
 * 1. Publication reach: three replicas; a card changes, the leader is asked to refresh, and each
 *    replica's `snapshot.published` is timed as it arrives on its `/api/stream`. Baseline in the
 *    same run: the leader's own publication, seen the same way.
 * 2. Mass expiry: 200 cards fetched together expire together once; upstream requests per card for
 *    the expiry with three replicas against one replica (the baseline).
 * 3. Restart with 1,000 agents (SQLite): a cold start (empty data directory, the baseline) and a
 *    restart on the same data after every card's max-age ran out — for each, the status of every
 *    card's first request (200 or 304), the time until `/readyz` says ready and the time until
 *    every card was requested.
 *
 * Environment: BENCH_PUBLICATIONS (default 40), BENCH_ROUNDS (restart rounds, default 3). Prints a
 * table; writes bench/results/replicas.json. Every wait is bounded; a watchdog ends the run.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { machineMeta, writeResults } from './lib/results.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { TestPostgres } from '../test/helpers/postgres.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { benchCard } from './lib/card.js';
import { fmt, percentile, summarize, table } from './lib/stats.js';
import { envCount } from './lib/env.js';

const PUBLICATIONS = envCount('BENCH_PUBLICATIONS', 40, 1_000);
const ROUNDS = envCount('BENCH_ROUNDS', 3, 50);
const EXPIRY_CARDS = 200;
const RESTART_AGENTS = 1_000;
const TOTAL_LIMIT_MS = 15 * 60_000;
const BIN = fileURLToPath(new URL('../packages/service/dist/cli/main.js', import.meta.url));

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench:replicas +${((performance.now() - t00) / 1000).toFixed(0)}s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every `everyMs` until it returns a value; throws after `limitMs`. */
async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, limitMs = 60_000, everyMs = 20): Promise<T> {
  const until = performance.now() + limitMs;
  let last: unknown;
  while (performance.now() < until) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`gave up waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

// ---- card peers ---------------------------------------------------------------------------------

/** Loopback origins serving benchmark cards at `/<id>/.well-known/agent-card.json`, counting requests per card and status. */
interface CardFarm {
  /** Static agent entries for the configuration. */
  readonly agents: Array<{ name: string; url: string; description: string; tags: string[] }>;
  readonly origins: string[];
  /** Per card id: requests, and the status of each. */
  readonly requests: Map<string, number[]>;
  /** `max-age` (seconds) for a card's n-th response (1-based). */
  maxAge: (id: string, n: number) => number;
  /** Text mixed into a card's description (a change makes a new card). */
  version: (id: string) => string;
  reset(): void;
  close(): Promise<void>;
}

async function startFarm(cards: number, originCount: number): Promise<CardFarm> {
  const servers: Server[] = [];
  const farm: CardFarm = {
    agents: [],
    origins: [],
    requests: new Map(),
    maxAge: () => 60,
    version: () => '',
    reset() {
      farm.requests.clear();
    },
    async close() {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      );
    },
  };
  for (let o = 0; o < originCount; o++) {
    let origin = '';
    const server = createServer((req, res) => {
      const m = /^\/([a-z0-9_]+)\/\.well-known\/agent-card\.json$/.exec(req.url ?? '');
      if (!m) {
        res.writeHead(404).end();
        return;
      }
      const id = m[1]!;
      const seen = farm.requests.get(id) ?? [];
      farm.requests.set(id, seen);
      const version = farm.version(id);
      const card = benchCard(origin, id);
      const body = JSON.stringify(version === '' ? card : { ...card, description: `${String(card.description)} ${version}` });
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 24)}"`;
      const headers = { 'cache-control': `max-age=${farm.maxAge(id, seen.length + 1)}`, etag };
      if (req.headers['if-none-match'] === etag) {
        seen.push(304);
        res.writeHead(304, headers).end();
      } else {
        seen.push(200);
        res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(body);
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    servers.push(server);
    farm.origins.push(origin);
  }
  for (let i = 0; i < cards; i++) {
    const id = `agent_${String(i).padStart(4, '0')}`;
    farm.agents.push({ name: id, url: `${farm.origins[i % originCount]}/${id}/`, description: `Benchmark agent ${i}.`, tags: ['billing'] });
  }
  return farm;
}

// ---- serve processes ----------------------------------------------------------------------------

interface Replica {
  child: ChildProcessWithoutNullStreams;
  url: string;
  exit: Promise<number | null>;
  /** performance.now() at spawn and when it printed its URL. */
  spawnedAt: number;
  listeningAt: number;
}

async function serve(configFile: string): Promise<Replica> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configFile, '--port', '0', '--log-level', 'warn']);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    child.stdout.on('data', () => {
      const m = /serving (http:\/\/[^/\s]+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, exit, spawnedAt, listeningAt: performance.now() });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${out.slice(-2_000)}`));
    });
  });
}

async function stop(replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exit));
}

async function readyz(r: Replica): Promise<{ ready: boolean; replica?: { role: string; digest: string | null; inSync: boolean } }> {
  const res = await fetch(`${r.url}/readyz`);
  return (await res.json()) as { ready: boolean; replica?: { role: string; digest: string | null; inSync: boolean } };
}

/** Follows a replica's `/api/stream` and records when each `snapshot.published` arrives. */
function publications(r: Replica): { seen: Map<string, number>; close(): void } {
  const seen = new Map<string, number>();
  const abort = new AbortController();
  void (async () => {
    const res = await fetch(`${r.url}/api/stream`, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const at = performance.now();
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (!/^event: snapshot\.published$/m.test(frame)) continue;
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (data) {
          const digest = (JSON.parse(data) as { digest: string }).digest;
          if (!seen.has(digest)) seen.set(digest, at);
        }
      }
    }
  })().catch(() => undefined);
  return { seen, close: () => abort.abort() };
}

function config(farm: CardFarm, store: string, extra: Record<string, unknown> = {}): string {
  return stringify({
    allow: farm.origins,
    allowLoopback: true,
    vocabulary: [{ tag: 'billing', description: 'Billing questions.', keywords: ['invoice'] }],
    needs: [{ tag: 'billing' }],
    static: farm.agents,
    cache: { minTtlMs: 0 },
    store,
    ...extra,
  });
}

/** A new database on the server (every scenario starts empty); its URL. */
async function database(pg: TestPostgres, name: string): Promise<string> {
  const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => { connect(): Promise<void>; query(sql: string): Promise<unknown>; end(): Promise<void> } };
  const c = new Client({ host: '127.0.0.1', port: pg.port, user: 'a2a', database: 'postgres' });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  return pg.url.replace(/\/postgres$/, `/${name}`);
}

// ---- 1. publication reach -----------------------------------------------------------------------

interface ReachReport {
  publications: number;
  /** ms from the refresh request to the leader's own snapshot.published (the baseline). */
  leaderMs: number[];
  /** ms from the refresh request to the last replica's snapshot.published. */
  allMs: number[];
  /** ms from the leader's event to each follower's. */
  followerLagMs: number[];
}

async function reachBenchmark(pg: TestPostgres, dir: string): Promise<ReachReport> {
  const farm = await startFarm(4, 2);
  farm.maxAge = () => 0;
  let current = 0;
  farm.version = (id) => (id === 'agent_0000' ? `v${current}` : '');
  const file = join(dir, 'reach.yaml');
  await writeFile(file, config(farm, await database(pg, 'bench_reach'), { loop: { cycleIntervalMs: 600_000 }, replica: { leaderRetryMs: 200 } }));
  const replicas: Replica[] = [];
  const streams: Array<ReturnType<typeof publications>> = [];
  try {
    for (let i = 0; i < 3; i++) replicas.push(await serve(file));
    const infos = await waitFor('three replicas in sync', async () => {
      const all = await Promise.all(replicas.map(readyz));
      return all.every((r) => r.ready && r.replica?.inSync && r.replica.digest !== null) ? all : undefined;
    });
    const leader = replicas[infos.findIndex((r) => r.replica?.role === 'leader')]!;
    for (const r of replicas) streams.push(publications(r));
    await sleep(500);
    const report: ReachReport = { publications: 0, leaderMs: [], allMs: [], followerLagMs: [] };
    const leaderStream = streams[replicas.indexOf(leader)]!;
    for (let i = 1; i <= PUBLICATIONS; i++) {
      current = i;
      const before = new Set(leaderStream.seen.keys());
      const t0 = performance.now();
      await fetch(`${leader.url}/api/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const digest = await waitFor(`publication ${i} on the leader`, () => [...leaderStream.seen.keys()].find((d) => !before.has(d)), 15_000, 2);
      const times = await waitFor(`publication ${i} on every replica`, () => {
        const t = streams.map((s) => s.seen.get(digest));
        return t.every((x) => x !== undefined) ? (t as number[]) : undefined;
      }, 15_000, 2);
      const leaderAt = leaderStream.seen.get(digest)!;
      report.leaderMs.push(leaderAt - t0);
      report.allMs.push(Math.max(...times) - t0);
      for (const [k, t] of times.entries()) if (replicas[k] !== leader) report.followerLagMs.push(t - leaderAt);
      report.publications++;
      await sleep(50);
    }
    return report;
  } finally {
    for (const s of streams) s.close();
    await stop(replicas);
    await farm.close();
  }
}

// ---- 2. mass expiry -----------------------------------------------------------------------------

interface ExpiryRun {
  replicas: number;
  cards: number;
  /** Upstream requests for the expiry (after each card's first), per card. */
  requestsPerCard: number;
  /** Cards requested more than once for the expiry. */
  cardsOverOne: number;
}

async function expiryRun(pg: TestPostgres, dir: string, count: number): Promise<ExpiryRun> {
  const farm = await startFarm(EXPIRY_CARDS, 8);
  // Fresh for 3 s at first (they expire together once), then for an hour.
  farm.maxAge = (_id, n) => (n === 1 ? 3 : 3_600);
  const file = join(dir, `expiry-${count}.yaml`);
  await writeFile(file, config(farm, await database(pg, `bench_expiry_${count}`), { loop: { cycleIntervalMs: 250 }, replica: { leaderRetryMs: 200 } }));
  const replicas: Replica[] = [];
  try {
    for (let i = 0; i < count; i++) replicas.push(await serve(file));
    const all = () => farm.agents.map((a) => farm.requests.get(a.name)?.length ?? 0);
    await waitFor('every card fetched', () => (all().every((n) => n >= 1) ? true : undefined));
    await waitFor('the mass expiry', () => (all().every((n) => n >= 2) ? true : undefined));
    // Every replica runs what it would run (the leader a cycle, followers nothing), then quiet.
    for (const r of replicas) await fetch(`${r.url}/api/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await sleep(1_500);
    const counts = all();
    const expiry = counts.reduce((s, n) => s + (n - 1), 0);
    return { replicas: count, cards: EXPIRY_CARDS, requestsPerCard: expiry / EXPIRY_CARDS, cardsOverOne: counts.filter((n) => n > 2).length };
  } finally {
    await stop(replicas);
    await farm.close();
  }
}

// ---- 3. restart with 1,000 agents ---------------------------------------------------------------

interface StartRun {
  kind: 'cold' | 'restart';
  /** First request of each card after the start: how many were 200 and how many 304. */
  status200: number;
  status304: number;
  /** ms from spawn to listening (a restart serves its stored snapshot from then on). */
  listeningMs: number;
  /** ms from spawn to `/readyz` ready (the first discovery pass done). */
  readyMs: number;
  /** ms from spawn to every card requested once. */
  allRequestedMs: number;
  /** The version served when ready (a restart serves the stored snapshot). */
  versionAtReady: number;
}

async function startRun(farm: CardFarm, file: string, kind: StartRun['kind']): Promise<{ run: StartRun; replica: Replica }> {
  farm.reset();
  const replica = await serve(file);
  const ready = await waitFor('ready', async () => {
    const res = await fetch(`${replica.url}/readyz`);
    return res.status === 200 ? ((await res.json()) as { version: number }) : undefined;
  }, 120_000, 10);
  const readyAt = performance.now();
  const allAt = await waitFor('every card requested', () => (farm.agents.every((a) => (farm.requests.get(a.name)?.length ?? 0) >= 1) ? performance.now() : undefined), 120_000, 10);
  const first = farm.agents.map((a) => farm.requests.get(a.name)![0]);
  return {
    replica,
    run: {
      kind,
      status200: first.filter((s) => s === 200).length,
      status304: first.filter((s) => s === 304).length,
      listeningMs: replica.listeningAt - replica.spawnedAt,
      readyMs: readyAt - replica.spawnedAt,
      allRequestedMs: allAt - replica.spawnedAt,
      versionAtReady: ready.version,
    },
  };
}

async function restartRound(dir: string, round: number): Promise<StartRun[]> {
  const farm = await startFarm(RESTART_AGENTS, 20);
  // Fresh for 2 s: by the restart every card is due, so each is revalidated once.
  farm.maxAge = () => 2;
  const data = join(dir, `restart-${round}`);
  const file = join(dir, `restart-${round}.yaml`);
  await writeFile(file, config(farm, `sqlite:${join(data, 'state.sqlite')}`, { loop: { cycleIntervalMs: 600_000 } }));
  const out: StartRun[] = [];
  try {
    const cold = await startRun(farm, file, 'cold');
    out.push(cold.run);
    await stop([cold.replica]);
    await sleep(2_500);
    const again = await startRun(farm, file, 'restart');
    out.push(again.run);
    await stop([again.replica]);
    return out;
  } finally {
    await farm.close();
  }
}

// ---- run ----------------------------------------------------------------------------------------

if (!existsSync(BIN)) {
  console.error('bench:replicas runs the built CLI: run `npm run build` first');
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error(`[bench:replicas] aborted: the run exceeded ${TOTAL_LIMIT_MS / 60_000} minutes`);
  process.exit(2);
}, TOTAL_LIMIT_MS);
watchdog.unref();

const started = new Date();
const loadBefore = os.loadavg();
const dir = await mkdtemp(join(os.tmpdir(), 'bench-replicas-'));
log('starting PostgreSQL');
const pg = await startPostgres();
let reach: ReachReport;
const expiry: ExpiryRun[] = [];
const restarts: StartRun[][] = [];
try {
  log(`1. publication reach: three replicas, ${PUBLICATIONS} publications`);
  reach = await reachBenchmark(pg, dir);
  log('2. mass expiry: one replica, then three');
  expiry.push(await expiryRun(pg, dir, 1));
  expiry.push(await expiryRun(pg, dir, 3));
  for (let round = 1; round <= ROUNDS; round++) {
    log(`3. restart with ${RESTART_AGENTS} agents: round ${round}/${ROUNDS}`);
    restarts.push(await restartRound(dir, round));
  }
} finally {
  await pg.close();
  await rm(dir, { recursive: true, force: true });
}

const p = (xs: number[], q: number) => fmt(percentile(xs, q), 1);
console.log(`\nbench:replicas — ${started.toISOString()}, Node ${process.version}, ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), load before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}\n`);
console.log(`1. Publication reach, three replicas, ${reach.publications} publications (ms from the refresh request)`);
console.log(
  table(
    ['measure', 'p50', 'p99', 'max'],
    [
      ['leader publishes (baseline)', p(reach.leaderMs, 50), p(reach.leaderMs, 99), fmt(Math.max(...reach.leaderMs), 1)],
      ['every replica serves it', p(reach.allMs, 50), p(reach.allMs, 99), fmt(Math.max(...reach.allMs), 1)],
      ['follower behind the leader', p(reach.followerLagMs, 50), p(reach.followerLagMs, 99), fmt(Math.max(...reach.followerLagMs), 1)],
      ['ratio all ÷ leader (p50)', fmt(percentile(reach.allMs, 50) / percentile(reach.leaderMs, 50), 2), '', ''],
    ],
  ),
);
console.log(`\n2. Mass expiry, ${EXPIRY_CARDS} cards (upstream requests per card for one expiry)`);
const one = expiry.find((e) => e.replicas === 1)!;
const three = expiry.find((e) => e.replicas === 3)!;
console.log(
  table(
    ['replicas', 'requests per card', 'cards requested twice or more for it', 'ratio to one replica'],
    expiry.map((e) => [String(e.replicas), fmt(e.requestsPerCard, 3), String(e.cardsOverOne), fmt(e.requestsPerCard / one.requestsPerCard, 2)]),
  ),
);
console.log(`\n3. Start with ${RESTART_AGENTS} agents on SQLite, median [min–max] of ${ROUNDS} rounds (first request of each card)`);
const col = (kind: StartRun['kind'], f: (r: StartRun) => number, d?: number) => {
  const s = summarize(restarts.map((r) => f(r.find((x) => x.kind === kind)!)));
  return `${fmt(s.median, d)} [${fmt(s.min, d)}–${fmt(s.max, d)}]`;
};
const med = (kind: StartRun['kind'], f: (r: StartRun) => number) => summarize(restarts.map((r) => f(r.find((x) => x.kind === kind)!))).median;
console.log(
  table(
    ['measure', 'cold start (baseline)', 'restart', 'ratio'],
    [
      ['200 responses', col('cold', (r) => r.status200, 0), col('restart', (r) => r.status200, 0), ''],
      ['304 responses', col('cold', (r) => r.status304, 0), col('restart', (r) => r.status304, 0), ''],
      ['spawn → listening (ms)', col('cold', (r) => r.listeningMs, 0), col('restart', (r) => r.listeningMs, 0), fmt(med('restart', (r) => r.listeningMs) / med('cold', (r) => r.listeningMs), 2)],
      ['spawn → /readyz ready (ms)', col('cold', (r) => r.readyMs, 0), col('restart', (r) => r.readyMs, 0), fmt(med('restart', (r) => r.readyMs) / med('cold', (r) => r.readyMs), 2)],
      ['spawn → every card requested (ms)', col('cold', (r) => r.allRequestedMs, 0), col('restart', (r) => r.allRequestedMs, 0), fmt(med('restart', (r) => r.allRequestedMs) / med('cold', (r) => r.allRequestedMs), 2)],
      ['snapshot version when ready', col('cold', (r) => r.versionAtReady, 0), col('restart', (r) => r.versionAtReady, 0), ''],
    ],
  ),
);
console.log(`\nthree replicas: ${fmt(three.requestsPerCard / one.requestsPerCard, 2)}× the upstream requests of one for a mass expiry`);

writeResults('replicas.json', { meta: machineMeta(started, loadBefore), reach, expiry, restarts });
log('done');
process.exit(0);
