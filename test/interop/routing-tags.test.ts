/**
 * Reviewed routing tags against real frameworks: two ADK JS agents served by ADK's own `toA2a`
 * with the cards it builds by itself (every skill tagged `llm`, tool skills `llm`, `tools`) and a
 * Mastra agent (one skill per tool, tagged `tool`), told apart in `routed` mode only by their static
 * entries' `routingTags`. Driven as a user does: the built CLI's `serve`, then `/api/snapshot`
 * and `/api/chat`. The models are fakes (a scripted `BaseLlm`, the AI SDK's mock): no network model.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { BaseLlm, FunctionTool, LlmAgent, toA2a } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { admitted, chat, serve, type Serving } from './harness.js';
import { startMastraPeer, type MastraPeer } from './mastra-peer.js';

/** A scripted model: answers `<prefix>: <the user's last text>`, never a network call. */
class ScriptedModel extends BaseLlm {
  readonly #prefix: string;

  constructor(prefix: string) {
    super({ model: `scripted-${prefix}` });
    this.#prefix = prefix;
  }

  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const last = [...(request.contents ?? [])].reverse().find((c) => c.role === 'user');
    const text = (last?.parts ?? []).map((p) => p.text ?? '').filter((t) => t.trim() !== '' && t.trim() !== 'For context:').at(-1) ?? '';
    yield { content: { role: 'model', parts: [{ text: `${this.#prefix}: ${text.trim()}` }] }, turnComplete: true };
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('the scripted model has no live mode'));
  }
}

interface AdkPeer {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** An ADK JS LlmAgent behind `toA2a` on loopback, with the card `toA2a` builds (no agentCard given). */
async function startToA2a(name: string, prefix: string, withTool: boolean): Promise<AdkPeer> {
  const app = express();
  app.use(express.json());
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const tools = withTool ? [new FunctionTool({ name: 'lookup_order', description: 'Looks up an order.', execute: () => ({ found: true }) })] : [];
  const agent = new LlmAgent({ name, description: `${name}, an ADK JS agent.`, instruction: 'Answer briefly.', model: new ScriptedModel(prefix), tools });
  await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true });
  return {
    baseUrl: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const vocabulary = [
  { tag: 'returns', description: 'Returns and refunds.', keywords: ['refund', 'return'] },
  { tag: 'billing', description: 'Invoices and charges.', keywords: ['invoice', 'charged'] },
  { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] },
];

let returnsPeer: AdkPeer;
let billingPeer: AdkPeer;
let mastra: MastraPeer;
let s: Serving;

before(async () => {
  returnsPeer = await startToA2a('returns_desk', 'returns desk', true);
  billingPeer = await startToA2a('billing_desk', 'billing desk', false);
  mastra = await startMastraPeer('mastra warranty');
  s = await serve(
    [
      { name: 'returns_agent', url: returnsPeer.baseUrl, description: 'Handles returns and refunds.', routingTags: ['returns'] },
      { name: 'billing_agent', url: billingPeer.baseUrl, description: 'Explains invoices and charges.', routingTags: ['billing'] },
      { name: 'warranty_agent', cardUrl: mastra.cardUrl('warrantyAgent'), description: 'Answers warranty questions.', routingTags: ['warranty'] },
    ],
    vocabulary,
  );
});

after(async () => {
  const code = await s?.stop();
  await Promise.all([returnsPeer?.close(), billingPeer?.close(), mastra?.close()]);
  assert.equal(code, 0, `serve exit code after SIGTERM (stderr: ${s?.stderr()})`);
});

describe('routingTags: ADK JS toA2a (llm-tagged cards) and Mastra, routed apart in routed mode', () => {
  test('each is in the snapshot with its reviewed tags; its card\'s own tags are shown as cardTags, not alerted', async () => {
    const found = await Promise.all(['returns_agent', 'billing_agent', 'warranty_agent'].map((n) => admitted(s, n)));
    const agents = found.map((f) => f.agent);
    assert.ok(agents.every(Boolean), `not all admitted: ${JSON.stringify(found.map((f) => f.endpoints), null, 1)}`);
    assert.deepEqual(
      agents.map((a) => [a!.localName, a!.tags, a!.cardTags]),
      [
        ['returns_agent', ['returns'], ['llm', 'tools']],
        ['billing_agent', ['billing'], ['llm']],
        // Mastra publishes one skill per tool, tagged `tool`.
        ['warranty_agent', ['warranty'], ['tool']],
      ],
    );
    assert.doesNotMatch(s.stderr(), /tags outside the reviewed vocabulary|does not fit/);
  });

  for (const [message, agent, reply] of [
    ['I want a refund', 'returns_agent', 'returns desk: I want a refund'],
    ['Please explain my invoice', 'billing_agent', 'billing desk: Please explain my invoice'],
    ['Is my warranty still valid?', 'warranty_agent', 'mastra warranty: Is my warranty still valid?'],
  ] as const) {
    test(`"${message}" is answered by ${agent}`, async () => {
      await admitted(s, agent);
      const r = await chat(s, `routing-tags-${agent}`, message);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.error ?? undefined, undefined, `chat error: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.author, agent);
      assert.deepEqual(r.body.agents, [agent], 'the turn went through that agent alone');
      assert.match(r.body.reply, new RegExp(reply.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    });
  }
});
