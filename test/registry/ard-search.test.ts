/**
 * The ARD registry API (`/api/registry/search`, `/explore`, `/agents`; docs/registry-api.md)
 * on a real service over real loopback A2A peers (ADK JS toA2a, A2A 0.3; @a2a-js/sdk 1.x, A2A
 * 1.0): every admitted card indexed (snapshot agents as the service's AI Catalog names them,
 * others from their card), with what we verified; filters; paging whose order holds across a
 * publication; facets; the list and its change feed converging after an add, a change and a
 * removal; every limit answered with the ARD error shape. The spec's own request and response
 * examples (test/registry/fixtures/, copied from spec/ard.md) are sent and compared.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { A2A_CARD_MEDIA_TYPE } from '../../packages/core/src/catalog/index.js';
import { VERIFIED_EXTENSION } from '../../packages/core/src/ard/wire.js';
import type { ArdChangesResponse, ArdExploreResponse, ArdSearchResponse, ArdSearchResult, ArdVerified } from '../../packages/core/src/ard/wire.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { buildAiCatalog } from '../../packages/service/src/http/routes/ai-catalog.js';
import { ownIdentifier } from '../../packages/service/src/registry/entry.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { listSource, type ListSource } from '../helpers/list-source.js';
import { metric, request, type Reply } from '../helpers/raw-http.js';

type V1Peer = Awaited<ReturnType<typeof startV1CardServer>>;
let billing: RunningPeer;
let warranty: V1Peer;
let shipping: V1Peer;
let returns: V1Peer;

before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1CardServer({ card: (port) => v1Card(port), maxAgeSeconds: 0 });
  shipping = await startV1CardServer({ card: (port) => v1Card(port, { name: 'Shipping Agent', skills: [{ id: 'track', name: 'Track', description: 'Tracks parcels.', tags: ['shipping'] }] }) });
  returns = await startV1CardServer({ card: (port) => v1Card(port, { name: 'Returns Agent', skills: [{ id: 'returns', name: 'Returns', description: 'Handles product returns.', tags: ['returns'] }] }) });
});
after(async () => {
  await Promise.all([billing?.close(), warranty?.close(), shipping?.close(), returns?.close()]);
});

/** Two reviewed agents (a base URL, a card URL); a partners source whose records the tests set (returns is needed, shipping is not). */
function service(partners: ListSource, extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  const v1 = [warranty, shipping, returns];
  return startService({
    port: 0,
    credentials: (origin) => (v1.some((p) => new URL(p.baseUrl).origin === origin) ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [billing, ...v1].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'warranty', description: 'Warranty status.' },
      { tag: 'returns', description: 'Product returns.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }, { tag: 'returns' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    extraSources: [partners],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const post = (s: RunningService, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  request(s.url, 'POST', `/api/registry/${path}`, { ...JSON_TYPE, ...headers }, typeof body === 'string' ? body : JSON.stringify(body));
const getAgents = (s: RunningService, query = '', headers: Record<string, string> = {}): Promise<Reply> => request(s.url, 'GET', `/api/registry/agents${query}`, headers);

async function search(s: RunningService, body: unknown): Promise<ArdSearchResponse> {
  const r = await post(s, 'search', body);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as ArdSearchResponse;
}
const verified = (e: ArdSearchResult): ArdVerified => e.extensions![VERIFIED_EXTENSION] as ArdVerified;
const ids = (results: readonly ArdSearchResult[]): string[] => results.map((e) => e.identifier);

/** The AI Catalog's identifier of a snapshot agent: the registry must name it the same way. */
function catalogIdentifier(s: RunningService, localName: string): string {
  const entries = buildAiCatalog(s.loop.current()!, { hostName: 'x' })['entries'] as { identifier: string; displayName: string }[];
  return entries.find((e) => e.displayName === localName)!.identifier;
}

/** An ARD error answer: its status, `error.code`, and a message naming `mentions`. */
function assertArdError(r: Reply, status: number, code: string, mentions: RegExp): void {
  assert.equal(r.status, status, r.body);
  // ARD's Error (the OpenAPI schema): an upper-case errorCode and a message, nothing else.
  const body = JSON.parse(r.body) as { errorCode: string; message: string };
  assert.deepEqual(Object.keys(body).sort(), ['errorCode', 'message']);
  assert.equal(body.errorCode, code);
  assert.match(body.message, mentions);
}

describe('the ARD registry API over every admitted card', () => {
  let s: RunningService;
  let partners: ListSource;

  before(async () => {
    partners = listSource('partners');
    partners.set([{ name: 'shipping', baseUrl: shipping.baseUrl }]);
    s = await service(partners);
  });
  after(async () => {
    await s?.close();
  });

  test('{"query":{"text":"warranty"}} answers the warranty agent first, named as our AI Catalog names it, with provenance, health and signature status', async () => {
    const snapshot = s.loop.current()!;
    assert.deepEqual(snapshot.agents.map((a) => a.localName), ['billing_agent', 'warranty_agent']);
    const r = await search(s, { query: { text: 'warranty' } });
    const top = r.results[0]!;
    assert.equal(top.identifier, catalogIdentifier(s, 'warranty_agent'), 'the identifier of the service\'s own AI Catalog');
    assert.equal(top.displayName, 'warranty_agent');
    assert.equal(top.type, A2A_CARD_MEDIA_TYPE);
    assert.equal(top.url, warranty.cardUrl);
    assert.equal(top.description, 'Answers warranty questions.', 'the reviewed description, as in the catalog');
    assert.equal(top['version'], '2.1.0');
    assert.equal(top.score, 100, 'the best match scores 100 (relevance only)');
    assert.equal(top.source, `${s.url}/api/registry/`);
    assert.ok(Date.parse(top.updatedAt!) > 0);
    const v = verified(top);
    assert.equal(v.inSnapshot, true);
    assert.equal(v.localName, 'warranty_agent');
    assert.equal(v.verdict, 'selected');
    assert.equal(v.reason, undefined, 'a selected agent\'s reason ("in snapshot v1") would change it at every publication');
    assert.equal(v.health, 'healthy');
    assert.equal(v.signature, 'unsigned', 'the card carries no signature, and the registry says so');
    assert.equal(v.protocolVersion, '1.0');
    assert.equal(v.cardKind, 'public');
    assert.equal(v.endpoint, warranty.baseUrl, 'the endpoint key (a card URL at the well-known path is keyed by its base)');
    assert.deepEqual(v.provenance, [{ source: 'static', name: 'warranty_agent' }]);
    assert.deepEqual(v.inputModes, ['text/plain']);
    assert.equal(v.provider, 'Example Hardware');
    assert.deepEqual(r.referrals ?? [], [], 'federation defaults to auto; with no registry known, nothing is referred');
    assert.ok(!ids(r.results).includes(catalogIdentifier(s, 'billing_agent')), 'billing does not match "warranty"');
  });

  test('an admitted card outside the snapshot is indexed too, named from its endpoint and its source\'s name, described by its card', async () => {
    const r = await search(s, { query: { text: 'parcels' } });
    assert.equal(r.results.length, 1, JSON.stringify(r.results));
    const e = r.results[0]!;
    assert.equal(e.identifier, ownIdentifier(shipping.baseUrl, 'shipping'));
    assert.equal(e.displayName, 'Shipping Agent', 'the card\'s name');
    assert.deepEqual(e.tags, ['shipping'], 'its skills\' tags');
    const v = verified(e);
    assert.equal(v.inSnapshot, false);
    assert.equal(v.localName, undefined);
    assert.deepEqual(v.provenance, [{ source: 'partners', name: 'shipping' }]);
    assert.equal(v.health, 'healthy');
  });

  test('filters narrow: OR within a key, AND across keys, the verified extension by its short and its full path; an unknown key is a 400', async () => {
    const all = await search(s, { query: { text: 'agent' }, pageSize: 100 });
    assert.equal(all.results.length, 3);
    const narrowed = async (filter: Record<string, unknown>): Promise<string[]> => ids((await search(s, { query: { text: 'agent', filter }, pageSize: 100 })).results).sort();
    const [b, w, sh] = [catalogIdentifier(s, 'billing_agent'), catalogIdentifier(s, 'warranty_agent'), ownIdentifier(shipping.baseUrl, 'shipping')];
    assert.deepEqual(await narrowed({ 'verified.inSnapshot': [true] }), [b, w].sort());
    assert.deepEqual(await narrowed({ [`extensions.${VERIFIED_EXTENSION}.inSnapshot`]: false }), [sh], 'the full path, through the dotted extension key; a bare scalar');
    assert.deepEqual(await narrowed({ tags: ['shipping'] }), [sh]);
    assert.deepEqual(await narrowed({ tags: ['warranty', 'billing'] }), [b, w].sort(), 'OR within a key');
    assert.deepEqual(await narrowed({ tags: ['warranty', 'billing'], 'verified.inputModes': ['text/plain'] }), [w], 'AND across keys (billing\'s mode is "text")');
    assert.deepEqual(await narrowed({ 'verified.protocolVersion': ['0.3'] }), [b]);
    assert.deepEqual(await narrowed({ 'verified.source': ['partners'] }), [sh]);
    assert.deepEqual(await narrowed({ 'verified.provider': ['example hardware'], 'verified.health': ['healthy'], 'verified.signature': ['unsigned'] }), [sh, w].sort(), 'case-insensitive values');
    assert.deepEqual(await narrowed({ publisher: ['127.0.0.1'], type: [A2A_CARD_MEDIA_TYPE] }), [b, w, sh].sort());
    assertArdError(await post(s, 'search', { query: { text: 'agent', filter: { 'colour.hue': ['red'] } } }), 400, 'INVALID_ARGUMENT', /not a field this registry filters on/);
    assertArdError(await post(s, 'search', { query: { filter: { tags: ['x'] } } }), 400, 'INVALID_ARGUMENT', /query\.text is required/);
  });

  test('explore: facets with counts over the matched set, limit and otherCount, minCount', async () => {
    const r = await post(s, 'explore', { query: { text: 'agent' }, resultType: { facets: [{ field: 'verified.inSnapshot' }, { field: 'tags', limit: 1 }, { field: 'verified.protocolVersion', minCount: 2 }] } });
    assert.equal(r.status, 200, r.body);
    const body = JSON.parse(r.body) as ArdExploreResponse;
    assert.equal(body.resultType, 'facets');
    assert.deepEqual(body.facets['verified.inSnapshot'], { buckets: [{ value: 'true', count: 2 }, { value: 'false', count: 1 }] });
    assert.deepEqual(body.facets['tags'], { buckets: [{ value: 'billing', count: 1 }], otherCount: 2 }, 'ties by value; the rest counted');
    assert.deepEqual(body.facets['verified.protocolVersion'], { buckets: [{ value: '1.0', count: 2 }] }, 'the 0.3 bucket (1) is under minCount');
    const whole = JSON.parse((await post(s, 'explore', { resultType: { facets: [{ field: 'type' }] } })).body) as ArdExploreResponse;
    assert.deepEqual(whole.facets['type'], { buckets: [{ value: A2A_CARD_MEDIA_TYPE, count: 3 }] }, 'without a query: the whole registry');
  });

  test('the list by identifier, then the change feed: a mirror converges after an add, a change and a removal, reading only what changed', async () => {
    // The mirror reads everything once, two at a time; the last page gives the cursor.
    const mirror = new Map<string, ArdSearchResult>();
    let page = JSON.parse((await getAgents(s, '?pageSize=2')).body) as ArdChangesResponse;
    const order: string[] = [];
    for (let i = 0; i < 10; i++) {
      for (const e of page.items) {
        mirror.set(e.identifier, e);
        order.push(e.identifier);
      }
      if (page.pageToken === undefined) break;
      page = JSON.parse((await getAgents(s, `?pageSize=2&pageToken=${encodeURIComponent(page.pageToken)}`)).body) as ArdChangesResponse;
    }
    assert.deepEqual(order, [...order].sort(), 'in identifier order');
    assert.equal(mirror.size, 3);
    const cursor = page.cursor!;
    assert.ok(cursor, 'the last page carries a cursor');

    const t0 = new Date().toISOString();
    // Add (returns, needed: it enters the snapshot), change (warranty's card), remove (shipping).
    warranty.setCard((port) => v1Card(port, { description: 'Answers warranty and repair questions.' }));
    partners.set([{ name: 'returns', baseUrl: returns.baseUrl }]);
    const before = s.loop.current()!.digest;
    assert.notEqual((await s.loop.refreshNow())!.digest, before, 'a new snapshot was published');

    const changes = JSON.parse((await getAgents(s, `?updated_since=${encodeURIComponent(cursor)}`)).body) as ArdChangesResponse;
    const byId = new Map(changes.items.map((e) => [e.identifier, e]));
    assert.equal(byId.get(ownIdentifier(shipping.baseUrl, 'shipping'))?.status, 'deleted', 'the removal, as a tombstone');
    assert.equal(byId.get(catalogIdentifier(s, 'returns'))?.status, 'active', 'the addition');
    assert.equal(byId.get(catalogIdentifier(s, 'warranty_agent'))?.status, 'active', 'the change');
    assert.ok(!byId.has(catalogIdentifier(s, 'billing_agent')), 'an unchanged entry is not sent again');
    assert.ok(changes.cursor);
    for (const e of changes.items) {
      if (e.status === 'deleted') mirror.delete(e.identifier);
      else {
        const { status: _status, ...entry } = e;
        mirror.set(e.identifier, entry as ArdSearchResult);
      }
    }
    const now = JSON.parse((await getAgents(s, '?pageSize=100')).body) as ArdChangesResponse;
    assert.deepEqual(new Map(now.items.map((e) => [e.identifier, e])), mirror, 'the mirror holds exactly what the registry lists');
    assert.match(verified(mirror.get(catalogIdentifier(s, 'warranty_agent'))!).cardChangedAt!, /^\d{4}-/);

    const quiet = JSON.parse((await getAgents(s, `?updated_since=${encodeURIComponent(changes.cursor!)}`)).body) as ArdChangesResponse;
    assert.deepEqual(quiet.items, [], 'nothing changed since: nothing is read');
    // The spec's own spelling (Appendix A) reads the same feed by time.
    const byTime = JSON.parse((await getAgents(s, `?filter=${encodeURIComponent(`updatedAfter:${t0}`)}`)).body) as ArdChangesResponse;
    assert.deepEqual(new Set(ids(byTime.items)), new Set(byId.keys()), 'the same changes');
    // A cursor another run of the registry gave, or a time before this one started: read everything again.
    assertArdError(await getAgents(s, '?updated_since=AAAAAAAAAAAA.3'), 410, 'CURSOR_EXPIRED', /read everything again/);
    assertArdError(await getAgents(s, '?updated_since=2001-01-01T00:00:00Z'), 410, 'CURSOR_EXPIRED', /read everything again/);
  });

  test('paging is stable across a publication: page 1, a new snapshot, the next pages — no duplicate, no skip, the first page\'s order', async () => {
    const ref = ids((await search(s, { query: { text: 'agent' }, pageSize: 100 })).results);
    assert.equal(ref.length, 3);
    const first = await search(s, { query: { text: 'agent' }, pageSize: 1 });
    assert.deepEqual(ids(first.results), ref.slice(0, 1));
    assert.ok(first.pageToken);

    // A publication between pages: shipping comes back (a new entry), returns leaves the snapshot (removed).
    partners.set([{ name: 'shipping', baseUrl: shipping.baseUrl }]);
    const before = s.loop.current()!.digest;
    assert.notEqual((await s.loop.refreshNow())!.digest, before, 'a new snapshot was published');
    const fresh = ids((await search(s, { query: { text: 'agent' }, pageSize: 100 })).results);
    assert.ok(fresh.includes(ownIdentifier(shipping.baseUrl, 'shipping')) && !fresh.includes(catalogIdentifier(s, 'warranty_agent') + 'x'));

    const seen = [...ids(first.results)];
    let token: string | undefined = first.pageToken;
    for (let i = 0; i < 10 && token !== undefined; i++) {
      const next = await search(s, { query: { text: 'agent' }, pageSize: 1, pageToken: token });
      seen.push(...ids(next.results));
      token = next.pageToken;
    }
    assert.equal(token, undefined, 'the pages end');
    assert.equal(new Set(seen).size, seen.length, 'no duplicate');
    assert.deepEqual(seen, ref.filter((id) => fresh.includes(id)), 'every entry still present, in the first page\'s order; the removed one left out');
  });

  test('bounds: text length, page size, body size, filter size, facets, page tokens — each a clear ARD error, counted', async () => {
    assertArdError(await post(s, 'search', { query: { text: 'x'.repeat(513) } }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxTextLength/);
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="registry_text"'), 1);
    assertArdError(await post(s, 'search', { query: { text: 'agent' }, pageSize: 101 }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxPageSize/);
    assertArdError(await post(s, 'search', { query: { text: 'agent' }, pageSize: 0 }), 400, 'INVALID_ARGUMENT', /positive integer/);
    assertArdError(await getAgents(s, '?pageSize=500'), 400, 'INVALID_ARGUMENT', /server\.registry\.maxPageSize/);
    assertArdError(await post(s, 'search', { query: { text: 'agent', pad: 'x'.repeat(17_000) } }), 413, 'INVALID_ARGUMENT', /server\.registry\.maxBodyBytes/);
    const keys = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`metadata.k${i}`, ['v']]));
    assertArdError(await post(s, 'search', { query: { text: 'agent', filter: keys } }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxFilterKeys/);
    assertArdError(await post(s, 'search', { query: { text: 'agent', filter: { tags: Array.from({ length: 65 }, (_, i) => `t${i}`) } } }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxFilterValues/);
    const facets = Array.from({ length: 17 }, () => ({ field: 'type' }));
    assertArdError(await post(s, 'explore', { resultType: { facets } }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxFacets/);
    const page = await search(s, { query: { text: 'agent' }, pageSize: 1 });
    const [payload, mac] = page.pageToken!.split('.');
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), o: 0 })).toString('base64url')}.${mac}`;
    assertArdError(await post(s, 'search', { query: { text: 'agent' }, pageToken: forged }), 400, 'INVALID_ARGUMENT', /not one this registry issued/);
    assertArdError(await post(s, 'search', { query: { text: 'billing' }, pageToken: page.pageToken }), 400, 'INVALID_ARGUMENT', /another request/);
    assertArdError(await post(s, 'search', { query: { text: 'agent' }, pageToken: 'x'.repeat(600) }), 400, 'INVALID_ARGUMENT', /server\.registry\.maxPageTokenBytes/);
    assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="registry_page_token"')) >= 3);
    assertArdError(await getAgents(s, `?filter=${encodeURIComponent('colour:red')}`), 400, 'INVALID_ARGUMENT', /displayName, type, publisherId/);
  });

  test('the spec\'s own examples (spec/ard.md, copied into fixtures) are answered in the spec\'s shapes', async () => {
    const fixture = async (name: string): Promise<{ source: string; document: Record<string, unknown> }> => JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as never;
    const shapeOf = (v: Record<string, unknown>, keys: readonly string[]): Record<string, string> => Object.fromEntries(keys.map((k) => [k, typeof v[k]]));

    // §7.2: the search request (filter by type, referrals, pageSize 5); its response's members, typed alike.
    const req = await fixture('search-request');
    assert.match(req.source, /spec\/ard\.md §7\.2/);
    const res = await search(s, req.document);
    const example = ((await fixture('search-response')).document['results'] as Record<string, unknown>[])[0]!;
    const keys = Object.keys(example);
    assert.ok(res.results.length > 0 && res.results.length <= 5);
    for (const r of res.results) assert.deepEqual(shapeOf(r, keys), shapeOf(example, keys));
    assert.ok(Array.isArray(res.referrals));
    // §8: referrals mode; §7.1: the query model's filter on trustManifest (we hold no trust manifests: nothing matches).
    assert.ok(Array.isArray((await search(s, (await fixture('referrals-request')).document)).referrals));
    assert.deepEqual((await search(s, (await fixture('query-model')).document)).results, []);
    // §7.3: the explore request (type, publisher with limit 50) answers the response's shape.
    const explored = await post(s, 'explore', (await fixture('explore-request')).document);
    assert.equal(explored.status, 200, explored.body);
    const want = (await fixture('explore-response')).document as unknown as ArdExploreResponse;
    const got = JSON.parse(explored.body) as ArdExploreResponse;
    assert.equal(got.resultType, want.resultType);
    assert.deepEqual(Object.keys(got.facets).sort(), Object.keys(want.facets).sort());
    const unfiltered = JSON.parse((await post(s, 'explore', { resultType: { facets: [{ field: 'type' }, { field: 'publisher', limit: 50 }] } })).body) as ArdExploreResponse;
    for (const name of ['type', 'publisher']) {
      assert.deepEqual(Object.keys(unfiltered.facets[name]!.buckets[0]!).sort(), Object.keys(want.facets[name]!.buckets[0]!).sort());
    }
    assert.deepEqual(unfiltered.facets['publisher']!.buckets, [{ value: '127.0.0.1', count: 3 }]);
  });
});

describe('who may ask', () => {
  test('with a token, the registry is a viewer\'s; with server.registry.anonymous, anyone\'s (and the rest of /api still needs the token)', async () => {
    const partners = listSource('partners');
    const guarded = await service(partners, { token: 'registry-test-token' });
    try {
      assert.equal((await post(guarded, 'search', { query: { text: 'warranty' } })).status, 401);
      assert.equal((await getAgents(guarded)).status, 401);
      assert.equal((await post(guarded, 'search', { query: { text: 'warranty' } }, { authorization: 'Bearer registry-test-token' })).status, 200);
      // GET /agents/{identifier} (ARD 0.91): the same role as GET /agents.
      const one = `/api/registry/agents/${encodeURIComponent(catalogIdentifier(guarded, 'warranty_agent'))}`;
      assert.equal((await request(guarded.url, 'GET', one)).status, 401);
      assert.equal((await request(guarded.url, 'GET', one, { authorization: 'Bearer registry-test-token' })).status, 200);
    } finally {
      await guarded.close();
    }
    const open = await service(partners, { token: 'registry-test-token', registry: { anonymous: true } });
    try {
      const r = await post(open, 'search', { query: { text: 'warranty' } });
      assert.equal(r.status, 200, r.body);
      assert.equal((await getAgents(open)).status, 200);
      assert.equal((await post(open, 'explore', { resultType: { facets: [{ field: 'type' }] } })).status, 200);
      assert.equal((await request(open.url, 'GET', '/api/snapshot')).status, 401);
      assert.equal((await request(open.url, 'GET', `/api/registry/agents/${encodeURIComponent(catalogIdentifier(open, 'warranty_agent'))}`)).status, 200, 'GET /agents/{identifier}: anyone\'s too');
      const escape = await request(open.url, 'GET', '/api/registry/agents/..%2f..%2fsnapshot');
      assert.equal(escape.status, 404, 'an encoded ../ is an identifier, not a path');
      assert.doesNotMatch(escape.body, /"digest"/);
      for (const path of ['/api/registry/../snapshot', '/api/registry/%2e%2e/snapshot', '/api/registry/%2E%2E/endpoints', '/api/registry/..%2fsnapshot']) {
        const r = await request(open.url, 'GET', path);
        assert.ok(r.status === 401 || r.status === 404 || r.status === 400, `${path}: ${r.status} ${r.body.slice(0, 120)}`);
        assert.doesNotMatch(r.body, /"digest"|"endpoints"/, `${path} must not reach another route`);
      }
    } finally {
      await open.close();
    }
    const off = await service(partners, { registry: { enabled: false } });
    try {
      assert.equal((await post(off, 'search', { query: { text: 'warranty' } })).status, 404);
    } finally {
      await off.close();
    }
  });
});
