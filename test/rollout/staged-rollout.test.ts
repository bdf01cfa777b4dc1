/**
 * Staged rollouts against a real A2A peer (@a2a-js/sdk 1.x) deployed blue/green: the returns
 * agent's new version drops a skill (a breaking change) and moves to a new deployment. When that
 * deployment fails half of its calls, the candidate reaches only the first step's share of new
 * sessions and is rolled back automatically before the second step, with an alert that names the
 * agent and its error rate; no session changes snapshot mid-conversation. When it is healthy, it is
 * promoted through every step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryEvent } from 'a2a-discovery';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startVersionedPeer, type VersionedPeer } from '../helpers/versioned-peer.js';
import { waitFor } from '../helpers/wait-for.js';

const SKILLS_V1 = [
  { id: 'returns', tags: ['returns'] },
  { id: 'refunds', tags: ['refunds'] },
];
const SKILLS_V2 = [{ id: 'returns', tags: ['returns'] }];

async function setUp(failEvery: number | undefined, rollout: ServiceOptions['rollout']): Promise<{ peer: VersionedPeer; service: RunningService; events: DiscoveryEvent[]; close(): Promise<void> }> {
  const peer = await startVersionedPeer({ name: 'Returns Agent', prefix: 'returns', v1: { skills: SKILLS_V1 }, v2: { skills: SKILLS_V2, ...(failEvery !== undefined && { failEvery }) } });
  const service = await startService({
    port: 0,
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns and refunds of orders.' }],
    needs: [{ tag: 'returns' }],
    static: [{ name: 'returns_agent', url: peer.baseUrl, description: 'Handles returns of orders.', tags: ['returns'] }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    sessions: { maxSessions: 5_000 },
    limits: { maxSessionsPerClient: 5_000 },
    ...(rollout !== undefined && { rollout }),
    logger: createLogger({ level: 'silent' }),
  });
  const events: DiscoveryEvent[] = [];
  const off = service.events.subscribe((e) => events.push(e));
  return {
    peer,
    service,
    events,
    close: async () => {
      off();
      await service.close();
      await peer.close();
    },
  };
}

/** Session owner secrets, by session id (a session's next turn presents it). */
const secrets = new Map<string, string>();

async function chat(service: RunningService, sessionId: string): Promise<{ digest: string; ok: boolean }> {
  const secret = secrets.get(sessionId);
  const headers = { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) };
  const res = await fetch(`${service.url}/api/chat`, { method: 'POST', headers, body: JSON.stringify({ message: 'I want to return order 12', sessionId }) });
  const body = (await res.json()) as { digest?: string; sessionId?: string; sessionSecret?: string };
  if (body.sessionSecret !== undefined) secrets.set(sessionId, body.sessionSecret);
  assert.ok(body.digest !== undefined, `a turn answers with its digest (${res.status} ${JSON.stringify(body)})`);
  return { digest: body.digest, ok: res.status === 200 };
}

async function rollout(service: RunningService): Promise<{ active: { candidate: string; share: number; step: number } | null; history: Array<{ status: string; candidate: string; decisions: Array<{ action: string; share: number }> }> }> {
  return (await (await fetch(`${service.url}/api/rollout`)).json()) as never;
}

test('a breaking release that fails half its calls reaches only the first step and is rolled back before the second', async (ctx) => {
  const t = await setUp(2, { steps: [5, 25, 100], holdMs: 60_000, minTurns: 20, minSamples: 10 });
  try {
    // The current version's figures first: the other side of the comparison.
    for (let i = 0; i < 40; i++) assert.equal((await chat(t.service, `warm-${i}`)).ok, true);
    const current = t.service.loop.current()!.digest;
    t.peer.release();
    const { candidate } = await waitFor(async () => (await rollout(t.service)).active ?? undefined, 'the release starts a rollout', 10_000);
    assert.equal(t.service.loop.current()!.digest, current, 'the breaking change is not made current at once');

    const during: string[] = [];
    const after: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const active = (await rollout(t.service)).active !== null;
      const { digest } = await chat(t.service, `s-${i}`);
      (active ? during : after).push(digest);
      if (active) assert.equal((await rollout(t.service)).active?.step ?? 0, 0, 'the rollout never reaches its second step');
    }
    const onCandidate = during.filter((d) => d === candidate).length;
    const n = during.length;
    const sigma = Math.sqrt(n * 0.05 * 0.95);
    ctx.diagnostic(`${onCandidate} of ${n} sessions on the candidate during the rollout, ${during.length + after.length - n} after it`);
    assert.ok(n > 0 && Math.abs(onCandidate - 0.05 * n) <= 4 * sigma + 1, `${onCandidate} of ${n} sessions on the candidate during the rollout: the first step's 5 %`);
    assert.equal(after.filter((d) => d === candidate).length, 0, 'no new session lands on a rolled-back candidate');
    assert.ok(after.length > 0, 'the rollback came before the 1,000 sessions ended');

    const { history } = await rollout(t.service);
    assert.equal(history[0]!.status, 'rolled-back');
    assert.deepEqual(
      history[0]!.decisions.map((d) => d.action),
      ['started', 'rolled-back'],
    );
    assert.equal(t.service.loop.current()!.digest, current, 'the current snapshot stays');
    const alert = t.events.find((e): e is Extract<DiscoveryEvent, { type: 'alert' }> => e.type === 'alert' && e.kind === 'rollout-rolled-back');
    assert.ok(alert, 'an alert says the rollout was rolled back');
    assert.match(alert.message, /returns_agent: turn error rate \d+(\.\d)?% on the candidate/);

    // Pinning holds: a session that started on the candidate stays there for its next turn.
    const pinned = during.findIndex((d) => d === candidate);
    const sessionId = `s-${pinned}`;
    assert.equal((await chat(t.service, sessionId)).digest, candidate, 'a session never moves between snapshots mid-conversation');
    const metrics = await (await fetch(`${t.service.url}/metrics`)).text();
    assert.match(metrics, /a2a_discovery_rollout_decisions_total\{action="rolled-back"\} 1/);
    assert.match(metrics, /a2a_discovery_rollout_share 0/);
    assert.match(metrics, /a2a_discovery_agent_calls_total\{agent="returns_agent",outcome="error"\} [1-9]/);
    // The rolled-back version is not rolled out again while its card stays the same.
    await t.service.loop.refreshNow();
    assert.equal((await rollout(t.service)).active, null);
  } finally {
    await t.close();
  }
});

test('the same breaking release with healthy calls is promoted through every step', async () => {
  const t = await setUp(undefined, { steps: [5, 25, 100], holdMs: 200, minTurns: 12, minSamples: 10 });
  try {
    for (let i = 0; i < 40; i++) await chat(t.service, `warm-${i}`);
    t.peer.release();
    const { candidate } = await waitFor(async () => (await rollout(t.service)).active ?? undefined, 'the release starts a rollout', 10_000);
    let i = 0;
    while ((await rollout(t.service)).active !== null && i < 3_000) await chat(t.service, `h-${i++}`);
    const { history } = await rollout(t.service);
    assert.equal(history[0]!.status, 'promoted');
    assert.deepEqual(
      history[0]!.decisions.map((d) => `${d.action} ${d.share}`),
      ['started 5', 'advanced 25', 'promoted 100'],
    );
    assert.equal(t.service.loop.current()!.digest, candidate, 'the candidate is current');
    assert.equal((await chat(t.service, `after-promotion`)).digest, candidate);
  } finally {
    await t.close();
  }
});
