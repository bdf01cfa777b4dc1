/**
 * The durable write path (issue 29) on SQLite and a real PostgreSQL: a 304 (and any refresh that
 * keeps the card) writes only the entry's freshness, never its card or body; the writes made
 * together are flushed in one transaction; a restart after a revalidation sweep restores the
 * revalidated freshness.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { modelSlot } from '../../packages/core/src/cache/cache-entries.js';
import { toAdkCard } from '../../packages/core/src/card/index.js';
import { collect } from '../helpers/collect.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { StateStore } from '../../packages/store/src/index.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import { cardFor } from '../helpers/cards.js';
import { storeEngines } from '../helpers/stores.js';
import { startScriptedServer } from '../cache/scripted-server.js';

/** A second connection to the store's database, to read its rows as they are. */
function rowsOf(store: StateStore): Knex {
  const { connection, schema } = (store as SqlStateStore).target;
  return knexFactory({
    client: store.kind === 'sqlite' ? 'sqlite3' : 'pg',
    connection,
    useNullAsDefault: true,
    ...(schema !== undefined && { searchPath: [schema] }),
    pool: { min: 0, max: 1 },
  });
}

async function entryRow(db: Knex, key: string): Promise<{ entry: string; freshness: string | undefined }> {
  const e = (await db('a2ad_card_entries').where({ key }).first('entry')) as { entry: string } | undefined;
  // (Before issue 29 the store had no freshness rows: the test then fails on what it asserts, not here.)
  const f = (await db.schema.hasTable('a2ad_card_freshness')) ? ((await db('a2ad_card_freshness').where({ key }).first('freshness')) as { freshness: string } | undefined) : undefined;
  assert.ok(e, `a row for ${key}`);
  return { entry: e.entry, freshness: f?.freshness };
}

for (const engine of storeEngines().filter((e) => e.name !== 'memory')) {
  describe(`durable write path (${engine.name})`, { skip: engine.skip }, () => {
    let srv: Awaited<ReturnType<typeof startScriptedServer>>;
    let policy: HostPolicy;
    let fetcher: CardFetcher;
    const readers: Knex[] = [];
    const caches: CardCache[] = [];

    before(async () => {
      await engine.setup();
      srv = await startScriptedServer();
      policy = HostPolicy.from({ allow: [srv.origin], allowLoopback: true });
      fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000 });
    });
    after(async () => {
      await Promise.all(readers.splice(0).map((r) => r.destroy()));
      await fetcher.close();
      await srv.close();
      await engine.teardown();
    });
    afterEach(async () => {
      await Promise.all(caches.splice(0).map((c) => c.close()));
    });

    const cacheOn = (store: StateStore, clock: VirtualClock): CardCache => {
      const c = new CardCache({ fetcher, hostPolicy: policy, store: store.cards, clock, random: () => 1, expiryJitter: 0, backoffJitter: 0, minTtlMs: 0, check: { allowLoopback: true } });
      caches.push(c);
      return c;
    };
    /** 200 with ETag "v1" and max-age=60 to an unconditional request, 304 to a conditional one. */
    const revalidating = (id: string) =>
      srv.script((req, path) =>
        req.headers['if-none-match'] !== undefined
          ? { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=60' } }
          : { status: 200, headers: { etag: '"v1"', 'cache-control': 'max-age=60' }, body: cardFor(srv, path.split('/')[1] ?? id) },
      );

    test('a 304 writes the freshness only: the stored entry (card and body) is not rewritten, and a reopen reads the revalidated entry', async () => {
      const clock = new VirtualClock({ start: 1_000, wallStart: 1_767_225_600_000 });
      const store = await engine.open({ clock });
      const db = rowsOf(store);
      readers.push(db);
      revalidating('one');
      const c = cacheOn(store, clock);
      const base = `${srv.origin}/one/`;
      const first = await c.get(base);
      const before = await entryRow(db, base);
      assert.equal(before.freshness, undefined, 'a 200 writes the whole entry');
      await clock.advance(61_000);
      const revalidated = await c.get(base);
      assert.equal(revalidated.lastOutcome, 'revalidated');
      // Closing writes what is pending (a freshness write is not awaited by the refresh).
      await store.close();
      const afterRow = await entryRow(db, base);
      assert.equal(afterRow.entry, before.entry, 'the entry row (card, body) is not written by a 304');
      assert.ok(afterRow.freshness !== undefined, 'the freshness is written');
      assert.ok(!afterRow.freshness.includes(first.body) && !afterRow.freshness.includes('"card"'), 'no card or body in what the 304 wrote');
      assert.ok(afterRow.freshness.length < before.entry.length / 2, `${afterRow.freshness.length} B written for ${before.entry.length} B kept`);

      const later = new VirtualClock({ start: 50, wallStart: 1_767_225_600_000 + 61_000 + 10_000 });
      const again = await engine.open({ clock: later, reopen: store });
      const back = (await again.cards.get(base))!;
      assert.equal(back.lastOutcome, 'revalidated');
      assert.equal(back.validatedAtWall, revalidated.validatedAtWall);
      assert.equal(back.expiresAt, 50 + 50_000, 'fresh for the 50 s left of the 304’s 60 s');
      // (JSON has no undefined: fields that were undefined come back absent.)
      assert.deepEqual({ ...back, expiresAt: 0, extended: undefined, varyRequest: undefined }, { ...revalidated, expiresAt: 0 }, 'the revalidated entry, card and all');
    });

    test('a reopened store holds each card as the cache does: its text packed, its model weakly, built again as it was accepted', async () => {
      const clock = new VirtualClock({ start: 1_000, wallStart: 1_767_225_600_000 });
      const store = await engine.open({ clock });
      srv.script((_req, path) => ({ status: 200, headers: { 'cache-control': 'max-age=60' }, body: cardFor(srv, path.split('/')[1] ?? 'held', { description: 'A card long enough to be held packed. '.repeat(12) }) }));
      const base = `${srv.origin}/held/`;
      const first = await cacheOn(store, clock).get(base);
      const expected = JSON.stringify(first.card);
      const adk = toAdkCard(first.card);
      await store.close();

      const again = await engine.open({ clock, reopen: store });
      try {
        const back = (await again.cards.get(base))!;
        const slot = modelSlot(back);
        assert.ok(slot !== undefined && slot.size === Buffer.byteLength(first.body), 'the text is held packed, as the cache holds it');
        assert.equal(back.body, first.body);
        const loaded = ((): WeakRef<object> => new WeakRef(back.card))();
        await collect();
        assert.equal(loaded.deref(), undefined, 'the model loaded is held weakly: the collector took it');
        assert.equal(JSON.stringify(back.card), expected, 'built again from the text: the same card');
        assert.deepEqual(toAdkCard(back.card), adk, 'and the same card for ADK (the original as received)');
      } finally {
        await again.close();
      }
    });

    test('a failed refresh writes the freshness only; the next 200 with new bytes writes the whole entry again', async () => {
      const clock = new VirtualClock();
      const store = await engine.open({ clock });
      const db = rowsOf(store);
      readers.push(db);
      revalidating('two');
      const c = cacheOn(store, clock);
      const base = `${srv.origin}/two/`;
      await c.get(base);
      const before = await entryRow(db, base);
      srv.script(() => ({ status: 503 }));
      await clock.advance(61_000);
      const failed = await c.get(base);
      assert.deepEqual([failed.stale, failed.failures], [true, 1]);
      // A whole write of another key commits with (or after) the pending freshness write.
      await store.cards.set(`${srv.origin}/other/`, failed);
      const afterFailure = await entryRow(db, base);
      assert.equal(afterFailure.entry, before.entry, 'the failure did not rewrite the card');
      assert.match(afterFailure.freshness ?? '', /"failures":1/);
      srv.script(() => ({ status: 200, headers: { 'cache-control': 'max-age=60' }, body: cardFor(srv, 'two', { version: '2.0.0' }) }));
      const changed = await c.refresh(base);
      assert.equal(changed.lastOutcome, 'changed');
      const afterChange = await entryRow(db, base);
      assert.notEqual(afterChange.entry, before.entry);
      assert.equal(afterChange.freshness, undefined, 'a whole entry supersedes the freshness written before it');
      await store.close();
      const again = await engine.open({ clock, reopen: store });
      const back = (await again.cards.get(base))!;
      assert.deepEqual([back.lastOutcome, back.failures, back.stale, back.rawSha256], ['changed', 0, false, changed.rawSha256]);
    });

    test('writes made together are flushed in one transaction; a key with a pending write reads as that write', async () => {
      const clock = new VirtualClock();
      const store = await engine.open({ clock });
      revalidating('many');
      const c = cacheOn(store, clock);
      const bases = Array.from({ length: 40 }, (_, i) => `${srv.origin}/m${i}/`);
      for (const b of bases) await c.get(b);
      await clock.advance(61_000);
      const entries = await Promise.all(bases.map((b) => c.peek(b)));
      const writes = store.status().writes;
      // Forty revalidated entries stored in one turn (as a sweep's 304s arrive), not awaited one by one.
      const stored = entries.map((e, i) => {
        const next = { ...e!, lastOutcome: 'revalidated' as const, validatedAtWall: clock.wallNow() };
        const p = store.cards.set(bases[i]!, next);
        assert.equal(store.cards.get(bases[i]!), next, 'read back at once, before the write commits');
        return p;
      });
      await Promise.all(stored);
      assert.equal(store.status().writes - writes, 1, 'one transaction for the forty writes');
      // Freshness writes (a sweep's 304s) are not awaited: they gather, and go with the next batch.
      const now = (b: string) => store.cards.get(b) as CacheEntry;
      for (const b of bases) store.cards.touch?.(b, { ...now(b), failures: 1 });
      await store.cards.set(bases[0]!, { ...now(bases[0]!), failures: 1 });
      assert.equal(store.status().writes - writes, 2, 'one more transaction for the forty freshness writes');
      await store.close();
      const again = await engine.open({ clock, reopen: store });
      for (const b of bases) assert.deepEqual([(await again.cards.get(b))!.lastOutcome, (await again.cards.get(b))!.failures], ['revalidated', 1]);
    });

    test('a revalidation sweep through the cache, then a restart: every entry comes back revalidated and fresh, served without a request', async () => {
      const clock = new VirtualClock({ start: 1_000, wallStart: 1_767_225_600_000 });
      const store = await engine.open({ clock });
      revalidating('sweep');
      const c = cacheOn(store, clock);
      const bases = Array.from({ length: 30 }, (_, i) => `${srv.origin}/s${i}/`);
      await Promise.all(bases.map((b) => c.get(b)));
      await clock.advance(61_000);
      const swept = await Promise.all(bases.map((b) => c.get(b)));
      assert.ok(swept.every((e) => e.lastOutcome === 'revalidated'));
      await c.close();
      await store.close();
      const later = new VirtualClock({ start: 7, wallStart: clock.wallNow() + 1_000 });
      const again = await engine.open({ clock: later, reopen: store });
      srv.requests.length = 0;
      const after = cacheOn(again, later);
      for (const b of bases) {
        const e = await after.get(b);
        assert.equal(e.lastOutcome, 'revalidated');
        assert.equal(e.expiresAt, 7 + 59_000);
      }
      assert.equal(srv.requests.length, 0, 'every entry fresh after the restart: no request');
    });
  });
}
