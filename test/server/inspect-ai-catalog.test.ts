/**
 * `POST /api/inspect` with AI Catalogs: a URL that serves one and a pasted one get every entry
 * judged under the service's allowlist (a card host outside it never sees a request), with the
 * same report `a2a-discovery probe` prints; a registry catalog is still read as before.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { request } from '../helpers/raw-http.js';

const A2A = 'application/a2a-agent-card+json';

async function inspect(s: RunningService, body: unknown): Promise<{ status: number; json: InspectResult }> {
  const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify(body));
  return { status: r.status, json: JSON.parse(r.body) as InspectResult };
}

describe('POST /api/inspect with an AI Catalog', () => {
  let allowed: JsonServer;
  let outside: JsonServer;
  let s: RunningService;
  before(async () => {
    [allowed, outside] = await Promise.all([startJsonServer(), startJsonServer()]);
    s = await startService({ port: 0, policy: { allow: [allowed.origin], allowLoopback: true }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
    allowed.routes.set('/agents/a.json', { body: cardFor(allowed, 'a') });
    outside.routes.set('/agents/x.json', { body: cardFor(outside, 'x') });
  });
  after(async () => {
    await s?.close();
    await Promise.all([allowed?.close(), outside?.close()]);
  });

  const entries = () => [
    { identifier: 'urn:air:example.com:agent:a', type: A2A, url: `${allowed.origin}/agents/a.json` },
    { identifier: 'urn:air:example.com:agent:inline', type: A2A, data: cardFor(allowed, 'inline') },
    { identifier: 'urn:air:elsewhere:agent:x', type: A2A, url: `${outside.origin}/agents/x.json` },
    { identifier: 'urn:air:example.com:mcp:m', type: 'application/mcp-server-card+json', url: `${allowed.origin}/mcp` },
  ];

  test('a URL serving an AI Catalog: every entry judged; a card host outside the allowlist is never contacted', async () => {
    allowed.routes.set('/.well-known/ai-catalog.json', { headers: { 'content-type': 'application/ai-catalog+json' }, body: { specVersion: '1.0', entries: entries() } });
    outside.requests.length = 0;
    const { status, json } = await inspect(s, { url: `${allowed.origin}/.well-known/ai-catalog.json` });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.kind, 'url');
    assert.equal(json.report, undefined);
    const c = json.aiCatalog!;
    assert.equal(c.documents[0]?.usable, true);
    assert.deepEqual(c.entries.map((e) => [e.identifier, e.verdict, e.report?.stage ?? null]), [
      ['urn:air:example.com:agent:a', 'accepted', 'selected'],
      ['urn:air:example.com:agent:inline', 'accepted', 'selected'],
      ['urn:air:elsewhere:agent:x', 'refused', 'source'],
      ['urn:air:example.com:mcp:m', 'ignored', null],
    ]);
    assert.equal(c.accepted, false);
    assert.equal(outside.requests.length, 0);
    assert.equal(allowed.count('/mcp'), 0);
    assert.equal(allowed.count('/.well-known/ai-catalog.json'), 1);
  });

  test('a pasted AI Catalog: url entries fetched under the allowlist, inline cards checked; a registry catalog is still a registry catalog', async () => {
    outside.requests.length = 0;
    const { json } = await inspect(s, { catalog: { specVersion: '1.0', entries: entries() } });
    assert.equal(json.kind, 'catalog');
    assert.equal(json.catalog, undefined);
    const c = json.aiCatalog!;
    assert.equal(c.source, 'the pasted catalog');
    assert.deepEqual(c.entries.map((e) => e.verdict), ['accepted', 'accepted', 'refused', 'ignored']);
    assert.equal(c.entries[1]!.report?.http, undefined, 'an inline card is not fetched');
    assert.equal(outside.requests.length, 0);

    const malformed = await inspect(s, { catalog: { specVersion: '1.0', entries: [{ identifier: 'urn:air:x.example:agent:x', type: A2A }] } });
    assert.deepEqual(malformed.json.aiCatalog?.documents[0]?.problems.map((p) => p.path), ['entries[0]']);

    const registry = await inspect(s, { catalog: { agents: [{ name: 'a', cardUrl: `${allowed.origin}/agents/a.json` }] } });
    assert.equal(registry.json.aiCatalog, undefined);
    assert.equal(registry.json.catalog?.entries[0]?.report?.stage, 'selected');
  });
});
