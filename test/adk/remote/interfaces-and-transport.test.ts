/**
 * The interface a remote agent calls, the tenant it echoes, the `A2A-Version` it sends, and the
 * per-agent transport options (`streaming: false`, `headers`, `timeoutMs`, `tenant`), against
 * real loopback servers: an @a2a-js/sdk 1.3.0 multi-tenant server, the a2a-js 1.x compat sample
 * (1.0 interfaces first, 0.3 mirrors after), and a raw server whose stream is broken (streaming
 * card, malformed SSE, working `message/send`; transport-peers.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { InMemoryRunner, RemoteA2AAgent, isFinalResponse } from '@google/adk';
import type { BaseAgent, Event } from '@google/adk';
import { parseAgentCard } from '../../../packages/core/src/card/index.js';
import type { AgentCardModel } from '../../../packages/core/src/card/index.js';
import { HostPolicy } from '../../../packages/core/src/fetch/index.js';
import { V1RemoteAgent, createPolicyFetch, remoteAgentFor } from '../../../packages/core/src/adk/remote/index.js';
import type { PolicyFetch } from '../../../packages/core/src/adk/remote/index.js';
import { isDiscoveryError } from '../../../packages/core/src/errors.js';
import { startA2aJs1xCompatServer } from '../../interop/peers.js';
import type { MultiTenantPeer, TransportPeer } from '../../interop/transport-peers.js';
import { startMultiTenantPeer, startBrokenStreamPeer } from '../../interop/transport-peers.js';

async function cardOf(url: string): Promise<AgentCardModel> {
  const res = await request(url, { headers: { 'a2a-version': '1.0' } });
  const body = Buffer.from(await res.body.arrayBuffer());
  const r = parseAgentCard(body, { allowLoopback: true, sourceUrl: url });
  assert.equal(r.ok, true, JSON.stringify(r.problems));
  return r.card as AgentCardModel;
}

function textOf(ev: Event | undefined): string {
  return (ev?.content?.parts ?? []).map((p) => p.text ?? '').join('');
}

let sessions = 0;
/** One turn on a fresh session; the agent's last event. */
async function turn(agent: BaseAgent, text: string): Promise<Event> {
  const appName = `app_${++sessions}`;
  const runner = new InMemoryRunner({ agent, appName });
  await runner.sessionService.createSession({ appName, userId: 'u', sessionId: 's' });
  const events: Event[] = [];
  for await (const ev of runner.runAsync({ userId: 'u', sessionId: 's', newMessage: { role: 'user', parts: [{ text }] } })) events.push(ev);
  const mine = events.filter((e) => e.author === agent.name);
  assert.ok(mine.length > 0, 'the agent answered nothing');
  return mine.at(-1) as Event;
}

function finalText(ev: Event): string {
  assert.ok(ev.errorMessage === undefined, `error event: ${ev.errorCode} ${ev.errorMessage}`);
  assert.ok(isFinalResponse(ev));
  return textOf(ev);
}

const policyFor = (...peers: ReadonlyArray<{ port: number }>): HostPolicy => HostPolicy.from({ allow: peers.map((p) => `http://127.0.0.1:${p.port}`), allowLoopback: true });

describe('tenants: two tenants on one URL', () => {
  let peer: MultiTenantPeer;
  let policy: HostPolicy;
  let shared: PolicyFetch;
  before(async () => {
    peer = await startMultiTenantPeer([
      { tenant: 'acme', tag: 'acme' },
      { tenant: 'globex', tag: 'globex' },
    ]);
    policy = policyFor(peer);
    shared = createPolicyFetch({ policy });
  });
  after(async () => {
    await shared.close();
    await peer.close();
  });

  test("each tenant's own card: its agent echoes its tenant on every call, with A2A-Version 1.0", async () => {
    const acme = remoteAgentFor({ name: 'acme', description: 'Acme.', card: await cardOf(peer.cardUrl('acme')), policy, fetchImpl: shared });
    const globex = remoteAgentFor({ name: 'globex', description: 'Globex.', card: await cardOf(peer.cardUrl('globex')), policy, fetchImpl: shared });
    const from = peer.calls.length;
    assert.equal(finalText(await turn(acme, 'hello')), 'acme: hello');
    assert.equal(finalText(await turn(globex, 'hi')), 'globex: hi');
    assert.equal(finalText(await turn(acme, 'again')), 'acme: again');
    assert.deepEqual(
      peer.calls.slice(from).map((c) => [c.method, c.tenant, c.version]),
      [
        ['SendMessage', 'acme', '1.0'],
        ['SendMessage', 'globex', '1.0'],
        ['SendMessage', 'acme', '1.0'],
      ],
    );
  });

  test('one card listing both tenants: `transport.tenant` picks that tenant\'s interface; without it, the first in the card\'s order', async () => {
    const card = await cardOf(peer.sharedCardUrl);
    const globex = remoteAgentFor({ name: 'globex', description: 'Globex.', card, policy, fetchImpl: shared, transport: { tenant: 'globex' } });
    const first = remoteAgentFor({ name: 'first', description: 'First.', card, policy, fetchImpl: shared });
    const from = peer.calls.length;
    assert.equal(finalText(await turn(globex, 'one')), 'globex: one');
    assert.equal(finalText(await turn(first, 'two')), 'acme: two');
    assert.deepEqual(
      peer.calls.slice(from).map((c) => c.tenant),
      ['globex', 'acme'],
    );
  });

  test('a tenant the card does not serve is refused when the agent is built (ERR_UNSUITABLE, naming the tenants)', async () => {
    const card = await cardOf(peer.sharedCardUrl);
    assert.throws(
      () => remoteAgentFor({ name: 'initech', description: 'Initech.', card, policy, fetchImpl: shared, transport: { tenant: 'initech' } }),
      (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_UNSUITABLE' && /tenant "initech"/.test(err.message) && /"acme", "globex"/.test(err.message),
    );
  });
});

describe('tenants on the HTTP+JSON binding (A2A 1.0 §11: the tenant is the first path segment)', () => {
  test('`transport.tenant` picks that tenant\'s interface, and each agent\'s calls go to /<tenant>/message:send', async () => {
    const peer = await startMultiTenantPeer(
      [
        { tenant: 'acme', tag: 'acme' },
        { tenant: 'globex', tag: 'globex' },
      ],
      { binding: 'HTTP+JSON' },
    );
    try {
      const card = await cardOf(peer.sharedCardUrl);
      const policy = policyFor(peer);
      const acme = remoteAgentFor({ name: 'acme', description: 'Acme.', card, policy, transport: { tenant: 'acme' } });
      const globex = remoteAgentFor({ name: 'globex', description: 'Globex.', card, policy, transport: { tenant: 'globex' } });
      assert.equal(finalText(await turn(acme, 'bill it')), 'acme: bill it');
      assert.equal(finalText(await turn(globex, 'ship it')), 'globex: ship it');
      assert.deepEqual(
        peer.calls.map((c) => [c.method, c.tenant, c.version]),
        [
          ['POST /acme/message:send', 'acme', '1.0'],
          ['POST /globex/message:send', 'globex', '1.0'],
        ],
      );
      await (acme as V1RemoteAgent).close();
      await (globex as V1RemoteAgent).close();
    } finally {
      await peer.close();
    }
  });
});

describe("the card's order decides the client (A2A 1.0 §8.3.2)", () => {
  test('a 1.x server listing its 1.0 interfaces before their 0.3 mirrors is called as 1.0 (V1RemoteAgent, A2A-Version 1.0)', async () => {
    const peer = await startA2aJs1xCompatServer('1.3.0', 'compat');
    try {
      const agent = remoteAgentFor({ name: 'compat', description: 'Compat.', card: await cardOf(peer.baseUrl + '.well-known/agent-card.json'), policy: policyFor(peer) });
      assert.ok(agent instanceof V1RemoteAgent, 'the first interface is A2A 1.0');
      assert.equal(finalText(await turn(agent, 'hello there')), 'compat: hello there');
      assert.deepEqual(
        peer.calls.map((c) => [c.method, c.version, c.path]),
        [['SendStreamingMessage', '1.0', '/a2a/jsonrpc']],
      );
      await agent.close();
    } finally {
      await peer.close();
    }
  });
});

describe('a peer whose stream is broken: streaming card, malformed SSE, working message/send', () => {
  let peer: TransportPeer & { cardUrl: string };
  let card: AgentCardModel;
  let policy: HostPolicy;
  before(async () => {
    peer = await startBrokenStreamPeer();
    card = await cardOf(peer.cardUrl);
    policy = policyFor(peer);
  });
  after(async () => {
    await peer.close();
  });

  test('by default (the card says streaming) the turn fails on the broken stream', async () => {
    const agent = remoteAgentFor({ name: 'volt', description: 'Volt.', card, policy });
    assert.ok(agent instanceof RemoteA2AAgent);
    const from = peer.calls.length;
    const last = await turn(agent, 'help me');
    assert.notEqual(last.errorMessage, undefined, `expected an error, got ${textOf(last)}`);
    assert.deepEqual(
      peer.calls.slice(from).map((c) => [c.method, c.version]),
      [['message/stream', '0.3']],
    );
  });

  test('with `streaming: false` ADK\'s 0.3 client uses message/send, with A2A-Version 0.3, and the turn works', async () => {
    const agent = remoteAgentFor({ name: 'volt', description: 'Volt.', card, policy, transport: { streaming: false } });
    const from = peer.calls.length;
    assert.equal(finalText(await turn(agent, 'help me')), 'volt: help me');
    assert.deepEqual(
      peer.calls.slice(from).map((c) => [c.method, c.version]),
      [['message/send', '0.3']],
    );
  });
});

describe('per-agent headers and timeout', () => {
  test("`headers` reach only that agent's origin, never another agent's on the same shared fetch", async () => {
    const one = await startBrokenStreamPeer({ prefix: 'one' });
    const two = await startBrokenStreamPeer({ prefix: 'two' });
    const policy = policyFor(one, two);
    const shared = createPolicyFetch({ policy });
    try {
      const a = remoteAgentFor({ name: 'one', description: 'One.', card: await cardOf(one.cardUrl), policy, fetchImpl: shared, transport: { streaming: false, headers: { 'x-team': 'alpha', 'x-route': 'blue' } } });
      const b = remoteAgentFor({ name: 'two', description: 'Two.', card: await cardOf(two.cardUrl), policy, fetchImpl: shared, transport: { streaming: false } });
      assert.equal(finalText(await turn(a, 'x')), 'one: x');
      assert.equal(finalText(await turn(b, 'y')), 'two: y');
      assert.equal(one.calls.length, 1);
      assert.equal(one.calls[0]!.headers['x-team'], 'alpha');
      assert.equal(one.calls[0]!.headers['x-route'], 'blue');
      assert.equal(two.calls.length, 1);
      assert.equal(two.calls[0]!.headers['x-team'], undefined);
      assert.equal(two.calls[0]!.headers['x-route'], undefined);
    } finally {
      await shared.close();
      await one.close();
      await two.close();
    }
  });

  test('`timeoutMs` bounds a slow peer: the turn ends with ERR_FETCH_TIMEOUT naming the agent\'s bound, not the shared 60 s one', { timeout: 30_000 }, async () => {
    const slow = await startBrokenStreamPeer({ delayMs: 120_000 });
    const policy = policyFor(slow);
    const shared = createPolicyFetch({ policy, timeoutMs: 60_000 });
    try {
      const agent = remoteAgentFor({ name: 'slow', description: 'Slow.', card: await cardOf(slow.cardUrl), policy, fetchImpl: shared, transport: { streaming: false, timeoutMs: 300 } });
      const last = await turn(agent, 'are you there');
      assert.match(last.errorMessage ?? '', /timeoutMs \(300 ms\)/);
      assert.equal(slow.calls.length, 1);
    } finally {
      await shared.close();
      await slow.close();
    }
  });
});
