/**
 * The rollout's parts on a virtual clock: which changes are staged, where a session lands, and
 * the decisions the figures of real calls lead to (the service-level behaviour against real peers
 * is test/rollout/staged-rollout.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { EventStream, type DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { planRollout, rolloutBucket, Rollouts } from '../../packages/core/src/rollout/index.js';
import type { RecordedCall } from '../../packages/core/src/health/index.js';
import { buildSnapshot, SnapshotStore, type Snapshot, type SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { snapshotAgent } from '../helpers/cards.js';

/** The agent's next version without its skills: a breaking change (a skill removed). */
function withoutSkills(a: SnapshotAgent): SnapshotAgent {
  return { ...a, card: { ...a.card, skills: [] }, canonicalSha256: `${a.canonicalSha256.slice(0, 60)}beef` };
}

const billing = snapshotAgent('billing_agent', ['billing']);
const returns = snapshotAgent('returns_agent', ['returns']);

describe('planRollout', () => {
  const current = buildSnapshot([billing, returns], 1, 0);

  test('a breaking change is staged: the current snapshot keeps the old version, the candidate has the new one', () => {
    const next = withoutSkills(returns);
    const plan = planRollout(current, [billing, next], 'breaking', new Map());
    assert.deepEqual(plan.base, [billing, returns]);
    assert.deepEqual(plan.staged?.agents, [billing, next]);
    assert.deepEqual(
      plan.staged?.changes.map((c) => [c.localName, c.impact]),
      [['returns_agent', 'breaking']],
    );
    assert.ok(plan.staged!.changes[0]!.reasons.some((r) => /skill/.test(r)), 'the reason names the skill');
  });

  test('compatible changes, additions and removals go out at once; trigger any stages every changed agent; off stages nothing', () => {
    const compatible = snapshotAgent('returns_agent', ['returns'], '1.1.0');
    const warranty = snapshotAgent('warranty_agent', ['warranty']);
    const plan = planRollout(current, [compatible, warranty], 'breaking', new Map());
    assert.equal(plan.staged, undefined);
    assert.deepEqual(plan.base, [compatible, warranty], 'billing left at once; warranty added at once');
    const any = planRollout(current, [billing, compatible], 'any', new Map());
    assert.deepEqual(any.staged?.changes.map((c) => [c.localName, c.impact]), [['returns_agent', 'compatible']]);
    assert.equal(planRollout(current, [billing, withoutSkills(returns)], 'off', new Map()).staged, undefined);
  });

  test('a rolled-back version is kept at the current one until the agent changes again', () => {
    const bad = withoutSkills(returns);
    const quarantined = new Map([['returns_agent', bad.canonicalSha256]]);
    const plan = planRollout(current, [billing, bad], 'breaking', quarantined);
    assert.equal(plan.staged, undefined);
    assert.deepEqual(plan.base, [billing, returns]);
    const newer = { ...bad, canonicalSha256: `${bad.canonicalSha256.slice(0, 60)}f00d` };
    assert.ok(planRollout(current, [billing, newer], 'breaking', quarantined).staged, 'a new version is staged again');
    assert.equal(quarantined.size, 0, 'and the quarantine is freed');
  });
});

describe('rolloutBucket', () => {
  test('the same session lands on the same side; the shares nest; about the share of sessions land on the candidate', () => {
    assert.equal(rolloutBucket('r1', 's-1'), rolloutBucket('r1', 's-1'));
    const buckets = Array.from({ length: 10_000 }, (_, i) => rolloutBucket('r1', `s-${i}`));
    const at5 = buckets.filter((b) => b * 100 < 5).length;
    const at25 = buckets.filter((b) => b * 100 < 25).length;
    // 5 %: 500 ± 4σ (σ ≈ 21.8).
    assert.ok(Math.abs(at5 - 500) < 88, `${at5} of 10,000 at 5 %`);
    assert.ok(Math.abs(at25 - 2_500) < 174, `${at25} of 10,000 at 25 %`);
    assert.notDeepEqual(
      buckets.slice(0, 20),
      Array.from({ length: 20 }, (_, i) => rolloutBucket('r2', `s-${i}`)),
      'another rollout draws other sessions',
    );
  });
});

function setUp(policy: ConstructorParameters<typeof Rollouts>[0]['policy'] = {}) {
  const clock = new VirtualClock();
  const snapshots = new SnapshotStore();
  const events = new EventStream();
  const seen: DiscoveryEvent[] = [];
  events.subscribe((e) => seen.push(e));
  const current = buildSnapshot([billing, returns], 1, 0);
  snapshots.publish(current);
  const candidate: Snapshot = buildSnapshot([billing, withoutSkills(returns)], 2, 0);
  const rollouts = new Rollouts({ policy: { steps: [5, 25, 100], holdMs: 60_000, minTurns: 10, minSamples: 10, ...policy }, snapshots, clock, events });
  const plan = planRollout(current, candidate.agents, 'breaking', rollouts.quarantined);
  rollouts.stage(plan.staged!.id, plan.staged!.changes, candidate, current);
  const turn = (digest: string, ok: boolean, latencyMs = 100): void => {
    const call: RecordedCall = { agent: 'returns_agent', baseUrl: returns.baseUrl, digest, ok, latencyMs, source: 'turn', ...(!ok && { errorClass: 'http_500' }) };
    rollouts.record(call);
  };
  return { clock, snapshots, rollouts, current, candidate, turn, seen };
}

describe('Rollouts', () => {
  test('the candidate is retained while the rollout runs; new sessions land on it by the share', () => {
    const { rollouts, snapshots, candidate } = setUp();
    assert.equal(snapshots.references(candidate.digest), 1);
    const landed = Array.from({ length: 2_000 }, (_, i) => rollouts.assign(`s-${i}`)).filter((d) => d === candidate.digest).length;
    assert.ok(landed > 50 && landed < 150, `${landed} of 2,000 at 5 %`);
  });

  test('an error rate above the bound rolls back at once, with an alert naming the agent and the figure, and quarantines the version', () => {
    const { rollouts, turn, current, candidate, snapshots, seen } = setUp();
    for (let i = 0; i < 30; i++) turn(current.digest, true);
    for (let i = 0; i < 9; i++) turn(candidate.digest, i % 2 === 0);
    assert.equal(rollouts.judge(), undefined, 'fewer than minSamples turns: no judgement yet');
    turn(candidate.digest, false);
    const action = rollouts.judge()!;
    assert.equal(action.kind, 'rollback');
    assert.match(action.reason, /^returns_agent: turn error rate 50% on the candidate \(5 of 10 turns\) against 0% on the current snapshot \(0 of 30\); the bound is 5 points more$/);
    rollouts.done(action);
    assert.equal(rollouts.active, undefined);
    assert.equal(rollouts.history.at(-1)!.status, 'rolled-back');
    assert.equal(snapshots.references(candidate.digest), 0, 'the rollout no longer holds its candidate');
    assert.equal(rollouts.quarantined.get('returns_agent'), candidate.agents[1]!.canonicalSha256);
    const alert = seen.find((e) => e.type === 'alert' && e.kind === 'rollout-rolled-back');
    assert.ok(alert && alert.type === 'alert' && /returns_agent: turn error rate 50%/.test(alert.message));
    assert.deepEqual(
      seen.filter((e) => e.type.startsWith('rollout.')).map((e) => e.type),
      ['rollout.started', 'rollout.rolled-back'],
    );
  });

  test('within the bounds it advances after the hold time and the turns, then promotes; a hold stops the steps, not a rollback', async () => {
    const { rollouts, turn, current, candidate, clock } = setUp();
    for (let i = 0; i < 10; i++) turn(candidate.digest, true);
    assert.equal(rollouts.judge(), undefined, 'the step has not lasted holdMs');
    await clock.advance(60_000);
    assert.equal(rollouts.judge()?.kind, 'advance');
    rollouts.done(rollouts.judge()!);
    assert.deepEqual([rollouts.active!.step, rollouts.active!.share], [1, 25]);
    await clock.advance(60_000);
    assert.equal(rollouts.judge(), undefined, 'the new step counts its own turns');
    for (let i = 0; i < 10; i++) turn(candidate.digest, true);
    rollouts.hold('alice', true);
    assert.equal(rollouts.judge(), undefined, 'held: no step');
    for (let i = 0; i < 10; i++) turn(current.digest, true);
    for (let i = 0; i < 20; i++) turn(candidate.digest, false);
    assert.equal(rollouts.judge()?.kind, 'rollback', 'held, and still rolled back on evidence');
    rollouts.hold('alice', false);
  });

  test('the last step promotes; an operator may promote or roll back at once', async () => {
    const { rollouts, turn, candidate, clock } = setUp({ steps: [50, 100], holdMs: 0, minTurns: 1 });
    turn(candidate.digest, true);
    const action = rollouts.judge()!;
    assert.deepEqual([action.kind, action.by], ['promote', 'auto']);
    const { rollouts: other } = setUp();
    await clock.advance(1);
    assert.deepEqual(other.request('rollback', 'bob'), { kind: 'rollback', by: 'bob', reason: 'rolled back by bob' });
    other.done(other.judge()!);
    assert.deepEqual(other.history.at(-1)!.decisions.map((d) => [d.action, d.by]), [
      ['started', 'auto'],
      ['rolled-back', 'bob'],
    ]);
  });

  test('p95 latency beyond the ratio and the floor rolls back; small latencies within the floor do not', () => {
    const { rollouts, turn, current, candidate } = setUp();
    for (let i = 0; i < 20; i++) turn(current.digest, true, 20);
    for (let i = 0; i < 20; i++) turn(candidate.digest, true, 60);
    assert.equal(rollouts.judge(), undefined, '3× slower but only 40 ms more: within the 250 ms floor');
    for (let i = 0; i < 20; i++) turn(candidate.digest, true, 900);
    assert.match(rollouts.judge()!.reason, /p95 latency 900 ms on the candidate against 20 ms/);
  });

  test('a follower takes the leader state as it stands, and releases the candidate when it ends', () => {
    const { rollouts: leader, candidate } = setUp();
    const clock = new VirtualClock();
    const snapshots = new SnapshotStore();
    const follower = new Rollouts({ snapshots, clock });
    follower.follow(leader.active, candidate);
    assert.equal(follower.assign('s-42'), leader.assign('s-42'));
    assert.equal(snapshots.references(candidate.digest), 1);
    leader.done({ kind: 'rollback', by: 'auto', reason: 'test' });
    follower.follow(leader.history.at(-1), candidate);
    assert.equal(follower.active, undefined);
    assert.equal(snapshots.references(candidate.digest), 0);
  });
});
