/**
 * Health from real calls, against real peers: an agent whose card fetches fine but whose A2A calls
 * all fail is degraded, left out of new snapshots after `health.callLeaveAfter` failed calls in a
 * row, and returns after a good call (here, a turn of a session still pinned to a snapshot that
 * has it) with the same hysteresis the fetch health has. `GET /api/calls` shows the figures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { startVersionedPeer } from '../helpers/versioned-peer.js';
import { waitFor } from '../helpers/wait-for.js';

const secrets = new Map<string, string>();

async function chat(service: RunningService, sessionId: string, message: string): Promise<{ status: number; digest: string; author?: string; error?: string }> {
  const secret = secrets.get(sessionId);
  const res = await fetch(`${service.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) },
    body: JSON.stringify({ message, sessionId }),
  });
  const body = (await res.json()) as { digest: string; author?: string; sessionSecret?: string; message?: string };
  if (body.sessionSecret !== undefined) secrets.set(sessionId, body.sessionSecret);
  return { status: res.status, digest: body.digest, ...(body.author !== undefined && { author: body.author }), ...(body.message !== undefined && { error: body.message }) };
}

const names = (service: RunningService) => service.loop.current()!.agents.map((a) => a.localName);

test('an agent whose calls all fail leaves new snapshots after callLeaveAfter, and returns after a good call', async () => {
  const returns = await startVersionedPeer({ name: 'Returns Agent', prefix: 'returns', v1: { skills: [{ id: 'returns', tags: ['returns'] }] }, v2: { skills: [{ id: 'returns', tags: ['returns'] }] } });
  const billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing here', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  const service = await startService({
    port: 0,
    policy: { allow: [returns, billing].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'returns', description: 'Returns of orders.' },
      { tag: 'billing', description: 'Invoices.' },
    ],
    needs: [{ tag: 'returns' }, { tag: 'billing' }],
    static: [
      { name: 'returns_agent', url: returns.baseUrl, description: 'Handles returns.', tags: ['returns'] },
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
    ],
    health: { enterAfter: 1, callLeaveAfter: 3 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    logger: createLogger({ level: 'silent' }),
  });
  try {
    const early = await chat(service, 'early', 'I want to return order 12');
    assert.equal(early.status, 200);
    const withReturns = early.digest;

    returns.failEvery('v1', 1);
    for (let i = 0; i < 3; i++) assert.equal((await chat(service, `failing-${i}`, 'I want to return order 12')).status, 502, 'the returns agent fails');
    await waitFor(async () => (names(service).includes('returns_agent') ? undefined : true), 'the returns agent leaves new snapshots', 10_000);
    assert.deepEqual(names(service), ['billing_agent'], 'its card still fetches fine: only its calls put it out');
    const calls = (await (await fetch(`${service.url}/api/calls`)).json()) as { agents: Array<{ agent: string; consecutiveFailures: number; all: { calls: number; errors: number; byClass: Record<string, number> } }> };
    const figures = calls.agents.find((a) => a.agent === 'returns_agent')!;
    assert.equal(figures.consecutiveFailures, 3);
    assert.deepEqual([figures.all.calls, figures.all.errors, figures.all.byClass], [4, 3, { http_500: 3 }]);
    const endpoints = (await (await fetch(`${service.url}/api/endpoints`)).json()) as { endpoints: Array<{ baseUrl: string }> };
    const shown = JSON.stringify(endpoints.endpoints.find((e) => e.baseUrl === returns.baseUrl));
    assert.match(shown, /left new snapshots after 3 failed calls in a row; last: returns_agent answered 500/);

    // The peer is fixed; a session still pinned to a snapshot with the agent calls it, and that good call brings it back.
    returns.failEvery('v1', undefined);
    const back = await chat(service, 'early', 'I want to return order 13 too');
    assert.deepEqual([back.status, back.digest], [200, withReturns], 'the early session stays on its snapshot');
    await waitFor(async () => (names(service).includes('returns_agent') ? true : undefined), 'the returns agent returns to new snapshots', 10_000);
    assert.equal((await chat(service, 'later', 'I want to return order 14')).status, 200);
  } finally {
    await service.close();
    await Promise.all([returns.close(), billing.close()]);
  }
});

test('with no session left on it, the active check is what brings an agent its failed calls put out back', async () => {
  const returns = await startVersionedPeer({ name: 'Returns Agent', prefix: 'returns', v1: { skills: [{ id: 'returns', tags: ['returns'] }] }, v2: { skills: [{ id: 'returns', tags: ['returns'] }] } });
  const billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing here', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  const service = await startService({
    port: 0,
    policy: { allow: [returns, billing].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'returns', description: 'Returns of orders.' },
      { tag: 'billing', description: 'Invoices.' },
    ],
    needs: [{ tag: 'returns' }, { tag: 'billing' }],
    static: [
      { name: 'returns_agent', url: returns.baseUrl, description: 'Handles returns.', tags: ['returns'] },
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
    ],
    // Not enabled for every agent: only those their failed calls put out are checked.
    health: { enterAfter: 1, callLeaveAfter: 2, activeCheck: { intervalMs: 1_000 } },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    logger: createLogger({ level: 'silent' }),
  });
  try {
    returns.failEvery('v1', 1);
    for (let i = 0; i < 2; i++) assert.equal((await chat(service, `c-${i}`, 'I want to return order 12')).status, 502);
    await waitFor(async () => (names(service).includes('returns_agent') ? undefined : true), 'the returns agent leaves new snapshots', 10_000);
    // Its checks fail too while the peer is broken (they reach the failing deployment).
    const failedBefore = returns.calls.v1.failed;
    await waitFor(async () => (returns.calls.v1.failed > failedBefore ? true : undefined), 'the active check calls the agent that is out', 10_000);
    assert.deepEqual(names(service), ['billing_agent']);
    returns.failEvery('v1', undefined);
    await waitFor(async () => (names(service).includes('returns_agent') ? true : undefined), 'a good check brings it back', 10_000);
    const figures = ((await (await fetch(`${service.url}/api/calls`)).json()) as { agents: Array<{ agent: string; checks: { calls: number } }> }).agents.find((a) => a.agent === 'returns_agent')!;
    assert.ok(figures.checks.calls >= 2, 'the checks are counted as calls');
    // Billing, never out, is never checked (not enabled for every agent).
    assert.equal(((await (await fetch(`${service.url}/api/calls`)).json()) as { agents: Array<{ agent: string; checks: { calls: number } }> }).agents.find((a) => a.agent === 'billing_agent')?.checks.calls ?? 0, 0);
  } finally {
    await service.close();
    await Promise.all([returns.close(), billing.close()]);
  }
});
