/**
 * The staged rollout in the state store, one body run against memory, SQLite and a real
 * PostgreSQL: the leader's rollout state and its candidate snapshot (stored with its cards, neither
 * current nor in the history), kept by pruning while the rollout runs and let go once it ended;
 * each replica's turn figures, dropped when another rollout starts or this one ends. On
 * PostgreSQL: a former leader's rollout write is refused by the fence, and every write is announced
 * to the followers on the publish channel.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { RolloutState } from '../../packages/core/src/rollout/index.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import type { RolloutFiguresRecord } from '../../packages/store/src/index.js';
import type { SqlStateStore } from '../../packages/store/src/sql-state-store.js';
import { entryFor, rawCard } from '../match/fixtures.js';
import { storeEngines } from '../helpers/stores.js';

const billing = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { skills: [{ id: 'invoices', tags: ['billing'] }] }));
const billing2 = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { skills: [{ id: 'refunds', tags: ['billing'] }] }));
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

function state(id: string, candidate: Snapshot, baseline: Snapshot, over: Partial<RolloutState> = {}): RolloutState {
  return {
    id,
    candidate: candidate.digest,
    candidateVersion: candidate.version,
    baseline: baseline.digest,
    changes: [{ localName: 'billing_agent', impact: 'breaking', version: 'v2', reasons: ['skill invoices removed'] }],
    step: 1,
    share: 25,
    startedAt: 1_767_225_600_000,
    stepStartedAt: 1_767_225_700_000,
    status: 'running',
    decisions: [{ at: 1_767_225_600_000, action: 'started', by: 'auto', reason: 'billing_agent: skill invoices removed', step: 0, share: 5 }],
    ...over,
  };
}

const figures = (rollout: string, replica: string, next: number): RolloutFiguresRecord => ({
  rollout,
  replica,
  since: 1_767_225_600_000,
  next,
  digests: ['a'.repeat(64)],
  calls: [
    ['billing_agent', 0, 1, null, 120],
    ['billing_agent', 0, 0, 'http_500', 30],
  ],
});

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'notification', listener: (n: { channel: string; payload?: string }) => void): void;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

for (const engine of storeEngines()) {
  describe(`the staged rollout in the state store (${engine.name})`, { skip: engine.skip }, () => {
    before(() => engine.setup());
    after(() => engine.teardown());

    test('the rollout comes back with its candidate; the candidate is stored whole but is neither current nor in the history', async () => {
      const store = await engine.open();
      const current = snap(1, agent('billing_agent', billing), agent('warranty_agent', warranty));
      const candidate = snap(2, agent('billing_agent', billing2), agent('warranty_agent', warranty));
      await store.publishSnapshot(current);
      assert.equal(await store.rollout(), undefined, 'no rollout before one is written');
      const s = state('r1', candidate, current);
      await store.putRollout(s, candidate);
      const stored = await store.rollout();
      assert.deepEqual(stored?.state, s);
      assert.deepEqual(stored?.candidate, candidate, 'the candidate comes back whole, cards and bytes');
      const loaded = await store.loadSnapshots();
      assert.equal(loaded.current?.digest, current.digest, 'the candidate is not made current');
      assert.deepEqual(
        loaded.history.map((h) => h.digest),
        [current.digest],
        'nor added to the history',
      );
      // A snapshot the caller holds is not read again.
      let asked = '';
      const known = await store.rollout((d) => ((asked = d), candidate));
      assert.equal(asked, candidate.digest);
      assert.equal(known?.candidate, candidate);
      // A later decision of the same candidate: the state moves on.
      await store.putRollout({ ...s, step: 2, share: 100, status: 'promoted', endedAt: 1_767_225_800_000 });
      const ended = await store.rollout();
      assert.equal(ended?.state.status, 'promoted');
      assert.equal(ended?.candidate, undefined, 'an ended rollout has no candidate to follow');
      await store.putRollout(undefined);
      assert.equal(await store.rollout(), undefined);
    });

    test('pruning keeps the candidate while the rollout runs, and lets it go once it ended', async () => {
      const store = await engine.open({ retention: { snapshots: 1 } });
      const s1 = snap(1, agent('billing_agent', billing));
      const candidate = snap(2, agent('billing_agent', billing2));
      const s3 = snap(3, agent('billing_agent', billing), agent('warranty_agent', warranty));
      const s4 = snap(4, agent('warranty_agent', warranty));
      await store.publishSnapshot(s1);
      await store.putRollout(state('r1', candidate, s1), candidate);
      await store.publishSnapshot(s3);
      await store.publishSnapshot(s4);
      const deleted = await store.pruneSnapshots();
      assert.ok(!deleted.includes(candidate.digest), 'the running rollout keeps its candidate');
      assert.ok(deleted.includes(s1.digest));
      assert.deepEqual((await store.rollout())?.candidate, candidate);
      await store.putRollout(state('r1', candidate, s1, { status: 'rolled-back', share: 0, endedAt: 1_767_225_800_000 }));
      assert.ok((await store.pruneSnapshots()).includes(candidate.digest), 'a rolled-back candidate is pruned like any other snapshot');
      assert.equal(await store.getSnapshot(candidate.digest), undefined);
    });

    test("each replica's figures are kept apart, and dropped when another rollout starts or this one ends", async () => {
      const store = await engine.open();
      const s1 = snap(1, agent('billing_agent', billing));
      const candidate = snap(2, agent('billing_agent', billing2));
      await store.putRollout(state('r1', candidate, s1), candidate);
      await store.putRolloutFigures(figures('r1', 'replica-a', 2));
      await store.putRolloutFigures(figures('r1', 'replica-b:a-long-host-name-of-a-pod-in-a-cluster-that-runs-many-replicas:123456', 2));
      await store.putRolloutFigures(figures('r1', 'replica-a', 7));
      const all = (await store.rolloutFigures()).sort((a, b) => (a.replica < b.replica ? -1 : 1));
      assert.deepEqual(
        all.map((f) => [f.replica.slice(0, 9), f.next]),
        [
          ['replica-a', 7],
          ['replica-b', 2],
        ],
        'one record per replica, the latest write',
      );
      assert.deepEqual(all[0], figures('r1', 'replica-a', 7));
      // The same rollout's next decision keeps them.
      await store.putRollout(state('r1', candidate, s1, { step: 2, share: 50 }), candidate);
      assert.equal((await store.rolloutFigures()).length, 2);
      // Another rollout: the last one's figures are gone.
      await store.putRollout(state('r2', candidate, s1), candidate);
      assert.deepEqual(await store.rolloutFigures(), []);
      await store.putRolloutFigures(figures('r2', 'replica-a', 1));
      await store.putRollout(state('r2', candidate, s1, { status: 'promoted', endedAt: 1 }));
      assert.deepEqual(await store.rolloutFigures(), [], 'an ended rollout drops its figures');
    });

    if (engine.name === 'postgres') {
      test("a former leader's rollout write is refused by the fence; the new leader's is announced on the publish channel", async () => {
        const old = (await engine.open()) as SqlStateStore;
        const next = (await engine.open({ reopen: old })) as SqlStateStore;
        const s1 = snap(1, agent('billing_agent', billing));
        const candidate = snap(2, agent('billing_agent', billing2));
        old.fence(await old.takeLeadership('old'));
        await old.putRollout(state('r1', candidate, s1), candidate);
        next.fence(await next.takeLeadership('next'));

        const pg = engine.postgres!;
        const listener = new Client({ host: '127.0.0.1', port: pg.port, user: 'a2a', database: 'postgres' });
        await listener.connect();
        const heard: string[] = [];
        listener.on('notification', (n) => heard.push(n.payload ?? ''));
        await listener.query(`LISTEN "${next.publishChannel}"`);
        try {
          await assert.rejects(old.putRollout(state('r1', candidate, s1, { step: 2, share: 50 }), candidate), (err) => isDiscoveryError(err) && err.code === 'ERR_STORE_FENCED');
          assert.equal((await next.rollout())?.state.step, 1, 'the refused write changed nothing');
          await next.putRollout(state('r1', candidate, s1, { step: 2, share: 50 }), candidate);
          assert.equal((await old.rollout())?.state.step, 2, 'every replica reads the new leader\'s state');
          for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
          assert.deepEqual(heard, ['a2ad:rollout'], 'the followers are told at once');
        } finally {
          await listener.end();
        }
      });
    }
  });
}
