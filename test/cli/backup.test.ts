/**
 * `a2a-discovery backup` and `restore` on the SQLite default store, as a user runs them (child
 * processes): a backup taken while `serve` runs (a published snapshot, a pinned session with its
 * conversation, the journal), restored into a new data directory, served by a new `serve` with the
 * same current snapshot, history, pin (continuing on its digest with its history) and journal.
 * A running service refuses a restore onto its store; a truncated, foreign or newer-schema backup
 * is refused with a clear message and nothing written; a non-empty store needs --force.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import sqlite3 from 'sqlite3';
import { openStateStore } from '../../packages/store/src/index.js';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';
import { sqliteAll as sql } from '../store/backup-fixtures.js';

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });


const exists = (path: string) => stat(path).then(() => true, () => false);

interface Ev {
  seq: number;
  type: string;
  sessionId?: string;
  version?: number;
}

let dir: string;
let billing: RunningPeer;
let config: string;

/** A directory with the same discovery.yaml (its data directory `data` beside it). */
async function site(name: string): Promise<string> {
  const file = join(dir, name, 'discovery.yaml');
  await mkdir(join(dir, name));
  await writeFile(file, config);
  return file;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'backup-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  config = stringify({
    allow: [new URL(billing.baseUrl).origin],
    allowLoopback: true,
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] }],
    needs: [{ tag: 'billing' }],
    static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'], critical: true }],
    loop: { cycleIntervalMs: 200 },
  });
});

after(async () => {
  await billing.close();
  await rm(dir, { recursive: true, force: true });
});

describe('backup and restore (SQLite, child processes)', () => {
  test('a backup taken while serve runs, restored into a new data directory, is served the same; bad backups write nothing', async () => {
    const first = await site('a');
    const backup = join(dir, 'backup.sqlite');
    const running = await startServe({ config: first });
    let digest: string;
    let version: number;
    let history: unknown;
    let secret: string;
    let journal: Ev[];
    try {
      const snap = await waitFor(async () => {
        const r = await json(`${running.url}/api/snapshot`);
        return (r.body.agents as unknown[] | undefined)?.length === 1 ? r.body : undefined;
      }, 'the agent published');
      digest = snap.digest as string;
      version = snap.version as number;
      history = (await json(`${running.url}/api/snapshots`)).body.history;
      const turn = (await post(`${running.url}/api/chat`, { sessionId: 'b-1', message: 'Explain my invoice' })).body;
      assert.equal(turn.author, 'billing_agent', JSON.stringify(turn));
      secret = turn.sessionSecret as string;
      journal = (await json(`${running.url}/api/events?since=0`)).body.events as Ev[];
      // The service writes its store a moment behind (store-writer.ts): the backup copies what is written.
      const store = join(dir, 'a', 'data', 'a2a-discovery.sqlite');
      await waitFor(async () => ((await sql(store, "SELECT 1 FROM a2ad_journal WHERE type = 'session.pinned'")).length === 1 ? true : undefined), 'the pin journaled');

      // The backup, while the service runs.
      const made = await runCli(['backup', '--config', first, '--out', backup, '--json']);
      assert.equal(made.code, 0, made.stderr + made.stdout);
      const report = JSON.parse(made.stdout) as { file: string; bytes: number; sha256: string; schema: string; history: string; tables: Array<{ name: string; rows: number }> };
      const bytes = await readFile(backup);
      assert.equal((await stat(backup)).mode & 0o077, 0, 'private, as the store file is');
      assert.deepEqual([report.file, report.bytes, report.sha256], [backup, bytes.length, createHash('sha256').update(bytes).digest('hex')], 'what was written: the file, its bytes and SHA-256');
      const rows = Object.fromEntries(report.tables.map((t) => [t.name, t.rows]));
      assert.equal(rows.a2ad_pins, 1, 'the pinned session');
      assert.ok(rows.a2ad_snapshots! >= 1 && rows.a2ad_journal! >= 2 && rows.events! >= 2 && rows.sessions === 1, JSON.stringify(rows));
      assert.equal(report.history, 'included');
      const text = await runCli(['backup', '--config', first, '--out', join(dir, 'text.sqlite')]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /to .*text\.sqlite: \d+ bytes, sha256 [0-9a-f]{64}/);
      assert.match(text.stdout, /a2ad_pins\s+1\n/);

      // A second backup onto the same name is refused; a restore onto the running service's store too.
      const again = await runCli(['backup', '--config', first, '--out', backup]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already exists/);
      const onto = await runCli(['restore', '--config', first, '--from', backup, '--force']);
      assert.equal(onto.code, 1);
      assert.match(onto.stderr, /is in use by another process/);
    } finally {
      assert.deepEqual(await running.stop(), { code: 0, signal: null });
    }

    // Unusable backups: refused with a clear message, and nothing written (no data directory).
    const bad = await site('bad');
    const truncated = join(dir, 'truncated.sqlite');
    const whole = await readFile(backup);
    await writeFile(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    const foreign = join(dir, 'foreign.sqlite');
    await writeFile(foreign, 'not a database at all, just text\n'.repeat(200));
    const newer = join(dir, 'newer.sqlite');
    await copyFile(backup, newer);
    await sql(newer, "INSERT INTO a2ad_migrations (name, batch, migration_time) VALUES ('9999_from_the_future', 99, CURRENT_TIMESTAMP)", sqlite3.OPEN_READWRITE);
    for (const [file, why] of [
      [truncated, /not a usable a2a-discovery backup: .*(truncated|malformed)/],
      [foreign, /not a usable a2a-discovery backup: .*not a SQLite file|not a database/],
      [newer, /not a usable a2a-discovery backup: its schema is newer than this build understands \(migrations 9999_from_the_future; this build knows up to 0007_entry_freshness\)/],
      [join(dir, 'missing.sqlite'), /not a usable a2a-discovery backup: ENOENT/],
    ] as const) {
      const r = await runCli(['restore', '--config', bad, '--from', file]);
      assert.equal(r.code, 1, `${file}: ${r.stderr}`);
      assert.match(r.stderr, why);
      assert.match(r.stderr, /nothing was written/);
      assert.equal(await exists(join(dir, 'bad', 'data')), false, `${file}: nothing written`);
    }

    // The restore into a new data directory.
    const second = await site('b');
    const restored = await runCli(['restore', '--config', second, '--from', backup]);
    assert.equal(restored.code, 0, restored.stderr + restored.stdout);
    assert.match(restored.stdout, /restored .*backup\.sqlite \(\d+ bytes, sha256 [0-9a-f]{64}, schema 0007_entry_freshness\)\n\s+into .*b\/data\/a2a-discovery\.sqlite\n/);
    const twice = await runCli(['restore', '--config', second, '--from', backup]);
    assert.equal(twice.code, 2, 'a store with tables is not overwritten');
    assert.match(twice.stderr, /is not empty \(\d+ tables, \d+ rows\): restore into a new data directory, or pass --force/);
    const forced = await runCli(['restore', '--config', second, '--from', backup, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /replaced the store that was there/);

    const again = await startServe({ config: second });
    try {
      const snap = (await json(`${again.url}/api/snapshot`)).body;
      assert.deepEqual([snap.digest, snap.version], [digest, version], 'the same current snapshot, under the same version');
      assert.deepEqual((await json(`${again.url}/api/snapshots`)).body.history, history, 'the same history');
      const mine = (await json(`${again.url}/api/sessions`, { headers: { 'x-session-secret': secret } })).body.sessions as Array<{ sessionId: string; digest: string; owned: boolean }>;
      assert.deepEqual(
        mine.map((s) => [s.sessionId, s.digest, s.owned]),
        [['b-1', digest, true]],
        'the pin and its owner',
      );
      const t2 = (await post(`${again.url}/api/chat`, { sessionId: 'b-1', message: 'Another invoice question' }, { 'x-session-secret': secret })).body;
      assert.deepEqual([t2.author, t2.digest, t2.notices], ['billing_agent', digest, []], JSON.stringify(t2));
      const events = (await json(`${again.url}/api/events?since=0`)).body.events as Ev[];
      // The journal: the first service's entries, as they were (the ones it had written by the backup).
      const before = new Map(journal.map((e) => [e.seq, JSON.stringify(e)]));
      const kept = events.filter((e) => before.get(e.seq) === JSON.stringify(e));
      assert.ok(kept.some((e) => e.type === 'snapshot.published' && e.version === version), JSON.stringify(events));
      assert.ok(kept.some((e) => e.type === 'session.pinned' && e.sessionId === 'b-1'), JSON.stringify(events));
    } finally {
      assert.deepEqual(await again.stop(), { code: 0, signal: null });
    }
    // The conversation continued on its restored history: both user turns in ADK's tables.
    const said = (await sql<{ event_data: string }>(join(dir, 'b', 'data', 'a2a-discovery.sqlite'), "SELECT event_data FROM events WHERE session_id = 'b-1' ORDER BY timestamp"))
      .map((r) => JSON.parse(r.event_data) as { author: string; content?: { parts?: Array<{ text?: string }> } })
      .filter((e) => e.author === 'user')
      .map((e) => e.content?.parts?.[0]?.text);
    assert.deepEqual(said, ['Explain my invoice', 'Another invoice question']);
  });

  test('backup --out into a missing folder is refused, nothing created; restore prints what it ignored and takes none of it', async () => {
    const src = await site('planted');
    const storeFile = join(dir, 'planted', 'data', 'a2a-discovery.sqlite');
    const { openStateStore } = await import('../../packages/store/src/index.js');
    await (await openStateStore(`sqlite:${storeFile}`)).close();
    const missing = join(dir, 'no', 'such', 'dir', 'file.sqlite');
    const refused = await runCli(['backup', '--config', src, '--out', missing]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /the folder .*no\/such\/dir does not exist \(or is not a folder\): create it first, a backup creates no folder; nothing was written/);
    assert.equal(await exists(join(dir, 'no')), false, 'no folder created');

    await sql(storeFile, "CREATE TRIGGER steal AFTER INSERT ON a2ad_pins BEGIN UPDATE a2ad_pins SET owner_secret = 'x' WHERE session_id = NEW.session_id; END", sqlite3.OPEN_READWRITE);
    const out = join(dir, 'planted.sqlite');
    const made = await runCli(['backup', '--config', src, '--out', out]);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /rows sha256 [0-9a-f]{64}\n/);
    assert.match(made.stderr, /warning: the store holds 1 thing besides its rows \(not of this release's schema: a restore will not take them\):\n {2}trigger steal: CREATE TRIGGER steal/);
    const into = await site('clean');
    const restored = await runCli(['restore', '--config', into, '--from', out]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, /ignored 1 thing the backup holds besides the store's rows \(not restored\):\n {2}trigger steal/);
    assert.match(restored.stdout, /rows sha256 [0-9a-f]{64} \(verified\), \d+ rows copied into a store built by this release/);
    assert.deepEqual(await sql(join(dir, 'clean', 'data', 'a2a-discovery.sqlite'), "SELECT name FROM sqlite_master WHERE type = 'trigger'"), []);
  });
});

describe('backup and restore (PostgreSQL, child processes)', { skip: POSTGRES_SKIP }, () => {
  let server: TestPostgres;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.close();
  });

  test('backup writes the portable file and lists what the schema holds besides its rows; restore refuses a store with tables, and --force rebuilds it with no trigger', async () => {
    const file = join(dir, 'pg.yaml');
    await writeFile(file, config.replace(/^loop:/m, `store: ${server.url}\nloop:`));
    const store = await openStateStore(server.url);
    try {
      await store.putPin({ sessionId: 'victim', digest: 'd'.repeat(64), lastUsedAtWall: 1_767_225_600_000, userId: 'u', ownerSecret: 'a'.repeat(64) });
    } finally {
      await store.close();
    }
    const db = knexFactory({ client: 'pg', connection: server.url, pool: { min: 0, max: 1 } });
    try {
      await db.raw("CREATE FUNCTION steal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.owner_secret := 'b'; RETURN NEW; END $$; CREATE TRIGGER steal BEFORE INSERT ON a2ad_pins FOR EACH ROW EXECUTE FUNCTION steal()");
      const out = join(dir, 'pg-backup.sqlite');
      const made = await runCli(['backup', '--config', file, '--out', out]);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /backed up postgres:\/\/\w+@127\.0\.0\.1:\d+\/postgres\n {4}to .*pg-backup\.sqlite: \d+ bytes, sha256 [0-9a-f]{64}\n {2}rows sha256 [0-9a-f]{64}/);
      assert.match(made.stderr, /warning: the store holds 2 things besides its rows .*:\n {2}trigger a2ad_pins\.steal: CREATE TRIGGER steal .*\n {2}function steal/);
      assert.deepEqual(await sql(out, "SELECT name FROM sqlite_master WHERE type = 'trigger'"), []);

      const refused = await runCli(['restore', '--config', file, '--from', out]);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /is not empty .*pass --force to replace it; nothing was written/);
      const restored = await runCli(['restore', '--config', file, '--from', out, '--force']);
      assert.equal(restored.code, 0, restored.stderr);
      assert.match(restored.stdout, /into postgres:\/\/\w+@127\.0\.0\.1:\d+\/postgres \(schema public\) \(replaced the store that was there\)/);
      const triggers = (await db.raw('SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = ? AND NOT t.tgisinternal', ['a2ad_pins'])) as { rows: unknown[] };
      assert.deepEqual(triggers.rows, [], 'no trigger on the restored a2ad_pins');
      const pins = (await db.raw('SELECT owner_secret FROM a2ad_pins')) as { rows: Array<{ owner_secret: string }> };
      assert.deepEqual(pins.rows, [{ owner_secret: 'a'.repeat(64) }]);
    } finally {
      await db.destroy();
    }
  });
});
