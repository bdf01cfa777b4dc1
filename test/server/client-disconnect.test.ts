/**
 * Work for a request ends when its client disconnects (issue #24, "abort on client disconnect";
 * inspections: fair-shares.test.ts). A chat turn is aborted: the A2A request it has in flight is
 * closed (the peer sees its response cut), the client's turn slot is free at once, and the session
 * is consistent: a session the turn started is not kept; an existing one stays usable, its history
 * holding the aborted turn's user message and no reply. An event stream frees its subscriber and
 * its per-client slot at once.
 *
 * Real service and real A2A peers on loopback whose work waits while the test holds it: an ADK
 * agent served by `toA2a` (A2A 0.3: @a2a-js/sdk 0.3's server and ADK's executor, called through
 * ADK's `RemoteA2AAgent`) and an @a2a-js/sdk 1.x server (A2A 1.0, called through `V1RemoteAgent`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { randomUUID } from 'node:crypto';
import { LlmAgent, toA2a } from '@google/adk';
import { AgentCard, Role } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { metric, requestJson } from '../helpers/raw-http.js';
import type { JsonReply as Reply } from '../helpers/raw-http.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';

const HOST = '127.0.0.1';
const JSON_TYPE = { 'content-type': 'application/json' };
const COOKIE = `a2ad_client=${'k'.repeat(43)}`;


/** One request over a fresh connection; `onRequest` gets the request (to cut it). */
const send = (base: string, method: string, path: string, headers: Record<string, string>, body?: string, onRequest?: (req: http.ClientRequest) => void): Promise<Reply> =>
  requestJson(base, method, path, headers, body, { ...(onRequest && { onRequest }) });

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface SlowPeer {
  baseUrl: string;
  /** Turns whose work began at the peer (its model or executor was called). */
  begun: () => number;
  /** A2A POSTs whose response was closed before it ended (their client went away). */
  cut: () => number;
  hold: () => void;
  release: () => void;
  close: () => Promise<void>;
}

/** While held, {@link Gate.wait} waits until released. */
class Gate {
  #gate: { promise: Promise<void>; open: () => void } | undefined;
  hold(): void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.#gate = { promise, open };
  }
  release(): void {
    this.#gate?.open();
    this.#gate = undefined;
  }
  async wait(): Promise<void> {
    await this.#gate?.promise;
  }
}

/** Counts each A2A POST whose response closes before it ended. */
function watchPosts(app: express.Application): () => number {
  let cut = 0;
  app.use((req, res, next) => {
    if (req.method === 'POST') {
      res.on('close', () => {
        if (!res.writableFinished) cut++;
      });
    }
    next();
  });
  return () => cut;
}

async function listen(app: express.Application): Promise<{ server: http.Server; port: number }> {
  const server = await new Promise<http.Server>((resolve) => {
    const x = app.listen(0, HOST, () => resolve(x));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

const closer = (server: http.Server) => (): Promise<void> =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** An @a2a-js/sdk 1.x server (A2A 1.0 only) whose executor waits while held. */
async function startSlowV1Peer(): Promise<SlowPeer> {
  let begun = 0;
  const gate = new Gate();
  const app = express();
  const cut = watchPosts(app);
  const { server, port } = await listen(app);
  const card = AgentCard.toJSON(
    AgentCard.fromJSON({
      name: 'Billing Agent',
      description: 'Billing, an A2A 1.0 agent.',
      version: '1.0.0',
      supportedInterfaces: [{ url: `http://${HOST}:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices.', tags: ['billing'] }],
    }),
  ) as Record<string, unknown>;
  const executor: AgentExecutor = {
    cancelTask: async () => undefined,
    async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
      begun++;
      await gate.wait();
      bus.publish(
        AgentEvent.message({
          messageId: randomUUID(),
          contextId: ctx.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [{ content: { $case: 'text', value: 'billing: done' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard }));
  app.use('/a2a/jsonrpc', express.json(), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { baseUrl: `http://${HOST}:${port}/`, begun: () => begun, cut, hold: () => gate.hold(), release: () => gate.release(), close: closer(server) };
}

/** An ADK agent served by `toA2a` (A2A 0.3) whose model waits while held. */
async function startSlowPeer(): Promise<SlowPeer> {
  let begun = 0;
  const gate = new Gate();
  class SlowLlm extends ScriptedLlm {
    override async *generateContentAsync(...args: Parameters<ScriptedLlm['generateContentAsync']>): ReturnType<ScriptedLlm['generateContentAsync']> {
      begun++;
      await gate.wait();
      yield* super.generateContentAsync(...args);
    }
  }
  const agent = new LlmAgent({ name: 'billing', description: 'Billing.', instruction: 'Answer briefly.', model: new SlowLlm('billing: done') });
  const app = express();
  // Before toA2a's routes: watch every A2A call's response.
  const cut = watchPosts(app);
  app.use(express.json());
  const { server, port } = await listen(app);
  const card = adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]);
  await toA2a(agent, { app, host: HOST, port, allowUnauthenticated: true, agentCard: card as never });
  return { baseUrl: `http://${HOST}:${port}/`, begun: () => begun, cut, hold: () => gate.hold(), release: () => gate.release(), close: closer(server) };
}

const PEERS: ReadonlyArray<[string, () => Promise<SlowPeer>]> = [
  ['A2A 0.3 peer (ADK RemoteA2AAgent)', startSlowPeer],
  ['A2A 1.0 peer (V1RemoteAgent)', startSlowV1Peer],
];

for (const [kind, startPeer] of PEERS) {
  describe(`a chat turn whose client disconnects, ${kind}`, () => {
    let peer: SlowPeer;
    let s: RunningService;
    before(async () => {
      peer = await startPeer();
      s = await startService({
        port: 0,
        logger: createLogger({ level: 'silent' }),
        policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
        vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
        needs: [{ tag: 'billing' }],
        static: [{ name: 'billing_agent', url: peer.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
        // One turn at a time per client: a turn still running would make the next one 429.
        limits: { maxTurnsPerClient: 1 },
      });
      await waitUntil(() => (s.loop.current()?.agents.length ?? 0) === 1, 'the agent in the snapshot');
    });
    after(async () => {
      peer?.release();
      await s?.close();
      await peer?.close();
    });

    const chat = (sessionId: string, onRequest?: (req: http.ClientRequest) => void): Promise<Reply> =>
      send(s.url, 'POST', '/api/chat', { ...JSON_TYPE, cookie: COOKIE }, JSON.stringify({ sessionId, message: 'Explain my invoice' }), onRequest);
    const aborted = (): Promise<number> => metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="turn_aborted"');
    const history = async (sessionId: string): Promise<Array<{ author: string | undefined; text: string }>> => {
      const session = await s.sessions.sessionService.getSession({ appName: s.sessions.appName, userId: s.sessions.userOf(sessionId) ?? 'user', sessionId });
      return (session?.events ?? []).map((e) => ({ author: e.author, text: (e.content?.parts ?? []).map((p) => p.text ?? '').join('') }));
    };

    /** Starts a turn, waits until the peer's model has it, then cuts the client's connection. */
    async function cutTurn(sessionId: string): Promise<void> {
      const requests: http.ClientRequest[] = [];
      const begun = peer.begun();
      const turn = chat(sessionId, (req) => requests.push(req)).catch(() => undefined);
      await waitUntil(() => peer.begun() > begun, 'the turn to reach the peer\'s model');
      for (const req of requests) req.destroy();
      await turn;
    }

    test('an existing session: the upstream A2A request is closed, the slot is free at once, the session goes on', { timeout: 30_000 }, async () => {
      const first = await chat('abort-kept');
      assert.equal(first.status, 200, first.body);
      assert.equal(first.json.reply, 'billing: done');
      const abortedBefore = await aborted();
      const cutBefore = peer.cut();

      peer.hold();
      await cutTurn('abort-kept');
      // The peer sees its response closed before it ended: the A2A request itself was aborted.
      await waitUntil(() => peer.cut() > cutBefore, 'the peer\'s A2A response to be closed by the service');
      await waitUntil(async () => (await aborted()) === abortedBefore + 1, 'the aborted turn to be counted');

      // The client's one turn slot is free while the peer still holds the aborted work: the next
      // turn is accepted (it reaches the peer), not 429 maxTurnsPerClient.
      const begun = peer.begun();
      const next = chat('abort-kept');
      const early = await Promise.race([next, waitUntil(() => peer.begun() > begun, 'the next turn to reach the peer').then(() => undefined)]);
      assert.equal(early, undefined, `the next turn was answered before reaching the peer: ${early?.status} ${early?.body}`);
      peer.release();
      const answered = await next;
      assert.equal(answered.status, 200, answered.body);
      assert.equal(answered.json.reply, 'billing: done');

      // One session, the caller's; its history: each turn's user message, a reply for the two that
      // finished, nothing from the aborted one's agent.
      const listed = await send(s.url, 'GET', '/api/sessions', { cookie: COOKIE });
      const sessions = (listed.json.sessions as Array<{ sessionId: string; owned: boolean }>).filter((x) => x.sessionId === 'abort-kept');
      assert.deepEqual(sessions.map((x) => x.owned), [true]);
      const events = await history('abort-kept');
      assert.deepEqual(
        events.filter((e) => e.text !== '').map((e) => (e.author === 'user' ? 'user' : e.text)),
        ['user', 'billing: done', 'user', 'user', 'billing: done'],
      );
    });

    test('a new session: its turn aborted, the session is not kept and the client is served again', { timeout: 30_000 }, async () => {
      const abortedBefore = await aborted();
      const cutBefore = peer.cut();
      peer.hold();
      await cutTurn('abort-new');
      await waitUntil(() => peer.cut() > cutBefore, 'the peer\'s A2A response to be closed by the service');
      await waitUntil(async () => (await aborted()) === abortedBefore + 1, 'the aborted turn to be counted');
      await waitUntil(() => !s.trees.sessions().some((x) => x.sessionId === 'abort-new'), 'the new session to be dropped');
      const listed = await send(s.url, 'GET', '/api/sessions', { cookie: COOKIE });
      assert.ok(!(listed.json.sessions as Array<{ sessionId: string }>).some((x) => x.sessionId === 'abort-new'), listed.body);
      assert.deepEqual(await history('abort-new'), [], 'its history was deleted');
      peer.release();
      // The same id starts afresh for the client.
      const again = await chat('abort-new');
      assert.equal(again.status, 200, again.body);
      assert.equal(again.json.reply, 'billing: done');
    });
  });
}

describe('an event stream whose client disconnects', () => {
  let s: RunningService;
  before(async () => {
    // The stall timeout (30 s) is far beyond what the test waits: only the disconnect frees a slot.
    s = await startService({ port: 0, logger: createLogger({ level: 'silent' }), policy: { allow: [] }, vocabulary: [], needs: [], limits: { maxStreamsPerClient: 2, streamStallMs: 30_000 } });
  });
  after(() => s?.close());

  /** Opens `/api/stream`; resolves with the status and the request (to cut it). */
  const open = (): Promise<{ status: number; req: http.ClientRequest }> =>
    new Promise((resolve, reject) => {
      const url = new URL(s.url);
      const req = http.request({ host: url.hostname, port: url.port, path: '/api/stream', agent: false }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, req });
      });
      req.on('error', reject);
      req.end();
    });
  const streams = (): Promise<number> => metric(s.url, 'a2a_discovery_sse_streams');

  test('frees its subscriber and its per-client slot at once', async () => {
    const a = await open();
    const b = await open();
    assert.deepEqual([a.status, b.status], [200, 200]);
    const full = await open();
    assert.equal(full.status, 503, 'the client is at its share of streams');
    full.req.destroy();
    assert.equal(await streams(), 2);
    a.req.destroy();
    await waitUntil(async () => (await streams()) === 1, 'the cut stream to be closed');
    const c = await open();
    assert.equal(c.status, 200, 'the freed slot is given to the client again');
    for (const x of [b, c]) x.req.destroy();
    await waitUntil(async () => (await streams()) === 0, 'every stream to be closed');
  });
});
