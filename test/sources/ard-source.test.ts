/**
 * The ARD source (packages/core/src/sources/ard-source.ts) against a fake ARD registry on loopback
 * (test/registry/fake-ard-registry.ts, the wire shapes of packages/core/src/ard/wire.ts): a full
 * read, page by page, then only the changes through `updated_since` — an add, a change and a
 * removal converge with one request, not a re-read — and full re-reads when the feed is absent
 * or the cursor expired; searches; bounds keep the last good list.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCardFetcher, HostPolicy, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { ardSource } from '../../packages/core/src/sources/ard-source.js';
import type { SourceState } from '../../packages/core/src/sources/types.js';
import { cardEntry, startFakeArdRegistry, type FakeArdRegistry } from '../registry/fake-ard-registry.js';

let fetcher: CardFetcher;
const registries: FakeArdRegistry[] = [];
const fetchers: CardFetcher[] = [];

after(async () => {
  await Promise.all(fetchers.map((f) => f.close()));
  await Promise.all(registries.map((r) => r.close()));
});

/** A fake registry with `n` entries, and `fetcher` set to one whose allowlist names it. */
async function upstream(n: number): Promise<FakeArdRegistry> {
  const r = await startFakeArdRegistry(Array.from({ length: n }, (_, i) => cardEntry(`urn:air:up:agent-${i}`, `Agent ${i}`, `https://agent-${i}.example/card.json`, { description: `agent number ${i}`, tags: ['t'] })));
  registries.push(r);
  fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: [r.url], allowLoopback: true }), maxBodyBytes: 1_048_576 });
  fetchers.push(fetcher);
  return r;
}

const byName = (state: SourceState) => Object.fromEntries(state.records.map((r) => [r.name, r.baseUrl]));
const paths = (r: FakeArdRegistry, from: number) => r.requests.slice(from).map((q) => `${q.method} ${q.path}`);

test('follows the change feed: a full read page by page, then an add, a change and a removal converge without re-reading everything', async () => {
  const up = await upstream(5);
  const source = ardSource({ id: 'up', url: `${up.url}/`, fetcher, pageSize: 2 });
  try {
    let state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.equal(state.records.length, 5);
    assert.deepEqual(paths(up, 0), ['GET /agents?pageSize=2', 'GET /agents?pageSize=2&pageToken=2', 'GET /agents?pageSize=2&pageToken=4']);
    const first = state.records.find((r) => r.name === 'agent-0')!;
    assert.equal(first.baseUrl, 'https://agent-0.example/card.json');
    assert.equal(first.source, 'up');
    assert.deepEqual(first.metadata, { registry: up.url, identifier: 'urn:air:up:agent-0', displayName: 'Agent 0', description: 'agent number 0', tags: 't' });
    assert.equal(source.feed().mode, 'changes');

    // Nothing changed: one request, the same records.
    let mark = up.requests.length;
    state = await source.refresh();
    assert.equal(state.records.length, 5);
    assert.equal(up.requests.length - mark, 1);
    assert.match(up.requests[mark]!.path, /^\/agents\?updated_since=/);

    // An add, a change, a removal upstream.
    up.put(cardEntry('urn:air:up:agent-9', 'Agent 9', 'https://agent-9.example/agents/nine'));
    up.put(cardEntry('urn:air:up:agent-1', 'Agent 1', 'https://agent-1-moved.example/card.json'));
    up.remove('urn:air:up:agent-2');
    mark = up.requests.length;
    state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    // The three changes, two a page: two requests of the feed, none of the list.
    assert.deepEqual(
      paths(up, mark).map((p) => p.replace(/updated_since=c\d+/, 'updated_since=<cursor>')),
      ['GET /agents?updated_since=<cursor>&pageSize=2', 'GET /agents?updated_since=<cursor>&pageSize=2&pageToken=2'],
      'the changes only, not everything again',
    );
    assert.deepEqual(byName(state), {
      'agent-0': 'https://agent-0.example/card.json',
      'agent-1': 'https://agent-1-moved.example/card.json',
      'agent-3': 'https://agent-3.example/card.json',
      'agent-4': 'https://agent-4.example/card.json',
      // A card URL whose path does not end in .json is fetched exactly there.
      'agent-9': 'https://agent-9.example/agents/nine#card',
    });
    assert.equal(source.feed().mode, 'changes');
  } finally {
    await source.close();
  }
});

test('a registry without the change feed is read in full on every refresh', async () => {
  const up = await upstream(3);
  up.feed = false;
  const source = ardSource({ id: 'nofeed', url: up.url, fetcher });
  try {
    await source.refresh();
    up.remove('urn:air:up:agent-0');
    const mark = up.requests.length;
    const state = await source.refresh();
    // The feed is tried once (the registry ignores updated_since: no cursor), then the list is read.
    assert.deepEqual(paths(up, mark).map((p) => p.replace(/updated_since=[^&]+/, 'updated_since=…')), ['GET /agents?updated_since=…&pageSize=100', 'GET /agents?pageSize=100']);
    assert.deepEqual(Object.keys(byName(state)).sort(), ['agent-1', 'agent-2']);
    const again = up.requests.length;
    await source.refresh();
    assert.deepEqual(paths(up, again), ['GET /agents?pageSize=100'], 'known to have no feed: full reads only');
    assert.equal(source.feed().mode, 'full');
  } finally {
    await source.close();
  }
});

test('an expired cursor (410) reads everything again, once', async () => {
  const up = await upstream(2);
  const source = ardSource({ id: 'expired', url: up.url, fetcher });
  try {
    await source.refresh();
    up.put(cardEntry('urn:air:up:agent-7', 'Agent 7', 'https://agent-7.example/card.json'));
    await source.refresh(); // now holds a c<seq> cursor
    up.remove('urn:air:up:agent-0');
    up.forgetBefore = 1_000;
    const mark = up.requests.length;
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(paths(up, mark).map((p) => p.replace(/updated_since=[^&]+/, 'updated_since=…')), ['GET /agents?updated_since=…&pageSize=100', 'GET /agents?pageSize=100']);
    assert.deepEqual(Object.keys(byName(state)).sort(), ['agent-1', 'agent-7']);
  } finally {
    await source.close();
  }
});

test('a search source reads the results of its query with federation none, every page', async () => {
  const up = await upstream(4);
  const source = ardSource({ id: 'search', url: up.url, fetcher, query: 'number 2', filter: { tags: 't' }, pageSize: 1 });
  try {
    const state = await source.refresh();
    assert.deepEqual(Object.keys(byName(state)), ['agent-2']);
    assert.deepEqual(JSON.parse(up.requests[0]!.body), { query: { text: 'number 2', filter: { tags: 't' } }, federation: 'none', pageSize: 1 });
    assert.equal(source.feed().mode, 'search');
  } finally {
    await source.close();
  }
});

test('an inline card without a url is skipped with a problem; bounds fail the refresh and keep the last good list', async () => {
  const up = await upstream(2);
  up.put({ identifier: 'urn:air:up:inline', displayName: 'Inline', type: 'application/a2a-agent-card+json', data: { name: 'x' } });
  const source = ardSource({ id: 'bounded', url: up.url, fetcher, maxEntries: 3 });
  try {
    let state = await source.refresh();
    assert.equal(state.records.length, 2);
    assert.match(state.problems?.[0]?.message ?? '', /inline \(data\) without a url; skipped/);
    up.put(cardEntry('urn:air:up:agent-8', 'Agent 8', 'https://agent-8.example/card.json'));
    state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_CARD_TOO_LARGE');
    assert.match(state.error!.message, /maxEntries=3/);
    assert.equal(state.records.length, 2, 'the last good list is kept');
  } finally {
    await source.close();
  }
});

test('the allowlist refuses a registry it does not name: nothing is requested', async () => {
  const up = await upstream(1);
  const strict = createCardFetcher({ policy: HostPolicy.from({ allow: ['https://registry.example'] }) });
  const source = ardSource({ id: 'refused', url: up.url, fetcher: strict });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_INSECURE_URL');
    assert.equal(up.requests.length, 0);
  } finally {
    await source.close();
    await strict.close();
  }
});

test('bad options are refused, each named', () => {
  fetcher ??= createCardFetcher({ policy: HostPolicy.from({ allow: ['https://registry.example'] }) });
  assert.throws(
    () => ardSource({ id: 'x', url: 'not a url', fetcher, filter: { a: 1 }, pageSize: 500 }),
    (err: Error & { problems?: { path: string }[] }) => {
      assert.deepEqual(err.problems?.map((p) => p.path), ['url', 'filter', 'pageSize']);
      return true;
    },
  );
});

test('a result that is not an entry is passed over with a problem; a registry that never answers fails the refresh at timeoutMs', async () => {
  const odd = await upstream(0);
  odd.answer = () => ({ body: { results: [{ displayName: 'no identifier' }, 'text', cardEntry('urn:air:odd:a', 'A', 'https://a.example/card.json')] } });
  const source = ardSource({ id: 'odd', url: odd.url, fetcher });
  const hanging = await upstream(0);
  hanging.answer = () => 'hang';
  const stuck = ardSource({ id: 'stuck', url: hanging.url, fetcher, timeoutMs: 300 });
  try {
    const state = await source.refresh();
    assert.deepEqual(Object.keys(byName(state)), ['a']);
    assert.match(state.problems?.[0]?.message ?? '', /2 result\(s\) without an identifier string were passed over/);
    const failed = await stuck.refresh();
    assert.equal(failed.ok, false);
    assert.equal(failed.error?.code, 'ERR_FETCH_TIMEOUT');
    assert.match(failed.error!.message, /timeoutMs=300/);
  } finally {
    await Promise.all([source.close(), stuck.close()]);
  }
});

test('a list whose last page carries a cursor starts the feed there', async () => {
  const up = await upstream(3);
  up.listCursor = true;
  const source = ardSource({ id: 'listcursor', url: up.url, fetcher });
  try {
    await source.refresh();
    assert.deepEqual(source.feed(), { mode: 'changes', cursor: 'c3' });
    up.remove('urn:air:up:agent-1');
    const mark = up.requests.length;
    const state = await source.refresh();
    assert.deepEqual(paths(up, mark), ['GET /agents?updated_since=c3&pageSize=100']);
    assert.deepEqual(Object.keys(byName(state)).sort(), ['agent-0', 'agent-2']);
  } finally {
    await source.close();
  }
});

test('ARD 0.91: a urn:ai: entry is read in its urn:air: form, one identifier with a urn:air: entry; a relative identifier is refused with a problem', async () => {
  const r = await startFakeArdRegistry([
    cardEntry('urn:ai:up:agent-a', 'Agent A', 'https://agent-a.example/card.json'),
    cardEntry('URN:AI:up:agent-b', 'Agent B', 'https://agent-b.example/card.json'),
    cardEntry('agents/relative', 'Relative', 'https://relative.example/card.json'),
  ]);
  registries.push(r);
  const f = createCardFetcher({ policy: HostPolicy.from({ allow: [r.url], allowLoopback: true }), maxBodyBytes: 1_048_576 });
  fetchers.push(f);
  const source = ardSource({ id: 'mixed', url: `${r.url}/`, fetcher: f });
  try {
    let state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(state.records.map((x) => [x.name, x.metadata['identifier']]), [['agent-a', 'urn:air:up:agent-a'], ['agent-b', 'urn:air:up:agent-b']]);
    assert.equal(state.problems?.length, 1);
    assert.match(state.problems![0]!.message, /^1 result\(s\) refused: their identifier is a relative reference, e\.g\. "agents\/relative"/);
    // The urn:air: form of agent-a upstream is the same entry: changed, not added.
    r.put(cardEntry('urn:air:up:agent-a', 'Agent A', 'https://agent-a-moved.example/card.json'));
    state = await source.refresh();
    assert.deepEqual(state.records.map((x) => [x.metadata['identifier'], x.baseUrl]).sort(), [['urn:air:up:agent-a', 'https://agent-a-moved.example/card.json'], ['urn:air:up:agent-b', 'https://agent-b.example/card.json']]);
  } finally {
    await source.close();
  }
});
