/**
 * Rolling upgrades on one PostgreSQL (docs/operations.md "Rolling upgrades"): `serve` child
 * processes of the previous release — built here from git, in a temporary directory — and of this
 * one run together with a loopback peer. An old leader with a new follower, then the leader killed
 * (SIGKILL): the new replica leads and nothing is lost (snapshots, pins, journal), and a session
 * continues; the same the other way round (a new leader, an old follower). A database whose
 * migrations table names a migration this build does not have (a newer release's): this build
 * starts, serves the stored snapshot and refuses to lead, saying why in `/readyz`, the log and a
 * metric; with that migration accepted (`replica.acceptNewerMigrations`, a rollback) it leads. One
 * process on a SQLite file a newer release migrated refuses to open it and says so.
 *
 * The previous release is `A2A_TEST_PREVIOUS_RELEASE` (a commit), else the merge base with `main`,
 * else (on main itself) `HEAD^1`. It is extracted with `git archive`, given this checkout's
 * node_modules (each package linked, the workspace links pointing at its own packages) and its
 * sources transpiled to `dist/` with esbuild (no rebuild of declarations inside the suite), within
 * `A2A_TEST_UPGRADE_BUILD_MS` (default 300 s). The upgrade cases are skipped, with the reason and
 * the time it took, for three named reasons only: no git checkout (or no git), no previous commit
 * in the history (a shallow clone), the build not done within the bound; never when
 * `A2A_TEST_REQUIRE_PG=1` or `A2A_TEST_REQUIRE_ALL=1` (helpers/skip.ts), and any other failure
 * (the extraction, the links, the transpiler's errors) fails them (the future-migration case still runs).
 */
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import { stringify } from 'yaml';
import { openStateStore } from '../../packages/store/src/open-state-store.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { CLI } from '../helpers/cli.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { skipOrFail } from '../helpers/skip.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const BUILD_BOUND_MS = Number(process.env.A2A_TEST_UPGRADE_BUILD_MS ?? 300_000);

/** A step that ran out of the build's time bound (one of the named reasons to skip). */
class OutOfTime extends Error {}

function run(cmd: string, args: string[], o: { cwd: string; timeout: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    if (o.timeout <= 0) return reject(new OutOfTime(`${cmd} ${args.join(' ')} not started: the time bound ran out`));
    execFile(cmd, args, { cwd: o.cwd, timeout: o.timeout, maxBuffer: 16 * 1024 * 1024, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) {
        const Failure = err.killed ? OutOfTime : Error;
        reject(new Failure(`${cmd} ${args.join(' ')} failed${err.killed ? ' (the time bound ran out)' : ''}: ${err.message}\n${stdout.slice(-1500)}\n${stderr.slice(-1500)}`));
      } else resolve(stdout.trim());
    });
  });
}

interface PreviousBuild {
  commit: string;
  dir: string;
  /** The previous release's CLI, for `process.execPath`. */
  cli: string[];
  /** What each step took, ms. */
  took: Record<string, number>;
}

/**
 * The previous release: built; or `skip`, one of the named reasons it cannot be built here (no
 * git checkout, no previous commit, the time bound); or `fail`, any other reason.
 */
type Previous = { build: PreviousBuild } | { skip: string } | { fail: string };

/**
 * The previous release's node_modules: this checkout's packages, each linked by its absolute path
 * (nothing is copied), and the workspace links (`a2a-discovery -> ../packages/core`, relative)
 * made again as they are, so they point at the previous release's packages.
 */
async function linkModules(from: string, to: string): Promise<void> {
  await mkdir(to);
  for (const e of await readdir(from, { withFileTypes: true })) {
    const source = join(from, e.name);
    if (e.isSymbolicLink()) await symlink(await readlink(source), join(to, e.name));
    else if (e.name.startsWith('@') && e.isDirectory()) await linkModules(source, join(to, e.name));
    else await symlink(source, join(to, e.name));
  }
}

/**
 * The previous release's packages made runnable: each `packages/<name>/src/**\/*.ts` transpiled to
 * its `dist/` by esbuild, file for file (what `npm run build` emits for running, without the
 * declarations and the type check: that release's types were checked when it landed). About 1 s,
 * where its `npm run build` took 35 s of the suite's CPU.
 */
async function transpile(target: string, timeout: number): Promise<void> {
  const { build } = await import('esbuild');
  const work = (async () => {
    for (const pkg of await readdir(join(target, 'packages'))) {
      const src = join(target, 'packages', pkg, 'src');
      if (!existsSync(src)) continue;
      const entryPoints = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(src, f));
      await build({ entryPoints, outdir: join(target, 'packages', pkg, 'dist'), outbase: src, format: 'esm', platform: 'node', target: 'node20', bundle: false, logLevel: 'silent' });
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime('transpiling the previous release: the time bound ran out')), Math.max(0, timeout));
  });
  try {
    await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** Builds the previous release, within the bound. */
async function buildPrevious(): Promise<Previous> {
  const started = Date.now();
  const left = () => BUILD_BOUND_MS - (Date.now() - started);
  const took: Record<string, number> = {};
  const step = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const at = Date.now();
    try {
      return await work();
    } finally {
      took[name] = Date.now() - at;
    }
  };
  const git = (...args: string[]) => run('git', ['-C', ROOT, ...args], { cwd: ROOT, timeout: 30_000 });
  let head: string;
  try {
    head = await git('rev-parse', 'HEAD');
  } catch (err) {
    return { skip: `the previous release cannot be built: ${ROOT} is not a git checkout, or git is missing (${(err as Error).message.split('\n')[0]})` };
  }
  let commit = process.env.A2A_TEST_PREVIOUS_RELEASE;
  if (commit === undefined) {
    const base = await git('merge-base', 'HEAD', 'main').catch(() => undefined);
    if (base !== undefined && base !== head) commit = base;
    else {
      try {
        commit = await git('rev-parse', '--verify', 'HEAD^1^{commit}');
      } catch {
        return { skip: `the previous release cannot be built: no merge base with main and no parent of HEAD ${head} in this history (a shallow clone?); set A2A_TEST_PREVIOUS_RELEASE` };
      }
    }
  }
  let dir: string | undefined;
  try {
    commit = await git('rev-parse', '--verify', `${commit}^{commit}`);
    dir = await mkdtemp(join(tmpdir(), 'a2ad-previous-'));
    const target = dir;
    const release = commit;
    await step('extract', async () => {
      await run('git', ['-C', ROOT, 'archive', '--format=tar', '-o', join(target, 'release.tar'), release], { cwd: ROOT, timeout: left() });
      await run('tar', ['-xf', 'release.tar'], { cwd: target, timeout: left() });
      await rm(join(target, 'release.tar'));
    });
    await step('link node_modules', async () => {
      await linkModules(join(ROOT, 'node_modules'), join(target, 'node_modules'));
      for (const pkg of await readdir(join(ROOT, 'packages'))) {
        const own = join(ROOT, 'packages', pkg, 'node_modules');
        if (existsSync(own) && existsSync(join(target, 'packages', pkg))) await linkModules(own, join(target, 'packages', pkg, 'node_modules'));
      }
    });
    await step('transpile', () => transpile(target, left()));
    const main = join(target, 'packages/service/dist/cli/main.js');
    if (!existsSync(main)) throw new Error(`the build of ${commit} has no ${main}`);
    return { build: { commit, dir: target, cli: [main], took } };
  } catch (err) {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    const why = `the previous release ${commit} could not be built (after ${Date.now() - started} ms; steps ${JSON.stringify(took)} ms): ${(err as Error).message}`;
    return err instanceof OutOfTime ? { skip: `${why} (bound: A2A_TEST_UPGRADE_BUILD_MS=${BUILD_BOUND_MS})` } : { fail: why };
  }
}

/** The previous release's build, or the test skipped (a named reason, not required) or failed. */
async function previousOr(t: TestContext): Promise<PreviousBuild | undefined> {
  const old = await previousBuild();
  if ('fail' in old) assert.fail(old.fail);
  if ('skip' in old) {
    skipOrFail(t, 'previous-release', old.skip);
    return undefined;
  }
  return old.build;
}

/** Built once, by the first case that needs it (a run that selects neither builds nothing). */
let previous: Promise<Previous> | undefined;
const previousBuild = () => (previous ??= buildPrevious());

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

interface Ready {
  ready: boolean;
  replica: { id: string; role: 'leader' | 'follower'; epoch: number; digest: string | null; storeDigest: string | null; inSync: boolean; refusesToLead?: string };
}
const readyz = async (r: ServeProcess) => (await json(`${r.url}/readyz`)).body as unknown as Ready;

/** Error lines (pino level 50 and above) a replica logged (all of its log: none of it was dropped). */
const errorsIn = (r: ServeProcess) => {
  assert.equal(r.dropped, 0, 'the whole log was kept');
  return r
    .output()
    .split('\n')
    .filter((line) => /"level":(5|6)\d/.test(line));
};

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

describe('rolling upgrades: two releases on one PostgreSQL (child processes)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let dir: string;
  let billing: RunningPeer;
  const started: ServeProcess[] = [];
  let databases = 0;

  const sql = async (database: string, text: string, params: unknown[] = []) => {
    const c = new Client({ host: '127.0.0.1', port: pg.port, user: 'a2a', database });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  };

  /** A new database and a configuration file for the replicas that share it. */
  const newDatabase = async (): Promise<{ database: string; configFile: string }> => {
    const database = `upgrade_${++databases}`;
    await sql('postgres', `CREATE DATABASE ${database}`);
    return { database, configFile: await configFor(database) };
  };
  const configFor = async (database: string, replica: Record<string, unknown> = {}): Promise<string> => {
    const configFile = join(dir, `${database}-${Object.keys(replica).join('-') || 'plain'}.yaml`);
    await writeFile(
      configFile,
      stringify({
        allow: [new URL(billing.baseUrl).origin],
        allowLoopback: true,
        vocabulary: [{ tag: 'billing', description: 'Billing questions.', keywords: ['invoice'] }],
        needs: [{ tag: 'billing' }],
        static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
        loop: { cycleIntervalMs: 200 },
        store: `postgres://a2a@127.0.0.1:${pg.port}/${database}`,
        replica: { leaderRetryMs: 200, pollMs: 500, leaseMs: 3_000, ...replica },
      }),
    );
    return configFile;
  };

  const start = async (cli: readonly string[], configFile: string) => {
    const r = await startServe({ cli, config: configFile, logLevel: 'info', startTimeoutMs: 60_000 });
    started.push(r);
    return r;
  };

  before(async () => {
    pg = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'rolling-upgrade-'));
    billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  });

  after(async () => {
    await Promise.all(started.map((r) => r.stop()));
    await billing.close();
    await pg.close();
    await rm(dir, { recursive: true, force: true });
    const built = await previous;
    if (built !== undefined && 'build' in built) await rm(built.build.dir, { recursive: true, force: true });
  });

  /**
   * `first` leads, `second` follows; a session runs on both; the leader is killed; `second` leads
   * and every snapshot, pin and journal row written before is still there.
   */
  const handOver = async (first: readonly string[], second: readonly string[]) => {
    const { database, configFile } = await newDatabase();
    const leader = await start(first, configFile);
    await waitFor(async () => {
      const r = await readyz(leader);
      return r.ready && r.replica.role === 'leader' && r.replica.digest !== null ? r : undefined;
    }, 'the first replica leads and published');
    // An older release leads over a newer schema only with its migrations accepted (a rollback,
    // docs/operations.md): the second replica accepts every migration the first one ran.
    const ran = (await sql(database, 'SELECT name FROM a2ad_migrations ORDER BY name')).map((r) => r.name as string);
    const follower = await start(second, await configFor(database, { acceptNewerMigrations: ran }));
    const info = await waitFor(async () => {
      const r = await readyz(follower);
      return r.ready && r.replica.inSync && r.replica.digest !== null ? r : undefined;
    }, 'the second replica follows, in sync');
    assert.equal(info.replica.role, 'follower');

    // A session on the leader, continued on the follower: one pin, one history.
    const t1 = (await post(`${leader.url}/api/chat`, { message: 'Explain my invoice' })).body;
    assert.equal(t1.author, 'billing_agent', JSON.stringify(t1));
    const sessionId = t1.sessionId as string;
    const secret = t1.sessionSecret as string;
    const digest = t1.digest as string;
    await waitFor(async () => ((await sql(database, 'SELECT digest FROM a2ad_pins WHERE session_id = $1', [sessionId])).length === 1 ? true : undefined), 'the pin stored');
    const t2 = (await post(`${follower.url}/api/chat`, { sessionId, message: 'Another invoice question' }, { 'x-session-secret': secret })).body;
    assert.deepEqual([t2.author, t2.digest], ['billing_agent', digest], JSON.stringify(t2));

    const pinsBefore = await sql(database, 'SELECT session_id, digest FROM a2ad_pins ORDER BY session_id');
    const snapshotsBefore = (await sql(database, 'SELECT digest FROM a2ad_snapshots')).map((r) => r.digest as string);
    const journalBefore = (await sql(database, 'SELECT id FROM a2ad_journal ORDER BY id')).map((r) => String(r.id));
    const current = (JSON.parse((await sql(database, "SELECT value FROM a2ad_state WHERE key = 'current'"))[0]!.value as string) as { digest: string }).digest;
    assert.ok(journalBefore.length > 0 && snapshotsBefore.length > 0);

    leader.signal('SIGKILL');
    await leader.exit;
    const led = await waitFor(async () => {
      const r = await readyz(follower);
      return r.replica.role === 'leader' ? r : undefined;
    }, 'the second replica leads').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${follower.output().slice(-4000)}`);
    });
    assert.equal(led.replica.refusesToLead, undefined);
    assert.ok(led.replica.epoch > info.replica.epoch, 'the takeover moved the fencing epoch');

    const pinsAfter = await sql(database, 'SELECT session_id, digest FROM a2ad_pins ORDER BY session_id');
    assert.deepEqual(pinsAfter, pinsBefore, 'every pin kept');
    const snapshotsAfter = new Set((await sql(database, 'SELECT digest FROM a2ad_snapshots')).map((r) => r.digest as string));
    for (const d of snapshotsBefore) assert.ok(snapshotsAfter.has(d), `snapshot ${d} kept`);
    // The new leader journals its takeover (a replica.leader event) after every row written before.
    const journalAfter = await waitFor(async () => {
      const rows = await sql(database, "SELECT id, type FROM a2ad_journal WHERE type = 'replica.leader' ORDER BY id");
      return rows.length >= 2 ? (await sql(database, 'SELECT id FROM a2ad_journal ORDER BY id')).map((r) => String(r.id)) : undefined;
    }, 'the takeover journaled');
    for (const id of journalBefore) assert.ok(journalAfter.includes(id), `journal row ${id} kept`);

    // It serves what was published, and the session continues on its digest.
    const served = (await json(`${follower.url}/api/snapshot`)).body.digest as string;
    const pointer = (JSON.parse((await sql(database, "SELECT value FROM a2ad_state WHERE key = 'current'"))[0]!.value as string) as { digest: string }).digest;
    assert.equal(served, pointer);
    assert.equal(pointer, current, 'the same agents: the same snapshot current');
    const t3 = (await post(`${follower.url}/api/chat`, { sessionId, message: 'One more invoice' }, { 'x-session-secret': secret })).body;
    assert.deepEqual([t3.author, t3.digest], ['billing_agent', digest], JSON.stringify(t3));
    const said = (await sql(database, 'SELECT event_data FROM events WHERE session_id = $1 ORDER BY timestamp', [sessionId]))
      .map((r) => (typeof r.event_data === 'string' ? JSON.parse(r.event_data) : r.event_data) as { author: string; content?: { parts?: Array<{ text?: string }> } })
      .filter((e) => e.author === 'user')
      .map((e) => e.content?.parts?.[0]?.text);
    assert.deepEqual(said, ['Explain my invoice', 'Another invoice question', 'One more invoice'], 'one history, three turns');
    assert.deepEqual([...errorsIn(leader), ...errorsIn(follower)], [], 'no replica logged an error');
    assert.deepEqual(await follower.stop(), { code: 0, signal: null });
  };

  test('an old leader and a new follower: the leader killed, the new replica leads and nothing is lost', async (t) => {
    const old = await previousOr(t);
    if (old === undefined) return;
    t.diagnostic(`previous release ${old.commit}, built in ${JSON.stringify(old.took)} ms`);
    await handOver(old.cli, CLI);
  });

  test('a new leader and an old follower: the leader killed, the old replica leads and nothing is lost', async (t) => {
    const old = await previousOr(t);
    if (old === undefined) return;
    await handOver(CLI, old.cli);
  });

  test('a schema newer than this build (a migration it does not have): it serves, refuses to lead and says why; with the migration accepted (a rollback) it leads', async () => {
    const { database, configFile } = await newDatabase();
    const first = await start(CLI, configFile);
    await waitFor(async () => {
      const r = await readyz(first);
      return r.ready && r.replica.role === 'leader' && r.replica.digest !== null ? r : undefined;
    }, 'a leader published');
    assert.deepEqual(await first.stop(), { code: 0, signal: null });
    const published = (JSON.parse((await sql(database, "SELECT value FROM a2ad_state WHERE key = 'current'"))[0]!.value as string) as { digest: string }).digest;
    // What a newer release's migration leaves in knex's table.
    const batch = (await sql(database, 'SELECT MAX(batch) AS b FROM a2ad_migrations'))[0]!.b as number;
    await sql(database, 'INSERT INTO a2ad_migrations (name, batch, migration_time) VALUES ($1, $2, now())', ['9999_from_a_newer_release', batch + 1]);

    // Nobody leads and the lock is free: without the refusal it would lead at once.
    const older = await start(CLI, configFile);
    const r = await waitFor(async () => {
      const x = await readyz(older);
      return x.ready ? x : undefined;
    }, 'ready');
    assert.equal(r.replica.role, 'follower');
    assert.match(r.replica.refusesToLead ?? '', /newer than this build.*9999_from_a_newer_release/);
    assert.equal(r.replica.digest, published, 'it serves the stored snapshot');
    assert.match(await (await fetch(`${older.url}/metrics`)).text(), /a2a_discovery_replica_refuses_to_lead 1/);
    assert.match(older.output(), /this replica refuses to lead/);
    const chat = (await post(`${older.url}/api/chat`, { message: 'Explain my invoice' })).body;
    assert.equal(chat.author, 'billing_agent', 'it serves turns');
    const migrations = (await sql(database, 'SELECT name FROM a2ad_migrations ORDER BY name')).map((x) => x.name as string);
    assert.equal(migrations.at(-1), '9999_from_a_newer_release', 'no migration ran, none was undone');

    // Rolling back: the operator accepts the newer release's migration; a replica so configured leads.
    const accepting = await start(CLI, await configFor(database, { acceptNewerMigrations: ['9999_from_a_newer_release'] }));
    const led = await waitFor(async () => {
      const x = await readyz(accepting);
      return x.replica.role === 'leader' ? x : undefined;
    }, 'the accepting replica leads');
    assert.equal(led.replica.refusesToLead, undefined);
    assert.match(await (await fetch(`${accepting.url}/metrics`)).text(), /a2a_discovery_replica_refuses_to_lead 0/);
    assert.equal((await readyz(older)).replica.role, 'follower', 'the other one still follows');
  });
});

test('one process on a SQLite file a newer release migrated: it refuses to open it, saying why', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rolling-upgrade-sqlite-'));
  try {
    const file = join(dir, 'state.sqlite');
    await (await openStateStore(`sqlite:${file}`)).close();
    const db = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
    try {
      await db('a2ad_migrations').insert({ name: '9999_from_a_newer_release', batch: 2, migration_time: new Date() });
    } finally {
      await db.destroy();
    }
    await assert.rejects(openStateStore(`sqlite:${file}`), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ERR_STORE_UNAVAILABLE');
      assert.match(err.message, /a newer release migrated it \(migration 9999_from_a_newer_release, which this build does not have\)/);
      return true;
    });
    // Nothing was run or undone: the file still records the newer migration.
    const check = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
    try {
      const names = (await check('a2ad_migrations').select('name')).map((r: { name: string }) => r.name);
      assert.ok(names.includes('9999_from_a_newer_release'));
    } finally {
      await check.destroy();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
