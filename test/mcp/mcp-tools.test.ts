/**
 * The registry as MCP tools (packages/service/src/registry/mcp.ts, docs/mcp.md), driven by the
 * official SDK's own client (`Client` + `StreamableHTTPClientTransport`) against a real service
 * over the demo's real peers (an ADK JS billing agent, the A2A 1.0 warranty agent), with people
 * auth from a real OIDC provider (oauth2-mock-server): the tools are listed; `search_agents` finds
 * the warranty agent for a warranty question; `get_agent` returns it by its `urn:air:` and its
 * `urn:ai:` identifier; `explain_selection` says why an agent is in and why a refused one is not;
 * a viewer's token can search, a missing token cannot; a body over the registry's limit is 413.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OAuth2Server } from 'oauth2-mock-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { waitFor } from '../helpers/wait-for.js';

const AUDIENCE = 'a2a-discovery-api';
let provider: OAuth2Server;
let service: RunningService;
const peers: DemoPeer[] = [];

before(async () => {
  provider = new OAuth2Server();
  await provider.issuer.keys.generate('RS256');
  await provider.start(0, '127.0.0.1');
  provider.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: { body: Record<string, string> }) => {
    token.payload.sub = `user-${req.body.username}`;
    token.payload.roles = req.body.username === 'vera' ? ['a2a-viewer'] : ['staff'];
    token.payload.aud = AUDIENCE;
  });
  const billing = await startAdkDemoAgent({
    name: 'billing',
    cardName: 'Billing Agent',
    skills: [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices and charges.', tags: ['billing'] }],
    reply: () => 'billing here',
    maxAgeSeconds: 60,
  });
  peers.push(billing);
  const warranty = await startV1DemoAgent({
    name: 'warranty',
    cardName: 'Warranty Agent',
    skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty of a serial number.', tags: ['warranty'] }],
    reply: () => 'warranty here',
    maxAgeSeconds: 60,
  });
  peers.push(warranty);
  service = await startService({
    port: 0,
    policy: { allow: [billing, warranty].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'warranty', description: 'Warranty status and claims for hardware.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
      // Not on the allowlist: refused, so explain_selection has a refusal to explain.
      { name: 'stranger_agent', url: 'http://127.0.0.2:9/', description: 'Not admitted.', tags: ['billing'] },
    ],
    oidc: { issuer: provider.issuer.url!, audience: AUDIENCE, roles: { 'a2a-viewer': 'viewer' }, allowLoopback: true },
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  await waitFor(async () => (service.loop.current()?.agents.length === 2 ? true : undefined), 'both demo agents admitted');
});

after(async () => {
  await service?.close();
  await Promise.all(peers.map((p) => p.close()));
  await provider?.stop();
});

async function tokenFor(user: string): Promise<string> {
  const res = await fetch(`${provider.issuer.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: user, password: 'x', scope: 'openid' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/api/registry/mcp`), {
    ...(token !== undefined && { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  });
  await client.connect(transport);
  return client;
}

/** A tool's structured answer (the SDK validated it against nothing: the test reads it). */
function structured(r: Awaited<ReturnType<Client['callTool']>>): Record<string, unknown> {
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent as Record<string, unknown>;
}

test("a viewer's MCP client lists the tools and finds the demo's warranty agent, then gets it by either identifier form", async () => {
  const client = await connect(await tokenFor('vera'));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['explain_selection', 'get_agent', 'search_agents']);
    assert.ok(tools.every((t) => t.annotations?.readOnlyHint === true), 'every tool reads only');

    const found = structured(await client.callTool({ name: 'search_agents', arguments: { text: 'is my laptop still under warranty?' } }));
    const results = found['results'] as Array<Record<string, unknown>>;
    assert.ok(results.length >= 1, JSON.stringify(found));
    assert.equal(results[0]!['displayName'], 'warranty_agent', JSON.stringify(results));
    const identifier = String(results[0]!['identifier']);
    assert.match(identifier, /^urn:air:/);

    for (const id of [identifier, identifier.replace(/^urn:air:/, 'urn:ai:')]) {
      const agent = structured(await client.callTool({ name: 'get_agent', arguments: { identifier: id } }));
      assert.equal(agent['identifier'], identifier, id);
      assert.equal(agent['displayName'], 'warranty_agent');
    }
    const missing = await client.callTool({ name: 'get_agent', arguments: { identifier: 'urn:air:nowhere.example:agent:none' } });
    assert.equal(missing.isError, true);
    assert.match(JSON.stringify(missing.content), /HTTP 404/);

    // Tags narrow the search through the registry's own filter.
    const billing = structured(await client.callTool({ name: 'search_agents', arguments: { text: 'warranty invoice', tags: ['billing'] } }));
    assert.deepEqual((billing['results'] as Array<Record<string, unknown>>).map((r) => r['displayName']), ['billing_agent']);
  } finally {
    await client.close();
  }
});

test('explain_selection says why an agent is in and why a refused one is not', async () => {
  const client = await connect(await tokenFor('vera'));
  try {
    const inside = structured(await client.callTool({ name: 'explain_selection', arguments: { agent: 'warranty_agent' } }));
    const match = (inside['matches'] as Array<Record<string, unknown>>)[0]!;
    assert.equal(match['admitted'], true, JSON.stringify(inside));
    assert.equal((match['state'] as Record<string, unknown>)['verdict'], 'selected', JSON.stringify(match['state']));

    const refused = structured(await client.callTool({ name: 'explain_selection', arguments: { agent: 'stranger_agent' } }));
    const r = (refused['matches'] as Array<Record<string, unknown>>)[0]!;
    assert.equal(r['admitted'], false, JSON.stringify(refused));
    assert.match(JSON.stringify(r['refusal'] ?? r['state']), /allow/i);

    const none = structured(await client.callTool({ name: 'explain_selection', arguments: { agent: 'no-such-agent' } }));
    assert.deepEqual(none['matches'], []);
    assert.match(String(none['message']), /no endpoint/);
  } finally {
    await client.close();
  }
});

test('a missing token cannot search (401), a person without the viewer role is refused (403), a body over the limit is 413', async () => {
  await assert.rejects(connect(), (err: Error) => /unauthorized/.test(err.message) && /bearer token is required/.test(err.message));
  await assert.rejects(connect(await tokenFor('ursula')), (err: Error) => /"error":"forbidden"/.test(err.message) && /"needed":"viewer"/.test(err.message));
  const viewer = await tokenFor('vera');
  const big = await fetch(`${service.url}/api/registry/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${viewer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_agents', arguments: { text: 'x'.repeat(20_000) } } }),
  });
  assert.equal(big.status, 413);
  assert.match(((await big.json()) as { error: { message: string } }).error.message, /server\.registry\.maxBodyBytes/);
  // Stateless: GET has no stream to offer.
  const get = await fetch(`${service.url}/api/registry/mcp`, { headers: { authorization: `Bearer ${viewer}`, accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
});
