import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot, SnapshotStore, type Snapshot, type SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { entryFor, rawCard } from '../match/fixtures.js';

const entry = entryFor('https://warranty.example.com/', rawCard('https://warranty.example.com'));

function agentNamed(localName: string, hashChar = 'a'): SnapshotAgent {
  return Object.freeze({
    localName,
    description: `Reviewed ${localName}.`,
    tags: ['warranty'],
    critical: false,
    baseUrl: entry.baseUrl,
    sources: ['catalog'],
    card: entry.card,
    canonicalSha256: hashChar.repeat(64),
    rawSha256: entry.rawSha256,
    protocolVersion: entry.protocolVersion,
    degraded: false,
    stale: false,
  });
}

/** Snapshot `version` with agents named after `names`. */
function snap(version: number, ...names: string[]): Snapshot {
  return buildSnapshot(
    names.map((n) => agentNamed(n)),
    version,
    1_700_000_000_000 + version,
  );
}

function storeWithLog(historyLimit?: number) {
  const evicted: number[] = [];
  const store = new SnapshotStore({ ...(historyLimit !== undefined && { historyLimit }), onEvict: (s) => evicted.push(s.version) });
  return { store, evicted };
}

describe('SnapshotStore (P3: drain by reference count)', () => {
  test('a snapshot pinned by two sessions survives B and C and is evicted once, after the second release', () => {
    const { store, evicted } = storeWithLog();
    const A = snap(1, 'billing');
    const B = snap(2, 'billing', 'returns');
    const C = snap(3, 'billing', 'returns', 'warranty');
    store.publish(A);
    assert.equal(store.retain(A.digest), A); // session 1
    assert.equal(store.retain(A.digest), A); // session 2
    assert.equal(store.references(A.digest), 2);

    store.publish(B);
    store.publish(C);
    assert.equal(store.current, C);
    // A is still the very same object for its sessions.
    assert.equal(store.get(A.digest), A);
    // B was never retained: gone as soon as C replaced it.
    assert.equal(store.get(B.digest), undefined);
    assert.deepEqual(evicted, [2]);

    assert.equal(store.release(A.digest), false); // session 1 ends
    assert.equal(store.get(A.digest), A);
    assert.deepEqual(evicted, [2]);

    assert.equal(store.release(A.digest), true); // session 2 ends
    assert.equal(store.get(A.digest), undefined);
    assert.deepEqual(evicted, [2, 1]);

    // Releasing again does nothing and evicts nothing.
    assert.equal(store.release(A.digest), false);
    assert.deepEqual(evicted, [2, 1]);
    assert.equal(store.get(C.digest), C);
  });

  test('the current snapshot is never evicted by a release, only once it is replaced', () => {
    const { store, evicted } = storeWithLog();
    const A = snap(1, 'billing');
    store.publish(A);
    store.retain(A.digest);
    assert.equal(store.release(A.digest), false);
    assert.equal(store.release(A.digest), false); // more releases than retains
    assert.equal(store.get(A.digest), A);
    assert.equal(store.current, A);
    assert.deepEqual(evicted, []);
    store.publish(snap(2, 'billing', 'returns'));
    assert.equal(store.get(A.digest), undefined);
    assert.deepEqual(evicted, [1]);
  });

  test('a new session after B and C is published gets C; retained() lists what is kept with reference counts', () => {
    const { store } = storeWithLog();
    const A = snap(1, 'billing');
    store.publish(A);
    store.retain(A.digest);
    const B = snap(2, 'returns');
    store.publish(B);
    store.retain(B.digest);
    const C = snap(3, 'warranty');
    store.publish(C);
    const newSession = store.retain(store.current!.digest);
    assert.equal(newSession, C);
    assert.deepEqual(store.retained(), [
      { version: 3, digest: C.digest, references: 1, current: true },
      { version: 2, digest: B.digest, references: 1, current: false },
      { version: 1, digest: A.digest, references: 1, current: false },
    ]);
  });

  test('publishing the current digest again keeps it and evicts nothing', () => {
    const { store, evicted } = storeWithLog();
    const A = snap(1, 'billing');
    store.publish(A);
    store.publish(A);
    assert.equal(store.current, A);
    assert.equal(store.get(A.digest), A);
    assert.deepEqual(evicted, []);
  });

  // A digest that is still retained (pinned) can become current again (A → B → A): the store
  // must then serve the newest version under it and mark it current.
  test('re-publishing a digest that is still pinned: retained() still marks exactly one snapshot current', () => {
    const { store } = storeWithLog();
    const A1 = snap(1, 'billing');
    store.publish(A1);
    store.retain(A1.digest);
    store.publish(snap(2, 'billing', 'returns'));
    const A3 = snap(3, 'billing'); // returns left: same agents as A1, same digest
    assert.equal(A3.digest, A1.digest);
    store.publish(A3);
    assert.equal(store.current, A3);
    assert.equal(store.retained().filter((r) => r.current).length, 1, JSON.stringify(store.retained()));
  });

  test('retain() of a digest that is not retained throws ERR_INTERNAL; release() of one returns false', () => {
    const { store } = storeWithLog();
    const A = snap(1, 'billing');
    assert.throws(
      () => store.retain(A.digest),
      (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_INTERNAL',
    );
    store.publish(A);
    store.publish(snap(2, 'returns'));
    assert.throws(() => store.retain(A.digest), /not retained/);
    assert.equal(store.release(A.digest), false);
    assert.equal(store.references(A.digest), 0);
  });
});

describe('SnapshotStore history', () => {
  test('keeps every published version in order, with digests and agent names, even after eviction', () => {
    const { store } = storeWithLog();
    const published = [snap(1, 'billing'), snap(2, 'billing', 'returns'), snap(3, 'warranty')];
    for (const s of published) store.publish(s);
    assert.deepEqual(
      store.history(),
      published.map((s) => ({ version: s.version, digest: s.digest, createdAt: s.createdAt, agents: s.agents.map((a) => a.localName) })),
    );
    // The evicted versions are still in the history.
    assert.equal(store.get(published[0]!.digest), undefined);
    // history() is a copy: changing it does not change the store.
    (store.history() as unknown[]).length = 0;
    assert.equal(store.history().length, 3);
  });

  test('is bounded by historyLimit, dropping the oldest first', () => {
    const { store } = storeWithLog(3);
    for (let v = 1; v <= 7; v++) store.publish(snap(v, `agent_${v}`));
    assert.deepEqual(
      store.history().map((h) => h.version),
      [5, 6, 7],
    );
    const unbounded = new SnapshotStore();
    for (let v = 1; v <= 250; v++) unbounded.publish(snap(v, `agent_${v}`));
    assert.equal(unbounded.history().length, 200);
    assert.equal(unbounded.history()[0]!.version, 51);
  });
});
