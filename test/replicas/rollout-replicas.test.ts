/**
 * A staged rollout across two replicas on one real PostgreSQL (two services in process), with a
 * real A2A peer (@a2a-js/sdk 1.x) deployed blue/green whose new version drops a skill (breaking)
 * and answers well. The leader decides the steps and the store carries them: the follower assigns
 * every new session to the same side as the leader would; the leader judges on the follower's turns
 * too (the first step is passed on turns served by the follower alone). The leader is stopped at
 * the second step: the follower takes over and carries on from that step (its start kept), no
 * session changes snapshot on its next turn, and the candidate is promoted after more turns.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { startVersionedPeer, type VersionedPeer } from '../helpers/versioned-peer.js';
import { waitFor } from '../helpers/wait-for.js';

const SKILLS_V1 = [
  { id: 'returns', tags: ['returns'] },
  { id: 'refunds', tags: ['refunds'] },
];
const SKILLS_V2 = [{ id: 'returns', tags: ['returns'] }];
const MIN_TURNS = 6;

interface RolloutView {
  active: { id: string; candidate: string; baseline: string; step: number; share: number; stepStartedAt: number; decisions: Array<{ action: string; share: number; reason: string }> } | null;
  figures: { candidate: Record<string, { calls: number }>; stepTurns: number } | null;
  history: Array<{ id: string; status: string; decisions: Array<{ action: string; share: number }> }>;
}

describe('a staged rollout across two replicas on PostgreSQL, the leader stopped at the second step', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let peer: VersionedPeer;
  let a: RunningService | undefined;
  let b: RunningService | undefined;
  /** Session owner secrets, by session id (a session's next turn presents it, on either replica). */
  const secrets = new Map<string, string>();

  const options = (id: string): ServiceOptions => ({
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns and refunds of orders.' }],
    needs: [{ tag: 'returns' }],
    static: [{ name: 'returns_agent', url: peer.baseUrl, description: 'Handles returns of orders.', tags: ['returns'] }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    sessions: { maxSessions: 5_000 },
    limits: { maxSessionsPerClient: 5_000 },
    rollout: { steps: [5, 25, 100], holdMs: 300, minTurns: MIN_TURNS, minSamples: 10 },
    store: pg.url,
    storeOptions: { schema: 'rollout_replicas' },
    replica: { id, leaderRetryMs: 200, pollMs: 300, leaseMs: 3_000 },
  });

  async function chat(service: RunningService, sessionId: string): Promise<string> {
    const secret = secrets.get(sessionId);
    const headers = { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) };
    const res = await fetch(`${service.url}/api/chat`, { method: 'POST', headers, body: JSON.stringify({ message: 'I want to return order 12', sessionId }) });
    const body = (await res.json()) as { digest?: string; sessionSecret?: string };
    if (body.sessionSecret !== undefined) secrets.set(sessionId, body.sessionSecret);
    assert.equal(res.status, 200, `a turn is answered (${JSON.stringify(body)})`);
    return body.digest!;
  }
  const rollout = async (s: RunningService): Promise<RolloutView> => (await (await fetch(`${s.url}/api/rollout`)).json()) as RolloutView;

  before(async () => {
    pg = await startPostgres();
    peer = await startVersionedPeer({ name: 'Returns Agent', prefix: 'returns', v1: { skills: SKILLS_V1 }, v2: { skills: SKILLS_V2, failEvery: undefined } });
  });

  after(async () => {
    await b?.close();
    await a?.close();
    await peer?.close();
    await pg?.close();
  });

  test('the follower assigns as the leader does, its turns count, and the new leader carries on from the second step without moving a session', async () => {
    a = await startService(options('replica-a'));
    assert.equal(a.replica()?.role, 'leader');
    b = await startService(options('replica-b'));
    assert.equal(b.replica()?.role, 'follower');
    const current = a.loop.current()!.digest;
    await waitFor(async () => (b!.loop.current()?.digest === current ? true : undefined), 'the follower serving the published snapshot');
    // The current version's figures on both replicas: the other side of the comparison.
    for (let i = 0; i < 10; i++) await chat(i % 2 === 0 ? a : b, `warm-${i}`);

    peer.release();
    const started = await waitFor(async () => (await rollout(a!)).active ?? undefined, 'the release starts a rollout on the leader', 10_000);
    assert.equal(started.step, 0);
    assert.equal(a.loop.current()!.digest, current, 'the breaking change is not made current at once');
    await waitFor(async () => ((await rollout(b!)).active?.id === started.id ? true : undefined), 'the follower takes the rollout from the store');
    const sameSide = (ids: readonly string[]) => ids.every((id) => a!.loop.rollouts!.assign(id) === b!.loop.rollouts!.assign(id));
    const probe = Array.from({ length: 400 }, (_, i) => `probe-${i}`);
    assert.ok(sameSide(probe), 'every session id lands on the same side on both replicas (first step)');

    // Sessions only through the follower: the leader serves no candidate turn, so it can pass the
    // first step only on the follower's turns.
    const recorded = new Map<string, string>();
    for (let i = 0; i < 2_000 && (await rollout(a)).active?.step === 0; i++) {
      const id = `f-${i}`;
      recorded.set(id, await chat(b, id));
    }
    const second = (await rollout(a)).active!;
    assert.equal(second.step, 1, 'the leader advanced on the turns the follower served');
    assert.equal(second.share, 25);
    assert.deepEqual(
      second.decisions.map((d) => `${d.action} ${d.share}`),
      ['started 5', 'advanced 25'],
    );
    const onCandidate = [...recorded.values()].filter((d) => d === started.candidate).length;
    assert.ok(onCandidate >= MIN_TURNS, `${onCandidate} of the follower's sessions on the candidate`);
    assert.ok(((await rollout(a)).figures?.candidate['*']?.calls ?? 0) >= MIN_TURNS, "the leader's figures hold the follower's turns");

    await waitFor(async () => ((await rollout(b!)).active?.step === 1 ? true : undefined), 'the follower at the second step');
    assert.ok(sameSide(probe), 'every session id lands on the same side on both replicas (second step)');
    // A few sessions through both replicas at the second step, too few candidate turns to end it:
    // two on the candidate and four on the current snapshot, chosen by their side.
    const candidateIds = probe.filter((id) => a!.loop.rollouts!.assign(id) === started.candidate).slice(0, 2);
    const currentIds = probe.filter((id) => a!.loop.rollouts!.assign(id) === undefined).slice(0, 4);
    for (const [i, id] of [...candidateIds, ...currentIds].entries()) recorded.set(id, await chat(i % 2 === 0 ? a : b, id));
    for (const id of candidateIds) assert.equal(recorded.get(id), started.candidate);
    for (const id of currentIds) assert.equal(recorded.get(id), current);
    const beforeStop = (await rollout(a)).active!;
    assert.equal(beforeStop.step, 1, 'still at the second step when the leader stops');

    // The leader stops (as a drained replica does: it steps down); the follower takes over.
    await a.close();
    a = undefined;
    await waitFor(async () => (b!.replica()?.role === 'leader' ? true : undefined), 'the follower taking over', 15_000);
    const carried = (await rollout(b)).active;
    assert.ok(carried, 'the rollout goes on under the new leader');
    assert.equal(carried.id, started.id);
    assert.equal(carried.step, 1, 'from the second step, not from the first');
    assert.equal(carried.share, 25);
    assert.equal(carried.stepStartedAt, beforeStop.stepStartedAt, "the step's start is kept");

    // No session is reassigned: each keeps its digest on its next turn, through the new leader.
    for (const [id, digest] of recorded) assert.equal(await chat(b, id), digest, `${id} stays on its snapshot`);

    // More turns: the new leader promotes.
    for (let i = 0; i < 3_000 && (await rollout(b)).active !== null; i++) await chat(b, `n-${i}`);
    const { history } = await rollout(b);
    assert.equal(history[0]!.id, started.id);
    assert.equal(history[0]!.status, 'promoted');
    assert.deepEqual(
      history[0]!.decisions.map((d) => `${d.action} ${d.share}`),
      ['started 5', 'advanced 25', 'promoted 100'],
    );
    assert.equal(b.loop.current()!.digest, started.candidate, 'the candidate is current');
  });
});
