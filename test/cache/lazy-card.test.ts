/**
 * A cached entry keeps its card's bytes and holds the parsed model only weakly (issue 29): once
 * nobody uses the model the collector may take it, and `entry.card` builds it again from the
 * bytes. Whatever reads the card sees the same card either way: the same model, the same
 * digests, the same matches and snapshot, the same 0.3 original for ADK, the same JSON the stores
 * persist.
 */
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { CardCache, MemoryCardStore } from '../../packages/core/src/cache/index.js';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import { canonicalCardSha256, checkCard, toAdkCard } from '../../packages/core/src/card/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { Candidate, MatchMemo } from '../../packages/core/src/match/index.js';
import { matchCard, selectAgents, TagVocabulary } from '../../packages/core/src/match/index.js';
import { buildSnapshot, toSnapshotAgents } from '../../packages/core/src/snapshot/index.js';
import { modelSlot } from '../../packages/core/src/cache/cache-entries.js';
import { admitted, record } from '../match/fixtures.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { collect } from '../helpers/collect.js';


let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;
before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000, headersTimeoutMs: 1_000 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

function newCache(clock: VirtualClock, store = new MemoryCardStore()): CardCache {
  return new CardCache({ fetcher, hostPolicy: policy, store, clock, random: () => 1, expiryJitter: 0, backoffJitter: 0, check: { allowLoopback: true } });
}

/** Everything a reader takes from an entry's card, as plain data. */
async function readings(entry: CacheEntry) {
  const card = entry.card;
  const vocabulary = new TagVocabulary([{ tag: 'lazy', description: 'the test tag' }]);
  const agent = {
    localName: 'lazy',
    description: 'd',
    tags: ['lazy'],
    critical: false,
    baseUrl: entry.baseUrl,
    sources: ['static'],
    cardUrl: entry.cardUrl,
    card,
    cardKind: 'public' as const,
    body: entry.body,
    canonicalSha256: entry.canonicalSha256,
    rawSha256: entry.rawSha256,
    protocolVersion: entry.protocolVersion,
    degraded: false,
    stale: false,
  };
  return {
    card: structuredClone(card),
    frozen: Object.isFrozen(card) && Object.isFrozen(card.skills[0]),
    canonicalSha256: canonicalCardSha256(card),
    match: matchCard(card, [{ tag: 'lazy', inputModes: ['text'], outputModes: ['text'] }], vocabulary),
    adk: toAdkCard(card),
    snapshotDigest: buildSnapshot([agent], 1, 0).digest,
    persisted: (JSON.parse(JSON.stringify(entry)) as { card: unknown }).card,
    spread: structuredClone({ ...entry }.card),
  };
}

/** A weak reference to the entry's model as it stands, taken in a function of its own (no strong reference left behind). */
function weakModel(entry: CacheEntry): WeakRef<AgentCardModel> {
  return new WeakRef(entry.card);
}

test('an entry holds its card model weakly: the collector takes it, and entry.card builds the same card from the bytes', async () => {
  const clock = new VirtualClock();
  const store = new MemoryCardStore();
  const cache = newCache(clock, store);
  const ep = fs.endpoint('lazy1', { card: cardFor(fs, 'lazy1', { skills: [{ id: 's', name: 's', description: 'Skill.', tags: ['lazy'] }] }), cacheControl: 'max-age=60' });
  const entry = await cache.get(ep.baseUrl);
  const before = await readings(entry);
  // What the checks gave for these bytes is what the entry reads.
  const checked = await checkCard(entry.body, { hostPolicy: policy, sourceUrl: entry.cardUrl, allowLoopback: true });
  assert.deepEqual(before.card, structuredClone(checked.card));
  assert.equal(before.canonicalSha256, entry.canonicalSha256);
  assert.equal(before.adk.kind === 'adk' && before.adk.source, 'original');
  assert.deepEqual(before.match.satisfied, ['lazy']);
  assert.deepEqual(before.persisted, before.card);
  assert.deepEqual(before.spread, before.card);
  assert.ok(before.frozen);

  const first = weakModel(entry);
  await collect();
  assert.equal(first.deref(), undefined, 'nothing but the entry referred to the model: the collector took it');
  assert.deepEqual(await readings(entry), before, 'the card built again reads exactly as the first');
  // While something holds the model, every read gives that same object.
  const held = entry.card;
  await collect();
  assert.equal(entry.card, held);
  assert.equal(store.get(ep.baseUrl), entry);
  await cache.close();
});

test('revalidated, refreshed with the same bytes and served stale, an entry still holds its model weakly, and reads the same', async () => {
  const clock = new VirtualClock();
  const cache = newCache(clock);
  const ep = fs.endpoint('lazy2', { card: cardFor(fs, 'lazy2'), cacheControl: 'max-age=60' });
  const fetched = await cache.get(ep.baseUrl);
  const before = await readings(fetched);

  const revalidated = await cache.refresh(ep.baseUrl);
  assert.equal(revalidated.lastOutcome, 'revalidated');
  const sameBytes = await cache.refresh(ep.baseUrl, { unconditional: true });
  assert.equal(sameBytes.lastOutcome, 'unchanged');
  ep.set({ mode: 'status', status: 503 });
  const stale = await cache.refresh(ep.baseUrl);
  assert.equal(stale.stale, true);

  for (const [what, entry] of [['revalidated', revalidated], ['same bytes', sameBytes], ['stale', stale]] as const) {
    const model = weakModel(entry);
    await collect();
    assert.equal(model.deref(), undefined, `${what}: the model is held weakly`);
    assert.deepEqual(await readings(entry), before, `${what}: the same card`);
  }
  await cache.close();
});

/** Discovered agents whose cards carry one skill tagged as given (`id: tag`), fetched into a new cache, as selection's candidates. */
async function taggedCandidates(tags: Record<string, string>) {
  const cache = newCache(new VirtualClock());
  const vocabulary = new TagVocabulary([
    { tag: 'lazy', description: 'the test tag' },
    { tag: 'other', description: 'another tag' },
  ]);
  const eps = Object.entries(tags).map(([id, tag]) => fs.endpoint(id, { card: cardFor(fs, id, { skills: [{ id: 's', name: 's', description: 'Skill.', tags: [tag] }] }), cacheControl: 'max-age=60' }));
  const candidates: Candidate[] = [];
  for (const ep of eps) candidates.push({ endpoint: admitted(ep.baseUrl, [record(ep.baseUrl.split('/').at(-2)!, ep.baseUrl, 'static-list')]), entry: await cache.get(ep.baseUrl) });
  return { cache, vocabulary, eps, candidates };
}

test('selection reads the same cards before and after the collector took their models, and builds none again to do so', async () => {
  const { cache, vocabulary, eps, candidates } = await taggedCandidates({ sel1: 'lazy', sel2: 'other', sel3: 'lazy', sel4: 'other' });
  // As the loop selects: a memo across calls, and what the credentials can present (nothing).
  const memo: MatchMemo = new WeakMap();
  const select = () => selectAgents(candidates, { needs: [{ tag: 'lazy' }], vocabulary, memo, presentable: () => [] });
  const view = (s: ReturnType<typeof select>) => ({ verdicts: [...s.verdicts], selected: s.selected.map((a) => a.localName) });
  const first = select();
  const firstDigest = buildSnapshot(toSnapshotAgents(first.selected), 1, 0).digest;
  assert.deepEqual(first.selected.map((a) => a.baseUrl), [eps[0]!.baseUrl, eps[2]!.baseUrl]);

  await collect();
  for (const c of candidates) {
    assert.ok(modelSlot(c.entry) !== undefined, 'the entry holds its model through a slot');
    assert.equal(modelSlot(c.entry)!.ref.deref(), undefined, 'the models were collected');
  }
  const again = select();
  assert.deepEqual(view(again), view(first));
  // The matcher's memo and the facts beside each model answered: no model was built again.
  for (const c of candidates) assert.equal(modelSlot(c.entry)?.ref.deref(), undefined, `${c.endpoint.baseUrl}: no model built again to select`);
  assert.equal(buildSnapshot(toSnapshotAgents(again.selected), 1, 0).digest, firstDigest);
  await cache.close();
});

test('matching a card whose model the collector took builds one that nothing keeps, not even the slot (it would outlive young collections); entry.card still keeps the one it builds', async () => {
  const { cache, vocabulary, eps, candidates } = await taggedCandidates({ pass1: 'lazy', pass2: 'other', pass3: 'lazy' });
  await collect();
  for (const c of candidates) assert.equal(modelSlot(c.entry)!.ref.deref(), undefined, 'the models accepted were collected');
  const memo: MatchMemo = new WeakMap();
  const selected = selectAgents(candidates, { needs: [{ tag: 'lazy' }], vocabulary, memo, presentable: () => [] }).selected;
  assert.deepEqual(selected.map((a) => a.baseUrl), [eps[0]!.baseUrl, eps[2]!.baseUrl], 'each card matched as its bytes say');
  // No collection since: a model the slot kept would still be there.
  for (const c of candidates) assert.equal(modelSlot(c.entry)!.ref.deref(), undefined, `${c.endpoint.baseUrl}: the model built to match is not kept`);
  const card = candidates[0]!.entry.card;
  assert.equal(modelSlot(candidates[0]!.entry)!.ref.deref(), card, 'a reader of entry.card gets a model the slot keeps while it is held');
  assert.equal(candidates[0]!.entry.card, card);
  await cache.close();
});

test('static agents too: selection builds no model again to judge them, their cards tagged or not (a static entry vouches for a card whose skills carry no tag)', async () => {
  const clock = new VirtualClock();
  const cache = newCache(clock);
  const vocabulary = new TagVocabulary([{ tag: 'lazy', description: 'the test tag' }]);
  const eps = [
    fs.endpoint('st1', { card: cardFor(fs, 'st1', { skills: [{ id: 's', name: 's', description: 'Skill.', tags: ['lazy'] }] }), cacheControl: 'max-age=60' }),
    fs.endpoint('st2', { card: cardFor(fs, 'st2', { skills: [{ id: 's', name: 's', description: 'Skill.', tags: [] }] }), cacheControl: 'max-age=60' }),
    fs.endpoint('st3', { card: cardFor(fs, 'st3', { skills: [{ id: 's', name: 's', description: 'Skill.', tags: ['other'] }] }), cacheControl: 'max-age=60' }),
  ];
  const reviewed = eps.map((_, i) => ({ source: 'static', name: `static_${i + 1}`, description: 'Reviewed.', tags: ['lazy'], critical: false }));
  const candidates: Candidate[] = [];
  for (const [i, ep] of eps.entries()) {
    const rec = record(reviewed[i]!.name, ep.baseUrl, 'static', { description: 'Reviewed.', tags: 'lazy', critical: 'false' });
    candidates.push({ endpoint: admitted(ep.baseUrl, [rec]), entry: await cache.get(ep.baseUrl) });
  }
  const memo: MatchMemo = new WeakMap();
  const select = () => selectAgents(candidates, { needs: [{ tag: 'lazy' }], vocabulary, reviewed, memo, presentable: () => [] });
  const view = (s: ReturnType<typeof select>) => ({ verdicts: [...s.verdicts].map(([url, v]) => [url, v.verdict]), selected: s.selected.map((a) => a.localName) });
  const first = select();
  // The tagged card fits, the untagged one is vouched for by its entry, the one tagged otherwise does not fit.
  assert.deepEqual(view(first).selected, ['static_1', 'static_2']);
  await collect();
  for (const c of candidates) assert.equal(modelSlot(c.entry)!.ref.deref(), undefined, 'the models were collected');
  const again = select();
  assert.deepEqual(view(again), view(first));
  for (const c of candidates) assert.equal(modelSlot(c.entry)?.ref.deref(), undefined, `${c.endpoint.baseUrl}: no model built again to select`);
  await cache.close();
});

test('an entry holds its text packed, once for its revalidations and its snapshot agents, and reads back the bytes received', async () => {
  const clock = new VirtualClock();
  const cache = newCache(clock);
  // Text past U+00FF (two- and four-byte UTF-8) in a card long enough to be packed.
  const skills = ['Zürich tariffs', 'Überweisungen', '請求書の照会', 'Emoji 🚀 receipts'].map((name, i) => ({ id: `s${i}`, name, description: `${name}: answers about ${name.toLowerCase()} for the accounts team.`, tags: ['lazy'] }));
  const ep = fs.endpoint('packed', { card: cardFor(fs, 'packed', { description: 'Rechnungen — 請求書 — invoices 🚀', skills }), cacheControl: 'max-age=60' });
  const entry = await cache.get(ep.baseUrl);
  assert.equal(createHash('sha256').update(entry.body, 'utf8').digest('hex'), entry.rawSha256, 'the body is the bytes received');
  assert.ok(entry.body.includes('請求書') && entry.body.includes('🚀'));
  const slot = modelSlot(entry);
  assert.ok(slot !== undefined && slot.size === Buffer.byteLength(entry.body), 'the text is held packed');
  assert.ok(slot.held.length < Buffer.byteLength(entry.body) * 0.8, `${slot.held.length} B held for ${Buffer.byteLength(entry.body)} B`);
  assert.notEqual(Object.getOwnPropertyDescriptor(entry, 'body')?.get, undefined, 'no field of the entry holds the text itself');

  const revalidated = await cache.refresh(ep.baseUrl);
  assert.equal(revalidated.lastOutcome, 'revalidated');
  assert.equal(modelSlot(revalidated), slot, 'a revalidated entry shares the packed text');
  const vocabulary = new TagVocabulary([{ tag: 'lazy', description: 'the test tag' }]);
  const selected = selectAgents([{ endpoint: admitted(ep.baseUrl, [record('packed', ep.baseUrl, 'static-list')]), entry: revalidated }], { needs: [{ tag: 'lazy' }], vocabulary, presentable: () => [] }).selected;
  const [agent] = buildSnapshot(toSnapshotAgents(selected), 1, 0).agents;
  assert.ok(agent !== undefined);
  assert.equal(modelSlot(agent), slot, 'a snapshot agent shares it too');
  assert.equal(agent.body, entry.body);
  assert.equal(JSON.parse(JSON.stringify(agent)).body, entry.body, 'JSON shows the text');
  assert.equal(JSON.stringify(agent.card), JSON.stringify(entry.card));
  await cache.close();
});

test('a published snapshot agent reads the cache’s weakly held model: it keeps none of its own, and reads the same card after the collector took it', async () => {
  const clock = new VirtualClock();
  const cache = newCache(clock);
  const ep = fs.endpoint('snapagent', { card: cardFor(fs, 'snapagent', { skills: [{ id: 's', name: 's', description: 'Skill.', tags: ['lazy'] }] }), cacheControl: 'max-age=60' });
  const entry = await cache.get(ep.baseUrl);
  const vocabulary = new TagVocabulary([{ tag: 'lazy', description: 'the test tag' }]);
  const selected = selectAgents([{ endpoint: admitted(ep.baseUrl, [record('snapagent', ep.baseUrl, 'static-list')]), entry }], { needs: [{ tag: 'lazy' }], vocabulary, presentable: () => [] }).selected;
  assert.equal(selected.length, 1);
  const [agent] = buildSnapshot(toSnapshotAgents(selected), 1, 0).agents;
  assert.ok(agent !== undefined && Object.isFrozen(agent));
  // While a reader holds the model, the agent and the entry answer that same object.
  const { expected, weak } = ((): { expected: string; weak: WeakRef<AgentCardModel> } => {
    const held = agent.card;
    assert.equal(entry.card, held);
    return { expected: JSON.stringify(held), weak: new WeakRef(held) };
  })();
  // Nothing holds the model now but the slot's weak reference: a published agent does not either.
  await collect();
  assert.equal(weak.deref(), undefined, 'the snapshot agent kept the model alive');
  assert.equal(JSON.stringify(agent.card), expected);
  assert.equal(canonicalCardSha256(agent.card), agent.canonicalSha256);
  assert.deepEqual(JSON.parse(JSON.stringify(agent)).card, JSON.parse(expected));
  await cache.close();
});
