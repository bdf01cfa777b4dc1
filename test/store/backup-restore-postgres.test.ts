/**
 * Backup and restore of a PostgreSQL store (issue 38): the same portable backup as a SQLite
 * store's, and a restore that rebuilds. A PG store with a planted trigger on a2ad_pins (rewriting
 * every new session's owner-secret hash), a view, a function and an extra table backs up into a
 * file holding none of them, each reported; restoring into a target that carries such a trigger
 * leaves no trigger, and a pin written after keeps its hash; a tampered row is refused with the
 * target unchanged; a non-empty target needs `force`; a restore while a replica holds the leader
 * lock is refused; SQLite → backup → PostgreSQL → backup, and back, keep the rows' digest (ADK's
 * jsonb and timestamps included). A real PostgreSQL (helpers/postgres.ts), real files.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import sqlite3 from 'sqlite3';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { backupPostgresStore, backupSqliteStore, openStateStore, restorePostgresStore, restoreSqliteStore, type StateStore } from '../../packages/store/src/index.js';
import { openAdkSessionService } from '../../packages/store/src/adk-sessions.js';
import { ReplicaCoordinator } from '../../packages/store/src/replica-coordinator.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { billingSnapshot as snapshot, journalEvent as event, sqliteExec as sqliteRun } from './backup-fixtures.js';

const hash = (s: string) => createHash('sha256').update(s).digest('hex');


function sqliteNames(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.all("SELECT type || ' ' || name AS n FROM sqlite_master WHERE type IN ('trigger', 'view') OR (type = 'table' AND name NOT LIKE 'a2ad_%' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('sessions', 'events', 'app_states', 'user_states', 'adk_internal_metadata')) ORDER BY n", [], (e, rows) => {
        db.close();
        if (e) reject(e);
        else resolve((rows as Array<{ n: string }>).map((r) => r.n));
      });
    });
  });
}

async function refused(work: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(isDiscoveryError(err), String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

/** Fills a store: a published snapshot, the victim's pin, journal rows, an ADK conversation with an event and states. */
async function fill(store: StateStore, spec: string, options: { schema?: string } = {}): Promise<void> {
  await store.publishSnapshot(snapshot);
  await store.putPin({ sessionId: 'victim', digest: snapshot.digest, lastUsedAtWall: 1_767_225_600_000, userId: 'u-victim', ownerClient: hash('client'), ownerSecret: hash('victim secret') });
  await store.appendEvents([event(1), event(2)]);
  const adk = await openAdkSessionService(spec, { ...options, store });
  try {
    const session = await adk.service.createSession({ appName: 'a2a-discovery', userId: 'u-victim', sessionId: 'victim', state: { zeta: 1, alpha: { b: 2, a: [1, 'x'] }, 'app:mode': 'x', 'user:lang': 'fr' } });
    await adk.service.appendEvent({
      session,
      event: { id: 'e1', invocationId: 'inv-1', author: 'user', timestamp: 1_767_225_601.25, content: { role: 'user', parts: [{ text: 'hello' }] }, actions: { stateDelta: {}, artifactDelta: {}, requestedAuthConfigs: {}, requestedToolConfirmations: {} } } as never,
    });
  } finally {
    await adk.close();
  }
}

/** What an attacker with write access to the database leaves in the store's schema. */
const planted = (schema: string) => `
  SET search_path TO "${schema}";
  CREATE FUNCTION steal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.owner_secret := '${hash('attacker secret')}'; RETURN NEW; END $$;
  CREATE TRIGGER steal BEFORE INSERT OR UPDATE ON a2ad_pins FOR EACH ROW EXECUTE FUNCTION steal();
  CREATE VIEW peek AS SELECT session_id, owner_secret FROM a2ad_pins;
  CREATE TABLE loot (v text); INSERT INTO loot VALUES ('x');
  ALTER TABLE a2ad_counters ADD COLUMN extra text;
`;

describe('backup and restore of a PostgreSQL store', { skip: POSTGRES_SKIP }, () => {
  let server: TestPostgres;
  let admin: Knex;
  let dir: string;
  let n = 0;
  const folder = async () => {
    const d = join(dir, `d${++n}`);
    await mkdir(d);
    return d;
  };
  const target = (schema: string) => ({ url: server.url, schema });
  const open = (schema: string) => openStateStore(server.url, { schema });
  const triggers = async (schema: string) =>
    ((await admin.raw("SELECT c.relname || '.' || t.tgname AS n FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = ? AND NOT t.tgisinternal", [schema])) as { rows: Array<{ n: string }> }).rows.map((r) => r.n);
  const ownerSecret = async (schema: string, session: string) => ((await admin.withSchema(schema).table('a2ad_pins').where({ session_id: session }).first('owner_secret')) as { owner_secret: string } | undefined)?.owner_secret;

  /** A PostgreSQL store in a new schema, filled. */
  async function pgStore(): Promise<string> {
    const schema = server.schema();
    const store = await open(schema);
    try {
      await fill(store, server.url, { schema });
    } finally {
      await store.close();
    }
    return schema;
  }

  before(async () => {
    server = await startPostgres();
    admin = knexFactory({ client: 'pg', connection: server.url, pool: { min: 0, max: 2 } });
    dir = await mkdtemp(join(tmpdir(), 'pg-restore-'));
  });
  after(async () => {
    await admin?.destroy();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a backup of a store carrying a trigger, a function, a view, an extra table and column holds none of them, and reports each', async () => {
    const schema = await pgStore();
    await admin.raw(planted(schema));
    const out = join(await folder(), 'backup.sqlite');
    const made = await backupPostgresStore(target(schema), out);
    assert.match(made.rowsDigest ?? '', /^[0-9a-f]{64}$/);
    const kinds = made.ignored.map((o) => `${o.kind} ${o.name}`);
    for (const thing of ['trigger a2ad_pins.steal', 'function steal', 'view peek', 'table loot', 'column a2ad_counters.extra']) assert.ok(kinds.includes(thing), `${thing} reported: ${kinds.join('; ')}`);
    assert.deepEqual(await sqliteNames(out), [], 'the backup file holds no trigger, view or extra table');
    assert.ok(made.tables.some((t) => t.name === 'a2ad_pins' && t.rows === 1));
    assert.ok(made.tables.some((t) => t.name === 'events' && t.rows === 1), "ADK's conversation is in it");
    // It restores as a SQLite backup does.
    const restored = await restoreSqliteStore(out, join(await folder(), 'a2a-discovery.sqlite'));
    assert.equal(restored.verified, true);
  });

  test('a restore into a store carrying a trigger on a2ad_pins (with force) leaves no trigger, and a pin written after keeps its hash', async () => {
    const source = await pgStore();
    const out = join(await folder(), 'backup.sqlite');
    const made = await backupPostgresStore(target(source), out);
    const victim = await pgStore();
    await admin.raw(planted(victim));
    assert.deepEqual(await triggers(victim), ['a2ad_pins.steal'], 'the trigger is there before');
    await refused(restorePostgresStore(out, target(victim)), 'ERR_USAGE', /is not empty .*pass --force to replace it; nothing was written/);
    assert.deepEqual(await triggers(victim), ['a2ad_pins.steal'], 'a refused restore changes nothing');

    const restored = await restorePostgresStore(out, target(victim), { force: true });
    assert.equal(restored.verified, true);
    assert.equal(restored.replaced, true);
    assert.equal(restored.backup.rowsDigest, made.rowsDigest);
    assert.deepEqual(await triggers(victim), [], 'no trigger on the restored tables');
    const leftovers = (await admin.raw("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'a2ad_restore_%'")) as { rows: unknown[] };
    assert.deepEqual(leftovers.rows, [], 'the staging schema is gone');

    const store = await open(victim);
    try {
      assert.equal((await store.pin('victim'))?.ownerSecret, hash('victim secret'), "the victim's pin, as it was");
      assert.equal((await store.loadSnapshots()).current?.digest, snapshot.digest);
      await store.putPin({ sessionId: 'new', digest: snapshot.digest, lastUsedAtWall: 1_767_225_700_000, userId: 'u-new', ownerClient: hash('c2'), ownerSecret: hash('new secret') });
      await store.appendEvents([event(3)]);
      assert.deepEqual((await store.events()).map((e) => e.seq), [1, 2, 3], 'the journal takes writes (its id sequence moved past the restored rows)');
    } finally {
      await store.close();
    }
    assert.equal(await ownerSecret(victim, 'new'), hash('new secret'), "a new session's secret hash is the one written");
  });

  test('a row changed after the backup was written is refused, the target unchanged', async () => {
    const source = await pgStore();
    const out = join(await folder(), 'backup.sqlite');
    await backupPostgresStore(target(source), out);
    await sqliteRun(out, `UPDATE a2ad_pins SET owner_secret = '${hash('attacker secret')}' WHERE session_id = 'victim'`);
    const victim = await pgStore();
    await admin.withSchema(victim).table('a2ad_pins').where({ session_id: 'victim' }).update({ owner_secret: hash('target secret') });
    await refused(restorePostgresStore(out, target(victim), { force: true }), 'ERR_STORE_UNAVAILABLE', /its rows do not match the digest it carries/);
    assert.equal(await ownerSecret(victim, 'victim'), hash('target secret'), 'the target keeps its rows');
    const empty = server.schema();
    await refused(restorePostgresStore(out, target(empty)), 'ERR_STORE_UNAVAILABLE', /do not match the digest/);
    const tables = (await admin.raw('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = ?', [empty])) as { rows: Array<{ n: number }> };
    assert.equal(tables.rows[0]!.n, 0, 'no table written in an empty target');
  });

  test('SQLite → backup → PostgreSQL → backup keeps the rows digest, and PostgreSQL → backup → SQLite → backup too', async () => {
    const file = join(await folder(), 'a2a-discovery.sqlite');
    const store = await openStateStore(`sqlite:${file}`);
    try {
      await fill(store, `sqlite:${file}`);
    } finally {
      await store.close();
    }
    const first = await backupSqliteStore(file, join(await folder(), 'backup.sqlite'));
    const schema = server.schema();
    const intoPg = await restorePostgresStore(first.file, target(schema));
    assert.equal(intoPg.replaced, false);
    const second = await backupPostgresStore(target(schema), join(await folder(), 'backup.sqlite'));
    assert.equal(second.rowsDigest, first.rowsDigest, 'the same rows, read back from PostgreSQL');

    const back = join(await folder(), 'a2a-discovery.sqlite');
    await restoreSqliteStore(second.file, back);
    const third = await backupSqliteStore(back, join(await folder(), 'backup.sqlite'));
    assert.equal(third.rowsDigest, first.rowsDigest, 'and back in SQLite');

    // ADK reads the restored conversation on PostgreSQL.
    const adk = await openAdkSessionService(server.url, { schema });
    try {
      const session = await adk.service.getSession({ appName: 'a2a-discovery', userId: 'u-victim', sessionId: 'victim' });
      assert.equal(session?.events.length, 1);
      assert.deepEqual(session?.state.alpha, { b: 2, a: [1, 'x'] });
      assert.equal(session?.state['user:lang'], 'fr');
    } finally {
      await adk.close();
    }
  });

  test('a restore while a replica holds the leader lock is refused, naming it', async () => {
    const source = await pgStore();
    const out = join(await folder(), 'backup.sqlite');
    await backupPostgresStore(target(source), out);
    const schema = server.schema();
    // A replica of the target store, leading (replica-coordinator.ts: the advisory lock `a2ad:leader:<schema>`).
    const store = (await open(schema)) as SqlStateStore;
    const replica = new ReplicaCoordinator({ store, target: { current: () => undefined, adopt: async () => undefined, lead: async () => undefined, follow: async () => undefined }, id: 'leader-1', leaderRetryMs: 200, pollMs: 200 });
    try {
      await replica.start();
      assert.equal(replica.role, 'leader');
      await refused(restorePostgresStore(out, target(schema), { force: true }), 'ERR_STORE_LOCKED', /a replica leads the store .*stop every replica on this database before a restore.*; nothing was written/);
      assert.equal((await store.pin('victim')), undefined, 'the target unchanged');
    } finally {
      await replica.close();
      await store.close();
    }
    const restored = await restorePostgresStore(out, target(schema), { force: true });
    assert.equal(restored.verified, true, 'restored once the leader is gone');
  });

  test("an event trigger of the database that plants a trigger on the rebuilt a2ad_pins makes the restore refuse, the target unchanged", async () => {
    const source = await pgStore();
    const out = join(await folder(), 'backup.sqlite');
    await backupPostgresStore(target(source), out);
    const victim = await pgStore();
    await admin.raw(`
      CREATE FUNCTION public.steal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.owner_secret := '${hash('attacker secret')}'; RETURN NEW; END $$;
      CREATE FUNCTION public.plant() RETURNS event_trigger LANGUAGE plpgsql AS $$
        DECLARE obj record;
        BEGIN
          FOR obj IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' AND object_identity LIKE '%.a2ad_pins' LOOP
            EXECUTE format('CREATE TRIGGER steal BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION public.steal()', obj.object_identity);
          END LOOP;
        END $$;
      CREATE EVENT TRIGGER plant ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION public.plant();
    `);
    try {
      await refused(restorePostgresStore(out, target(victim), { force: true }), 'ERR_STORE_UNAVAILABLE', /the rebuilt tables carry what their migrations did not make \(trigger a2ad_pins\.steal\): an event trigger of the database\? Nothing was written/);
    } finally {
      await admin.raw('DROP EVENT TRIGGER plant; DROP FUNCTION public.plant(); DROP FUNCTION public.steal()');
    }
    assert.equal(await ownerSecret(victim, 'victim'), hash('victim secret'), 'the target keeps its rows');
    assert.deepEqual(await triggers(victim), []);
  });
});
