/**
 * The orchestrator as an A2A agent (issue 39): the service publishes its own card and answers A2A
 * at `POST /api/a2a`, each contextId a chat session pinned like one.
 *
 * Real service in process on loopback over two demo peers (packages/service/src/demo/peers.ts: an
 * ADK JS `toA2a` agent speaking A2A 0.3 and an @a2a-js/sdk 1.x agent speaking 1.0), called by real
 * clients from npm: @a2a-js/sdk 1.3.0 and 1.0.1 (`a2a-sdk-101`, legacyCompat) and 0.3.14
 * (`a2a-sdk-0314`, its defaults); then a second instance of the service discovering the first.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFactory as ClientFactory0314 } from 'a2a-sdk-0314/client';
import * as sdk101Client from 'a2a-sdk-101/client';
import * as sdk130Client from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { InMemoryRunner, RemoteA2AAgent } from '@google/adk';
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { requestJson } from '../helpers/raw-http.js';
import type { JsonReply } from '../helpers/raw-http.js';
import { texts03, texts1x } from '../helpers/a2a-texts.js';

let billing: DemoPeer & { card: Record<string, unknown> };
let warranty: DemoPeer;
let svc: RunningService;

const VOCABULARY = [
  { tag: 'billing', description: 'Invoices, charges and payments.', keywords: ['invoice', 'charged', 'payment'] },
  { tag: 'warranty', description: 'Warranty coverage and repairs.', keywords: ['warranty', 'covered', 'repair'] },
];

function serviceOptions(extra: Partial<ServiceOptions> = {}): ServiceOptions {
  return {
    port: 0,
    policy: { allow: [new URL(billing.baseUrl).origin, new URL(warranty.baseUrl).origin], allowLoopback: true },
    vocabulary: VOCABULARY,
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice, charge and payment questions.', tags: ['billing'] },
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty coverage questions.', tags: ['warranty'] },
    ],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
    root: { kind: 'routed' },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  } as ServiceOptions;
}

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function snapshotAgents(url: string): Promise<string[]> {
  const res = await fetch(`${url}/api/snapshot`);
  if (res.status !== 200) return [];
  return ((await res.json()) as { agents: Array<{ localName: string }> }).agents.map((a) => a.localName);
}

before(async () => {
  const skills = (tag: string) => [{ id: `${tag}-skill`, name: tag, description: `Handles ${tag}.`, tags: [tag] }];
  billing = await startAdkDemoAgent({ name: 'billing', cardName: 'Billing Agent', skills: skills('billing'), reply: (t) => `billing heard: ${t}`, maxAgeSeconds: 0 });
  warranty = await startV1DemoAgent({ name: 'warranty', cardName: 'Warranty Agent', skills: skills('warranty'), reply: (t) => `warranty heard: ${t}`, maxAgeSeconds: 0 });
  svc = await startService(serviceOptions());
  await waitUntil(async () => (await snapshotAgents(svc.url)).length === 2, 'both agents in the snapshot');
});

after(async () => {
  await svc?.close();
  await Promise.all([billing?.close(), warranty?.close()]);
});

const factory1x = (sdk: typeof sdk130Client) =>
  new sdk.ClientFactory({
    transports: [new sdk.JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
    cardResolver: new sdk.DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
  });

const message1x = (id: string, text: string, contextId = '') => ({
  message: { messageId: id, contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: undefined,
  metadata: undefined,
  tenant: '',
});

/** One A2A 1.0 `SendMessage` as JSON-RPC over a fresh connection from `from` (a loopback address). */
function rpc(base: string, text: string, contextId: string, o: { from?: string; headers?: Record<string, string> } = {}): Promise<JsonReply> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${Math.random()}`, contextId, role: 'ROLE_USER', parts: [{ text }] } } });
  return requestJson(base, 'POST', '/api/a2a', { 'content-type': 'application/json', 'a2a-version': '1.0', ...o.headers }, body, { ...(o.from !== undefined && { from: o.from }) });
}

/** The digest a 1.0 JSON-RPC result's task says its turn ran on. */
function digestOf(reply: JsonReply): string {
  const task = (reply.json['result'] as { task?: { metadata?: { digest?: string } } } | undefined)?.task;
  assert.ok(task?.metadata?.digest, reply.body);
  return task.metadata.digest;
}

describe('the orchestrator as an A2A agent', () => {
  test('its card is public, cached by ETag, 1.0 with A2A-Version: 1.0 and 0.3 (1.0 interfaces embedded) without', async () => {
    const res = await fetch(`${svc.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('vary'), 'A2A-Version');
    assert.equal(res.headers.get('cache-control'), 'max-age=30');
    const v1 = (await res.json()) as { supportedInterfaces: Array<{ url: string; protocolVersion: string }>; skills: Array<{ id: string; tags: string[]; examples?: string[] }>; capabilities: { streaming: boolean }; url?: unknown; securitySchemes?: unknown };
    assert.deepEqual(v1.supportedInterfaces.map((i) => [i.url, i.protocolVersion]), [[`${svc.url}/api/a2a`, '1.0'], [`${svc.url}/api/a2a`, '0.3']]);
    assert.deepEqual(v1.skills.map((s) => [s.id, s.tags]), [['billing_agent', ['billing']], ['warranty_agent', ['warranty']]]);
    assert.deepEqual(v1.skills[0]?.examples, ['invoice', 'charged', 'payment']);
    assert.equal(v1.capabilities.streaming, true);
    assert.equal(v1.url, undefined);
    assert.equal(v1.securitySchemes, undefined, 'an open loopback service asks for no credentials');

    const legacy = await fetch(`${svc.url}/.well-known/agent-card.json`);
    const v03 = (await legacy.json()) as { url: string; protocolVersion: string; preferredTransport: string; supportedInterfaces: unknown[] };
    assert.equal(v03.url, `${svc.url}/api/a2a`);
    assert.equal(v03.protocolVersion, '0.3.0');
    assert.equal(v03.preferredTransport, 'JSONRPC');
    assert.equal(v03.supportedInterfaces.length, 2);
    const etag = legacy.headers.get('etag');
    assert.ok(etag !== null && etag !== res.headers.get('etag'), 'each form has its own ETag');
    assert.equal((await fetch(`${svc.url}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } })).status, 304);
    // The 0.2 path serves the same card.
    assert.equal(((await (await fetch(`${svc.url}/.well-known/agent.json`)).json()) as { url: string }).url, v03.url);
  });

  test('a2a-js 0.3.14 client (its defaults): sendMessage and sendMessageStream get the routed agent’s answer', async () => {
    const client = await new ClientFactory0314().createFromUrl(svc.url);
    const card = await client.getAgentCard();
    assert.equal(card.protocolVersion, '0.3.0');
    const result = await client.sendMessage({ message: { kind: 'message', messageId: 'm-0314', role: 'user', parts: [{ kind: 'text', text: 'Why was I charged twice on my invoice?' }] } });
    assert.equal((result as { status?: { state?: string } }).status?.state, 'completed', JSON.stringify(result));
    assert.ok(texts03(result).includes('billing heard: Why was I charged twice on my invoice?'), JSON.stringify(result));

    const states: string[] = [];
    const streamed: string[] = [];
    for await (const event of client.sendMessageStream({ message: { kind: 'message', messageId: 'm-0314-s', role: 'user', parts: [{ kind: 'text', text: 'Is my repair covered by warranty?' }] } })) {
      const e = event as { kind: string; status?: { state: string } };
      if (e.kind === 'status-update' && e.status) states.push(e.status.state);
      streamed.push(...texts03(event));
    }
    assert.deepEqual(states, ['working', 'completed']);
    assert.ok(streamed.includes('warranty heard: Is my repair covered by warranty?'), streamed.join(' | '));
  });

  test('ADK JS’s RemoteA2AAgent (its nested a2a-js 0.3 client) over the service’s URL answers inside an ADK run', async () => {
    const agent = new RemoteA2AAgent({ name: 'support_desk', description: 'Another team’s orchestrator.', agentCard: `${svc.url}/` });
    const runner = new InMemoryRunner({ agent, appName: 'caller' });
    const session = await runner.sessionService.createSession({ appName: 'caller', userId: 'u' });
    const texts: string[] = [];
    for await (const event of runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: 'Why was I charged twice on my invoice?' }] } })) {
      assert.equal(event.errorMessage, undefined, event.errorMessage);
      texts.push(...(event.content?.parts ?? []).flatMap((p) => (p.text !== undefined ? [p.text] : [])));
    }
    assert.ok(texts.includes('billing heard: Why was I charged twice on my invoice?'), texts.join(' | '));
  });

  for (const [version, sdk] of [
    ['1.0.1', sdk101Client as unknown as typeof sdk130Client],
    ['1.3.0', sdk130Client],
  ] as const) {
    test(`a2a-js ${version} client (legacyCompat): sendMessage and sendMessageStream over A2A 1.0`, async () => {
      const client = await factory1x(sdk).createFromUrl(svc.url);
      const card = await client.getAgentCard();
      assert.equal(card.supportedInterfaces[0]?.protocolVersion, '1.0');
      const result = await client.sendMessage(message1x(`m-${version}`, 'Is my repair covered by warranty?'));
      assert.ok(texts1x(result).includes('warranty heard: Is my repair covered by warranty?'), JSON.stringify(result));

      const texts: string[] = [];
      let last: unknown;
      for await (const event of client.sendMessageStream(message1x(`m-${version}-s`, 'Please explain this invoice payment.'))) {
        texts.push(...texts1x(event));
        last = event;
      }
      assert.ok(texts.includes('billing heard: Please explain this invoice payment.'), texts.join(' | '));
      assert.equal((last as { payload?: { value?: { status?: { state?: number } } } }).payload?.value?.status?.state, 3, 'the stream ends completed');
    });
  }

  test('a contextId is a pinned session: after the snapshot changes it stays on its digest, a new context starts on the new one', async () => {
    const context = `ctx-pin-${Date.now()}`;
    const first = await rpc(svc.url, 'What is on my invoice?', context);
    assert.equal(first.status, 200, first.body);
    const before = digestOf(first);
    // The billing peer "redeploys" with another card: a new canonical hash, a new snapshot digest.
    const skills = billing.card['skills'] as Array<Record<string, unknown>>;
    billing.card['skills'] = [{ ...skills[0], description: 'Handles billing, now with refunds of charges.' }];
    await waitUntil(async () => ((await (await fetch(`${svc.url}/api/snapshot`)).json()) as { digest: string }).digest !== before, 'a new snapshot');
    const again = await rpc(svc.url, 'And the payment?', context);
    assert.equal(digestOf(again), before, 'the same context stays on its snapshot');
    const fresh = await rpc(svc.url, 'What is on my invoice?', `ctx-new-${Date.now()}`);
    assert.notEqual(digestOf(fresh), before, 'a new context starts on the new snapshot');
  });

  test('returnImmediately: the task comes back at once and completes; tasks/get (GetTask) reads it, another client cannot', async () => {
    const send = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-ri', contextId: `ctx-ri-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'What is on my invoice?' }] }, configuration: { returnImmediately: true } } });
    const first = await requestJson(svc.url, 'POST', '/api/a2a', { 'content-type': 'application/json', 'a2a-version': '1.0' }, send);
    const id = (first.json['result'] as { task: { id: string } }).task.id;
    const get = (from: string) => requestJson(svc.url, 'POST', '/api/a2a', { 'content-type': 'application/json', 'a2a-version': '1.0' }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id } }), { from });
    let task: { status?: { state?: string; message?: unknown } } | undefined;
    await waitUntil(async () => {
      task = (await get('127.0.0.1')).json['result'] as typeof task;
      return task?.status?.state === 'TASK_STATE_COMPLETED' || task?.status?.state === 'TASK_STATE_FAILED';
    }, 'the task to end');
    assert.equal(task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(task));
    assert.ok(JSON.stringify(task).includes('billing heard: What is on my invoice?'));
    assert.equal(((await get('127.0.0.2')).json['error'] as { code: number }).code, -32001, 'another client’s task is not found');
  });

  test('a context belongs to the client that started it; a bad contextId is a clear JSON-RPC error', async () => {
    const context = `ctx-own-${Date.now()}`;
    assert.equal((await rpc(svc.url, 'invoice?', context, { from: '127.0.0.1' })).status, 200);
    const other = await rpc(svc.url, 'invoice?', context, { from: '127.0.0.2' });
    const error = other.json['error'] as { code: number; message: string } | undefined;
    assert.equal(error?.code, -32051, other.body);
    assert.match(error.message, /belongs to another caller/);
    const bad = await rpc(svc.url, 'invoice?', 'has spaces in it');
    assert.equal((bad.json['error'] as { code: number; message: string }).code, -32602);
    assert.match((bad.json['error'] as { message: string }).message, /contextId "has spaces in it" must be/);
  });

  test('listed in its own AI Catalog, at its own card, with server.a2a.listInCatalog', async () => {
    const other = await startService(serviceOptions({ catalog: { enabled: true }, a2a: { listInCatalog: true } }));
    try {
      await waitUntil(async () => (await snapshotAgents(other.url)).length === 2, 'the catalog instance’s snapshot');
      const doc = (await (await fetch(`${other.url}/.well-known/ai-catalog.json`)).json()) as { entries: Array<{ url?: string; displayName: string; tags: string[] }> };
      const self = doc.entries.find((e) => e.url === '/.well-known/agent-card.json');
      assert.deepEqual(self && { name: self.displayName, tags: self.tags }, { name: 'a2a-discovery', tags: ['billing', 'warranty'] });
    } finally {
      await other.close();
    }
  });
});

describe('an orchestrator of orchestrators', () => {
  test('a second instance discovers the first by its card and its chat turn is answered by the agent the first routed to', async () => {
    const origin = new URL(svc.url).origin;
    const second = await startService({
      port: 0,
      policy: { allow: [origin], allowLoopback: true },
      vocabulary: VOCABULARY,
      needs: [{ tag: 'billing' }],
      static: [{ name: 'support_desk', url: `${svc.url}/`, description: 'Another team’s support orchestrator.', tags: ['billing', 'warranty'] }],
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 200 },
      root: { kind: 'routed' },
      a2a: { name: 'front-desk' },
      logger: createLogger({ level: 'silent' }),
    } as ServiceOptions);
    try {
      await waitUntil(async () => (await snapshotAgents(second.url)).includes('support_desk'), 'the first instance in the second’s snapshot');
      const res = await fetch(`${second.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Why was I charged twice on my invoice?' }) });
      const body = (await res.json()) as { reply: string; author: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.author, 'support_desk');
      assert.equal(body.reply, 'billing heard: Why was I charged twice on my invoice?');
      // The second's own card lists the first as its skill, with the reviewed text.
      const card = (await (await fetch(`${second.url}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as { name: string; skills: Array<{ id: string; description: string }> };
      assert.deepEqual([card.name, card.skills.map((s) => [s.id, s.description])], ['front-desk', [['support_desk', 'Another team’s support orchestrator.']]]);
    } finally {
      await second.close();
    }
  });
});

describe('auth and limits on the A2A endpoint', () => {
  const TOKEN = 'a2a-test-token-0123456789';
  let guarded: RunningService;

  before(async () => {
    guarded = await startService(serviceOptions({ token: TOKEN, limits: { maxTurnsPerClient: 1 } }));
    await waitUntil(async () => {
      const res = await fetch(`${guarded.url}/api/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return res.status === 200 && ((await res.json()) as { agents: unknown[] }).agents.length === 2;
    }, 'the guarded instance’s snapshot');
  });

  after(async () => {
    warranty.setHang(false);
    await guarded?.close();
  });

  test('the card stays public and names the bearer scheme; a call without the token is 401', async () => {
    const card = (await (await fetch(`${guarded.url}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as { securitySchemes: Record<string, unknown>; securityRequirements: unknown[] };
    assert.deepEqual(Object.keys(card.securitySchemes), ['bearer']);
    assert.equal((card.securitySchemes['bearer'] as { httpAuthSecurityScheme: { scheme: string } }).httpAuthSecurityScheme.scheme, 'bearer');
    const legacy = (await (await fetch(`${guarded.url}/.well-known/agent-card.json`)).json()) as { securitySchemes: Record<string, { type: string; scheme: string }>; security: unknown[] };
    assert.deepEqual(legacy.securitySchemes['bearer'] && [legacy.securitySchemes['bearer'].type, legacy.securitySchemes['bearer'].scheme], ['http', 'bearer']);
    assert.deepEqual(legacy.security, [{ bearer: [] }]);

    const refused = await rpc(guarded.url, 'invoice?', 'ctx-anon');
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers['www-authenticate']), /^Bearer/);
    const allowed = await rpc(guarded.url, 'invoice?', 'ctx-auth', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(allowed.status, 200, allowed.body);
    assert.ok(JSON.stringify(allowed.json).includes('billing heard: invoice?'), allowed.body);
  });

  test('a turn over the per-client limit is a JSON-RPC error at once; a client that goes away frees its turn', async () => {
    warranty.setHang(true);
    const auth = { authorization: `Bearer ${TOKEN}` };
    let cut: (() => void) | undefined;
    const hanging = requestJson(
      guarded.url,
      'POST',
      '/api/a2a',
      { 'content-type': 'application/json', 'a2a-version': '1.0', ...auth },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-hang', contextId: 'ctx-hang', role: 'ROLE_USER', parts: [{ text: 'Is my repair covered by warranty?' }] } } }),
      { onRequest: (req) => (cut = () => req.destroy()) },
    ).catch(() => undefined);
    // The hanging turn holds the client's one slot once the peer has its request.
    await waitUntil(async () => {
      const r = await rpc(guarded.url, 'invoice?', `ctx-over-${Date.now()}`, { headers: auth });
      return (r.json['error'] as { code?: number } | undefined)?.code === -32050;
    }, 'the per-client refusal');
    const over = await rpc(guarded.url, 'invoice?', 'ctx-over', { headers: auth });
    assert.match((over.json['error'] as { message: string }).message, /server\.limits\.maxTurnsPerClient/);
    cut?.();
    await hanging;
    warranty.setHang(false);
    await waitUntil(async () => (await rpc(guarded.url, 'invoice?', `ctx-after-${Date.now()}`, { headers: auth })).status === 200 && true, 'the freed slot');
    const after = await rpc(guarded.url, 'What about my invoice?', 'ctx-after', { headers: auth });
    assert.ok(JSON.stringify(after.json).includes('billing heard'), after.body);
  });
});

describe('draining', () => {
  test('a draining service refuses a new A2A turn with a JSON-RPC error (-32052), HTTP 503 and Retry-After', async () => {
    const draining = await startService(serviceOptions({ drainTimeoutMs: 10_000 }));
    let closed: Promise<void> | undefined;
    let cut: (() => void) | undefined;
    try {
      await waitUntil(async () => (await snapshotAgents(draining.url)).length === 2, 'the snapshot');
      warranty.setHang(true);
      // A turn in flight keeps the service draining (it may finish within drainTimeoutMs).
      const inFlight = requestJson(
        draining.url,
        'POST',
        '/api/a2a',
        { 'content-type': 'application/json', 'a2a-version': '1.0' },
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: 'm-drain', contextId: 'ctx-drain', role: 'ROLE_USER', parts: [{ text: 'Is my repair covered by warranty?' }] } } }),
        { onRequest: (req) => (cut = () => req.destroy()) },
      ).catch(() => undefined);
      // Its session is pinned (another caller's to this one: counted in `others`).
      await waitUntil(async () => ((await (await fetch(`${draining.url}/api/sessions`)).json()) as { others: number }).others === 1, 'the turn in flight');
      closed = draining.close();
      await waitUntil(async () => (await fetch(`${draining.url}/readyz`)).status === 503, 'the drain');
      const refused = await rpc(draining.url, 'invoice?', 'ctx-late');
      assert.equal(refused.status, 503, refused.body);
      assert.equal((refused.json['error'] as { code: number }).code, -32052, refused.body);
      assert.match((refused.json['error'] as { message: string }).message, /shutting down/);
      assert.ok(refused.headers['retry-after'] !== undefined);
      cut?.();
      await inFlight;
    } finally {
      warranty.setHang(false);
      cut?.();
      await (closed ?? draining.close());
    }
  });
});
