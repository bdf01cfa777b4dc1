/**
 * The registry's index on its own (packages/service/src/registry/registry-index.ts), over
 * endpoint views and cache entries shaped as the loop and the card cache give them: a changed
 * card re-indexes that entry only, a removed endpoint leaves a tombstone, a card back after its
 * removal drops the tombstone, `maxEntries` bounds the index (the rest counted), and the change
 * feed refuses a cursor older than the tombstones it kept (count and age).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import type { EndpointStatus } from '../../packages/core/src/loop/index.js';
import { RegistryIndex } from '../../packages/service/src/registry/registry-index.js';

/** Endpoints `https://a<i>.example/` with a card each; `version` changes a card's content. */
function world() {
  const statuses = new Map<string, EndpointStatus>();
  const entries = new Map<string, CacheEntry>();
  const put = (i: number, version = '1.0.0', usable = true): void => {
    const baseUrl = `https://a${i}.example/`;
    const sha = `${i}-${version}`;
    const card = { name: `Agent ${i}`, description: `Agent number ${i}.`, version, supportedInterfaces: [], capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [{ id: 's', name: 'Lookup', description: 'Looks things up.', tags: [`t${i}`] }] } as unknown as AgentCardModel;
    entries.set(baseUrl, { baseUrl, cardUrl: `${baseUrl}.well-known/agent-card.json`, card, protocolVersion: '1.0', body: undefined, rawSha256: sha, canonicalSha256: sha, signature: 'unsigned', fetchedAtWall: 1 } as unknown as CacheEntry);
    statuses.set(baseUrl, {
      state: { verdict: 'excluded', reason: 'no need asks for it', since: 0 },
      baseUrl,
      sources: ['registry'],
      names: [`a${i}`],
      proposals: [{ source: 'registry', name: `a${i}`, metadata: {} }],
      admitted: true,
      cache: { usable, canonicalSha256: sha, rawSha256: sha, cardUrl: `${baseUrl}.well-known/agent-card.json`, cardKind: 'public', protocolVersion: '1.0' },
      health: { state: 'healthy' },
    } as unknown as EndpointStatus);
  };
  const remove = (i: number): void => {
    statuses.delete(`https://a${i}.example/`);
    entries.delete(`https://a${i}.example/`);
  };
  let now = 1_000_000;
  const options = {
    loop: { status: () => Promise.resolve([...statuses.values()]), current: () => undefined },
    cache: { peek: (url: string) => Promise.resolve(entries.get(url)) },
    now: () => now,
  };
  return { put, remove, options, tick: (ms: number) => (now += ms), id: (i: number) => `urn:air:a${i}.example:agent:a${i}` };
}

describe('the registry index', () => {
  test('a changed card re-indexes that entry only; a removal leaves a tombstone; a card back drops it', async () => {
    const w = world();
    for (let i = 0; i < 5; i++) w.put(i);
    const index = new RegistryIndex({ ...w.options, maxEntries: 100, maxTombstones: 100, tombstoneTtlMs: 60_000 });
    await index.sync();
    assert.equal(index.stats.entries, 5);
    const g0 = index.generation;
    await index.sync();
    assert.equal(index.generation, g0, 'nothing changed: nothing re-indexed');

    w.tick(1_000);
    w.put(2, '2.0.0');
    w.remove(4);
    await index.sync();
    const changes = (await index.changes({ afterSeq: g0 }, () => true))!;
    assert.deepEqual(changes.map((c) => [c.entry.identifier, c.entry.status ?? 'active']), [[w.id(2), 'active'], [w.id(4), 'deleted']]);
    assert.equal(index.get(w.id(2))?.['version'], '2.0.0');
    const hits = async (text: string): Promise<string[]> => {
      const found = await index.match(text, [], { maxCandidates: 100, overflow: 'refuse' });
      assert.ok(found.ok);
      return found.hits.map((h) => h.identifier);
    };
    assert.deepEqual((await hits('agent')).length, 4);
    assert.deepEqual(await hits('t2'), [w.id(2)], 'the re-indexed entry is found by its new text');

    w.put(4);
    await index.sync();
    assert.equal(index.stats.tombstones, 0, 'back: the tombstone goes');
    assert.equal((await index.changes({ afterSeq: g0 }, () => true))!.find((c) => c.entry.identifier === w.id(4))?.entry.status, undefined);

    w.put(1, '1.0.0', false);
    await index.sync();
    assert.equal(index.get(w.id(1)), undefined, 'a card no longer usable leaves the index');
  });

  test('maxEntries bounds the index; the rest are counted', async () => {
    const w = world();
    for (let i = 0; i < 7; i++) w.put(i);
    const index = new RegistryIndex({ ...w.options, maxEntries: 5, maxTombstones: 100, tombstoneTtlMs: 60_000 });
    await index.sync();
    assert.deepEqual(index.stats, { entries: 5, leftOut: 2, tombstones: 0 });
  });

  test('the change feed refuses a cursor older than the tombstones kept, by count and by age, and a time before the index started', async () => {
    const w = world();
    for (let i = 0; i < 6; i++) w.put(i);
    const index = new RegistryIndex({ ...w.options, maxEntries: 100, maxTombstones: 2, tombstoneTtlMs: 60_000 });
    await index.sync();
    const g0 = index.generation;
    assert.ok(await index.changes({ afterSeq: g0 }, () => true));
    for (const i of [0, 1, 2]) w.remove(i);
    await index.sync();
    assert.equal(index.stats.tombstones, 2, 'only the last two removals are kept');
    assert.equal(await index.changes({ afterSeq: g0 }, () => true), undefined, 'the first removal is forgotten: that cursor has missed it');
    const g1 = index.generation;
    assert.deepEqual(await index.changes({ afterSeq: g1 }, () => true), []);
    assert.equal(await index.changes({ afterTime: index.startedAt - 1 }, () => true), undefined, 'before this index started: removals unknown');

    w.tick(61_000);
    assert.equal(await index.changes({ afterSeq: g1 - 1 }, () => true), undefined, 'the tombstones aged out');
    assert.deepEqual(await index.changes({ afterSeq: g1 }, () => true), [], 'a cursor after them still reads');
  });
});
