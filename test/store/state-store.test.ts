/**
 * The state store, one body run against memory, SQLite and a real PostgreSQL: snapshots stored by
 * digest with their cards and the current pointer, pins, the journal with its retention, counters,
 * card entries surviving a reopen (their monotonic times translated), and failure behaviour.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import knexFactory from 'knex';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import { readAiCatalog } from '../../packages/core/src/catalog/index.js';
import { openStateStore, type CatalogEntry } from '../../packages/store/src/index.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import { entryFor, rawCard } from '../match/fixtures.js';
import { storeEngines } from '../helpers/stores.js';

const billing = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { skills: [{ id: 'invoices', tags: ['billing'] }] }));
const warranty = entryFor('https://warranty.example.com/', rawCard('https://warranty.example.com'));

function agent(localName: string, e: CacheEntry): SnapshotAgent {
  return Object.freeze({
    localName,
    description: `Reviewed ${localName}.`,
    tags: ['t'],
    critical: localName === 'billing_agent',
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

function event(seq: number, at: number, type: DiscoveryEvent['type'] = 'alert'): DiscoveryEvent {
  return { seq, at, type: 'alert', kind: type, message: `event ${seq}` } as DiscoveryEvent;
}

const num = (v: unknown): number => Number(v);

/** A connection of its own to `store`'s database, as another writer would have. */
const rawDb = (store: SqlStateStore) =>
  knexFactory({ client: store.kind === 'sqlite' ? 'sqlite3' : 'pg', connection: store.target.connection, useNullAsDefault: true, ...(store.target.schema !== undefined && { searchPath: [store.target.schema] }) });

for (const engine of storeEngines()) {
  describe(`state store (${engine.name})`, { skip: engine.skip }, () => {
    before(() => engine.setup());
    after(() => engine.teardown());

    test('publishing stores the snapshot with its cards and moves the current pointer; the history follows', async () => {
      const store = await engine.open();
      const s1 = snap(1, agent('billing_agent', billing));
      const s2 = snap(2, agent('billing_agent', billing), agent('warranty_agent', warranty));
      await store.publishSnapshot(s1);
      await store.publishSnapshot(s2);
      const loaded = await store.loadSnapshots();
      assert.equal(loaded.current?.digest, s2.digest);
      assert.deepEqual(loaded.current, s2, 'the snapshot comes back whole: agents, cards and bytes');
      assert.deepEqual(
        loaded.snapshots.map((s) => s.version),
        [2, 1],
      );
      assert.deepEqual(
        loaded.history.map((h) => [h.version, h.digest, h.agents]),
        [
          [1, s1.digest, ['billing_agent']],
          [2, s2.digest, ['billing_agent', 'warranty_agent']],
        ],
      );
      const got = await store.getSnapshot(s1.digest);
      assert.deepEqual(got, s1);
      assert.ok(Object.isFrozen(got) && Object.isFrozen(got.agents[0]) && Object.isFrozen(got.agents[0]!.card), 'loaded snapshots are frozen');
      assert.equal(got.agents[0]!.body, billing.body, 'the card bytes are kept');
      assert.equal(await store.getSnapshot('0'.repeat(64)), undefined);
    });

    test('the same digest published again (A → B → A) is one snapshot, current under its newest version', async () => {
      const store = await engine.open();
      const a1 = snap(1, agent('billing_agent', billing));
      const b = snap(2, agent('warranty_agent', warranty));
      const a3 = snap(3, agent('billing_agent', billing));
      assert.equal(a1.digest, a3.digest);
      for (const s of [a1, b, a3]) await store.publishSnapshot(s);
      const loaded = await store.loadSnapshots();
      assert.equal(loaded.current?.version, 3);
      assert.equal(loaded.snapshots.length, 2);
      assert.deepEqual(
        loaded.history.map((h) => h.version),
        [1, 2, 3],
      );
    });

    test('a publication after another writes only the cards the last one lacked, reading none of the others; pruning the last leaves the new one whole', async () => {
      const store = await engine.open({ retention: { snapshots: 1 } });
      const billing2 = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { overrides: { description: 'Invoices, second edition.' }, skills: [{ id: 'invoices', tags: ['billing'] }] }));
      const support = entryFor('https://support.example.com/', rawCard('https://support.example.com'));
      let reads = 0;
      // An agent whose card counts its reads, as one made from a lazily held card builds its model.
      const counted = (a: SnapshotAgent): SnapshotAgent => {
        const { card, ...rest } = a;
        const o = Object.defineProperty({ ...rest }, 'card', { enumerable: true, get: () => (reads++, card) });
        return Object.freeze(o as SnapshotAgent);
      };
      const s1 = snap(1, counted(agent('billing_agent', billing)), counted(agent('warranty_agent', warranty)), counted(agent('support_agent', support)));
      // The billing card changed, warranty left, support stayed under another name.
      const s2 = snap(2, counted(agent('billing_agent', billing2)), counted(agent('help_agent', support)));
      await store.publishSnapshot(s1);
      reads = 0;
      await store.publishSnapshot(s2);
      assert.ok(reads <= 1, `only the new billing card is read (${reads} reads)`);
      assert.deepEqual(await store.pruneSnapshots(), [s1.digest]);
      if (engine.name !== 'memory') {
        const db = rawDb(store as SqlStateStore);
        try {
          const kept = (await db('a2ad_cards').select('raw_sha256')) as Array<{ raw_sha256: string }>;
          assert.deepEqual(kept.map((r) => r.raw_sha256).sort(), [billing2.rawSha256, support.rawSha256].sort(), 'the cards that left went with the snapshot that held them');
        } finally {
          await db.destroy();
        }
        await store.close();
      }
      const again = await engine.open({ retention: { snapshots: 1 }, reopen: store });
      assert.deepEqual(await again.getSnapshot(s2.digest), s2, 'the carried card stayed with the new snapshot, the changed one is the new');
      assert.equal(await again.getSnapshot(s1.digest), undefined);
      const s3 = snap(3, counted(agent('help_agent', support)), counted(agent('warranty_agent', warranty)));
      await again.publishSnapshot(s3);
      assert.deepEqual(await again.getSnapshot(s3.digest), s3, 'after a restart: the card that left and came back is written again');
      assert.deepEqual(await again.pruneSnapshots(), [s2.digest]);
      assert.deepEqual(await again.getSnapshot(s3.digest), s3);
    });

    if (engine.name !== 'memory') {
      test('the last snapshot changed by another writer (published again, or pruned, or restored) is not trusted: the next publication is written whole', async () => {
        const store = (await engine.open({ retention: { snapshots: 1 } })) as SqlStateStore;
        const other = rawDb(store);
        try {
          const s1 = snap(1, agent('billing_agent', billing));
          await store.publishSnapshot(s1);
          // Another replica published the same digest again, with other bytes for the card: the
          // row is merged and its links are not what this store wrote.
          await other('a2ad_snapshots').where({ digest: s1.digest }).update({ version: 7 });
          await other('a2ad_snapshot_cards').where({ digest: s1.digest }).delete();
          const s2 = snap(2, agent('billing_agent', billing), agent('warranty_agent', warranty));
          await store.publishSnapshot(s2);
          await other('a2ad_snapshots').where({ digest: s1.digest }).delete();
          await other('a2ad_cards').whereNotIn('raw_sha256', other('a2ad_snapshot_cards').select('raw_sha256')).delete();
          assert.deepEqual(await store.getSnapshot(s2.digest), s2, 'the billing card was linked again');
          // Pruned elsewhere, its cards with it.
          await other('a2ad_snapshot_cards').delete();
          await other('a2ad_snapshots').delete();
          await other('a2ad_cards').delete();
          const s3 = snap(3, agent('billing_agent', billing), agent('warranty_agent', warranty), agent('other_agent', warranty));
          await store.publishSnapshot(s3);
          assert.deepEqual(await store.getSnapshot(s3.digest), s3, 'every card written again');
        } finally {
          await other.destroy();
        }
      });
    }

    test('pins are stored, replaced and deleted', async () => {
      const store = await engine.open();
      await store.putPin({ sessionId: 's1', digest: 'a'.repeat(64), lastUsedAtWall: 1_000, userId: 'user', ownerClient: 'c'.repeat(64), ownerSecret: 'd'.repeat(64) });
      await store.putPin({ sessionId: 's2', digest: 'b'.repeat(64), lastUsedAtWall: 2_000, userId: 'alice' });
      await store.putPin({ sessionId: 's1', digest: 'a'.repeat(64), lastUsedAtWall: 3_000, userId: 'user', ownerClient: 'c'.repeat(64), ownerSecret: 'd'.repeat(64) });
      const pins = (await store.pins()).sort((x, y) => x.sessionId.localeCompare(y.sessionId));
      assert.deepEqual(pins, [
        { sessionId: 's1', digest: 'a'.repeat(64), lastUsedAtWall: 3_000, userId: 'user', ownerClient: 'c'.repeat(64), ownerSecret: 'd'.repeat(64) },
        { sessionId: 's2', digest: 'b'.repeat(64), lastUsedAtWall: 2_000, userId: 'alice' },
      ]);
      await store.deletePin('s1');
      assert.deepEqual(
        (await store.pins()).map((p) => p.sessionId),
        ['s2'],
      );
    });

    test('retention deletes a snapshot only when it is not current, not pinned and not among the newest kept; unreferenced cards go with it', async () => {
      const store = await engine.open({ retention: { snapshots: 1 } });
      const s1 = snap(1, agent('billing_agent', billing));
      const s2 = snap(2, agent('warranty_agent', warranty));
      const s3 = snap(3, agent('billing_agent', billing), agent('warranty_agent', warranty));
      const s4 = snap(4, agent('other_agent', warranty));
      for (const s of [s1, s2, s3, s4]) await store.publishSnapshot(s);
      await store.putPin({ sessionId: 'pinned', digest: s1.digest, lastUsedAtWall: 1, userId: 'user' });
      const deleted = await store.pruneSnapshots();
      assert.deepEqual(deleted.sort(), [s2.digest, s3.digest].sort());
      const loaded = await store.loadSnapshots();
      assert.deepEqual(loaded.snapshots.map((s) => s.version).sort(), [1, 4]);
      assert.deepEqual(await store.getSnapshot(s1.digest), s1, 'its cards are still there');
      await store.deletePin('pinned');
      assert.deepEqual(await store.pruneSnapshots(), [s1.digest]);
      assert.deepEqual(await store.getSnapshot(s4.digest), s4, 'the current one is whole');
    });

    test('the history is bounded', async () => {
      const store = await engine.open({ retention: { history: 3 } });
      for (let v = 1; v <= 6; v++) await store.publishSnapshot(snap(v, agent(`agent_${v % 2 === 0 ? 'a' : 'b'}${v}`, billing)));
      assert.deepEqual(
        (await store.loadSnapshots()).history.map((h) => h.version),
        [4, 5, 6],
      );
    });

    test('the journal keeps events under this replica and their seq, ignores a repeated one, pages by position, and is bounded by count and by age', async () => {
      const clock = new VirtualClock({ wallStart: 10_000_000 });
      const store = await engine.open({ clock, retention: { journalMaxEvents: 5, journalMaxAgeMs: 60_000 }, replica: 'replica-1' });
      assert.equal(store.replica, 'replica-1');
      const now = clock.wallNow();
      await store.appendEvents([event(1, now - 120_000), event(2, now), event(3, now)]);
      assert.deepEqual(
        (await store.events()).map((e) => e.seq),
        [2, 3],
        'older than the age bound: deleted',
      );
      await store.appendEvents([event(3, now), event(4, now), event(5, now), event(6, now), event(7, now), event(8, now)]);
      const rows = await store.journal();
      assert.deepEqual(
        rows.map((r) => r.event.seq),
        [4, 5, 6, 7, 8],
        'at most journalMaxEvents, the oldest deleted first; the repeated seq 3 written once',
      );
      assert.ok(rows.every((r) => r.replica === 'replica-1'));
      assert.ok(rows.every((r, i) => i === 0 || r.id > rows[i - 1]!.id), 'positions increase');
      const at = (seq: number) => rows.find((r) => r.event.seq === seq)!.id;
      assert.deepEqual(
        (await store.events({ after: at(5) })).map((e) => e.seq),
        [6, 7, 8],
      );
      assert.deepEqual(
        (await store.events({ limit: 2 })).map((e) => e.seq),
        [7, 8],
        'the newest ones, oldest first',
      );
      assert.deepEqual(
        (await store.events({ before: at(7), limit: 2 })).map((e) => e.seq),
        [5, 6],
        'a page below a position (the journal API reads older pages this way)',
      );
      assert.deepEqual((await store.events({ types: ['snapshot.published'] })).map((e) => e.seq), [], 'filtered by type');
      assert.deepEqual((await store.events({ types: ['alert', 'snapshot.held'], before: at(6) })).map((e) => e.seq), [4, 5]);
      const [first] = await store.events({ limit: 5 });
      assert.deepEqual(first, event(4, now), 'an event comes back as it was');
      assert.equal(await store.lastSeq(), 8);
      await store.setLastSeq(20);
      await store.setLastSeq(12);
      assert.equal(await store.lastSeq(), 20, 'the highest sequence number seen, even past the journal');
    });

    test('counters add up', async () => {
      const store = await engine.open();
      await store.addCounters({ 'card.result.hit': 3, 'card.fetch.conditional': 1 });
      await store.addCounters({ 'card.result.hit': 2 });
      assert.deepEqual(await store.counters(), { 'card.result.hit': 5, 'card.fetch.conditional': 1 });
    });

    test('card entries survive a reopen, their monotonic times translated to the new process clock; no-store entries are not kept', async () => {
      const clock = new VirtualClock({ start: 1_000, wallStart: 1_767_225_600_000 });
      const store = await engine.open({ clock });
      const e = { ...billing, expiresAt: clock.now() + 60_000, nextAttemptAt: clock.now() + 5_000, failures: 2, stale: true, etag: '"v1"', cacheHeaders: { etag: '"v1"', 'cache-control': 'max-age=60' } };
      await store.cards.set(e.baseUrl, e);
      await store.cards.set(warranty.baseUrl, { ...warranty, noStore: true });
      assert.deepEqual(store.cards.get(e.baseUrl), e, 'read back from memory as written');
      await store.close();
      // The next process: its monotonic clock starts elsewhere; 10 s of wall time passed.
      const later = new VirtualClock({ start: 50, wallStart: 1_767_225_610_000 });
      const again = await engine.open({ clock: later, reopen: store });
      if (engine.name === 'memory') return; // memory keeps nothing across processes
      assert.deepEqual([...(await again.cards.keys())], [e.baseUrl], 'the no-store entry was never persisted');
      const back = (await again.cards.get(e.baseUrl))!;
      assert.equal(back.expiresAt, 50 + 50_000, 'expires 50 s from now (60 s − the 10 s that passed)');
      assert.equal(back.nextAttemptAt, 50 - 5_000);
      // An absent field and one that is undefined read the same (JSON has no undefined; a loaded entry names every field).
      const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
      assert.deepEqual(defined({ ...back, expiresAt: 0, nextAttemptAt: 0 }), defined({ ...e, expiresAt: 0, nextAttemptAt: 0 }));
      assert.ok(Object.isFrozen(back.card));
      await again.cards.delete(e.baseUrl);
      assert.deepEqual([...(await again.cards.keys())], []);
    });

    test('AI Catalog entries survive a reopen, apart from the card entries (neither store lists the other’s keys)', async () => {
      const clock = new VirtualClock({ start: 1_000, wallStart: 1_767_225_600_000 });
      const store = await engine.open({ clock });
      const read = readAiCatalog(new TextEncoder().encode(JSON.stringify({ specVersion: '1.0', entries: [{ identifier: 'urn:air:example.com:agent:billing', type: 'application/a2a-agent-card+json', url: 'https://billing.example.com/card.json' }] })));
      assert.ok(read.ok);
      const url = 'https://billing.example.com/.well-known/ai-catalog.json';
      const { raw: _raw, ...cached } = read.catalog;
      const doc: CatalogEntry = { ...(billing as unknown as CatalogEntry), baseUrl: url, cardUrl: url, card: cached, protocolVersion: '1.0', expiresAt: clock.now() + 60_000, etag: '"c1"' };
      const key = `platform 0123456789abcdef ${url}`;
      await store.catalogs.set(key, doc);
      await store.catalogs.set(`platform 0123456789abcdef ${url}?no-store`, { ...doc, noStore: true });
      await store.cards.set(billing.baseUrl, billing);
      await store.close();
      const later = new VirtualClock({ start: 50, wallStart: 1_767_225_610_000 });
      const again = await engine.open({ clock: later, reopen: store });
      if (engine.name === 'memory') return; // memory keeps nothing across processes
      assert.deepEqual([...(await again.catalogs.keys())], [key], 'the catalog entry, the no-store one not persisted');
      assert.deepEqual([...(await again.cards.keys())], [billing.baseUrl], 'the card cache sees no catalog entry');
      const back = (await again.catalogs.get(key))!;
      assert.equal(back.expiresAt, 50 + 50_000);
      assert.deepEqual(back.card, cached, 'the catalog as cached, its entries');
      assert.deepEqual({ ...back, expiresAt: 0, nextAttemptAt: 0 }, { ...doc, expiresAt: 0, nextAttemptAt: 0 });
      await again.catalogs.delete(key);
      assert.deepEqual([...(await again.catalogs.keys())], []);
      assert.deepEqual([...(await again.cards.keys())], [billing.baseUrl]);
      await again.cards.delete(billing.baseUrl);
    });

    if (engine.name === 'sqlite') {
      test('the SQLite file is one process’s: a second open is refused with ERR_STORE_LOCKED until the first closes', async () => {
        const first = await engine.open();
        await assert.rejects(engine.open({ reopen: first }), (err: unknown) => {
          assert.ok(isDiscoveryError(err) && err.code === 'ERR_STORE_LOCKED', String(err));
          assert.match(err.message, /in use by another process/);
          return true;
        });
        await first.close();
        const second = await engine.open({ reopen: first });
        assert.equal(second.status().ok, true);
      });
    }

    if (engine.name === 'sqlite') {
      test("a turn's history goes between the parts of a large write: the journal in transactions of 250 events, whole card entries 250 to a transaction", async () => {
        const clock = new VirtualClock({ wallStart: 1_767_225_600_000 });
        const store = (await engine.open({ clock })) as SqlStateStore;
        const db = rawDb(store);
        try {
          const count = async (table: string) => num((await db(table).count({ n: '*' }))[0]!.n);
          const now = clock.wallNow();
          const journal = store.appendEvents(Array.from({ length: 600 }, (_, i) => event(i + 1, now)));
          // What a turn's history write sees, queued once the journal's write began.
          await new Promise((r) => setImmediate(r));
          const seen = await store.exclusive(() => count('a2ad_journal'));
          await journal;
          assert.ok(seen > 0 && seen < 600, `the turn went between the journal's parts (${seen} of 600 rows written before it)`);
          assert.equal(await count('a2ad_journal'), 600);
          assert.deepEqual(await store.counters(), {}, 'nothing pruned');

          const entries = Array.from({ length: 600 }, (_, i) => ({ ...billing, baseUrl: `https://billing${i}.example.com/` }));
          const sets = entries.map((e) => store.cards.set(e.baseUrl, e));
          await sets[0]; // its batch committed
          const before = await store.exclusive(() => count('a2ad_card_entries'));
          await Promise.all(sets);
          assert.ok(before >= 250 && before < 600, `the turn went between the batches (${before} of 600 entries written before it)`);
          assert.equal(await count('a2ad_card_entries'), 600);
        } finally {
          await db.destroy();
        }
      });
    }

    if (engine.name === 'postgres') {
      test('a follower keeps its cache entries in memory (reading them ages them; its old copies must not overwrite the leader’s rows); leading, it writes through', async () => {
        const store = (await engine.open()) as SqlStateStore;
        store.follow();
        await store.cards.set(billing.baseUrl, billing);
        await store.catalogs.set(`platform 0123456789abcdef ${billing.baseUrl}`, billing as unknown as CatalogEntry);
        assert.deepEqual([...(await store.cards.keys())], [billing.baseUrl], 'kept in its memory');
        await store.close();
        const again = (await engine.open({ reopen: store })) as SqlStateStore;
        assert.deepEqual([[...(await again.cards.keys())], [...(await again.catalogs.keys())]], [[], []], 'nothing written by the follower');
        again.follow();
        again.fence(await again.takeLeadership('test'));
        await again.cards.set(warranty.baseUrl, warranty);
        await again.close();
        const third = await engine.open({ reopen: again });
        assert.deepEqual([...(await third.cards.keys())], [warranty.baseUrl], 'the leader’s write');
        await third.cards.delete(warranty.baseUrl);
      });

      test('PostgreSQL going away: writes fail and are recorded in the status; after it returns the next write succeeds', async () => {
        const store = await engine.open();
        await store.publishSnapshot(snap(1, agent('billing_agent', billing)));
        await engine.postgres!.stop();
        try {
          await assert.rejects(store.putPin({ sessionId: 's', digest: 'a'.repeat(64), lastUsedAtWall: 1, userId: 'user' }), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_STORE_UNAVAILABLE');
          assert.equal(store.status().ok, false);
          assert.ok(store.status().failedWrites >= 1);
        } finally {
          await engine.postgres!.start();
        }
        await store.putPin({ sessionId: 's', digest: 'a'.repeat(64), lastUsedAtWall: 1, userId: 'user' });
        assert.equal(store.status().ok, true);
        assert.equal((await store.loadSnapshots()).current?.version, 1, 'nothing published was lost');
      });

      test('a replica that only reads (a follower) is up again once a read succeeds after PostgreSQL returns', async () => {
        const store = (await engine.open()) as SqlStateStore;
        await store.publishSnapshot(snap(1, agent('billing_agent', billing)));
        await engine.postgres!.stop();
        try {
          await assert.rejects(store.currentPointer(), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_STORE_UNAVAILABLE');
          assert.equal(store.status().ok, false, 'a failed read is an outage');
        } finally {
          await engine.postgres!.start();
        }
        assert.equal((await store.currentPointer())?.digest !== undefined, true);
        assert.equal(store.status().ok, true, 'the store answered its last read: up, with no write needed');
        await store.close();
      });
    }
  });
}

test('a malformed store description is a configuration error naming what is accepted; a password in the URL is refused', async () => {
  await assert.rejects(openStateStore('redis://x'), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && /memory, sqlite/.test(err.message));
  await assert.rejects(openStateStore('postgres://u:secret@db/x'), (err: unknown) => isDiscoveryError(err) && !err.message.includes('secret'));
});
