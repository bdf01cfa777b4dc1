/**
 * The fencing epoch on a real PostgreSQL, at the store level: two store instances on one schema
 * stand for a former leader (paused, its epoch outdated) and the replica that took over. The
 * stale one's publication, card write and pruning are refused with `ERR_STORE_FENCED` and change
 * nothing; the new leader's go through. Also: the advisory lock is held by one session at a time,
 * and a publication is announced on the channel with its digest when it commits.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import { openStateStore } from '../../packages/store/src/index.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import { entryFor, rawCard } from '../match/fixtures.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

const billing = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { skills: [{ id: 'invoices', tags: ['billing'] }] }));
const warranty = entryFor('https://warranty.example.com/', rawCard('https://warranty.example.com'));

function agent(localName: string, e: CacheEntry): SnapshotAgent {
  return Object.freeze({
    localName,
    description: `Reviewed ${localName}.`,
    tags: ['t'],
    critical: false,
    baseUrl: e.baseUrl,
    sources: ['static'],
    card: e.card,
    body: e.body,
    canonicalSha256: e.canonicalSha256,
    rawSha256: e.rawSha256,
    protocolVersion: e.protocolVersion,
    degraded: false,
    stale: false,
  });
}

const snap = (version: number, ...agents: SnapshotAgent[]): Snapshot => buildSnapshot(agents, version, 1_767_225_600_000 + version * 1000);

const fenced = (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_STORE_FENCED';

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'notification', listener: (n: { channel: string; payload?: string }) => void): void;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

describe('fencing epoch and leader lock (real PostgreSQL)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  const opened: SqlStateStore[] = [];
  const open = async (schema: string) => {
    const s = (await openStateStore(pg.url, { schema })) as SqlStateStore;
    opened.push(s);
    return s;
  };
  const client = async (schema: string) => {
    const u = new URL(pg.url);
    const c = new Client({ host: u.hostname, port: Number(u.port), user: 'a2a', database: 'postgres' });
    await c.connect();
    await c.query(`SET search_path TO "${schema}"`);
    return c;
  };

  before(async () => {
    pg = await startPostgres();
  });
  after(async () => {
    await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
    await pg.close();
  });

  test("a paused old leader's late writes are refused by the fence; the new leader's go through", async () => {
    const schema = pg.schema();
    const old = await open(schema);
    const next = await open(schema);
    const s1 = snap(1, agent('billing_agent', billing));
    const s2 = snap(2, agent('billing_agent', billing), agent('warranty_agent', warranty));
    const late = snap(3, agent('warranty_agent', warranty));

    // The old leader takes over (epoch 1) and publishes.
    const e1 = await old.takeLeadership('old');
    let refusals = 0;
    old.fence(e1, () => refusals++);
    await old.publishSnapshot(s1);
    await old.cards.set(billing.baseUrl, billing);

    // It pauses; the other replica takes over (epoch 2) and publishes.
    const e2 = await next.takeLeadership('next');
    assert.equal(e2, e1 + 1);
    next.fence(e2);
    await next.publishSnapshot(s2);
    assert.deepEqual(await next.leader(), { epoch: e2, holder: 'next' });

    // The old leader resumes: every leader write it attempts is refused and changes nothing.
    await assert.rejects(old.publishSnapshot(late), fenced, 'its late publication is refused');
    await assert.rejects(Promise.resolve(old.cards.set(warranty.baseUrl, warranty)), fenced, 'its late card write is refused');
    await assert.rejects(old.pruneSnapshots(), fenced, 'its pruning is refused');
    assert.equal(refusals, 3, 'each refusal is reported (the coordinator demotes on it)');
    assert.equal(old.status().fencedWrites, 3);
    assert.equal(old.status().ok, true, 'a refusal is not a store failure');

    assert.deepEqual(await next.currentPointer(), { version: 2, digest: s2.digest }, 'the newer publication stays current');
    assert.equal(await next.getSnapshot(late.digest), undefined, 'the late snapshot was not stored');
    const reader = await open(schema);
    assert.deepEqual(reader.cards.keys(), [billing.baseUrl], 'the late card entry was not stored');
    const loaded = await reader.loadSnapshots();
    assert.deepEqual(
      loaded.history.map((h) => h.version),
      [1, 2],
    );

    // The new leader's writes go through.
    await next.publishSnapshot(late);
    assert.deepEqual(await next.currentPointer(), { version: 3, digest: late.digest });
  });

  test('the leader lock is held by one session at a time and released when that session ends', async () => {
    const schema = pg.schema();
    await open(schema); // migrations
    const a = await client(schema);
    const b = await client(schema);
    const lock = async (c: PgClient) => (await c.query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`a2ad:leader:${schema}`])).rows[0]!.ok;
    try {
      assert.equal(await lock(a), true);
      assert.equal(await lock(b), false, 'a second session cannot take it');
      await a.end();
      assert.equal(await lock(b), true, 'the session ended (a dead process, a lost connection): another takes it');
    } finally {
      await b.end();
    }
  });

  test('a publication is announced on the channel with its digest when it commits', async () => {
    const schema = pg.schema();
    const store = await open(schema);
    const listener = await client(schema);
    try {
      const got = new Promise<{ channel: string; payload?: string }>((resolve) => listener.on('notification', resolve));
      await listener.query(`LISTEN "${store.publishChannel}"`);
      const s = snap(1, agent('billing_agent', billing));
      await store.publishSnapshot(s);
      const n = await got;
      assert.deepEqual([n.channel, n.payload], [store.publishChannel, s.digest]);
    } finally {
      await listener.end();
    }
  });
});
