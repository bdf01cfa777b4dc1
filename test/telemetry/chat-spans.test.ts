/**
 * Chat turns and A2A calls as OpenTelemetry spans, with the real SDK (NodeTracerProvider and its
 * in-memory exporter) and real A2A peers on loopback: an @a2a-js/sdk 1.x server (blocking and
 * streaming), an ADK JS `toA2a` server (A2A 0.3) whose model is a scripted FAKE (no model API
 * runs here), and a peer answering JSON-RPC / HTTP errors. One turn through the session runner
 * must give chat turn → ADK's `invoke_agent` → the A2A client span with the GenAI A2A attributes,
 * and the peer must receive the trace context of that span.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { LlmAgent, toA2a } from '@google/adk';
import { SessionRunner, snapshotTreeBuilder, TreeFactory } from '../../packages/core/src/adk/index.js';
import type { SnapshotTreeBuilder } from '../../packages/core/src/adk/index.js';
import { parseAgentCard, preferredInterface } from '../../packages/core/src/card/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { fetchExtendedCard } from '../../packages/core/src/fetch/extended-card.js';
import { tracedA2aClient } from '../../packages/core/src/adk/remote/a2a-client-span.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { ScriptedLlm, v1Card } from '../helpers/a2a-peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { adkStyleCard } from '../helpers/cards.js';

const SECRET = 'Bearer s3cret-token-never-in-a-span';

let exporter: InMemorySpanExporter;
let provider: NodeTracerProvider;

// One provider for the whole file: tracers taken once (ADK's module-level one, our facade's)
// keep the provider they first saw, so it is registered once and the exporter reset per test.
before(() => {
  exporter = new InMemorySpanExporter();
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
});

afterEach(() => exporter.reset());

after(async () => {
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

/** A snapshot agent for a served card (reviewed fields are ours, the card is the peer's). */
function agentFor(localName: string, card: Record<string, unknown>, baseUrl: string, transport?: SnapshotAgent['transport']): SnapshotAgent {
  const parsed = parseAgentCard(JSON.stringify(card), { allowLoopback: true });
  assert.ok(parsed.ok, JSON.stringify(parsed.problems));
  return {
    localName,
    description: `Reviewed ${localName}.`,
    tags: ['support'],
    critical: true,
    baseUrl,
    sources: ['config'],
    card: parsed.card!,
    canonicalSha256: parsed.canonicalSha256!,
    rawSha256: parsed.rawSha256,
    protocolVersion: parsed.protocolVersion!,
    degraded: false,
    stale: false,
    ...(transport !== undefined && { transport }),
  };
}

/** A session runner over one snapshot with one remote agent, every call with a credential header. */
function oneAgentRunner(agent: SnapshotAgent): { sessions: SessionRunner; snapshot: Snapshot; close(): Promise<void> } {
  const store = new SnapshotStore();
  const snapshot = buildSnapshot([agent], 7, Date.now());
  store.publish(snapshot);
  const policy = HostPolicy.from({ allow: [new URL(agent.baseUrl).origin], allowLoopback: true });
  const buildRoot: SnapshotTreeBuilder = snapshotTreeBuilder({ root: { kind: 'routed' }, policy, credentials: () => ({ authorization: SECRET }) });
  const trees = new TreeFactory({ snapshots: store, buildRoot });
  const sessions = new SessionRunner({ trees });
  return {
    sessions,
    snapshot,
    async close() {
      await sessions.close();
      trees.close();
      await buildRoot.close();
    },
  };
}

function named(name: string): ReadableSpan {
  const spans = exporter.getFinishedSpans().filter((s) => s.name === name);
  assert.equal(spans.length, 1, `one ${name} span (spans: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')})`);
  return spans[0]!;
}

function parentOf(span: ReadableSpan): ReadableSpan | undefined {
  const parentId = span.parentSpanContext?.spanId;
  return exporter.getFinishedSpans().find((s) => s.spanContext().spanId === parentId);
}

/** No attribute or event attribute of any span carries the credential. */
function assertNoSecret(): void {
  for (const span of exporter.getFinishedSpans()) {
    const values = [span.attributes, ...span.events.map((e) => e.attributes ?? {})].flatMap((a) => Object.values(a)).map(String);
    for (const v of values) assert.ok(!v.includes('s3cret'), `${span.name} carries the credential: ${v}`);
  }
}

describe('A2A 1.0 peer (@a2a-js/sdk 1.x server)', () => {
  let peer: RunningV1Server;
  let streaming: RunningV1Server;
  before(async () => {
    peer = await startV1Server({ prefix: 'warranty peer' });
    streaming = await startV1Server({ prefix: 'streaming peer', mode: 'task', streaming: true });
  });
  after(async () => {
    await Promise.all([peer.close(), streaming.close()]);
  });

  test('one turn: chat turn → invoke_agent (ADK) → SendMessage with the convention attributes; the peer receives its traceparent', async () => {
    const r = oneAgentRunner(agentFor('warranty_agent', peer.card, peer.baseUrl));
    try {
      const turn = await r.sessions.run('s1', 'Is serial 123 covered?');
      assert.equal(turn.error, undefined, turn.error);
      assert.equal(turn.reply, 'warranty peer: Is serial 123 covered?');

      const call = named('SendMessage');
      const invoke = parentOf(call);
      assert.equal(invoke?.name, 'invoke_agent warranty_agent', 'a child of ADK’s own agent span');
      let top: ReadableSpan | undefined = invoke;
      while (top !== undefined && parentOf(top) !== undefined) top = parentOf(top);
      const chat = named('a2a_discovery.chat.turn');
      assert.equal(top?.spanContext().spanId, chat.spanContext().spanId, 'the chat turn is the root of the tree');
      assert.equal(call.spanContext().traceId, chat.spanContext().traceId);

      assert.equal(call.kind, 2, 'CLIENT');
      const sent = peer.bodies.at(-1) as { params: { message: { messageId: string } } };
      assert.deepEqual(
        { ...call.attributes },
        {
          'a2a.method.name': 'SendMessage',
          'a2a.message.id': sent.params.message.messageId,
          'gen_ai.conversation.id': peer.contextIds.at(-1),
          'gen_ai.agent.name': 'Warranty Agent',
          'gen_ai.agent.version': '2.1.0',
          'gen_ai.agent.description': 'Answers warranty questions for hardware orders.',
          'a2a.protocol.version': '1.0',
          'server.address': '127.0.0.1',
          'server.port': peer.port,
          'a2a_discovery.agent.local_name': 'warranty_agent',
          'a2a_discovery.snapshot.digest': r.snapshot.digest,
        },
      );
      assert.equal(call.status.code, 0);

      assert.equal(chat.attributes['a2a_discovery.session.id'], 's1');
      assert.equal(chat.attributes['a2a_discovery.snapshot.digest'], r.snapshot.digest);
      assert.equal(chat.attributes['a2a_discovery.snapshot.version'], 7);
      assert.deepEqual(chat.attributes['a2a_discovery.chat.agents'], ['warranty_agent']);
      assert.equal(chat.status.code, 0);

      const tree = named('a2a_discovery.tree.build');
      assert.equal(tree.attributes['a2a_discovery.snapshot.digest'], r.snapshot.digest);
      assert.equal(tree.attributes['a2a_discovery.snapshot.agents'], 1);

      // The peer continues the trace from the A2A client span.
      assert.equal(peer.lastHeaders['traceparent'], `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`);
      assert.equal(peer.lastHeaders['authorization'], SECRET, 'the credential was sent');
      assertNoSecret();
    } finally {
      await r.close();
    }
  });

  test('a traceparent configured in the agent headers is kept (configuration wins; nothing of ours is added)', async () => {
    const configured = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const r = oneAgentRunner(agentFor('warranty_agent', peer.card, peer.baseUrl, { headers: { traceparent: configured } }));
    try {
      const turn = await r.sessions.run('s6', 'Is serial 5 covered?');
      assert.equal(turn.error, undefined, turn.error);
      assert.equal(named('SendMessage').kind, 2);
      assert.equal(peer.lastHeaders['traceparent'], configured);
      assert.equal(peer.lastHeaders['tracestate'], undefined);
    } finally {
      await r.close();
    }
  });

  test('a streaming peer: SendStreamingMessage spans the whole stream (the final task state is on it) and ends before its agent span', async () => {
    const r = oneAgentRunner(agentFor('warranty_agent', streaming.card, streaming.baseUrl));
    try {
      const turn = await r.sessions.run('s2', 'Check serial 9');
      assert.equal(turn.error, undefined, turn.error);
      const call = named('SendStreamingMessage');
      assert.equal(call.attributes['a2a.method.name'], 'SendStreamingMessage');
      // Set from the stream's last event: the span was still open when the stream ended.
      assert.equal(call.attributes['a2a.task.state'], 'TASK_STATE_COMPLETED');
      assert.equal(typeof call.attributes['a2a.task.id'], 'string');
      assert.equal(call.attributes['gen_ai.conversation.id'], streaming.contextIds.at(-1));
      const order = exporter.getFinishedSpans().map((s) => s.name);
      assert.ok(order.indexOf('SendStreamingMessage') < order.indexOf('invoke_agent warranty_agent'), order.join(', '));
      assert.equal(parentOf(call)?.name, 'invoke_agent warranty_agent');
      assert.equal(streaming.lastHeaders['traceparent'], `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`);
      assertNoSecret();
    } finally {
      await r.close();
    }
  });
});

/** A 1.0 card served next to a JSON-RPC endpoint that answers every call with `answer`. */
async function startErrorPeer(answer: (res: express.Response, id: unknown) => void): Promise<{ baseUrl: string; card: Record<string, unknown>; close(): Promise<void> }> {
  const app = express();
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const card = v1Card(port, { name: 'Broken Agent', capabilities: { streaming: false, pushNotifications: false }, supportedInterfaces: [{ url: `http://127.0.0.1:${port}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] });
  app.get('/.well-known/agent-card.json', (_req, res) => void res.json(card));
  app.post('/rpc', express.json(), (req, res) => answer(res, (req.body as { id?: unknown }).id));
  return {
    baseUrl: `http://127.0.0.1:${port}/`,
    card,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a peer answering an error', () => {
  test('a JSON-RPC error: the A2A span and the turn are ERROR, error.type is the JSON-RPC code', async () => {
    const peer = await startErrorPeer((res, id) => void res.json({ jsonrpc: '2.0', id, error: { code: -32603, message: 'internal failure' } }));
    const r = oneAgentRunner(agentFor('broken_agent', peer.card, peer.baseUrl));
    try {
      const turn = await r.sessions.run('s3', 'hello');
      assert.ok(turn.error !== undefined);
      // HTTP 200 with a JSON-RPC error: the agent is named, with the peer's own words.
      assert.deepEqual([turn.failure?.agent, turn.failure?.status, turn.failure?.message.startsWith('broken_agent failed: ')], ['broken_agent', undefined, true]);
      const call = named('SendMessage');
      assert.equal(call.status.code, 2, 'ERROR');
      assert.equal(call.attributes['error.type'], '-32603');
      const chat = named('a2a_discovery.chat.turn');
      assert.equal(chat.status.code, 2);
      assert.equal(chat.attributes['error.type'], 'A2A_REQUEST_FAILED');
      assertNoSecret();
    } finally {
      await r.close();
      await peer.close();
    }
  });

  test('an HTTP error without a JSON-RPC body: error.type is the HTTP status', async () => {
    const peer = await startErrorPeer((res) => void res.status(503).type('text/plain').send('unavailable'));
    const r = oneAgentRunner(agentFor('broken_agent', peer.card, peer.baseUrl));
    try {
      const turn = await r.sessions.run('s4', 'hello');
      const call = named('SendMessage');
      assert.equal(call.status.code, 2);
      assert.equal(call.attributes['error.type'], '503');
      // The turn names the agent it called and what it answered; so does its span.
      assert.deepEqual(turn.failure, { agent: 'broken_agent', message: `broken_agent answered 503 Service Unavailable at ${turn.failure?.url}`, url: turn.failure?.url, status: 503 });
      assert.equal(turn.error, turn.failure?.message);
      assert.equal(named('a2a_discovery.chat.turn').attributes['a2a_discovery.chat.failed_agent'], 'broken_agent');
    } finally {
      await r.close();
      await peer.close();
    }
  });
});

describe('A2A 0.3 peer (ADK JS toA2a)', () => {
  let server: Server;
  let port: number;
  let card: Record<string, unknown>;
  const seen: Array<Record<string, unknown>> = [];
  before(async () => {
    const app = express();
    app.use((req, _res, next) => {
      if (req.method === 'POST') seen.push({ ...req.headers });
      next();
    });
    app.use(express.json());
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    port = (server.address() as AddressInfo).port;
    card = adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]);
    const agent = new LlmAgent({ name: 'billing', description: 'Billing.', instruction: 'Answer briefly.', model: new ScriptedLlm('billing peer: paid') });
    await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true, agentCard: card as never });
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  test("ADK's RemoteA2AAgent: its streaming call is a SendStreamingMessage span under invoke_agent, protocol 0.3, traceparent sent", async () => {
    const r = oneAgentRunner(agentFor('billing_agent', card, `http://127.0.0.1:${port}/`));
    try {
      const turn = await r.sessions.run('s5', 'Was invoice 4 paid?');
      assert.equal(turn.error, undefined, turn.error);
      assert.equal(turn.reply, 'billing peer: paid');
      const call = named('SendStreamingMessage');
      assert.equal(parentOf(call)?.name, 'invoke_agent billing_agent');
      assert.equal(call.attributes['a2a.protocol.version'], '0.3');
      assert.equal(call.attributes['gen_ai.agent.name'], 'Billing Agent');
      assert.equal(call.attributes['server.port'], port);
      assert.equal(call.attributes['a2a.task.state'], 'TASK_STATE_COMPLETED');
      assert.equal(call.attributes['a2a_discovery.snapshot.digest'], r.snapshot.digest);
      assert.equal(seen.at(-1)?.['traceparent'], `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`);
      assertNoSecret();
    } finally {
      await r.close();
    }
  });
});

describe('the extended card request', () => {
  test('GetExtendedAgentCard is a client span on the chosen interface; the peer receives its trace; a refusal gives error.type 401', async () => {
    const headersSeen: Array<Record<string, unknown>> = [];
    let refuse = false;
    const app = express();
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const port = (server.address() as AddressInfo).port;
    const card = v1Card(port, { supportedInterfaces: [{ url: `http://127.0.0.1:${port}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' }] });
    app.post('/rpc', express.json(), (req, res) => {
      headersSeen.push({ ...req.headers });
      if (refuse) return void res.status(401).json({ error: 'no' });
      res.json({ jsonrpc: '2.0', id: (req.body as { id?: unknown }).id, result: { ...card, description: 'The extended card.' } });
    });
    const policy = HostPolicy.from({ allow: [`http://127.0.0.1:${port}`], allowLoopback: true });
    const fetcher = createCardFetcher({ policy });
    try {
      const parsed = parseAgentCard(JSON.stringify(card), { allowLoopback: true });
      assert.ok(parsed.ok);
      const chosen = preferredInterface(parsed.card!, policy)!;
      const answer = await fetchExtendedCard(fetcher, chosen, { authorization: SECRET });
      assert.equal(answer.status, 200);
      const span = named('GetExtendedAgentCard');
      assert.equal(span.kind, 2);
      assert.deepEqual(
        { ...span.attributes },
        { 'a2a.method.name': 'GetExtendedAgentCard', 'a2a.protocol.version': '1.0', 'a2a.tenant': 'acme', 'server.address': '127.0.0.1', 'server.port': port },
      );
      assert.match(String(headersSeen.at(-1)?.['traceparent']), new RegExp(`^00-${span.spanContext().traceId}-[0-9a-f]{16}-01$`));

      exporter.reset();
      refuse = true;
      await assert.rejects(fetchExtendedCard(fetcher, chosen, { authorization: SECRET }), { code: 'ERR_FETCH_STATUS' });
      const failed = named('GetExtendedAgentCard');
      assert.equal(failed.status.code, 2);
      assert.equal(failed.attributes['error.type'], '401');
      assertNoSecret();
    } finally {
      await fetcher.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    }
  });
});

describe('a stream left early', () => {
  test('the consumer stopping ends the span (not failed) and returns the SDK iterator; every read runs inside the span', async () => {
    let returned = false;
    const readsUnder: Array<string | undefined> = [];
    const client = {
      async *sendMessageStream(): AsyncGenerator<{ kind: string; id: string; contextId: string; status: { state: string } }> {
        try {
          for (let i = 0; ; i++) {
            readsUnder.push(trace.getActiveSpan()?.spanContext().spanId);
            yield { kind: 'task', id: 't1', contextId: 'c1', status: { state: i === 0 ? 'submitted' : 'working' } };
          }
        } finally {
          returned = true;
        }
      },
    };
    const traced = tracedA2aClient(client, { localName: 'x_agent', card: { name: 'X' }, url: 'https://x.example/a2a', protocolVersion: '0.3' });
    let seen = 0;
    for await (const _ of traced.sendMessageStream()) if (++seen === 2) break;
    assert.equal(returned, true, 'the SDK iterator was returned (its request closed)');
    const span = named('SendStreamingMessage');
    assert.equal(span.status.code, 0);
    assert.equal(span.attributes['a2a.task.state'], 'TASK_STATE_WORKING');
    assert.equal(span.attributes['a2a.task.id'], 't1');
    assert.equal(span.attributes['server.port'], 443);
    assert.deepEqual(readsUnder, [span.spanContext().spanId, span.spanContext().spanId]);
  });
});
