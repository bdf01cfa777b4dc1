/**
 * One process on SQLite restarted during a staged rollout (a real A2A peer, @a2a-js/sdk 1.x,
 * whose new version drops a skill): the restarted service carries the rollout on at the step and
 * share it had reached, with the same step start, and a session started on the candidate before
 * the restart continues on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import { startVersionedPeer } from '../helpers/versioned-peer.js';
import { waitFor } from '../helpers/wait-for.js';

interface RolloutView {
  active: { id: string; candidate: string; step: number; share: number; stepStartedAt: number } | null;
}

test('a restarted service carries the staged rollout on from the store, at its step, its sessions on their side', async () => {
  const peer = await startVersionedPeer({ name: 'Returns Agent', prefix: 'returns', v1: { skills: [{ id: 'returns', tags: ['returns'] }, { id: 'refunds', tags: ['refunds'] }] }, v2: { skills: [{ id: 'returns', tags: ['returns'] }] } });
  const dir = await mkdtemp(join(tmpdir(), 'rollout-restart-'));
  const options: ServiceOptions = {
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns and refunds of orders.' }],
    needs: [{ tag: 'returns' }],
    static: [{ name: 'returns_agent', url: peer.baseUrl, description: 'Handles returns of orders.', tags: ['returns'] }],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    // Held for an hour: nothing moves it while the test runs.
    rollout: { steps: [50, 100], holdMs: 3_600_000, minTurns: 1_000 },
    store: `sqlite:${join(dir, 'state.sqlite')}`,
  };
  const rollout = async (s: RunningService): Promise<RolloutView> => (await (await fetch(`${s.url}/api/rollout`)).json()) as RolloutView;
  const chat = async (s: RunningService, sessionId: string, secret?: string) => {
    const res = await fetch(`${s.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) }, body: JSON.stringify({ message: 'I want to return order 12', sessionId }) });
    assert.equal(res.status, 200);
    return (await res.json()) as { digest: string; sessionSecret?: string };
  };
  let service: RunningService | undefined = await startService(options);
  try {
    peer.release();
    const before = await waitFor(async () => (await rollout(service!)).active ?? undefined, 'the release starts a rollout', 10_000);
    // A session on the candidate (the side depends on the session id only).
    const id = Array.from({ length: 100 }, (_, i) => `s-${i}`).find((s) => service!.loop.rollouts!.assign(s) === before.candidate)!;
    const first = await chat(service, id);
    assert.equal(first.digest, before.candidate);
    await service.close();
    service = await startService(options);
    const after = (await rollout(service)).active;
    assert.ok(after, 'the rollout is carried on');
    assert.deepEqual([after.id, after.candidate, after.step, after.share, after.stepStartedAt], [before.id, before.candidate, before.step, before.share, before.stepStartedAt]);
    await service.loop.refreshNow();
    assert.equal((await rollout(service)).active?.stepStartedAt, before.stepStartedAt, 'the first cycle after the restart does not start it again');
    assert.equal((await chat(service, id, first.sessionSecret)).digest, before.candidate, 'the session stays on the candidate');
  } finally {
    await service?.close();
    await peer.close();
    await rm(dir, { recursive: true, force: true });
  }
});
