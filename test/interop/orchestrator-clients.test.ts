/**
 * Interop matrix, the other direction: third-party A2A clients call the product's own orchestrator.
 * `serve` (harness.ts) runs from a YAML with two static agents, the product's demo peers
 * (packages/service/src/demo/peers.ts: an ADK JS `toA2a` agent tagged `billing`, A2A 0.3, and an
 * @a2a-js/sdk 1.x agent tagged `warranty`, A2A 1.0 only), so routing is a decision. Each client
 * reads the orchestrator's card, sends one message, and must get the answer of the agent the
 * orchestrator routed to, word for word; that peer must have seen the question, the other not.
 *
 * Clients, each from its own install folder (test-frameworks/<name>/, framework-child.ts):
 * - Strands Agents 1.19.0 `A2AAgent` (an @a2a-js/sdk 0.3.14 client): the standard card path.
 * - BeeAI Framework 0.1.30 `A2AAgent` (@a2a-js/sdk 0.3.14, streaming): the standard card path;
 *   its result quirk (the run's result is the stream's first Task event) is pinned.
 * - Mastra's `MastraClient#getA2A` / `#getA2AV1` (@mastra/client-js 1.47.0): Mastra-shaped paths
 *   only, `<base>/api/.well-known/<agentId>/agent-card.json` and `POST <base>/api/a2a/<agentId>`
 *   (MASTRA-PATHS.md), which the service serves as aliases of its own card and endpoint.
 * - reactive-agents' `discoverAgent` + `createA2AClient` (@reactive-agents/a2a 0.9.0): the A2A 0.2
 *   card path `/.well-known/agent.json`, JSON-RPC posted to the card's `url`.
 *
 * The a2a-js 0.3 / 1.x clients and a second instance of the product are in the orchestrator's own
 * A2A tests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { runFrameworkClient } from './framework-child.js';
import type { Serving } from './harness.js';
import { admitted, serve } from './harness.js';

const BILLING_Q = 'Why was I charged twice?';
const WARRANTY_Q = 'Is serial 7 covered under warranty?';
const billingAnswer = (t: string): string => `billing heard: ${t}`;
const warrantyAnswer = (t: string): string => `warranty heard: ${t}`;

/** The questions each demo peer's model was asked, in order: what "the peer saw the call" means. */
const seen: Record<'billing' | 'warranty', string[]> = { billing: [], warranty: [] };
let adk: DemoPeer;
let v1: DemoPeer;
let s: Serving;

before(async () => {
  const options = (tag: 'billing' | 'warranty', answer: (t: string) => string) => ({
    name: tag,
    cardName: `${tag[0]!.toUpperCase()}${tag.slice(1)} Agent`,
    skills: [{ id: `${tag}-skill`, name: tag, description: `Handles ${tag}.`, tags: [tag] }],
    reply: (t: string) => (seen[tag].push(t), answer(t)),
    maxAgeSeconds: 60,
  });
  adk = await startAdkDemoAgent(options('billing', billingAnswer));
  v1 = await startV1DemoAgent(options('warranty', warrantyAnswer));
  s = await serve(
    [
      { name: 'billing_agent', url: adk.baseUrl, description: 'Answers billing questions.', tags: ['billing'] },
      { name: 'warranty_agent', url: v1.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    [
      { tag: 'billing', description: 'Invoices and charges.', keywords: ['charged', 'invoice'] },
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
    ],
  );
  for (const name of ['billing_agent', 'warranty_agent']) {
    const { agent, endpoints } = await admitted(s, name);
    assert.ok(agent, `${name} not in the snapshot; endpoints: ${JSON.stringify(endpoints, null, 1)}`);
  }
});

after(async () => {
  const code = await s?.stop();
  await Promise.all([adk?.close(), v1?.close()]);
  assert.equal(code, 0, `serve exit code after SIGTERM (stderr: ${s?.stderr()})`);
});

/** What each peer saw during `run`. */
async function observe<T>(run: () => Promise<T>): Promise<{ result: T; billing: string[]; warranty: string[] }> {
  const before = { billing: seen.billing.length, warranty: seen.warranty.length };
  const result = await run();
  return { result, billing: seen.billing.slice(before.billing), warranty: seen.warranty.slice(before.warranty) };
}

/** The card URL Mastra's client is given: its agent id is the card's name (`server.a2a.name`, default "a2a-discovery"). */
async function mastraCardUrl(): Promise<{ name: string; cardUrl: string }> {
  const { name } = (await (await fetch(`${s.url}/.well-known/agent-card.json`)).json()) as { name: string };
  assert.equal(name, 'a2a-discovery');
  return { name, cardUrl: `${s.url}/api/.well-known/${name}/agent-card.json` };
}

describe('foreign A2A clients call the orchestrator', () => {
  test('Strands A2AAgent (a2a-js 0.3): reads the card, a billing question comes back with the ADK peer\'s answer', async () => {
    const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('strands', `${s.url}/`, BILLING_Q));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.equal(answer.card?.protocolVersion, '0.3.0', JSON.stringify(answer));
    assert.equal(answer.reply, billingAnswer(BILLING_Q));
    assert.deepEqual(billing, [BILLING_Q], 'the billing peer was asked');
    assert.deepEqual(warranty, [], 'the warranty peer was not');
  });

  test('Strands A2AAgent: a warranty question is routed to the 1.0-only peer', async () => {
    const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('strands', `${s.url}/`, WARRANTY_Q));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.equal(answer.reply, warrantyAnswer(WARRANTY_Q));
    assert.deepEqual(warranty, [WARRANTY_Q]);
    assert.deepEqual(billing, []);
  });

  test('BeeAI A2AAgent (a2a-js 0.3, streaming): the peer\'s answer arrives in the stream; its result quirk pinned', async () => {
    const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('beeai', `${s.url}/`, WARRANTY_Q));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.equal(answer.card?.protocolVersion, '0.3.0', JSON.stringify(answer));
    assert.ok(answer.streamed?.includes(warrantyAnswer(WARRANTY_Q)), JSON.stringify(answer));
    // BeeAI 0.1.30's A2AAgent builds its result from the stream's first Task event, whose history
    // holds only the user's message (docs/interop.md, BeeAI): pinned, so a fix upstream shows here.
    assert.equal(answer.reply, WARRANTY_Q);
    assert.deepEqual(warranty, [WARRANTY_Q]);
    assert.deepEqual(billing, []);
  });

  for (const wire of ['0.3', '1.0'] as const) {
    test(`Mastra client getA2A${wire === '1.0' ? 'V1' : ''} (${wire} wire form): Mastra-shaped paths, the routed peer's answer`, async () => {
      const { name, cardUrl } = await mastraCardUrl();
      const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('mastra-client', cardUrl, BILLING_Q, [wire]));
      assert.deepEqual(answer.calls, [`GET ${cardUrl}`, `POST ${s.url}/api/a2a/${name}`], 'the URLs Mastra\'s client builds');
      assert.equal(answer.error, undefined, JSON.stringify(answer));
      assert.equal(answer.card?.name, name);
      assert.equal(answer.reply, billingAnswer(BILLING_Q));
      assert.deepEqual(billing, [BILLING_Q]);
      assert.deepEqual(warranty, []);
    });
  }

  test('Mastra client getA2A sendMessageStream (0.3): the routed peer\'s answer in the events, the last one completed with it', async () => {
    const { name, cardUrl } = await mastraCardUrl();
    const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('mastra-client', cardUrl, BILLING_Q, ['0.3-stream']));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.deepEqual(answer.calls, [`GET ${cardUrl}`, `POST ${s.url}/api/a2a/${name}`]);
    assert.ok(answer.streamed?.includes(billingAnswer(BILLING_Q)), JSON.stringify(answer));
    assert.equal(answer.state, 'completed', JSON.stringify(answer));
    assert.equal(answer.reply, billingAnswer(BILLING_Q));
    assert.deepEqual(billing, [BILLING_Q]);
    assert.deepEqual(warranty, []);
  });

  test('reactive-agents client (discoverAgent: the 0.2 card path; message/send to the card\'s url): the routed peer\'s answer', async () => {
    const { result: answer, billing, warranty } = await observe(() => runFrameworkClient('reactive-agents-client', s.url, WARRANTY_Q));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.deepEqual(answer.card, { name: 'a2a-discovery', protocolVersion: '0.3.0' });
    assert.equal(answer.reply, warrantyAnswer(WARRANTY_Q));
    assert.deepEqual(warranty, [WARRANTY_Q]);
    assert.deepEqual(billing, []);
  });

  test('Mastra client: another agent id is not the orchestrator (404, the client\'s error)', async () => {
    const cardUrl = `${s.url}/api/.well-known/someAgent/agent-card.json`;
    const answer = await runFrameworkClient('mastra-client', cardUrl, BILLING_Q);
    assert.equal(answer.reply, undefined, JSON.stringify(answer));
    assert.match(answer.error ?? '', /^HTTP error! status: 404/, JSON.stringify(answer));
    assert.deepEqual(answer.calls, [`GET ${cardUrl}`]);
  });
});

describe('Mastra client on a service with a token (its aliases are under /api/, guarded as the rest)', () => {
  const TOKEN = 'mastra-alias-token-0123456789';
  let guarded: RunningService;

  before(async () => {
    // In process: the interop harness's `serve` has no token; these options are its YAML's.
    guarded = await startService({
      port: 0,
      token: TOKEN,
      policy: { allow: [new URL(adk.baseUrl).origin, new URL(v1.baseUrl).origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Invoices and charges.', keywords: ['charged', 'invoice'] }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: adk.baseUrl, description: 'Answers billing questions.', tags: ['billing'] }],
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 200 },
      logger: createLogger({ level: 'silent' }),
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await fetch(`${guarded.url}/api/snapshot`, { headers: { authorization: `Bearer ${TOKEN}` } });
      if (res.status === 200 && ((await res.json()) as { agents: unknown[] }).agents.length === 1) break;
      assert.ok(Date.now() < deadline, 'the guarded service\'s snapshot never held billing_agent');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  after(async () => {
    await guarded?.close();
  });

  test('without the token: 401 on the card alias, nothing sent', async () => {
    const cardUrl = `${guarded.url}/api/.well-known/a2a-discovery/agent-card.json`;
    const { result: answer, billing } = await observe(() => runFrameworkClient('mastra-client', cardUrl, BILLING_Q));
    assert.match(answer.error ?? '', /^HTTP error! status: 401/, JSON.stringify(answer));
    assert.deepEqual(answer.calls, [`GET ${cardUrl}`]);
    assert.deepEqual(billing, []);
  });

  test('with the token in MastraClient\'s headers: the routed peer\'s answer', async () => {
    const cardUrl = `${guarded.url}/api/.well-known/a2a-discovery/agent-card.json`;
    const { result: answer, billing } = await observe(() => runFrameworkClient('mastra-client', cardUrl, BILLING_Q, ['0.3'], { A2A_BEARER: TOKEN }));
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.equal(answer.reply, billingAnswer(BILLING_Q));
    assert.deepEqual(billing, [BILLING_Q]);
  });
});
