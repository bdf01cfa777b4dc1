/**
 * A static entry's `interfaceUrl` (transport option) in the remote agents: a card whose chosen
 * interface names an unroutable host (`0.0.0.0`, as BeeAI's default card does) is called at the
 * reviewed URL by both clients — ADK's `RemoteA2AAgent` (A2A 0.3, ADK JS `toA2a` peer) and the
 * 1.x client (`V1RemoteAgent`, @a2a-js/sdk 1.x peer) — against real loopback servers; without the
 * key, or with a replacement the host policy refuses, the agent is not built.
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
import type { DemoPeer } from '../../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../../packages/service/src/demo/peers.js';

/** The peer's card as served, with its own loopback host replaced by 0.0.0.0 (what a listener on every address publishes). */
async function zeroedCard(peer: DemoPeer): Promise<AgentCardModel> {
  const res = await request(`${peer.baseUrl}.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
  const text = (await res.body.text()).replaceAll('127.0.0.1', '0.0.0.0');
  const r = parseAgentCard(text, { allowLoopback: true, hostPolicy: policy });
  assert.equal(r.ok, true, JSON.stringify(r.problems));
  assert.ok(r.warnings.some((w) => /the interface host 0\.0\.0\.0 is unroutable \(this network\)/.test(w.message)), JSON.stringify(r.warnings));
  return r.card as AgentCardModel;
}

let sessions = 0;
async function answer(agent: BaseAgent, text: string): Promise<string> {
  const appName = `app_${++sessions}`;
  const runner = new InMemoryRunner({ agent, appName });
  await runner.sessionService.createSession({ appName, userId: 'u', sessionId: 's' });
  const events: Event[] = [];
  for await (const ev of runner.runAsync({ userId: 'u', sessionId: 's', newMessage: { role: 'user', parts: [{ text }] } })) events.push(ev);
  const last = events.filter((e) => e.author === agent.name).at(-1);
  assert.ok(last && last.errorMessage === undefined && isFinalResponse(last), `no final answer: ${JSON.stringify(last)}`);
  return (last.content?.parts ?? []).map((p) => p.text ?? '').join('');
}

let adk: DemoPeer;
let v1: DemoPeer;
let policy: HostPolicy;
let shared: PolicyFetch;

before(async () => {
  const skills = [{ id: 'chat', name: 'Chat', description: 'Chats.', tags: ['billing'] }];
  adk = await startAdkDemoAgent({ name: 'adk_peer', cardName: 'ADK Peer', skills, reply: (t) => `adk heard: ${t}`, maxAgeSeconds: 60 });
  v1 = await startV1DemoAgent({ name: 'v1_peer', cardName: 'V1 Peer', skills, reply: (t) => `v1 heard: ${t}`, maxAgeSeconds: 60 });
  policy = HostPolicy.from({ allow: [`http://127.0.0.1:${adk.port}`, `http://127.0.0.1:${v1.port}`], allowLoopback: true });
  shared = createPolicyFetch({ policy });
});
after(async () => {
  await shared.close();
  await adk.close();
  await v1.close();
});

describe('interfaceUrl in remoteAgentFor', () => {
  test("ADK's RemoteA2AAgent (A2A 0.3) calls the reviewed URL instead of 0.0.0.0", async () => {
    const card = await zeroedCard(adk);
    const agent = remoteAgentFor({ name: 'adk_peer', description: 'ADK.', card, policy, fetchImpl: shared, transport: { interfaceUrl: `${adk.baseUrl}jsonrpc` } });
    assert.ok(agent instanceof RemoteA2AAgent);
    assert.equal(await answer(agent, 'hello'), 'adk heard: hello');
  });

  test('the 1.x client (V1RemoteAgent) calls the reviewed URL instead of 0.0.0.0', async () => {
    const card = await zeroedCard(v1);
    const agent = remoteAgentFor({ name: 'v1_peer', description: 'V1.', card, policy, fetchImpl: shared, transport: { interfaceUrl: `${v1.baseUrl}a2a/jsonrpc` } });
    assert.ok(agent instanceof V1RemoteAgent);
    assert.equal(await answer(agent, 'hi'), 'v1 heard: hi');
  });

  test('without interfaceUrl, or with one the host policy refuses, no agent is built', async () => {
    const card = await zeroedCard(v1);
    assert.throws(
      () => remoteAgentFor({ name: 'v1_peer', description: 'V1.', card, policy, fetchImpl: shared }),
      (err: unknown) => isDiscoveryError(err) && err.stage === 'build' && /0\.0\.0\.0/.test(err.message),
    );
    assert.throws(
      () => remoteAgentFor({ name: 'v1_peer', description: 'V1.', card, policy, fetchImpl: shared, transport: { interfaceUrl: 'http://127.0.0.1:1/a2a/jsonrpc' } }),
      (err: unknown) => isDiscoveryError(err) && err.stage === 'build' && /127\.0\.0\.1:1/.test(err.message),
    );
  });
});
