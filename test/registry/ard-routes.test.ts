/**
 * The registry routes' own bounds (packages/service/src/registry/routes.ts) on a bare app over
 * a real index of 1,100 cards: a search pages through its best 1,000 results at most; a page
 * token expires after `pageTokenTtlMs`; past `maxPinnedSearches` the oldest search's token no
 * longer continues; the federation hook receives the request and the local answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import type { EndpointStatus } from '../../packages/core/src/loop/index.js';
import type { ArdSearchRequest, ArdSearchResponse } from '../../packages/core/src/ard/wire.js';
import { DEFAULT_REGISTRY_SETTINGS } from '../../packages/core/src/config/index.js';
import { RegistryIndex } from '../../packages/service/src/registry/registry-index.js';
import { mountRegistry, type Federate } from '../../packages/service/src/registry/routes.js';

const N = 1_100;

function fixture(): { loop: ConstructorParameters<typeof RegistryIndex>[0]['loop']; cache: ConstructorParameters<typeof RegistryIndex>[0]['cache'] } {
  const statuses: EndpointStatus[] = [];
  const entries = new Map<string, CacheEntry>();
  for (let i = 0; i < N; i++) {
    const baseUrl = `https://a${i}.example/`;
    const card = { name: `Agent ${i}`, description: 'An agent.', version: '1', supportedInterfaces: [], capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] } as unknown as AgentCardModel;
    entries.set(baseUrl, { baseUrl, cardUrl: `${baseUrl}.well-known/agent-card.json`, card, protocolVersion: '1.0', rawSha256: `${i}`, canonicalSha256: `${i}`, fetchedAtWall: 1 } as unknown as CacheEntry);
    statuses.push({ state: { verdict: 'excluded', reason: 'x', since: 0 }, baseUrl, sources: ['r'], names: [`a${i}`], proposals: [], admitted: true, cache: { usable: true, canonicalSha256: `${i}`, rawSha256: `${i}` } } as unknown as EndpointStatus);
  }
  return { loop: { status: () => Promise.resolve(statuses), current: () => undefined }, cache: { peek: (url) => Promise.resolve(entries.get(url)) } };
}

function app(settings: Partial<typeof DEFAULT_REGISTRY_SETTINGS>, now: () => number, federate?: Federate, refused: string[] = []): Hono {
  const a = new Hono();
  const index = new RegistryIndex({ ...fixture(), maxEntries: 10_000, maxTombstones: 10, tombstoneTtlMs: 60_000 });
  mountRegistry(a, { index, settings: { ...DEFAULT_REGISTRY_SETTINGS, ...settings }, now, onRefusal: (r) => refused.push(r), ...(federate && { federate }) });
  return a;
}

async function search(a: Hono, body: unknown): Promise<{ status: number; json: ArdSearchResponse & { errorCode?: string; message?: string } }> {
  const r = await a.request('http://registry.test/api/registry/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as never };
}

describe('the registry routes\' bounds', () => {
  test('a search pages through its best 1,000 results at most, each once', async () => {
    const a = app({}, Date.now);
    const seen = new Set<string>();
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await search(a, { query: { text: 'agent' }, pageSize: 100, federation: 'none', ...(token && { pageToken: token }) });
      assert.equal(r.status, 200);
      for (const e of r.json.results) seen.add(e.identifier);
      token = r.json.pageToken;
      pages++;
    } while (token !== undefined && pages < 20);
    assert.equal(pages, 10);
    assert.equal(seen.size, 1_000, `${N} entries match; a search pins its best 1,000`);
  });

  test('a page token expires after pageTokenTtlMs; past maxPinnedSearches the oldest search no longer continues', async () => {
    let now = 1_000_000;
    const a = app({ pageTokenTtlMs: 5_000, maxPinnedSearches: 2 }, () => now);
    const first = await search(a, { query: { text: 'agent' }, federation: 'none' });
    now += 6_000;
    const late = await search(a, { query: { text: 'agent' }, federation: 'none', pageToken: first.json.pageToken });
    assert.equal(late.status, 400);
    assert.match(late.json.message!, /expired \(server\.registry\.pageTokenTtlMs\)/);

    const one = await search(a, { query: { text: 'agent' }, federation: 'none' });
    await search(a, { query: { text: 'agent' }, federation: 'none' });
    await search(a, { query: { text: 'agent' }, federation: 'none' });
    const dropped = await search(a, { query: { text: 'agent' }, federation: 'none', pageToken: one.json.pageToken });
    assert.equal(dropped.status, 400);
    assert.match(dropped.json.message!, /no longer held \(server\.registry\.pageTokenTtlMs, maxPinnedSearches\)/);
  });

  test('federation: none answers locally; otherwise the hook gets the request and the local answer', async () => {
    const calls: { request: ArdSearchRequest; local: ArdSearchResponse }[] = [];
    const a = app({}, Date.now, (request, local) => {
      calls.push({ request, local });
      return Promise.resolve({ ...local, referrals: [{ identifier: 'urn:air:peer.example:registry:main', displayName: 'Peer', type: 'application/ai-registry+json', url: 'https://peer.example/api/registry/' }] });
    });
    const none = await search(a, { query: { text: 'agent 7' }, federation: 'none' });
    assert.equal(none.json.referrals, undefined);
    assert.equal(calls.length, 0);
    const referred = await search(a, { query: { text: 'agent 7' }, federation: 'referrals', pageSize: 3 });
    assert.equal(referred.json.referrals?.[0]?.url, 'https://peer.example/api/registry/');
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.request, { query: { text: 'agent 7' }, federation: 'referrals', pageSize: 3 });
    assert.equal(calls[0]!.local.results.length, 3);
    await search(a, { query: { text: 'agent 7' } });
    assert.equal(calls[1]!.request.federation, 'auto', 'the spec\'s default');
  });

  test('bounded work per request: distinct terms (maxQueryTerms), candidates (maxCandidates); each refusal names its key and is counted', async () => {
    const refused: string[] = [];
    const a = app({ maxQueryTerms: 4, maxCandidates: 100 }, Date.now, undefined, refused);
    const many = await search(a, { query: { text: 'a b c d e a b' }, federation: 'none' });
    assert.equal(many.status, 400);
    assert.match(many.json.message!, /5 distinct terms; at most 4 .*server\.registry\.maxQueryTerms/);
    const repeated = await search(a, { query: { text: Array(25).fill('Agent agent AGENT').join(' ') }, federation: 'none' });
    assert.equal(repeated.status, 200, 'one distinct term, however often it is repeated');
    // 1,100 entries match "agent": a search keeps its best 100 candidates.
    const seen = new Set<string>();
    let token: string | undefined;
    do {
      const r = await search(a, { query: { text: 'agent' }, pageSize: 100, federation: 'none', ...(token && { pageToken: token }) });
      assert.equal(r.status, 200);
      for (const e of r.json.results) seen.add(e.identifier);
      token = r.json.pageToken;
    } while (token !== undefined);
    assert.equal(seen.size, 100);
    // An explore over more than maxCandidates entries would count a part: refused.
    const r = await a.request('http://registry.test/api/registry/explore', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resultType: { facets: [{ field: 'type' }] } }) });
    assert.equal(r.status, 400);
    const body = (await r.json()) as { errorCode: string; message: string };
    assert.equal(body.errorCode, 'INVALID_ARGUMENT');
    assert.match(body.message, /matches 1100 entries; explore counts at most 100 \(server\.registry\.maxCandidates\)/);
    // The repeated-term search and the paged one kept their best 100 (counted as cuts), the explore was refused.
    assert.deepEqual(refused, ['registry_terms', 'registry_candidates', 'registry_candidates', 'registry_candidates']);
  });

  test('typed parameters: pageSize "10" in a body, or pageSize=10abc in a query, is a 400 naming pageSize', async () => {
    const a = app({}, Date.now);
    const typed = await search(a, { query: { text: 'agent' }, pageSize: '10', federation: 'none' });
    assert.equal(typed.status, 400);
    assert.match(typed.json.message!, /^pageSize must be a positive integer \(a JSON number\), not a string/);
    for (const bad of [true, null, [10], 1.5]) assert.equal((await search(a, { query: { text: 'agent' }, pageSize: bad, federation: 'none' })).status, 400, JSON.stringify(bad));
    assert.equal((await search(a, { query: { text: 'agent' }, pageSize: 10, federation: 'none' })).status, 200);
    for (const q of ['10abc', '-1', '1e1', '', ' 10']) {
      const r = await a.request(`http://registry.test/api/registry/agents?pageSize=${encodeURIComponent(q)}`);
      assert.equal(r.status, 400, q);
      assert.match(((await r.json()) as { message: string }).message, /^pageSize must be a positive integer/);
    }
    assert.equal((await a.request('http://registry.test/api/registry/agents?pageSize=10')).status, 200);
  });
});

describe('GET /api/registry/agents/{identifier} (ARD 0.91)', () => {
  const get = async (a: Hono, identifier: string) => {
    const r = await a.request(`http://registry.test/api/registry/agents/${encodeURIComponent(identifier)}`);
    return { status: r.status, type: r.headers.get('content-type'), json: (await r.json()) as Record<string, unknown> };
  };

  test('one entry by its URL-encoded identifier, by its urn:air: and its urn:ai: form; 404 NOT_FOUND otherwise; an overlong identifier is a 400', async () => {
    const a = app({}, Date.now);
    const air = await get(a, 'urn:air:a7.example:agent:a7');
    assert.equal(air.status, 200, JSON.stringify(air.json));
    assert.equal(air.json['identifier'], 'urn:air:a7.example:agent:a7');
    assert.equal(air.json['displayName'], 'Agent 7');
    const ai = await get(a, 'urn:ai:a7.example:agent:a7');
    assert.equal(ai.status, 200);
    assert.deepEqual(ai.json, air.json, 'urn:ai: and urn:air: are one identifier');
    const missing = await get(a, 'urn:air:a7.example:agent:nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.type, 'application/problem+json');
    assert.equal(missing.json['errorCode'], 'NOT_FOUND', 'ARD\'s error shape');
    assert.deepEqual([missing.json['status'], missing.json['title'], missing.json['detail']], [404, 'Not Found', missing.json['message']], 'a problem (RFC 9457)');
    assert.match(String(missing.json['message']), /no entry with the identifier "urn:air:a7\.example:agent:nobody"/);
    const long = await get(a, `urn:air:a.example:agent:${'x'.repeat(1_100)}`);
    assert.equal(long.status, 400);
    assert.match(String(long.json['message']), /at most 1024 are accepted/);
  });
});
