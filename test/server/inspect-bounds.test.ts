/**
 * `POST /api/inspect` is bounded in what one call costs (issue 24): a 5,000-entry AI Catalog at a
 * URL counts every entry in a bounded answer (its event-loop delay is inspect-event-loop.test.ts's);
 * nested catalogs and card probes share
 * one budget of upstream requests, counted at the origin; the answer's bytes are bounded with a
 * `truncated` marker; a catalog URL with a query is fetched once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { DEFAULT_SERVER_LIMITS } from '../../packages/service/src/http/limits.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { metric, request } from '../helpers/raw-http.js';

const A2A = 'application/a2a-agent-card+json';
const AI_CATALOG = 'application/ai-catalog+json';

async function inspect(s: RunningService, body: unknown): Promise<{ status: number; bytes: number; json: InspectResult }> {
  const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify(body));
  return { status: r.status, bytes: Buffer.byteLength(r.body), json: JSON.parse(r.body) as InspectResult };
}

const cardEntries = (origin: string, n: number, prefix = 'a') =>
  Array.from({ length: n }, (_, i) => ({ identifier: `urn:air:example.com:agent:${prefix}${i}`, type: A2A, url: `${origin}/agents/${prefix}${i}.json` }));

describe('POST /api/inspect: bounded work per request', () => {
  let origin: JsonServer;
  let s: RunningService;
  before(async () => {
    origin = await startJsonServer();
    s = await startService({ port: 0, policy: { allow: [origin.origin], allowLoopback: true }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
    // Every card answers with an ETag, so a probe costs its three requests (the card, again, a conditional one).
    for (let i = 0; i < 100; i++) origin.routes.set(`/agents/a${i}.json`, { headers: { etag: `"a${i}"` }, body: cardFor(origin, `a${i}`) });
  });
  after(async () => {
    await s?.close();
    await origin?.close();
  });

  // The event-loop bound during such an inspection (p99 under 100 ms beside a control) is
  // test/server/inspect-event-loop.test.ts; here, what the answer holds.
  test('a 5,000-entry catalog at a URL: every entry counted, the answer bounded', async () => {
    origin.routes.set('/big.json', { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: cardEntries(origin.origin, 5_000) } });
    const { status, bytes, json } = await inspect(s, { url: `${origin.origin}/big.json` });
    assert.equal(status, 200);
    const c = json.aiCatalog!;
    assert.equal(c.counts.entries, 5_000, 'the counts cover every entry');
    assert.equal(c.counts.accepted, 20);
    assert.ok(bytes <= DEFAULT_SERVER_LIMITS.inspectMaxAnswerBytes, `${bytes} bytes`);
    assert.equal(json.truncated, true);
    assert.ok(json.truncation?.some((m) => /server\.limits\.inspectMaxAnswerBytes/.test(m)), JSON.stringify(json.truncation));
    assert.ok(c.entries.length > 0 && c.entries.length < 5_000);
  });

  test('60 nested catalogs: documents and card probes share one budget, counted at the origin', async () => {
    const before = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspect_truncated"');
    const nested = Array.from({ length: 60 }, (_, i) => ({ identifier: `urn:air:example.com:catalog:n${i}`, type: AI_CATALOG, url: `${origin.origin}/nested/n${i}.json` }));
    for (let i = 0; i < 60; i++) {
      origin.routes.set(`/nested/n${i}.json`, { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: cardEntries(origin.origin, 1, `a${i}-`).map((e) => ({ ...e, url: `${origin.origin}/agents/a${i}.json` })) } });
    }
    origin.routes.set('/tree.json', { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: nested } });
    origin.requests.length = 0;
    const { status, json } = await inspect(s, { url: `${origin.origin}/tree.json` });
    assert.equal(status, 200);
    const documents = origin.requests.filter((r) => r.path === '/tree.json' || r.path.startsWith('/nested/')).length;
    assert.ok(documents <= DEFAULT_SERVER_LIMITS.inspectMaxDocuments, `${documents} catalog documents requested`);
    assert.ok(origin.requests.length <= DEFAULT_SERVER_LIMITS.inspectMaxRequests, `${origin.requests.length} upstream requests`);
    assert.equal(json.truncated, true);
    assert.ok(json.truncation?.some((m) => /at most 10 are fetched/.test(m)), JSON.stringify(json.truncation));
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspect_truncated"'), before + 1);
  });

  test('the request budget bites on card probes too, and the answer names it', async () => {
    const small = await startService({
      port: 0,
      policy: { allow: [origin.origin], allowLoopback: true },
      vocabulary: [],
      needs: [],
      logger: createLogger({ level: 'silent' }),
      limits: { inspectMaxRequests: 10 },
    });
    try {
      origin.routes.set('/twenty.json', { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: cardEntries(origin.origin, 20) } });
      origin.requests.length = 0;
      const { json } = await inspect(small, { url: `${origin.origin}/twenty.json` });
      assert.equal(origin.requests.length, 10);
      assert.ok(json.truncation?.some((m) => /were not made: one inspection makes at most 10 \(server\.limits\.inspectMaxRequests\)/.test(m)), JSON.stringify(json.truncation));
      assert.ok(json.aiCatalog!.entries.some((e) => e.report?.problems.some((p) => /budget of 10 upstream requests is spent/.test(p.message))));
    } finally {
      await small.close();
    }
  });

  test('a pasted ~200 KB catalog: the answer stays within server.limits.inspectMaxAnswerBytes, marked truncated', async () => {
    const entries = Array.from({ length: 2_000 }, (_, i) => ({ identifier: `u:${i}`, type: A2A, url: `https://e.invalid/${i}.json` }));
    const text = JSON.stringify({ specVersion: '1.0', entries });
    assert.ok(text.length > 180_000 && text.length < DEFAULT_SERVER_LIMITS.maxInspectBodyBytes, `${text.length}`);
    const { status, bytes, json } = await inspect(s, { catalog: text });
    assert.equal(status, 200);
    assert.ok(bytes <= DEFAULT_SERVER_LIMITS.inspectMaxAnswerBytes, `${bytes} bytes`);
    assert.equal(json.truncated, true);
    assert.equal(json.aiCatalog!.counts.entries, 2_000);
    assert.ok(json.aiCatalog!.truncated?.some((m) => /of 2000 entries are left out/.test(m)));
  });

  test('a catalog URL with a query is fetched once', async () => {
    const body = { specVersion: '1.0', entries: cardEntries(origin.origin, 1) };
    origin.routes.set('/q.json?v=1', { headers: { 'content-type': AI_CATALOG }, body });
    origin.routes.set('/q.json', { headers: { 'content-type': AI_CATALOG }, body });
    origin.requests.length = 0;
    const { json } = await inspect(s, { url: `${origin.origin}/q.json?v=1` });
    assert.equal(json.aiCatalog?.documents[0]?.usable, true);
    assert.deepEqual(
      origin.requests.map((r) => r.path).filter((p) => p.startsWith('/q.json')),
      ['/q.json?v=1'],
    );
    assert.equal(json.truncated, false);
  });
});
