/**
 * Both protocol worlds from one ADK tree, over loopback with real servers:
 * - billing: an ADK agent served by ADK's own `toA2a` (A2A 0.3), reached by ADK's
 *   `RemoteA2AAgent` with our policy-bound 0.3 client;
 * - warranty: an @a2a-js/sdk 1.x server (A2A 1.0 only), reached by our `V1RemoteAgent`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { request } from 'undici';
import { BaseLlm, InMemoryRunner, LlmAgent, RemoteA2AAgent, RoutedAgent, isFinalResponse, toA2a } from '@google/adk';
import type { BaseAgent, BaseLlmConnection, Event, LlmRequest, LlmResponse } from '@google/adk';
import { parseAgentCard } from '../../../packages/core/src/card/index.js';
import type { AgentCardModel } from '../../../packages/core/src/card/index.js';
import { HostPolicy } from '../../../packages/core/src/fetch/index.js';
import { V1RemoteAgent, createPolicyFetch, remoteAgentFor } from '../../../packages/core/src/adk/remote/index.js';
import type { PolicyFetch } from '../../../packages/core/src/adk/remote/index.js';
import { ScriptedLlm } from '../../helpers/a2a-peers.js';
import { startV1Server } from '../../helpers/a2a-v1-server.js';
import type { RunningV1Server } from '../../helpers/a2a-v1-server.js';

type Content = NonNullable<Event['content']>;

const ADK_KEYS = ['adk_app_name', 'adk_user_id', 'adk_session_id'];

function textOf(content: Content | undefined): string {
  return (content?.parts ?? []).map((p) => p.text ?? '').join('');
}

/** The latest user text the served model sees (ADK may prepend "For context:" parts). */
function lastUserText(req: LlmRequest): string {
  const users = req.contents.filter((c) => c.role === 'user');
  const parts = users.at(-1)?.parts ?? [];
  return (parts.at(-1)?.text ?? '').trim();
}

interface AdkPeer {
  baseUrl: string;
  cardUrl: string;
  port: number;
  /** JSON-RPC bodies received on /jsonrpc, in order. */
  bodies: Record<string, unknown>[];
  /** REST bodies received on /rest/..., in order. */
  restBodies: Record<string, unknown>[];
  /** Every HTTP request (card fetches included). */
  httpRequests(): number;
  close(): Promise<void>;
}

/** An ADK LlmAgent (fake model) served by `toA2a`, with a recorder in front of ADK's routes. */
async function startRecordingAdkPeer(name: string): Promise<AdkPeer> {
  const agent = new LlmAgent({ name, description: `${name} questions`, instruction: 'Answer briefly.', model: new ScriptedLlm((req) => `${name}: ${lastUserText(req)}`, `fake-${name}`) });
  const app = express();
  app.use(express.json());
  const bodies: Record<string, unknown>[] = [];
  const restBodies: Record<string, unknown>[] = [];
  let http = 0;
  app.use((req, _res, next) => {
    http++;
    if (req.method === 'POST' && req.path === '/jsonrpc') bodies.push(req.body as Record<string, unknown>);
    if (req.method === 'POST' && req.path.startsWith('/rest')) restBodies.push(req.body as Record<string, unknown>);
    next();
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true });
  const baseUrl = `http://127.0.0.1:${port}/`;
  return {
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    port,
    bodies,
    restBodies,
    httpRequests: () => http,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Fetches and parses a real card (test setup; the agents themselves never fetch cards). */
async function cardOf(url: string): Promise<AgentCardModel> {
  const res = await request(url, { headers: { 'a2a-version': '1.0' } });
  const body = Buffer.from(await res.body.arrayBuffer());
  const r = parseAgentCard(body, { allowLoopback: true, sourceUrl: url });
  assert.equal(r.ok, true, JSON.stringify(r.problems));
  return r.card as AgentCardModel;
}

function messageMetadata(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return (body?.['params'] as { message?: { metadata?: Record<string, unknown> } } | undefined)?.message?.metadata;
}

function router(agents: Readonly<Record<string, BaseAgent>>, ctx: { userContent?: Content }): string {
  return /warranty|serial/i.test(textOf(ctx.userContent)) ? 'warranty' : 'billing';
}

async function runTurn(runner: InMemoryRunner, userId: string, sessionId: string, text: string): Promise<Event[]> {
  const events: Event[] = [];
  for await (const ev of runner.runAsync({ userId, sessionId, newMessage: { role: 'user', parts: [{ text }] } })) events.push(ev);
  return events;
}

function finalReply(events: Event[], author: string): Event {
  const finals = events.filter((e) => e.author === author && isFinalResponse(e) && e.content !== undefined);
  assert.ok(finals.length > 0, `no final event from ${author}: ${JSON.stringify(events.map((e) => ({ a: e.author, t: textOf(e.content), err: e.errorMessage, p: e.partial })))}`);
  return finals.at(-1) as Event;
}

describe('a tree mixing A2A 0.3 (toA2a) and A2A 1.0-only peers', () => {
  let adk: AdkPeer;
  let v1: RunningV1Server;
  let policy: HostPolicy;
  let billingCard: AgentCardModel;
  let warrantyCard: AgentCardModel;
  let shared: PolicyFetch;

  before(async () => {
    adk = await startRecordingAdkPeer('billing_peer');
    v1 = await startV1Server({ prefix: 'warranty' });
    policy = HostPolicy.from({ allow: [`http://127.0.0.1:${adk.port}`, `http://127.0.0.1:${v1.port}`], allowLoopback: true });
    billingCard = await cardOf(adk.cardUrl);
    warrantyCard = await cardOf(v1.cardUrl);
    shared = createPolicyFetch({ policy });
  });
  after(async () => {
    await shared.close();
    await adk.close();
    await v1.close();
  });

  test('the card model picks the right agent for each peer, and building them does no network I/O', () => {
    const before = { adk: adk.httpRequests(), v1: v1.httpRequests };
    const billing = remoteAgentFor({ name: 'billing', description: 'Billing questions.', card: billingCard, policy, fetchImpl: shared });
    const warranty = remoteAgentFor({ name: 'warranty', description: 'Warranty questions.', card: warrantyCard, policy });
    assert.ok(billing instanceof RemoteA2AAgent, 'the 0.3 peer gets ADK RemoteA2AAgent');
    assert.ok(warranty instanceof V1RemoteAgent, 'the 1.0-only peer gets V1RemoteAgent');
    assert.equal(billing.description, 'Billing questions.');
    // A tree, a runner and clones: still nothing on the wire.
    const root = new RoutedAgent({ name: 'support', agents: [billing, warranty], router });
    new InMemoryRunner({ agent: root, appName: 'no_io' });
    warranty.clone({ name: 'warranty_copy' });
    billing.clone({ name: 'billing_copy' });
    assert.deepEqual({ adk: adk.httpRequests(), v1: v1.httpRequests }, before);
    void (warranty as V1RemoteAgent).close();
  });

  test('a RoutedAgent tree reaches both peers; replies are events authored by the local names; no adk_* metadata leaves', async () => {
    // Count what goes through the policy fetch: every request of both clients must.
    const seen: string[] = [];
    const counted = (async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(`${init?.method ?? 'GET'} ${String(input)} ${new Headers(init?.headers).get('accept') ?? ''}`);
      return shared(input, init);
    }) as typeof fetch;
    const billing = remoteAgentFor({ name: 'billing', description: 'Billing questions.', card: billingCard, policy, fetchImpl: counted });
    const warranty = remoteAgentFor({ name: 'warranty', description: 'Warranty questions.', card: warrantyCard, policy, fetchImpl: counted });
    const root = new RoutedAgent({ name: 'support', agents: [billing, warranty], router });
    const runner = new InMemoryRunner({ agent: root, appName: 'support_app' });
    await runner.sessionService.createSession({ appName: 'support_app', userId: 'user-secret', sessionId: 'session-secret' });
    const adkBefore = adk.bodies.length;
    const v1Before = v1.requests;

    const t1 = await runTurn(runner, 'user-secret', 'session-secret', 'Why was I charged twice?');
    assert.equal(textOf(finalReply(t1, 'billing').content), 'billing_peer: Why was I charged twice?');
    assert.ok(t1.every((e) => e.errorMessage === undefined), JSON.stringify(t1.map((e) => e.errorMessage)));

    const t2 = await runTurn(runner, 'user-secret', 'session-secret', 'Is serial 123 under warranty?');
    const reply = finalReply(t2, 'warranty');
    assert.equal(textOf(reply.content), 'warranty: Is serial 123 under warranty?');
    assert.equal(reply.turnComplete, true);

    // A second warranty turn continues the same A2A context (multi-turn).
    const t3 = await runTurn(runner, 'user-secret', 'session-secret', 'And serial 456, warranty?');
    assert.equal(textOf(finalReply(t3, 'warranty').content), 'warranty: And serial 456, warranty?');
    assert.equal(v1.contextIds.length, 2);
    assert.equal(v1.contextIds[1], v1.contextIds[0], 'the second message reuses the server-assigned contextId');

    // Every request went through the policy fetch; ADK's 0.3 call was a streaming (SSE) one.
    assert.deepEqual(seen, [
      `POST ${adk.baseUrl}jsonrpc text/event-stream`,
      `POST ${v1.rpcUrl} application/json`,
      `POST ${v1.rpcUrl} application/json`,
    ]);

    // What the servers received: the messages, and none of ADK's local identifiers.
    const adkBodies = adk.bodies.slice(adkBefore);
    assert.equal(adkBodies.length, 1);
    assert.equal(adkBodies[0]!['method'], 'message/stream');
    assert.equal(v1.requests - v1Before, 2);
    const adkMeta = messageMetadata(adkBodies[0]) ?? {};
    for (const key of ADK_KEYS) assert.equal(key in adkMeta, false, `${key} reached the ADK peer`);
    for (const body of v1.bodies.slice(v1Before)) {
      const meta = messageMetadata(body) ?? {};
      for (const key of ADK_KEYS) assert.equal(key in meta, false, `${key} reached the 1.0 peer`);
    }
    assert.doesNotMatch(JSON.stringify(adkBodies), /user-secret|session-secret|support_app/);
    assert.doesNotMatch(JSON.stringify(v1.bodies.slice(v1Before)), /user-secret|session-secret|support_app/);
    // The 1.0 wire shape: SendMessage with a ROLE_USER message of `{ text }` parts.
    const sent = v1.bodies.at(-1) as { method: string; params: { message: { role: string; parts: unknown[] } } };
    assert.equal(sent.method, 'SendMessage');
    assert.equal(sent.params.message.role, 'ROLE_USER');
    assert.deepEqual(sent.params.message.parts, [{ text: 'And serial 456, warranty?' }]);
    assert.equal(v1.lastHeaders['a2a-version'], '1.0');
  });

  test('with allowAdkMetadata: true the identifiers reach both peers', async () => {
    const billing = remoteAgentFor({ name: 'billing', description: 'Billing.', card: billingCard, policy, fetchImpl: shared, allowAdkMetadata: true });
    const warranty = remoteAgentFor({ name: 'warranty', description: 'Warranty.', card: warrantyCard, policy, fetchImpl: shared, allowAdkMetadata: true });
    const root = new RoutedAgent({ name: 'support', agents: [billing, warranty], router });
    const runner = new InMemoryRunner({ agent: root, appName: 'open_app' });
    await runner.sessionService.createSession({ appName: 'open_app', userId: 'u-open', sessionId: 's-open' });
    const adkBefore = adk.bodies.length;
    await runTurn(runner, 'u-open', 's-open', 'invoice please');
    await runTurn(runner, 'u-open', 's-open', 'warranty please');
    assert.deepEqual(pick(messageMetadata(adk.bodies[adkBefore]), ADK_KEYS), { adk_app_name: 'open_app', adk_user_id: 'u-open', adk_session_id: 's-open' });
    assert.deepEqual(pick(v1.lastMetadata, ADK_KEYS), { adk_app_name: 'open_app', adk_user_id: 'u-open', adk_session_id: 's-open' });
  });

  test('an LlmAgent with a scripted fake model transfers to the 1.0 remote agent', async () => {
    const warranty = remoteAgentFor({ name: 'warranty', description: 'Warranty questions.', card: warrantyCard, policy, fetchImpl: shared });
    const billing = remoteAgentFor({ name: 'billing', description: 'Billing questions.', card: billingCard, policy, fetchImpl: shared });
    const root = new LlmAgent({ name: 'support', instruction: 'Route the user.', model: new TransferLlm('warranty'), subAgents: [billing, warranty] });
    const runner = new InMemoryRunner({ agent: root, appName: 'llm_app' });
    await runner.sessionService.createSession({ appName: 'llm_app', userId: 'u-llm', sessionId: 's-llm' });
    const events = await runTurn(runner, 'u-llm', 's-llm', 'serial 789 broke');
    assert.ok(events.some((e) => e.actions?.transferToAgent === 'warranty'), 'the model transferred');
    assert.equal(textOf(finalReply(events, 'warranty').content), 'warranty: serial 789 broke');
    assert.doesNotMatch(JSON.stringify(v1.bodies.at(-1)), /transfer_to_agent|u-llm|s-llm/);
  });
});

describe('V1RemoteAgent against other 1.0 server behaviours', () => {
  test('streaming task lifecycle: partial progress, one final event with the artifact text', async () => {
    const v1 = await startV1Server({ mode: 'task', streaming: true, prefix: 'stream' });
    try {
      const policy = HostPolicy.from({ allow: [`http://127.0.0.1:${v1.port}`], allowLoopback: true });
      const agent = new V1RemoteAgent({ name: 'warranty', description: 'Warranty.', card: await cardOf(v1.cardUrl), policy });
      const runner = new InMemoryRunner({ agent, appName: 'stream_app' });
      await runner.sessionService.createSession({ appName: 'stream_app', userId: 'u', sessionId: 's' });
      const events = await runTurn(runner, 'u', 's', 'hello');
      assert.equal((v1.bodies[0] as { method: string }).method, 'SendStreamingMessage');
      assert.ok(events.some((e) => e.partial === true && textOf(e.content) === 'working on it'), 'progress came as a partial event');
      const final = finalReply(events, 'warranty');
      assert.equal(textOf(final.content), 'stream: hello');
      assert.equal(final.turnComplete, true);
      assert.equal(final.customMetadata?.['a2a:task_state'], 'TASK_STATE_COMPLETED');
      const stored = (await runner.sessionService.getSession({ appName: 'stream_app', userId: 'u', sessionId: 's' }))!.events;
      assert.equal(stored.filter((e) => e.author === 'warranty').length, 1, 'only the final event is stored');

      // clone(): a fresh, detached agent with its own client that works the same way.
      const copy = agent.clone({ name: 'warranty_copy' });
      assert.ok(copy instanceof V1RemoteAgent && copy !== agent);
      const copyRunner = new InMemoryRunner({ agent: copy, appName: 'clone_app' });
      await copyRunner.sessionService.createSession({ appName: 'clone_app', userId: 'u', sessionId: 's' });
      assert.equal(textOf(finalReply(await runTurn(copyRunner, 'u', 's', 'again'), 'warranty_copy').content), 'stream: again');
      await copy.close();
      await agent.close();
    } finally {
      await v1.close();
    }
  });

  test('blocking task that fails: an error event, not an exception', async () => {
    const v1 = await startV1Server({ mode: 'fail' });
    try {
      const policy = HostPolicy.from({ allow: [`http://127.0.0.1:${v1.port}`], allowLoopback: true });
      const agent = new V1RemoteAgent({ name: 'warranty', description: 'Warranty.', card: await cardOf(v1.cardUrl), policy });
      const runner = new InMemoryRunner({ agent, appName: 'fail_app' });
      await runner.sessionService.createSession({ appName: 'fail_app', userId: 'u', sessionId: 's' });
      const events = await runTurn(runner, 'u', 's', 'hello');
      const last = events.at(-1) as Event;
      assert.equal(last.author, 'warranty');
      assert.equal(last.errorCode, 'TASK_STATE_FAILED');
      assert.match(last.errorMessage ?? '', /warranty database is down/);
      assert.equal(last.turnComplete, true);
      await agent.close();
    } finally {
      await v1.close();
    }
  });

  test('a 1.0 peer that is down: an error event, the runner does not throw, and the next run retries', async () => {
    const v1 = await startV1Server();
    const card = await cardOf(v1.cardUrl);
    const policy = HostPolicy.from({ allow: [`http://127.0.0.1:${v1.port}`], allowLoopback: true });
    await v1.close();
    const agent = remoteAgentFor({ name: 'warranty', description: 'Warranty.', card, policy });
    assert.ok(agent instanceof V1RemoteAgent);
    const runner = new InMemoryRunner({ agent, appName: 'down_app' });
    await runner.sessionService.createSession({ appName: 'down_app', userId: 'u', sessionId: 's' });
    for (let attempt = 0; attempt < 2; attempt++) {
      const events = await runTurn(runner, 'u', 's', 'hello?');
      assert.equal(events.length, 1);
      const ev = events[0] as Event;
      assert.equal(ev.author, 'warranty');
      assert.equal(ev.errorCode, 'ERR_FETCH_NETWORK');
      assert.match(ev.errorMessage ?? '', /ECONNREFUSED/);
      assert.equal(ev.turnComplete, true);
    }
    await agent.close();
  });
});

function pick(obj: Record<string, unknown> | undefined, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj !== undefined && k in obj) out[k] = obj[k];
  return out;
}

/** A fake model: first call transfers to `target`, later calls (none expected) say "done". */
class TransferLlm extends BaseLlm {
  constructor(private readonly target: string) {
    super({ model: 'fake-transfer' });
  }

  override async *generateContentAsync(req: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const transferred = req.contents.some((c) => c.parts?.some((p) => p.functionResponse?.name === 'transfer_to_agent'));
    if (transferred) {
      yield { content: { role: 'model', parts: [{ text: 'done' }] }, turnComplete: true };
      return;
    }
    yield { content: { role: 'model', parts: [{ functionCall: { name: 'transfer_to_agent', args: { agentName: this.target } } }] }, turnComplete: true };
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('TransferLlm has no live mode'));
  }
}
