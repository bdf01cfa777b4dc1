/**
 * A failed turn names the agent it called and that agent's error (issue 39). Real loopback peers:
 * `billing_agent` (ADK JS `toA2a`, A2A 0.3) answers; `warranty_agent` (@a2a-js/sdk 1.x, A2A 1.0)
 * answers 401 to every JSON-RPC call, as a server behind an authenticating proxy does; a third
 * agent's port is closed (connection refused). `POST /api/chat` answers 502 `agent-failed` naming
 * the agent and what it answered, keeps the session (its id and, for a new session, its secret;
 * the digest it stays pinned to), and the next turn of that session answers on the same snapshot.
 * Over A2A (`POST /api/a2a`) the same failure is a failed task naming the agent and its status.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../../packages/service/src/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startRefusingWarrantyService } from '../helpers/two-agent-service.js';
import { waitFor } from '../helpers/wait-for.js';

let env: Awaited<ReturnType<typeof startRefusingWarrantyService>>;
let service: RunningService;
let warranty: RunningV1Server;
let billing: RunningPeer;

before(async () => {
  env = await startRefusingWarrantyService();
  ({ service, warranty, billing } = env);
  await waitFor(async () => (service.loop.current()?.agents.length === 2 ? true : undefined), 'both agents in the snapshot');
});
after(async () => {
  await env?.close();
});

async function chat(body: Record<string, unknown>, secret?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${service.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('a peer answering 401 to the turn: 502 agent-failed naming the agent and the 401; the new session keeps its secret and its pin', async () => {
  const calls = warranty.requests;
  const failed = await chat({ message: 'Is serial 123 under warranty?' });
  assert.equal(warranty.requests, calls + 1, 'the turn reached the warranty peer once');
  assert.equal(failed.status, 502, JSON.stringify(failed.json));
  const { json } = failed;
  assert.equal(json.error, 'agent-failed');
  assert.equal(json.agent, 'warranty_agent');
  assert.equal(json.agentStatus, 401);
  assert.equal(json.message, `warranty_agent answered 401 Unauthorized at ${warranty.rpcUrl}`);
  assert.deepEqual(json.agents, ['warranty_agent']);
  assert.equal(json.author, null);
  assert.equal(json.reply, '');
  // The session survives the failure: a new one's id and secret, and the snapshot it is pinned to.
  assert.match(String(json.sessionId), /^s-/);
  assert.equal(typeof json.sessionSecret, 'string');
  assert.equal(json.digest, service.loop.current()!.digest);

  // The client continues the same session: pinned to the same digest, answered by billing.
  const next = await chat({ sessionId: json.sessionId, message: 'Where is my invoice?' }, json.sessionSecret as string);
  assert.equal(next.status, 200, JSON.stringify(next.json));
  assert.deepEqual([next.json.sessionId, next.json.digest, next.json.author, next.json.reply, next.json.error], [json.sessionId, json.digest, 'billing_agent', 'billing here', null]);
  assert.equal(next.json.sessionSecret, undefined, 'the secret is given once, on the first turn');
});

test('over A2A (POST /api/a2a, 1.0 SendMessage): the task fails naming the agent and its 401, the context stays usable', async () => {
  const send = async (text: string, contextId: string) => {
    const res = await fetch(`${service.url}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${contextId}-${text.length}`, contextId, role: 'ROLE_USER', parts: [{ text }] } } }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { result?: { task?: { status: { state: string; message?: { parts: Array<{ text?: string }> } }; metadata?: Record<string, unknown> } } }).result?.task;
  };
  const failed = await send('Is serial 123 under warranty?', 'ctx-failed-agent');
  assert.equal(failed?.status.state, 'TASK_STATE_FAILED', JSON.stringify(failed));
  assert.equal(failed?.status.message?.parts[0]?.text, `agent warranty_agent failed: warranty_agent answered 401 Unauthorized at ${warranty.rpcUrl}`);
  assert.equal(failed?.metadata?.failedAgent, 'warranty_agent');
  assert.equal(failed?.metadata?.agentStatus, 401);
  const next = await send('Where is my invoice?', 'ctx-failed-agent');
  assert.equal(next?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(next));
  assert.equal(next?.metadata?.digest, failed?.metadata?.digest);
});

test('an agent whose port refuses connections: 502 naming the agent and the refused connection', async () => {
  await billing.close();
  const failed = await chat({ message: 'Where is my invoice?' });
  assert.equal(failed.status, 502, JSON.stringify(failed.json));
  assert.equal(failed.json.error, 'agent-failed');
  assert.equal(failed.json.agent, 'billing_agent');
  assert.equal(failed.json.agentStatus, undefined, 'no answer came');
  assert.match(String(failed.json.message), new RegExp(`^billing_agent could not be reached: ${billing.baseUrl.replace(/[.]/g, '\\.')}\\S*: .*ECONNREFUSED`));
});
