/**
 * A restore rebuilds, it does not adopt (issue 38): a backup carrying a trigger (the attacker's,
 * rewriting every new session's owner-secret hash), a view, an extra table, an extra column, an
 * index and a pragma restores to a store built by this build's migrations with none of them, each
 * reported; a session secret cannot be rewritten through it. A row changed after the backup was
 * written (digest mismatch), a value over its column's size and a dangling reference are refused
 * with nothing written; a backup with no digest needs `allowUnverified`; a `load_extension()`
 * trigger does not break the restored store's journal writes; `backup` into a missing folder is
 * refused and creates nothing. The real sqlite3 package the store uses, real files.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { backupSqliteStore, openStateStore, restoreSqliteStore } from '../../packages/store/src/index.js';
import { openAdkSessionService } from '../../packages/store/src/adk-sessions.js';
import { billingSnapshot as snapshot, journalEvent as event, sqliteAll as sql, sqliteExec as exec } from './backup-fixtures.js';



const exists = (path: string) => stat(path).then(() => true, () => false);
const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const objects = (file: string) => sql<{ type: string; name: string }>(file, "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");


let dir: string;
let n = 0;
/** A new folder under the test's. */
async function folder(): Promise<string> {
  const d = join(dir, `d${++n}`);
  await mkdir(d);
  return d;
}

/** A store with a published snapshot, the victim's pin, a journal row and an ADK conversation. */
async function makeStore(): Promise<string> {
  const file = join(await folder(), 'store.sqlite');
  const store = await openStateStore(`sqlite:${file}`);
  try {
    await store.publishSnapshot(snapshot);
    await store.putPin({ sessionId: 'victim', digest: snapshot.digest, lastUsedAtWall: 1_767_225_600_000, userId: 'u-victim', ownerClient: hash('client'), ownerSecret: hash('victim secret') });
    await store.appendEvents([event(1)]);
    const adk = await openAdkSessionService(`sqlite:${file}`, { store });
    try {
      await adk.service.createSession({ appName: 'a2a-discovery', userId: 'u-victim', sessionId: 'victim' });
    } finally {
      await adk.close();
    }
  } finally {
    await store.close();
  }
  return file;
}

/** What an attacker with write access to the store leaves in it. */
const PLANTED = `
  CREATE TRIGGER steal AFTER INSERT ON a2ad_pins BEGIN UPDATE a2ad_pins SET owner_secret = '${hash('attacker secret')}' WHERE session_id = NEW.session_id; END;
  CREATE VIEW peek AS SELECT session_id, owner_secret FROM a2ad_pins;
  CREATE TABLE loot (v TEXT); INSERT INTO loot VALUES ('x');
  ALTER TABLE a2ad_counters ADD COLUMN extra TEXT;
  CREATE INDEX mine ON a2ad_pins (user_id);
  PRAGMA user_version = 42;
`;

async function refused(work: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(isDiscoveryError(err), String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'restore-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('restore rebuilds, it does not adopt', () => {
  test("a backup carrying a trigger, a view, an extra table, column and index restores to a store with none of them; a session secret is not rewritten", async () => {
    const source = await makeStore();
    const clean = await objects(source);
    await exec(source, PLANTED);
    const backup = join(await folder(), 'backup.sqlite');
    const made = await backupSqliteStore(source, backup);
    assert.match(made.rowsDigest ?? '', /^[0-9a-f]{64}$/);
    const kinds = made.ignored.map((o) => `${o.kind} ${o.name}`).sort();
    assert.deepEqual(kinds, ['column a2ad_counters.extra', 'index mine', 'pragma user_version=42', 'table loot', 'trigger steal', 'view peek'], 'the backup reports what the store holds besides its rows');
    assert.ok((await objects(backup)).some((o) => o.name === 'steal'), 'the backup file itself carries the trigger (a copy of the store)');

    const target = join(await folder(), 'data', 'a2a-discovery.sqlite');
    const restored = await restoreSqliteStore(backup, target);
    assert.equal(restored.verified, true);
    assert.equal(restored.backup.rowsDigest, made.rowsDigest);
    assert.deepEqual(restored.backup.ignored.map((o) => `${o.kind} ${o.name}`).sort(), kinds, 'the restore reports what it ignored');
    assert.ok(restored.rows > 5, String(restored.rows));

    // The restored store's schema objects are exactly a clean store's (plus nothing of the backup's).
    assert.deepEqual(await objects(target), clean, 'no trigger, view, extra table or index');
    assert.deepEqual(await sql(target, "SELECT name FROM pragma_table_info('a2ad_counters') WHERE name = 'extra'"), [], 'no extra column');
    assert.deepEqual(await sql(target, 'PRAGMA user_version'), [{ user_version: 0 }]);

    const store = await openStateStore(`sqlite:${target}`);
    try {
      assert.equal((await store.pin('victim'))?.ownerSecret, hash('victim secret'), "the victim's pin, as it was");
      assert.equal((await store.loadSnapshots()).current?.digest, snapshot.digest, 'the current snapshot');
      await store.putPin({ sessionId: 'new', digest: snapshot.digest, lastUsedAtWall: 1_767_225_700_000, userId: 'u-new', ownerClient: hash('c2'), ownerSecret: hash('new secret') });
      assert.equal((await store.pin('new'))?.ownerSecret, hash('new secret'), "a new session's secret hash is the one written");
    } finally {
      await store.close();
    }
    assert.deepEqual(await sql(target, "SELECT owner_secret FROM a2ad_pins WHERE session_id = 'new'"), [{ owner_secret: hash('new secret') }]);
    assert.deepEqual(await sql(target, "SELECT id FROM sessions WHERE id = 'victim'"), [{ id: 'victim' }], "ADK's conversation restored");
  });

  test("a backup whose load_extension() trigger would break writes restores into a store whose journal writes work", async () => {
    const source = await makeStore();
    const backup = join(await folder(), 'backup.sqlite');
    await backupSqliteStore(source, backup);
    // Planted in the backup file itself, after it was written: schema objects are not in the rows' digest, and not restored.
    await exec(backup, "CREATE TRIGGER ext AFTER INSERT ON a2ad_journal BEGIN SELECT load_extension('/nonexistent/evil.so'); END;");
    const target = join(await folder(), 'a2a-discovery.sqlite');
    const restored = await restoreSqliteStore(backup, target);
    assert.deepEqual(restored.backup.ignored.map((o) => `${o.kind} ${o.name}`), ['trigger ext']);
    const store = await openStateStore(`sqlite:${target}`);
    try {
      await store.appendEvents([event(2), event(3)]);
      assert.deepEqual((await store.events()).map((e) => e.seq), [1, 2, 3], 'the journal takes writes');
    } finally {
      await store.close();
    }
  });

  test('a row changed after the backup was written is refused, nothing written', async () => {
    const backup = join(await folder(), 'backup.sqlite');
    await backupSqliteStore(await makeStore(), backup);
    await exec(backup, `UPDATE a2ad_pins SET owner_secret = '${hash('attacker secret')}' WHERE session_id = 'victim'`);
    const data = join(await folder(), 'data');
    await refused(restoreSqliteStore(backup, join(data, 'a2a-discovery.sqlite')), 'ERR_STORE_UNAVAILABLE', /its rows do not match the digest it carries \(rows [0-9a-f]{64}, recorded [0-9a-f]{64}\): it was changed after it was written; nothing was written/);
    assert.equal(await exists(data), false, 'nothing written, not even the data directory');
    // The digest recorded, replaced with the changed rows' own, still differs from the one backup printed.
    await refused(restoreSqliteStore(backup, join(data, 'a2a-discovery.sqlite'), { expectDigest: 'f'.repeat(64) }), 'ERR_STORE_UNAVAILABLE', /do not match the digest it carries/);
  });

  test('the expected digest, when given, must be the rows\'', async () => {
    const backup = join(await folder(), 'backup.sqlite');
    const made = await backupSqliteStore(await makeStore(), backup);
    await refused(restoreSqliteStore(backup, join(await folder(), 'a.sqlite'), { expectDigest: 'f'.repeat(64) }), 'ERR_STORE_UNAVAILABLE', new RegExp(`its rows' digest is ${made.rowsDigest}, not the expected f{64}`));
    assert.equal((await restoreSqliteStore(backup, join(await folder(), 'b.sqlite'), { expectDigest: made.rowsDigest! })).verified, true);
  });

  test('rows that do not fit the store are refused: a value over its column size, a wrong type, a dangling reference', async () => {
    for (const [change, why] of [
      [`UPDATE a2ad_pins SET owner_secret = '${'a'.repeat(100)}'`, /row 1 of a2ad_pins: owner_secret is 100 characters, over the column's 64 \(varchar\(64\)\)/],
      ["UPDATE a2ad_pins SET last_used_at = 'soon'", /row 1 of a2ad_pins: last_used_at is not an integer \("soon"\) in a bigint column/],
      ["INSERT INTO a2ad_snapshot_cards (digest, raw_sha256) VALUES ('nowhere', 'nothing')", /2 rows of a2ad_snapshot_cards name a2ad_snapshots rows that are not there|1 row of a2ad_snapshot_cards names a2ad_snapshots rows that are not there \(digest\)/],
    ] as const) {
      const source = await makeStore();
      await exec(source, change);
      const backup = join(await folder(), 'backup.sqlite');
      await backupSqliteStore(source, backup);
      const data = join(await folder(), 'data');
      await refused(restoreSqliteStore(backup, join(data, 'a2a-discovery.sqlite')), 'ERR_STORE_UNAVAILABLE', why);
      assert.equal(await exists(data), false, `${change}: nothing written`);
    }
  });

  test('a backup without a digest (made before backups carried one) is refused unless allowUnverified, then restored the same way', async () => {
    const backup = join(await folder(), 'backup.sqlite');
    await backupSqliteStore(await makeStore(), backup);
    await exec(backup, `DROP TABLE a2ad_backup; ${PLANTED}`);
    const data = join(await folder(), 'data');
    await refused(restoreSqliteStore(backup, join(data, 'a2a-discovery.sqlite')), 'ERR_USAGE', /carries no digest of its rows .*: pass --allow-unverified to restore it anyway .*; nothing was written/);
    assert.equal(await exists(data), false);
    const restored = await restoreSqliteStore(backup, join(data, 'a2a-discovery.sqlite'), { allowUnverified: true });
    assert.equal(restored.verified, false);
    assert.ok(restored.backup.ignored.some((o) => o.kind === 'trigger' && o.name === 'steal'));
    assert.deepEqual(await sql(join(data, 'a2a-discovery.sqlite'), "SELECT name FROM sqlite_master WHERE type IN ('trigger', 'view')"), []);
  });

  test('backup into a folder that does not exist is refused and creates nothing', async () => {
    const source = await makeStore();
    const out = join(dir, 'no', 'such', 'dir', 'backup.sqlite');
    await refused(backupSqliteStore(source, out), 'ERR_USAGE', /the folder .*no\/such\/dir does not exist \(or is not a folder\): create it first, a backup creates no folder; nothing was written/);
    assert.equal(await exists(join(dir, 'no')), false, 'no folder created');
  });
});
