/**
 * Journal retention under endpoint churn, one body against memory, SQLite and a real PostgreSQL:
 * a churning source's high-volume kinds are cut to their quota per type, and by the total cap
 * before the kinds operators need (snapshots, alerts, admissions, refusals); what was cut is
 * counted per type, in the store's counters and its status.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import knexFactory from 'knex';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardCache } from '../../packages/core/src/cache/index.js';
import type { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import type { StateStore } from '../../packages/store/src/index.js';
import { openStateStore } from '../../packages/store/src/index.js';
import { createMetrics } from '../../packages/service/src/telemetry/metrics.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import { MIGRATIONS_TABLE, migrationSource } from '../../packages/store/src/migrations.js';
import { storeEngines } from '../helpers/stores.js';

const WALL = 1_767_225_600_000;
const CHURN = ['endpoint.gone', 'endpoint.evicted', 'health.changed', 'match.verdict', 'card.result'] as const;

let seq = 0;
/** One event of `type` as the loop emits it, for endpoint `n`. */
function event(type: string, n: number): DiscoveryEvent {
  const base = { seq: ++seq, at: WALL + seq };
  const endpoint = `https://agent-${n}.example.com/`;
  switch (type) {
    case 'snapshot.published':
      return { ...base, type, version: n, digest: String(n).padStart(64, '0'), agents: ['billing_agent'] };
    case 'alert':
      return { ...base, type, kind: 'skills.changed', message: `alert ${n}`, endpoint };
    case 'endpoint.admitted':
    case 'endpoint.refused':
    case 'endpoint.gone':
    case 'endpoint.evicted':
      return { ...base, type, endpoint, sources: ['catalog'] };
    case 'health.changed':
      return { ...base, type, endpoint, from: 'healthy', to: 'removed', successes: 1, failures: 0 };
    case 'match.verdict':
      return { ...base, type, endpoint, verdict: 'excluded' };
    case 'card.result':
      return { ...base, type, endpoint, outcome: 'changed', failures: 0 };
    default:
      throw new Error(type);
  }
}

/** What operators need, journaled first: 3 publications, 3 alerts, an admission and a refusal. */
function needed(): DiscoveryEvent[] {
  return [
    event('snapshot.published', 1),
    event('alert', 1),
    event('endpoint.admitted', 1),
    event('snapshot.published', 2),
    event('alert', 2),
    event('endpoint.refused', 2),
    event('snapshot.published', 3),
    event('alert', 3),
  ];
}

/** `count` churn events, the kinds in turn, written in batches of 50 as the store writer flushes them. */
async function churn(store: StateStore, count: number): Promise<void> {
  let batch: DiscoveryEvent[] = [];
  for (let i = 0; i < count; i++) {
    batch.push(event(CHURN[i % CHURN.length]!, 1_000 + Math.floor(i / CHURN.length)));
    if (batch.length === 50) {
      await store.appendEvents(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.appendEvents(batch);
}

async function countsByType(store: StateStore): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const e of await store.events()) out[e.type] = (out[e.type] ?? 0) + 1;
  return out;
}

function pruned(counters: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counters).filter(([k]) => k.startsWith('journal.pruned.')));
}

const seqs = async (store: StateStore, types: string[]): Promise<number[]> => (await store.events({ types })).map((e) => e.seq);

for (const engine of storeEngines()) {
  describe(`journal retention (${engine.name})`, { skip: engine.skip }, () => {
    before(() => engine.setup());
    after(() => engine.teardown());
    const clock = () => new VirtualClock({ wallStart: WALL + 1_000_000 });

    test('10x the cap of churn: each churn kind is cut to its quota, the snapshots, alerts, admissions and refusals all stay, the cut is counted per type', async () => {
      const store = await engine.open({ clock: clock(), retention: { journalMaxEvents: 200, journalMaxEventsPerType: 30 } });
      const kept = needed();
      await store.appendEvents(kept);
      await churn(store, 2_000);
      const byType = await countsByType(store);
      assert.deepEqual(
        byType,
        { 'snapshot.published': 3, alert: 3, 'endpoint.admitted': 1, 'endpoint.refused': 1, 'endpoint.gone': 30, 'endpoint.evicted': 30, 'health.changed': 30, 'match.verdict': 30, 'card.result': 30 },
        'every kind operators need is whole; each churn kind keeps its quota',
      );
      assert.deepEqual(
        await seqs(store, ['snapshot.published', 'alert', 'endpoint.admitted', 'endpoint.refused']),
        kept.map((e) => e.seq),
      );
      const gone = (await store.events({ types: ['endpoint.gone'] })).map((e) => e.seq);
      assert.equal(gone.at(-1), seq - 4, 'a quota keeps the newest rows of its kind');
      const expected = Object.fromEntries(CHURN.map((t) => [`journal.pruned.${t}`, 400 - 30]));
      assert.deepEqual(pruned(await store.counters()), expected, 'the store counters count what each quota cut');
      assert.deepEqual(store.status().journalPruned, Object.fromEntries(CHURN.map((t) => [t, 400 - 30])), 'and the status, for the metric');
    });

    test('churn past the total cap (quotas above it): the cap cuts the oldest churn, never what operators need', async () => {
      const store = await engine.open({ clock: clock(), retention: { journalMaxEvents: 100, journalMaxEventsPerType: 5_000 } });
      const kept = needed();
      await store.appendEvents(kept);
      await churn(store, 1_000);
      const rows = await store.journal();
      assert.equal(rows.length, 100, 'the cap holds');
      assert.deepEqual(
        await seqs(store, ['snapshot.published', 'alert', 'endpoint.admitted', 'endpoint.refused']),
        kept.map((e) => e.seq),
      );
      assert.deepEqual(
        rows.slice(kept.length).map((r) => r.event.seq),
        Array.from({ length: 92 }, (_, i) => seq - 91 + i),
        'the newest churn fills the rest',
      );
      const counts = pruned(await store.counters());
      assert.equal(
        Object.values(counts).reduce((a, b) => a + b, 0),
        1_000 - 92,
      );
      assert.deepEqual(Object.keys(counts).sort(), CHURN.map((t) => `journal.pruned.${t}`).sort());
    });

    test('protected kinds alone over the cap: their oldest go, counted', async () => {
      const store = await engine.open({ clock: clock(), retention: { journalMaxEvents: 5 } });
      const kept = needed();
      await store.appendEvents(kept.slice(0, 4));
      await store.appendEvents([event('card.result', 9), ...kept.slice(4)]);
      assert.deepEqual(
        (await store.events()).map((e) => e.seq),
        kept.slice(3).map((e) => e.seq),
        'the churn row first, then the oldest protected ones',
      );
      assert.deepEqual(pruned(await store.counters()), { 'journal.pruned.card.result': 1, 'journal.pruned.snapshot.published': 1, 'journal.pruned.alert': 1, 'journal.pruned.endpoint.admitted': 1 });
    });

    test('at the bounds, one event at a time (as the writer flushes): exactly N rows of a type at a quota of N, exactly N in all at a cap of N; one more cuts one, the oldest', async () => {
      const N = 3;
      const store = await engine.open({ clock: clock(), retention: { journalMaxEvents: 2 * N + 1, journalMaxEventsPerType: N } });
      const gone = Array.from({ length: N + 1 }, (_, i) => event('endpoint.gone', 2_000 + i));
      for (const e of gone.slice(0, N)) await store.appendEvents([e]);
      assert.deepEqual(await seqs(store, ['endpoint.gone']), gone.slice(0, N).map((e) => e.seq), `a quota of ${N} keeps ${N}`);
      assert.deepEqual(pruned(await store.counters()), {}, 'nothing cut at the quota');
      await store.appendEvents([gone[N]!]);
      assert.deepEqual(await seqs(store, ['endpoint.gone']), gone.slice(1).map((e) => e.seq), 'one over the quota: the oldest goes');
      assert.deepEqual(pruned(await store.counters()), { 'journal.pruned.endpoint.gone': 1 });
      // The cap: N + 1 more rows of two other kinds make exactly 2N + 1 rows, the cap; one more cuts the oldest churn.
      const evicted = Array.from({ length: N }, (_, i) => event('endpoint.evicted', 3_000 + i));
      for (const e of [...evicted, event('snapshot.published', 4_000)]) await store.appendEvents([e]);
      assert.equal((await store.events()).length, 2 * N + 1, `a cap of ${2 * N + 1} keeps ${2 * N + 1}`);
      assert.deepEqual(pruned(await store.counters()), { 'journal.pruned.endpoint.gone': 1 }, 'nothing cut at the cap');
      await store.appendEvents([event('snapshot.published', 4_001)]);
      assert.deepEqual(await seqs(store, ['endpoint.gone']), gone.slice(2).map((e) => e.seq), 'one over the cap: the oldest churn row goes');
      assert.equal((await store.events()).length, 2 * N + 1);
      assert.deepEqual(pruned(await store.counters()), { 'journal.pruned.endpoint.gone': 2 });
    });

    if (engine.name !== 'memory') {
      test('a journal written before migration 0005 is counted by it (and 0005 rolls back): the quotas apply at the next write', async () => {
        const first = (await engine.open({ clock: clock() })) as SqlStateStore;
        await first.close();
        const { connection, schema } = first.target;
        const db = knexFactory({ client: engine.name === 'sqlite' ? 'sqlite3' : 'pg', connection, useNullAsDefault: true, ...(schema !== undefined && { searchPath: [schema] }) });
        try {
          // Back to before 0005: the later migrations first, one at a time (bounded).
          for (let i = 0; i < 10 && (await db.schema.hasTable('a2ad_journal_counts')); i++) {
            await db.migrate.down({ migrationSource, tableName: MIGRATIONS_TABLE, ...(schema !== undefined && { schemaName: schema }) });
          }
          assert.equal(await db.schema.hasTable('a2ad_journal_counts'), false, 'rolled back');
          const rows = [...needed(), ...Array.from({ length: 60 }, (_, i) => event(CHURN[i % CHURN.length]!, i))];
          await db('a2ad_journal').insert(rows.map((e) => ({ replica: 'old', seq: e.seq, at: e.at, type: e.type, event: JSON.stringify(e) })));
        } finally {
          await db.destroy();
        }
        const store = await engine.open({ clock: clock(), reopen: first, retention: { journalMaxEventsPerType: 5 } });
        await store.appendEvents([event('alert', 8)]);
        assert.deepEqual(await countsByType(store), { 'snapshot.published': 3, alert: 4, 'endpoint.admitted': 1, 'endpoint.refused': 1, ...Object.fromEntries(CHURN.map((t) => [t, 5])) });
        assert.deepEqual(pruned(await store.counters()), Object.fromEntries(CHURN.map((t) => [`journal.pruned.${t}`, 12 - 5])));
      });

      test('a quota lowered between runs applies at the next write, to every kind; the rows per type are kept in step with the journal, and the cut is found on the (type, id) index', async () => {
        const first = await engine.open({ clock: clock(), retention: { journalMaxEvents: 70 } });
        await first.appendEvents(needed());
        await churn(first, 100);
        await first.close();
        const store = (await engine.open({ clock: clock(), reopen: first, retention: { journalMaxEventsPerType: 10 } })) as SqlStateStore;
        await store.appendEvents([event('alert', 7)]);
        assert.deepEqual(await countsByType(store), { 'snapshot.published': 3, alert: 4, 'endpoint.admitted': 1, 'endpoint.refused': 1, ...Object.fromEntries(CHURN.map((t) => [t, 10])) });
        const { connection, schema } = store.target;
        const db = knexFactory({ client: engine.name === 'sqlite' ? 'sqlite3' : 'pg', connection, useNullAsDefault: true, ...(schema !== undefined && { searchPath: [schema] }) });
        try {
          const tally = (rows: Array<{ type: string; n: unknown }>) => Object.fromEntries(rows.filter((r) => Number(r.n) > 0).map((r) => [r.type, Number(r.n)]));
          assert.deepEqual(
            tally((await db('a2ad_journal_counts').select('type', 'n')) as Array<{ type: string; n: unknown }>),
            tally((await db('a2ad_journal').select('type').count({ n: '*' }).groupBy('type')) as Array<{ type: string; n: unknown }>),
            'a2ad_journal_counts matches the journal',
          );
          if (engine.name === 'sqlite') {
            const plan = (await db.raw("EXPLAIN QUERY PLAN SELECT id FROM a2ad_journal WHERE type = 'alert' ORDER BY id ASC LIMIT 10")) as Array<{ detail: string }>;
            assert.match(plan.map((p) => p.detail).join('\n'), /USING COVERING INDEX a2ad_journal_type_id_index/);
          } else {
            const rows = (await db.raw('SELECT indexdef FROM pg_indexes WHERE schemaname = ? AND tablename = ?', [schema ?? 'public', 'a2ad_journal'])) as { rows: Array<{ indexdef: string }> };
            assert.ok(
              rows.rows.some((r) => /a2ad_journal_type_id_index .*\(type, id\)/.test(r.indexdef)),
              rows.rows.map((r) => r.indexdef).join('\n'),
            );
          }
        } finally {
          await db.destroy();
        }
      });
    }
  });
}

test('the metric a2a_discovery_journal_pruned_total counts, per type, what the quotas and the cap cut', async () => {
  const store = await openStateStore('memory', { clock: new VirtualClock({ wallStart: WALL + 1_000_000 }), retention: { journalMaxEvents: 1_000, journalMaxEventsPerType: 30 } });
  const loop = { activeAlerts: [], current: () => undefined, routingOf: () => undefined, snapshots: { retained: () => [] } } as unknown as DiscoveryLoop;
  const cache = { entries: () => Promise.resolve([]), concurrency: { running: 0, peak: 0, waiting: 0 } } as unknown as CardCache;
  const metrics = createMetrics({ events: new EventStream(), cache, loop, store: () => store.status() });
  const scrape = async (): Promise<string[]> => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('a2a_discovery_journal_pruned_total{')).sort();
  try {
    await store.appendEvents(needed());
    assert.deepEqual(await scrape(), [], 'nothing cut yet');
    await churn(store, 500);
    assert.deepEqual(await scrape(), CHURN.map((t) => `a2a_discovery_journal_pruned_total{type="${t}"} ${100 - 30}`).sort());
    await churn(store, 500);
    assert.deepEqual(await scrape(), CHURN.map((t) => `a2a_discovery_journal_pruned_total{type="${t}"} ${200 - 30}`).sort(), 'a counter: it grows with each cut');
  } finally {
    metrics.close();
    await store.close();
  }
});
