/**
 * The OpenAPI document as a contract (docs/service.md "The OpenAPI document"):
 *
 * - `GET /openapi.json` validates as OpenAPI 3.1 (@seriousme/openapi-schema-validator) and is the
 *   committed `docs/openapi.json` (so CI fails when a route changes and the file does not);
 * - a real service over real peers (an ADK JS agent, an A2A 1.0 server) answers the requests the
 *   suite's API tests send — success and refusal, every operation of the document at least once —
 *   and every answer's status is one its operation declares, and every JSON answer validates
 *   against the operation's schema (ajv, JSON Schema 2020-12, the document's own components).
 *
 * A route added without a declaration cannot start (http/route.ts); one whose answer drifts from
 * its schema, or that no request here exercises, fails this test.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { RunningService } from '../../packages/service/src/index.js';
import { OPENAPI_FILE, servedDocument } from '../../scripts/openapi.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startTwoAgentService } from '../helpers/two-agent-service.js';
import type { TwoAgentService } from '../helpers/two-agent-service.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'contract-admin-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface Operation {
  readonly responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> };

let stand: TwoAgentService;
let service: RunningService;
let billing: RunningPeer;
let doc: Doc;
let served: string;

before(async () => {
  stand = await startTwoAgentService({ token: TOKEN, catalog: { enabled: true } });
  ({ service, billing } = stand);
  await waitFor(async () => ((service.loop.current()?.agents.length ?? 0) >= 1 ? true : undefined), 'an agent admitted');
  served = await servedDocument(service);
  doc = JSON.parse(served) as Doc;
});

after(async () => {
  await stand?.close();
});

test('GET /openapi.json is a valid OpenAPI 3.1 document, and the committed docs/openapi.json is it', async () => {
  const validator = new Validator();
  const result = await validator.validate(JSON.parse(served) as Parameters<Validator["validate"]>[0]);
  assert.equal(validator.version, '3.1');
  assert.equal(result.valid, true, JSON.stringify(result.errors));
  assert.equal(readFileSync(OPENAPI_FILE, 'utf8'), served, 'docs/openapi.json differs from the served document: run `npm run openapi:update` and commit it');
  // Every operation names the role it needs; every one but the public ones asks a bearer token.
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const role = (op as unknown as Record<string, unknown>)['x-role'];
      assert.ok(['public', 'any', 'viewer', 'operator', 'admin'].includes(String(role)), `${method} ${path}: x-role ${String(role)}`);
      assert.equal((op as unknown as Record<string, unknown>)['security'] !== undefined, role !== 'public', `${method} ${path}: security`);
    }
  }
});

/** The operation of `method path` in the document: the path template that matches, and its operation. */
function operationOf(method: string, path: string): { template: string; op: Operation } | undefined {
  for (const [template, item] of Object.entries(doc.paths)) {
    const re = new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const op = item[method.toLowerCase()];
    if (op !== undefined && re.test(path)) return { template, op };
  }
  return undefined;
}

test("every answer to the suite's requests is one its operation declares and validates against its schema; every operation is exercised", async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'https://contract.test/openapi', components: doc.components });
  const exercised = new Set<string>();
  const failures: string[] = [];
  let compiled = 0;

  const check = async (method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<{ status: number; body: unknown }> => {
    const found = operationOf(method, path.split('?')[0]!);
    if (found === undefined) {
      failures.push(`${method} ${path}: no operation in the document`);
      return { status: 0, body: undefined };
    }
    exercised.add(`${method.toLowerCase()} ${found.template}`);
    const headers: Record<string, string> = { ...AUTH, ...init.headers };
    const hasBody = init.body !== undefined || init.raw !== undefined;
    if (hasBody) headers['content-type'] ??= 'application/json';
    const controller = new AbortController();
    const res = await fetch(`${service.url}${path}`, { method, headers, signal: controller.signal, ...(hasBody && { body: init.raw ?? JSON.stringify(init.body) }) });
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const declared = found.op.responses[String(res.status)] ?? found.op.responses['default'];
    if (declared === undefined) failures.push(`${method} ${path}: status ${res.status} is not declared (${Object.keys(found.op.responses).join(', ')})`);
    if (type === 'text/event-stream') {
      controller.abort();
      return { status: res.status, body: undefined };
    }
    const text = await res.text();
    // JSON and its structured suffixes (an error's application/problem+json) are validated against the media type declared for them.
    if (!/^application\/([\w.-]+\+)?json$/.test(type)) return { status: res.status, body: text };
    const body: unknown = JSON.parse(text);
    const media = declared?.content?.[type];
    if (declared !== undefined && media === undefined) failures.push(`${method} ${path}: ${res.status} answered ${type} where the document declares ${Object.keys(declared.content ?? {}).join(', ') || 'no body'}`);
    if (media?.schema !== undefined) {
      // The operation's schema, its references pointed at the document's components.
      const schema = JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components/', '"https://contract.test/openapi#/components/')) as object;
      const validate = ajv.compile({ ...schema, $id: `https://contract.test/op/${++compiled}` });
      if (!validate(body)) failures.push(`${method} ${path} ${res.status}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 300)}`);
    }
    return { status: res.status, body };
  };

  // Health and who is asking.
  await check('GET', '/healthz');
  await check('GET', '/readyz');
  await check('GET', '/metrics');
  await check('GET', '/api/whoami');
  await check('GET', '/api/whoami', { headers: { authorization: 'Bearer not-the-token' } });
  // Snapshots.
  const snap = (await check('GET', '/api/snapshot')).body as { digest: string };
  await check('GET', '/api/snapshots');
  await check('GET', `/api/snapshots/${snap.digest}`);
  await check('GET', '/api/snapshots/sha256-unknown');
  await check('GET', `/api/diff?from=${snap.digest}`);
  await check('GET', '/api/diff?from=sha256-unknown');
  await check('POST', '/api/snapshots/confirm', { body: {} });
  await check('POST', '/api/refresh', { body: {} });
  // Rollouts (none in progress here: each decision is refused) and the health of real calls.
  await check('GET', '/api/rollout');
  for (const decision of ['hold', 'resume', 'promote', 'rollback']) assert.equal((await check('POST', `/api/rollout/${decision}`, { body: {} })).status, 409);
  // Endpoints and sources.
  await check('GET', '/api/endpoints');
  await check('GET', `/api/endpoints/card?url=${encodeURIComponent(billing.baseUrl)}`);
  await check('GET', '/api/endpoints/card');
  await check('GET', `/api/endpoints/card?url=${encodeURIComponent('http://127.0.0.1:9/')}`);
  await check('GET', '/api/sources');
  // Sessions and chat.
  const chat = await check('POST', '/api/chat', { body: { message: 'Why was my invoice charged twice?' } });
  await check('POST', '/api/chat', { body: { nope: 1 } });
  // The turn's call, counted for the agent it called.
  assert.ok(((await check('GET', '/api/calls')).body as { agents: unknown[] }).agents.length > 0);
  await check('POST', '/api/chat', { raw: `{"message":"${'x'.repeat(70_000)}"}` });
  await check('GET', '/api/sessions');
  const sessionId = (chat.body as { sessionId?: string }).sessionId ?? 's-unknown';
  await check('POST', `/api/sessions/${sessionId}/upgrade`, { body: {} });
  await check('DELETE', `/api/sessions/${sessionId}`);
  // Events.
  await check('GET', '/api/events');
  await check('GET', '/api/events?since=abc');
  await check('GET', '/api/journal');
  await check('GET', '/api/activity');
  await check('GET', '/api/stream');
  await check('POST', '/api/config/reload', { body: {} });
  // The explorer and the inspector.
  await check('GET', '/api/trace/defaults');
  await check('POST', '/api/trace', { body: {} });
  await check('POST', '/api/inspect', { body: { url: billing.baseUrl } });
  await check('POST', '/api/inspect', { body: {} });
  // The registry and its MCP tools.
  await check('POST', '/api/registry/search', { body: { query: { text: 'warranty' } } });
  await check('POST', '/api/registry/search', { body: {} });
  await check('POST', '/api/registry/explore', { body: { resultType: { facets: [{ field: 'type' }] } } });
  const list = (await check('GET', '/api/registry/agents')).body as { items: Array<{ identifier: string }> };
  if (doc.paths['/api/registry/agents/{identifier}'] !== undefined) {
    await check('GET', `/api/registry/agents/${encodeURIComponent(list.items[0]!.identifier)}`);
    await check('GET', `/api/registry/agents/${encodeURIComponent('urn:air:nowhere.example:agent:none')}`);
  }
  await check('POST', '/api/registry/mcp', {
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } } },
  });
  await check('GET', '/api/registry/mcp');
  await check('DELETE', '/api/registry/mcp');
  // The service as an A2A agent, and Mastra's aliases of it.
  await check('GET', '/.well-known/agent-card.json');
  await check('GET', '/.well-known/agent.json');
  await check('POST', '/api/a2a', { body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } } });
  await check('GET', '/api/.well-known/a2a-discovery/agent-card.json');
  await check('POST', '/api/a2a/a2a-discovery', { body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'no-such-task' } } });
  // Public metadata: the catalog and where it is announced.
  for (const path of Object.keys(doc.paths).filter((p) => !p.startsWith('/api/') && !['/healthz', '/readyz', '/metrics', '/.well-known/agent-card.json', '/.well-known/agent.json'].includes(p))) {
    await check('GET', path);
  }
  // Without the token: the guard's 401, as the document says.
  const saved = AUTH.authorization;
  try {
    (AUTH as Record<string, string>).authorization = 'Bearer wrong';
    await check('GET', '/api/snapshot');
  } finally {
    (AUTH as Record<string, string>).authorization = saved;
  }

  assert.deepEqual(failures, []);
  // The validation bites: a snapshot without its digest, agents that are not a list, is refused by the same schema.
  const snapshotSchema = JSON.parse(JSON.stringify(doc.paths['/api/snapshot']!['get']!.responses['200']!.content!['application/json']!.schema).replaceAll('"#/components/', '"https://contract.test/openapi#/components/')) as object;
  assert.equal(ajv.compile({ ...snapshotSchema, $id: 'https://contract.test/negative' })({ version: 1, createdAt: 'now', routing: null, agents: {} }), false);
  const all = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`));
  assert.deepEqual(all.filter((k) => !exercised.has(k)), [], 'operations no request here exercised');
});
