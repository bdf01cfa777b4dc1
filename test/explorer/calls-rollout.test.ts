/**
 * The explorer explains call health and rollouts with the library's own code: the health states
 * and reasons of a trace with scripted calls are exactly what `CallHealth` + `HealthTracker` give
 * for the same calls and card observations, and a rollout's decisions are exactly what `Rollouts`
 * gives (`judge()`'s reason, word for word) for the same sessions and turns. The sessions' sides
 * are `rolloutBucket`'s, a breaking change whose calls fail is rolled back at the first step, and a
 * healthy one is promoted through every step.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTrace, TRACE_BASE_URL } from '../../packages/core/src/explorer/index.js';
import { CallHealth } from '../../packages/core/src/health/call-health.js';
import { HealthTracker } from '../../packages/core/src/health/health-tracker.js';
import { Rollouts, rolloutBucket } from '../../packages/core/src/rollout/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

const FAILING = 'ok ok 500 500 500 500 500 ok ok';
const AGENT = 'orders_agent';

describe('health from scripted calls', () => {
  test('the states and reasons are HealthTracker’s for the same calls (card always fresh)', async () => {
    const r = await runTrace({ attempts: 9, calls: FAILING, publishV2AtSeconds: null });
    // The same sequence, fed by hand to the library's classes.
    const clock = new VirtualClock();
    const calls = new CallHealth(clock);
    const tracker = new HealthTracker({ enterAfter: 2, callLeaveAfter: 5 }, clock);
    const expected = FAILING.split(' ').map((token) => {
      const ok = token === 'ok';
      calls.record({ agent: AGENT, baseUrl: TRACE_BASE_URL, source: 'turn', ok, latencyMs: 100, ...(!ok && { errorClass: 'http_500', message: `${AGENT} answered 500 Internal Server Error at https://orders.example.com/a2a/jsonrpc` }) });
      tracker.observe(TRACE_BASE_URL, { failures: 0, usable: true, calls: calls.streak(TRACE_BASE_URL)! });
      const s = tracker.get(TRACE_BASE_URL)!;
      return [s.state, s.reason];
    });
    assert.deepEqual(r.health!.steps.map((s) => [s.state, s.reason]), expected);
    assert.deepEqual(r.health!.steps.map((s) => s.state), ['pending', 'healthy', 'degraded', 'degraded', 'degraded', 'degraded', 'removed', 'removed', 'healthy']);
    assert.match(r.health!.steps[6]!.reason, /^left new snapshots after 5 failed calls in a row; last: orders_agent answered 500 Internal Server Error/);
    assert.equal(r.health!.steps[6]!.member, false, 'out of new snapshots');
    assert.match(r.health!.lines.join('\n'), /Attempt 9 \(48\.1 s\): removed → healthy/);
  });

  test('a removed agent whose calls keep failing is told how it returns; callLeaveAfter and enterAfter are the controls', async () => {
    const r = await runTrace({ attempts: 6, calls: 'ok 500 500 500 ok -', callLeaveAfter: 2, enterAfter: 1 });
    assert.deepEqual(r.health!.steps.map((s) => s.state), ['healthy', 'degraded', 'removed', 'removed', 'healthy', 'healthy']);
    assert.equal(r.health!.steps[3]!.reason, '3 failed calls in a row; last: orders_agent answered 500 Internal Server Error at https://orders.example.com/a2a/jsonrpc; it returns after a good call and 1 good observations in a row');
    assert.deepEqual(r.health!.settings, { enterAfter: 1, leaveAfter: 3, callLeaveAfter: 2, leaveWhileUsable: false });
    assert.equal(r.health!.steps[5]!.callOutcome, 'none');
  });

  test('failed card fetches and calls meet in one tracker: the reason names the fetch failure the cache classified', async () => {
    const r = await runTrace({ condition: 'unavailable', failFromSeconds: 11, calls: 'ok ok ok ok ok' });
    const last = r.health!.steps.at(-1)!;
    assert.equal(last.observation.failures, 3);
    assert.equal(last.state, 'removed');
    assert.match(last.reason, /^3 consecutive failed fetches and its card is past its allowed staleness; last: /);
  });

  test('calls past the last attempt are not made, and the lane says so (a change of attempts alone stays valid)', async () => {
    const r = await runTrace({ calls: 'ok ok 500 500 500 500 500 ok ok' });
    assert.equal(r.health!.steps.length, 5);
    assert.equal(r.health!.lines.at(-1), 'The script holds 9 calls but the run has 5 attempts: the last 4 are not made (one call per attempt).');
  });

  test('a trace without calls or a rollout is as before: no health, no rollout, the same limits', async () => {
    const r = await runTrace();
    assert.equal(r.health, undefined);
    assert.equal(r.rollout, undefined);
    assert.equal(r.model.limits.length, 6);
    assert.equal(r.inputs.calls, null);
  });
});

describe('the rollout of v1 → v2', () => {
  test('a breaking v2 whose calls fail 50 % is rolled back at the first step, with Rollouts.judge()’s own reason', async () => {
    const r = (await runTrace({ rollout: true, v2Breaking: true, rolloutCandidateCalls: 'ok 500' })).rollout!;
    // The library's classification, breaking reasons first.
    assert.deepEqual(r.change, { from: 'v1', to: 'v2', impact: 'breaking', reasons: ['skill "order-status" removed', 'skill "order-tracking" added', 'card description changed', 'version changed from "1.0.0" to "2.0.0"'] });
    assert.equal(r.status, 'rolled-back');
    assert.deepEqual(r.decisions.map((d) => d.action), ['started', 'rolled-back']);
    assert.deepEqual(r.steps.map((s) => s.share), [5], 'rolled back before the second step');
    assert.match(r.alert!, /^rollout of orders_agent rolled back: orders_agent: turn error rate 50% on the candidate \(5 of 10 turns\)/);

    // The same sessions and turns, fed by hand to the library's Rollouts: the same reason.
    const clock = new VirtualClock();
    const store = new SnapshotStore();
    const v1 = buildSnapshot([], 1, clock.wallNow());
    const rollouts = new Rollouts({ snapshots: store, clock });
    // Snapshots built by hand stand for both sides; the decision depends only on the turns' figures.
    const v2 = { ...buildSnapshot([], 2, clock.wallNow()), digest: 'candidate' };
    rollouts.stage(r.id!, [{ localName: AGENT, impact: 'breaking', reasons: ['skill "order-status" removed'], version: 'x' }], v2, v1);
    let onCandidate = 0;
    let reason: string | undefined;
    for (let n = 1; reason === undefined; n++) {
      await clock.advanceTo(n * 1000);
      const side = rollouts.assign(`session-${n}`) === 'candidate';
      const ok = side ? onCandidate++ % 2 === 0 : true;
      rollouts.record({ agent: AGENT, baseUrl: TRACE_BASE_URL, source: 'turn', digest: side ? 'candidate' : v1.digest, ok, latencyMs: 100 });
      reason = rollouts.judge()?.reason;
    }
    assert.equal(r.decisions[1]!.reason, reason);
  });

  test('the same change with good calls is promoted through every step', async () => {
    const r = (await runTrace({ rollout: true, v2Breaking: true })).rollout!;
    assert.equal(r.status, 'promoted');
    assert.deepEqual(r.decisions.map((d) => [d.action, d.share]), [['started', 5], ['advanced', 25], ['promoted', 100]]);
    assert.deepEqual(r.decisions.map((d) => d.at), [0, 600, 1200]);
    assert.equal(r.decisions[1]!.reason, 'step 1 (5%) held 600 s and 26 turns within bounds');
    assert.equal(r.alert, undefined);
    // Each step's share of new sessions landed on the candidate, within sampling error.
    for (const s of r.steps) assert.ok(Math.abs(s.candidateSessions / s.sessions - s.share / 100) < 0.05, `${s.candidateSessions} of ${s.sessions} at ${s.share}%`);
  });

  test('where sample sessions land is rolloutBucket’s: stable, and the same at every later step', async () => {
    const r = (await runTrace({ rollout: true, v2Breaking: true })).rollout!;
    for (const s of r.samples) {
      const bucket = rolloutBucket(r.id!, s.sessionId);
      assert.deepEqual(s.candidateAt, [5, 25, 100].filter((share) => bucket * 100 < share));
      assert.equal(s.landed, bucket * 100 < 5 ? 'candidate' : 'current', `${s.sessionId} arrived during the 5 % step`);
    }
  });

  test('a compatible change is published at once unless the trigger is "any"', async () => {
    const compatible = (await runTrace({ rollout: true })).rollout!;
    assert.equal(compatible.staged, false);
    assert.equal(compatible.status, 'published');
    assert.match(compatible.sentence, /is compatible \(skill "order-status" description changed; [^)]*\): not staged \(the change is compatible and rollout\.trigger is "breaking"\)/);
    const any = (await runTrace({ rollout: true, rolloutTrigger: 'any', rolloutSessions: 50 })).rollout!;
    assert.equal(any.staged, true);
    assert.equal(any.status, 'running', 'the 50 sessions ran out within the first step');
  });

  test('bad scripts and steps are refused with the control named', async () => {
    const refused = async (inputs: Parameters<typeof runTrace>[0], path: string, message: RegExp) => {
      await assert.rejects(runTrace(inputs), (err: unknown) => {
        assert.ok(isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID');
        const problem = err.problems.find((p) => p.path === path);
        assert.match(problem?.message ?? '', message);
        return true;
      });
    };
    await refused({ calls: 'ok 200' }, 'calls', /"200" is not a call/);
    await refused({ rolloutSteps: '25 5' }, 'rolloutSteps', /grow step by step/);
    await refused({ rolloutCandidateCalls: '' }, 'rolloutCandidateCalls', /at least one call/);
    await refused({ rolloutSessions: 10_001 }, 'rolloutSessions', /between 1 and 10000/);
  });
});

