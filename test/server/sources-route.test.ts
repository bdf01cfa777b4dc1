/**
 * `GET /api/sources` against a real service whose AI Catalog sources read loopback catalogs: a
 * good catalog (a card, a nested catalog, an entry of another type) with its document counts, a
 * catalog problem (a repeated identifier + version) at its JSON path, a catalog that cannot be
 * read (the source's error and the failed document), a source with more problems than the route
 * lists (50, then a count), and the bearer token the other /api reads need.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AI_CATALOG_MEDIA_TYPE, A2A_CARD_MEDIA_TYPE } from '../../packages/core/src/catalog/index.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';

const TOKEN = 'sources-route-token';
const CATALOG_HEADERS = { 'content-type': 'application/ai-catalog+json', 'cache-control': 'max-age=60' };

interface SourceJson {
  id: string;
  kind: string;
  ok: boolean;
  synced: boolean;
  updatedAt: number | null;
  records: number;
  error?: { code: string; message: string; url?: string; status?: number };
  problems: Array<{ path: string; message: string }>;
  moreProblems: number;
  catalogs?: Array<{ url: string; via: string; depth: number; outcome: string; specVersion?: string; etag?: string; signature?: string; entries: number; cards: number; nested: number; ignored: number; error?: string }>;
  moreCatalogs?: number;
}

let peer: JsonServer;
let s: RunningService;
const url = (path: string): string => `${peer.origin}${path}`;

before(async () => {
  peer = await startJsonServer();
  peer.routes.set('/agents/billing.json', { body: cardFor(peer, 'billing') });
  peer.routes.set('/agents/shipping.json', { body: cardFor(peer, 'shipping') });
  peer.routes.set('/agents/returns.json', { body: cardFor(peer, 'returns') });
  peer.routes.set('/good.json', {
    headers: { ...CATALOG_HEADERS, etag: '"good-1"' },
    body: {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:example.com:agent:billing', type: A2A_CARD_MEDIA_TYPE, version: '1.0.0', url: '/agents/billing.json', displayName: 'Billing', description: 'Invoices, says the catalog.', tags: ['billing'] },
        { identifier: 'urn:air:example.com:catalog:more', type: AI_CATALOG_MEDIA_TYPE, url: '/nested.json' },
        { identifier: 'urn:air:example.com:mcp:files', type: 'application/mcp-server-card+json', url: '/mcp/files' },
      ],
    },
  });
  peer.routes.set('/nested.json', {
    headers: CATALOG_HEADERS,
    body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:example.com:agent:shipping', type: A2A_CARD_MEDIA_TYPE, url: '/agents/shipping.json' }] },
  });
  // no-cache: every refresh reads it again (the last test fixes it).
  peer.routes.set('/dup.json', {
    headers: { ...CATALOG_HEADERS, 'cache-control': 'no-cache' },
    body: {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:example.com:agent:returns', type: A2A_CARD_MEDIA_TYPE, version: '1.0.0', url: '/agents/returns.json' },
        { identifier: 'urn:air:example.com:agent:returns', type: A2A_CARD_MEDIA_TYPE, version: '1.0.0', url: '/agents/returns-copy.json' },
      ],
    },
  });
  peer.routes.set('/gone.json', { status: 500, body: { error: 'down' } });
  // 60 copies of one identifier + version: 59 problems, more than the route lists.
  peer.routes.set('/many.json', {
    headers: CATALOG_HEADERS,
    body: { specVersion: '1.0', entries: Array.from({ length: 60 }, (_, i) => ({ identifier: 'urn:air:example.com:agent:echo', type: A2A_CARD_MEDIA_TYPE, version: '1.0.0', url: `/agents/echo-${i}.json` })) },
  });
  s = await startService({
    port: 0,
    token: TOKEN,
    policy: { allow: [peer.origin], allowLoopback: true },
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
    needs: [{ tag: 'billing' }],
    static: [{ name: 'billing_agent', cardUrl: url('/agents/billing.json'), description: 'Answers invoice questions.', tags: ['billing'] }],
    aiCatalogs: [
      { id: 'partners', catalogs: [url('/good.json'), url('/dup.json')] },
      { id: 'broken', catalogs: [url('/gone.json')] },
      { id: 'crowded', catalogs: [url('/many.json')] },
    ],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await s?.close();
  await peer?.close();
});

async function sources(): Promise<SourceJson[]> {
  const res = await fetch(`${s.url}/api/sources`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { sources: SourceJson[] }).sources;
}

async function source(id: string): Promise<SourceJson> {
  const found = (await sources()).find((x) => x.id === id);
  assert.ok(found, `source ${id} is listed`);
  return found;
}

describe('GET /api/sources', () => {
  test('needs the bearer token like every other /api read', async () => {
    const res = await fetch(`${s.url}/api/sources`);
    assert.equal(res.status, 401);
    const wrong = await fetch(`${s.url}/api/sources`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
  });

  test('lists every source in the loop’s order with its kind and state; only AI Catalog sources carry catalogs', async () => {
    const list = await sources();
    assert.deepEqual(
      list.map((x) => [x.id, x.kind]),
      [
        ['static', 'static'],
        ['partners', 'ai-catalog'],
        ['broken', 'ai-catalog'],
        ['crowded', 'ai-catalog'],
      ],
    );
    const stat = list[0]!;
    assert.equal(stat.ok, true);
    assert.equal(stat.synced, true);
    assert.equal(stat.records, 1);
    assert.deepEqual(stat.problems, []);
    assert.equal(stat.moreProblems, 0);
    assert.equal(stat.error, undefined);
    assert.equal(stat.catalogs, undefined, 'a static source has no catalog report');
    assert.equal(typeof stat.updatedAt, 'number');
    assert.ok(Math.abs(stat.updatedAt! - Date.now()) < 60_000, 'updatedAt is epoch ms');
  });

  test('a good catalog: its record count and each document read, with its entries, cards, nested catalogs and ignored entries', async () => {
    const p = await source('partners');
    assert.equal(p.ok, true);
    assert.equal(p.synced, true);
    // billing (good.json), shipping (nested.json), returns (dup.json: the first of the two stands).
    assert.equal(p.records, 3);
    assert.equal(p.moreCatalogs, 0);
    const docs = p.catalogs!;
    assert.deepEqual(
      docs.map((d) => [d.url, d.depth, d.entries, d.cards, d.nested, d.ignored]),
      [
        [url('/good.json'), 1, 3, 1, 1, 1],
        [url('/nested.json'), 2, 1, 1, 0, 0],
        [url('/dup.json'), 1, 2, 2, 0, 0],
      ],
    );
    const [good, nested] = docs;
    assert.equal(good!.via, 'root');
    assert.equal(nested!.via, `${url('/good.json')} entries[1]`, 'a nested document says which entry nested it');
    assert.equal(good!.outcome, 'changed', 'read once, with a 200');
    assert.equal(good!.specVersion, '1.0');
    assert.equal(good!.etag, '"good-1"');
    assert.equal(good!.signature, 'unsigned');
    assert.equal(good!.error, undefined);
    assert.equal(peer.count('/mcp/files'), 0, 'an ignored entry is never requested');
  });

  test('a catalog problem is listed with its JSON path (the document URL and the entry)', async () => {
    const p = await source('partners');
    assert.equal(p.problems.length, 1, JSON.stringify(p.problems));
    assert.equal(p.problems[0]!.path, `${url('/dup.json')} entries[1]`);
    assert.match(p.problems[0]!.message, /repeats .*urn:air:example\.com:agent:returns.*first at .*entries\[0\]/);
    assert.equal(p.moreProblems, 0);
  });

  test('a catalog that cannot be read: the source is failing with its error, and the document failed', async () => {
    const b = await source('broken');
    assert.equal(b.ok, false);
    assert.equal(b.synced, false);
    assert.equal(b.records, 0);
    assert.equal(b.updatedAt, null, 'never listed');
    assert.ok(b.error, 'the error is reported');
    assert.equal(b.error.code, 'ERR_FETCH_STATUS');
    assert.equal(b.error.status, 500);
    assert.equal(b.error.url, url('/gone.json'));
    assert.match(b.error.message, /500/);
    assert.deepEqual(
      b.catalogs!.map((d) => [d.url, d.outcome, d.entries]),
      [[url('/gone.json'), 'failed', 0]],
    );
    assert.match(b.catalogs![0]!.error!, /500/);
  });

  test('problems are bounded: the first 50, then how many more', async () => {
    const c = await source('crowded');
    assert.equal(c.ok, true);
    assert.equal(c.records, 1, 'the first of the copies stands');
    assert.equal(c.problems.length, 50);
    assert.equal(c.moreProblems, 9);
    assert.equal(c.problems[0]!.path, `${url('/many.json')} entries[1]`);
    assert.equal(c.problems[49]!.path, `${url('/many.json')} entries[50]`);
  });

  test('the state follows the next refresh: a fixed catalog clears its problem', async () => {
    peer.routes.set('/dup.json', {
      headers: { ...CATALOG_HEADERS, 'cache-control': 'no-cache' },
      body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:example.com:agent:returns', type: A2A_CARD_MEDIA_TYPE, version: '1.0.0', url: '/agents/returns.json' }] },
    });
    const partners = s.loop.sources.find((x) => x.id === 'partners')!;
    await partners.refresh();
    const p = await source('partners');
    assert.deepEqual(p.problems, []);
    assert.equal(p.records, 3);
    const docs = new Map(p.catalogs!.map((d) => [d.url, d]));
    assert.equal(docs.get(url('/good.json'))!.outcome, 'hit', 'a fresh document is read without a request');
    assert.equal(docs.get(url('/dup.json'))!.entries, 1);
  });
});
