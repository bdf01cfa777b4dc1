/**
 * The journal written by several replicas, at the store level on a real PostgreSQL: two stores on
 * one schema stand for two replicas whose processes number their events alike. Each row is kept
 * under its replica and `seq` (the same `seq` from two replicas is two rows, a retried batch is
 * not doubled), placed by a position the store assigns; `/api/journal`'s pages walk every row
 * once; a follower does not journal the publications it adopts. Also: a journal written before
 * positions existed (one process, keyed by `seq`) is migrated in its order, on PostgreSQL and on
 * SQLite.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { JournalReader } from '../../packages/service/src/telemetry/journal.js';
import type { StateStore } from '../../packages/store/src/index.js';
import { openStateStore, StoreWriter } from '../../packages/store/src/index.js';
import { MIGRATIONS_TABLE, migrationSource } from '../../packages/store/src/migrations.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

/** Now: the journal keeps seven days by default. */
const AT = Date.now();
const alert = (seq: number, message: string): DiscoveryEvent => ({ seq, at: AT + seq, type: 'alert', kind: 'repeated-failures', message }) as DiscoveryEvent;

describe('the journal of several replicas (real PostgreSQL)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  const opened: StateStore[] = [];
  const open = async (schema: string, replica: string) => {
    const s = await openStateStore(pg.url, { schema, replica });
    opened.push(s);
    return s;
  };

  before(async () => {
    pg = await startPostgres();
  });

  after(async () => {
    for (const s of opened) await s.close().catch(() => undefined);
    await pg?.close();
  });

  test('the same seq from two replicas is two rows; a retried batch is not doubled; one order by position', async () => {
    const a = await open('journal_two', 'replica-a');
    const b = await open('journal_two', 'replica-b');
    await a.appendEvents([alert(1, 'a1'), alert(2, 'a2')]);
    await b.appendEvents([alert(1, 'b1'), alert(2, 'b2')]);
    await a.appendEvents([alert(3, 'a3')]);
    await b.appendEvents([alert(3, 'b3')]);
    await a.appendEvents([alert(1, 'a1'), alert(2, 'a2')]);
    for (const s of [a, b]) {
      const rows = await s.journal();
      assert.deepEqual(
        rows.map((r) => `${r.replica} ${r.event.seq} ${(r.event as { message: string }).message}`),
        ['replica-a 1 a1', 'replica-a 2 a2', 'replica-b 1 b1', 'replica-b 2 b2', 'replica-a 3 a3', 'replica-b 3 b3'],
        'every row once, in the order written',
      );
      assert.ok(rows.every((r, i) => i === 0 || r.id > rows[i - 1]!.id));
      assert.equal(await s.lastSeq(), 3, 'a process started now numbers its events after every replica’s');
    }
  });

  test("/api/journal's pages walk every replica's rows once, with this replica's unwritten events on the first page", async () => {
    const a = await open('journal_pages', 'replica-a');
    const b = await open('journal_pages', 'replica-b');
    for (let i = 1; i <= 5; i++) {
      await a.appendEvents([alert(i, `a${i}`)]);
      await b.appendEvents([alert(i, `b${i}`)]);
    }
    const unwritten = [alert(6, 'b6'), alert(7, 'b7')];
    const events = new EventStream();
    const reader = new JournalReader({ store: b, events, wallNow: () => AT, pending: () => unwritten });
    const seen: string[] = [];
    let before: number | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await reader.page({ limit: 3, ...(before !== undefined && { before }) });
      seen.unshift(...page.events.map((e) => `${e.replica} ${(e as unknown as { message: string }).message}`));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    assert.deepEqual(seen, [
      ...[1, 2, 3, 4, 5].flatMap((i) => [`replica-a a${i}`, `replica-b b${i}`]),
      'replica-b b6',
      'replica-b b7',
    ]);
    // Once written, an event is read from the store, and shown once.
    await b.appendEvents(unwritten);
    const first = await reader.page({ limit: 4 });
    assert.deepEqual(
      first.events.map((e) => (e as unknown as { message: string }).message),
      ['a5', 'b5', 'b6', 'b7'],
    );
    assert.ok(first.events.every((e) => e.journalId !== undefined));
    reader.close();
  });

  test('a follower does not journal the publications it adopts; the leader journals its own', async () => {
    const leaderStore = await open('journal_adopt', 'replica-a');
    const followerStore = await open('journal_adopt', 'replica-b');
    const leaderEvents = new EventStream();
    const followerEvents = new EventStream();
    const leader = new StoreWriter({ store: leaderStore, events: leaderEvents, snapshot: () => undefined, pin: () => undefined, publishes: () => true });
    const follower = new StoreWriter({ store: followerStore, events: followerEvents, snapshot: () => undefined, pin: () => undefined, publishes: () => false });
    leaderEvents.emit({ type: 'snapshot.published', version: 1, digest: 'd1', agents: [] });
    followerEvents.emit({ type: 'snapshot.published', version: 1, digest: 'd1', agents: [] });
    followerEvents.emit({ type: 'session.pinned', sessionId: 's1', digest: 'd1' });
    await leader.close();
    await follower.close();
    const rows = await followerStore.journal();
    assert.deepEqual(rows.map((r) => `${r.replica} ${r.event.type}`).sort(), ['replica-a snapshot.published', 'replica-b session.pinned']);
  });

  test('a journal written before positions existed keeps its rows, in order (PostgreSQL)', async () => {
    await legacyJournalMigrates({ client: 'pg', connection: { host: '127.0.0.1', port: pg.port, user: 'a2a', database: 'postgres' }, searchPath: ['journal_legacy'] }, async () => {
      const s = await open('journal_legacy', 'replica-a');
      return s;
    }, (db) => db.raw('CREATE SCHEMA IF NOT EXISTS journal_legacy'));
  });
});

test('a journal written before positions existed keeps its rows, in order (SQLite)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'journal-legacy-'));
  const file = join(dir, 'state.sqlite');
  try {
    let store: StateStore | undefined;
    await legacyJournalMigrates({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true }, async () => (store = await openStateStore(`sqlite:${file}`)));
    await store?.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Migrates a database to the schema before positions (0002), writes a journal the old way, then opens the store on it. */
async function legacyJournalMigrates(config: Knex.Config, openStore: () => Promise<StateStore>, prepare?: (db: Knex) => Promise<unknown>): Promise<void> {
  const db = knexFactory(config);
  try {
    await prepare?.(db);
    const schemaName = config.searchPath === undefined ? {} : { schemaName: (config.searchPath as string[])[0]! };
    await db.migrate.up({ migrationSource, tableName: MIGRATIONS_TABLE, ...schemaName });
    await db.migrate.up({ migrationSource, tableName: MIGRATIONS_TABLE, ...schemaName });
    const rows = [5, 3, 9].map((seq) => ({ seq, at: AT + seq, type: 'alert', event: JSON.stringify(alert(seq, `old ${seq}`)) }));
    await db('a2ad_events').insert(rows);
  } finally {
    await db.destroy();
  }
  const store = await openStore();
  const journal = await store.journal();
  assert.deepEqual(
    journal.map((r) => [r.replica, r.event.seq]),
    [
      ['', 3],
      ['', 5],
      ['', 9],
    ],
  );
  assert.equal(await store.lastSeq(), 9);
}
