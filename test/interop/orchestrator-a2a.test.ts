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
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import { startService } from '../../packages/service/src/server/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/server/index.js';
import { createLogger } from '../../packages/service/src/server/logger.js';

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

/** Every text in a 0.3 result (a Message, or a Task's status message, history and artifacts). */
function texts03(result: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o['kind'] === 'text' && typeof o['text'] === 'string') out.push(o['text']);
      else Object.values(o).forEach(walk);
    }
  };
  walk(result);
  return out;
}

/** Every text part in a decoded 1.x result (`{ content: { $case: 'text', value } }`). */
function texts1x(result: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const c = o['content'] as { $case?: unknown; value?: unknown } | undefined;
      if (c && c.$case === 'text' && typeof c.value === 'string') out.push(c.value);
      else Object.values(o).forEach(walk);
    }
  };
  walk(result);
  return out;
}

describe('the orchestrator as an A2A agent', () => {
  test('its card: skills from the snapshot, both forms', async () => {
    const v1 = (await (await fetch(`${svc.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json()) as Record<string, unknown>;
    console.log(JSON.stringify(v1));
    const v03res = await fetch(`${svc.url}/.well-known/agent-card.json`);
    console.log(v03res.headers.get('etag'), await v03res.text());
  });

  test('a2a-js 0.3.14 client: card, sendMessage', async () => {
    const client = await new ClientFactory0314().createFromUrl(svc.url);
    const card = await client.getAgentCard();
    assert.equal(card.protocolVersion, '0.3.0');
    const result = await client.sendMessage({ message: { kind: 'message', messageId: 'm-0314', role: 'user', parts: [{ kind: 'text', text: 'Why was I charged twice on my invoice?' }] } });
    console.log(JSON.stringify(result));
    assert.ok(texts03(result).some((t) => t.includes('billing heard:')), JSON.stringify(result));
  });

  for (const [version, sdk] of [
    ['1.0.1', sdk101Client as unknown as typeof sdk130Client],
    ['1.3.0', sdk130Client],
  ] as const) {
    test(`a2a-js ${version} client: card, sendMessage`, async () => {
      const client = await new sdk.ClientFactory({
        transports: [new sdk.JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
        cardResolver: new sdk.DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      }).createFromUrl(svc.url);
      const result = await client.sendMessage({
        message: { messageId: `m-${version}`, contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: 'Is my repair covered by warranty?' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
        configuration: undefined,
        metadata: undefined,
        tenant: '',
      });
      console.log(JSON.stringify(result));
      assert.ok(texts1x(result).some((t) => t.includes('warranty heard:')), JSON.stringify(result));
    });
  }
});
