/**
 * Fair shares (issue #24): one client cannot take every inspector slot, every session or more than
 * its share of chat turns from the others; an inspection whose client went away frees its slot;
 * every limit's 429 names the limit and says when to retry. Also: upgrading someone else's session answers as an unknown id does,
 * and `/readyz` shows where the store lives only to the token's holder.
 *
 * Real service on loopback. Two anonymous clients are told apart by their remote address, so the
 * second one connects from 127.0.0.2 (all of 127/8 is loopback on Linux).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { LlmAgent, toA2a } from '@google/adk';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { metric, requestJson } from '../helpers/raw-http.js';
import type { JsonReply as Reply } from '../helpers/raw-http.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const FIRST = '127.0.0.1';
const SECOND = '127.0.0.2';



/** One request from `from` (a local address) over a fresh connection; `onRequest` gets the request (to cut it). */
const send = (base: string, from: string, method: string, path: string, headers: Record<string, string> = {}, body?: string, onRequest?: (req: http.ClientRequest) => void): Promise<Reply> =>
  requestJson(base, method, path, headers, body, { from, ...(onRequest && { onRequest }) });

function service(extra: Partial<ServiceOptions>): Promise<RunningService> {
  return startService({ port: 0, policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }), ...extra });
}

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A loopback peer that answers 200 at once and then drips its body, one blank every 200 ms, for
 * ever: no fetcher timeout (headers, body silence) fires, only the whole fetch's deadline, set far
 * off here. Counts requests and open connections.
 */
async function startSilentServer(): Promise<{ origin: string; requests: () => number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(' ');
    const drip = setInterval(() => res.write(' '), 200);
    res.on('close', () => clearInterval(drip));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, FIRST, r));
  return {
    origin: `http://${FIRST}:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('fair shares of the inspector', () => {
  // Two peers: the inspector's fetcher opens one connection per origin at a time.
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let other: Awaited<ReturnType<typeof startSilentServer>>;
  let s: RunningService;
  before(async () => {
    silent = await startSilentServer();
    other = await startSilentServer();
    // Two global slots, one per client; deadlines (the inspection's, each fetch's) far beyond what the test waits for.
    s = await service({
      policy: { allow: [silent.origin, other.origin], allowLoopback: true },
      cache: { totalTimeoutMs: 120_000 },
      limits: { maxInspections: 2, maxInspectionsPerClient: 1, inspectTimeoutMs: 120_000 },
    });
  });
  after(async () => {
    await s?.close();
    await Promise.all([silent?.close(), other?.close()]);
  });

  const inspect = (from: string, body: unknown, onRequest?: (req: http.ClientRequest) => void): Promise<Reply> =>
    send(s.url, from, 'POST', '/api/inspect', { ...JSON_TYPE, origin: s.url }, JSON.stringify(body), onRequest);

  test('a client at its share of inspections gets 429 naming the per-client limit; another client is still served', async () => {
    const before = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspections_per_client"');
    const cut: http.ClientRequest[] = [];
    const slow = inspect(FIRST, { url: `${silent.origin}/` }, (req) => cut.push(req)).catch(() => undefined);
    await waitUntil(() => silent.requests() >= 1, 'the first inspection to reach the silent peer');
    // The same client again: refused by its share, not by the global cap.
    const second = await inspect(FIRST, { url: `${silent.origin}/other` });
    assert.equal(second.status, 429, second.body);
    assert.equal(second.headers['retry-after'], '5');
    assert.equal(second.json.limit, 'server.limits.maxInspectionsPerClient');
    assert.match(String(second.json.message), /maxInspectionsPerClient/);
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspections_per_client"'), before + 1);
    // Another client is served meanwhile.
    const other = await inspect(SECOND, { card: '{}' });
    assert.equal(other.status, 200, other.body);
    assert.equal(other.json.kind, 'card');
    for (const req of cut) req.destroy();
    await slow;
  });

  test('an inspection whose client disconnects is aborted: its upstream request is cut and its slot is free at once', async () => {
    // The first test's inspection was cut with its client: its upstream connection is gone.
    await waitUntil(() => silent.open() + other.open() === 0, 'no upstream connection open');
    const requestsBefore = silent.requests() + other.requests();
    const cut: http.ClientRequest[] = [];
    // Both global slots held by two clients' slow inspections.
    const a = inspect(FIRST, { url: `${silent.origin}/a` }, (req) => cut.push(req)).catch(() => undefined);
    const b = inspect(SECOND, { url: `${other.origin}/b` }, (req) => cut.push(req)).catch(() => undefined);
    await waitUntil(() => silent.requests() + other.requests() >= requestsBefore + 2, 'both inspections to reach their peers');
    const busy = await inspect(SECOND, { card: '{}' });
    assert.equal(busy.status, 429, 'the second client already runs its one inspection');
    // Both clients go away; the inspections stop (the 120 s deadline is far off).
    for (const req of cut) req.destroy();
    await Promise.all([a, b]);
    await waitUntil(() => silent.open() + other.open() === 0, 'the upstream connections to be closed');
    // Both slots are free again (the deadline is 120 s away): both clients are served.
    for (const from of [FIRST, SECOND]) {
      const again = await inspect(from, { card: '{}' });
      assert.equal(again.status, 200, `${from}: ${again.body}`);
    }
  });
});

describe('fair shares of sessions', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ limits: { maxSessionsPerClient: 2 }, sessions: { maxSessions: 10 } });
  });
  after(() => s?.close());

  const chat = (from: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Reply> =>
    send(s.url, from, 'POST', '/api/chat', { ...JSON_TYPE, ...headers }, JSON.stringify({ message: 'hi', ...body }));

  test('a client at its share of sessions gets 429 with Retry-After naming the limit; another client is still served; ending one frees it', async () => {
    const before = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="sessions_per_client"');
    const first = await chat(FIRST, { sessionId: 'mine-1' });
    assert.equal(first.status, 200, first.body);
    const cookie = String(first.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
    assert.match(cookie, /^a2ad_client=/);
    assert.equal((await chat(FIRST, { sessionId: 'mine-2' }, { cookie })).status, 200);
    // The third, with the cookie or without (a fresh cookie each time changes nothing: same address).
    for (const headers of [{ cookie }, {}, { cookie: `a2ad_client=${'C'.repeat(43)}` }] as Array<Record<string, string>>) {
      const third = await chat(FIRST, { sessionId: 'mine-3' }, headers);
      assert.equal(third.status, 429, third.body);
      assert.equal(third.headers['retry-after'], '60');
      assert.equal(third.json.limit, 'server.limits.maxSessionsPerClient');
      assert.match(String(third.json.message), /maxSessionsPerClient/);
    }
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="sessions_per_client"'), before + 3);
    assert.deepEqual(s.trees.sessions().map((x) => x.sessionId).sort(), ['mine-1', 'mine-2'], 'nothing was pinned for the refused turns');
    // Its own sessions go on.
    assert.equal((await chat(FIRST, { sessionId: 'mine-1', message: 'more' }, { cookie })).status, 200);
    // Another client starts its own.
    const other = await chat(SECOND, { sessionId: 'theirs-1' });
    assert.equal(other.status, 200, other.body);
    // Ending one gives the first client room again.
    assert.equal((await send(s.url, FIRST, 'DELETE', '/api/sessions/mine-2', { ...JSON_TYPE, cookie })).status, 200);
    assert.equal((await chat(FIRST, { sessionId: 'mine-3' }, { cookie })).status, 200);
  });

  test('the global session cap answers 429 with Retry-After and names sessions.maxSessions', async () => {
    for (const x of s.trees.sessions()) await s.sessions.end(x.sessionId);
    // Ten addresses fill the cap (two each would too; one each keeps the per-client share out of it).
    for (let i = 0; i < 10; i++) assert.equal((await chat(`127.0.1.${i + 1}`, { sessionId: `cap-${i}` })).status, 200);
    const full = await chat(SECOND, { sessionId: 'cap-x' });
    assert.equal(full.status, 429, full.body);
    assert.equal(full.headers['retry-after'], '60');
    assert.equal(full.json.limit, 'sessions.maxSessions');
    for (const x of s.trees.sessions()) await s.sessions.end(x.sessionId);
  });

  test('upgrading or ending an unknown id and someone else\'s session answer alike (ids cannot be probed)', async () => {
    const owned = await chat(FIRST, { sessionId: 'probe-target' });
    assert.equal(owned.status, 200, owned.body);
    const answers = [];
    for (const id of ['probe-target', 'probe-nobody']) {
      const upgrade = await send(s.url, SECOND, 'POST', `/api/sessions/${id}/upgrade`, JSON_TYPE, '{}');
      const end = await send(s.url, SECOND, 'DELETE', `/api/sessions/${id}`, JSON_TYPE);
      answers.push([upgrade.status, upgrade.body.replaceAll(id, 'ID'), end.status, end.body.replaceAll(id, 'ID')]);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.equal(answers[0]![0], 404);
    assert.ok(s.trees.sessions().some((x) => x.sessionId === 'probe-target'), 'the owned session is untouched');
  });
});

describe('fair shares of sessions under a lowered global cap', () => {
  let s: RunningService;
  before(async () => {
    // sessions.maxSessions lowered to 5; server.limits.maxSessionsPerClient left at its default (32).
    s = await service({ sessions: { maxSessions: 5 } });
  });
  after(() => s?.close());

  const chat = (from: string, sessionId: string): Promise<Reply> => send(s.url, from, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ message: 'hi', sessionId }));

  test('one client cannot hold every session: it is held to half the cap (3 of 5), and another client still gets its first turn', async () => {
    const opened: string[] = [];
    let refused: Reply | undefined;
    for (let i = 0; i < 5 && refused === undefined; i++) {
      const r = await chat(FIRST, `greedy-${i}`);
      if (r.status === 200) opened.push(`greedy-${i}`);
      else refused = r;
    }
    assert.equal(opened.length, 3, `the first client opened ${opened.length} sessions`);
    assert.equal(refused?.status, 429, refused?.body);
    assert.equal(refused.json.limit, 'server.limits.maxSessionsPerClient', refused.body);
    assert.match(String(refused.json.message), /holds 3 session\(s\) \(server\.limits\.maxSessionsPerClient, held to half of sessions\.maxSessions 5\)/);
    const other = await chat(SECOND, 'modest-1');
    assert.equal(other.status, 200, other.body);
    assert.deepEqual(s.trees.sessions().map((x) => x.sessionId).sort(), [...opened, 'modest-1'].sort());
  });
});

describe('/readyz and the store location', () => {
  let dir: string;
  let s: RunningService;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fair-readyz-'));
    s = await service({ token: 'tok-readyz', store: `sqlite:${join(dir, 'state.sqlite')}` });
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('without the token: the store kind only, no path; with it: the location', async () => {
    const anonymous = await send(s.url, FIRST, 'GET', '/readyz');
    assert.ok(!anonymous.body.includes(dir), anonymous.body);
    assert.ok(!anonymous.body.includes('state.sqlite'), anonymous.body);
    assert.deepEqual(anonymous.json.store, { kind: 'sqlite', ok: true });
    const wrong = await send(s.url, FIRST, 'GET', '/readyz', { authorization: 'Bearer nope' });
    assert.ok(!wrong.body.includes(dir), 'a wrong token is no token');
    const admin = await send(s.url, FIRST, 'GET', '/readyz', { authorization: 'Bearer tok-readyz' });
    assert.equal((admin.json.store as { location?: string }).location, join(dir, 'state.sqlite'));
  });
});

/** An ADK agent on loopback whose model answers only once the gate opens; counts the turns it has begun. */
async function startGatedPeer(): Promise<{ baseUrl: string; begun: () => number; open: () => void; close: () => Promise<void> }> {
  let begun = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  class GatedLlm extends ScriptedLlm {
    override async *generateContentAsync(...args: Parameters<ScriptedLlm['generateContentAsync']>): ReturnType<ScriptedLlm['generateContentAsync']> {
      begun++;
      await gate;
      yield* super.generateContentAsync(...args);
    }
  }
  const agent = new LlmAgent({ name: 'billing', description: 'Billing.', instruction: 'Answer briefly.', model: new GatedLlm('billing: done') });
  const app = express();
  app.use(express.json());
  const server = await new Promise<http.Server>((resolve) => {
    const x = app.listen(0, FIRST, () => resolve(x));
  });
  const port = (server.address() as AddressInfo).port;
  // A card whose skill carries the reviewed tag (ADK's own card has none).
  const card = adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]);
  await toA2a(agent, { app, host: FIRST, port, allowUnauthenticated: true, agentCard: card as never });
  return {
    baseUrl: `http://${FIRST}:${port}/`,
    begun: () => begun,
    open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('fair shares of chat turns', () => {
  let peer: Awaited<ReturnType<typeof startGatedPeer>>;
  let s: RunningService;
  before(async () => {
    peer = await startGatedPeer();
    s = await service({
      policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: peer.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
      limits: { maxTurnsPerClient: 1 },
    });
    await waitUntil(async () => (s.loop.current()?.agents.length ?? 0) === 1, 'the agent in the snapshot');
  });
  after(async () => {
    peer?.open();
    await s?.close();
    await peer?.close();
  });

  test('a client with a turn running gets 429 naming maxTurnsPerClient; another client\'s turn runs meanwhile', { timeout: 30_000 }, async () => {
    const chat = (from: string, sessionId: string): Promise<Reply> => send(s.url, from, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ sessionId, message: 'Explain my invoice' }));
    const first = chat(FIRST, 'turn-a1');
    await waitUntil(() => peer.begun() >= 1, 'the first turn to reach the agent');
    const again = await chat(FIRST, 'turn-a2');
    assert.equal(again.status, 429, again.body);
    assert.equal(again.headers['retry-after'], '1');
    assert.equal(again.json.limit, 'server.limits.maxTurnsPerClient');
    const other = chat(SECOND, 'turn-b1');
    await waitUntil(() => peer.begun() >= 2, 'the second client\'s turn to reach the agent');
    peer.open();
    const [a, b] = await Promise.all([first, other]);
    assert.deepEqual([a.status, b.status], [200, 200], `${a.body} ${b.body}`);
    assert.equal(a.json.reply, 'billing: done');
    // Its turn over, the first client may run another.
    assert.equal((await chat(FIRST, 'turn-a3')).status, 200);
  });
});
