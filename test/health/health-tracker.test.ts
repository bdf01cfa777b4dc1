import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthTracker, isMember, type HealthObservation, type HealthTransition } from '../../packages/core/src/health/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';

const URL_A = 'https://a.example.com/';
const URL_B = 'https://b.example.com/';

const GOOD: HealthObservation = { failures: 0, usable: true };

/**
 * Feeds a sequence of fetch outcomes the way the cache counts them: `true` resets the failure
 * counter, `false` adds one failed fetch; `usable` says whether the card may still be used.
 */
function feed(
  tracker: HealthTracker,
  endpoint: string,
  goods: readonly boolean[],
  options: { critical?: boolean; enterAfter?: number; usable?: (failures: number) => boolean } = {},
): Array<HealthTransition & { at: number }> {
  const out: Array<HealthTransition & { at: number }> = [];
  let failures = tracker.get(endpoint)?.failures ?? 0;
  goods.forEach((good, i) => {
    failures = good ? 0 : failures + 1;
    const usable = good || (options.usable?.(failures) ?? false);
    const t = tracker.observe(endpoint, { failures, usable }, options);
    if (t) out.push({ ...t, at: i + 1 });
  });
  return out;
}

/** Transitions that change snapshot membership (these are what churn digests). */
const membershipChanges = (ts: readonly HealthTransition[]) => ts.filter((t) => isMember(t.from) !== isMember(t.to));

const repeat = (good: boolean, n: number) => Array.from({ length: n }, () => good);

describe('HealthTracker (P4: no flapping)', () => {
  test('a new endpoint enters after enterAfter=2 consecutive good observations, not before', () => {
    const h = new HealthTracker();
    assert.equal(h.observe(URL_A, GOOD), undefined);
    assert.equal(h.get(URL_A)?.state, 'pending');
    assert.ok(!isMember(h.get(URL_A)!.state));
    const t = h.observe(URL_A, GOOD);
    assert.deepEqual(t && [t.endpoint, t.from, t.to], [URL_A, 'pending', 'healthy']);
    assert.ok(isMember(h.get(URL_A)!.state));
  });

  test('a failure between good observations restarts the count for a new endpoint', () => {
    const h = new HealthTracker();
    const ts = feed(h, URL_A, [true, false, true, false, true, true]);
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [[6, 'pending', 'healthy']],
    );
  });

  test('a never-admitted endpoint that only fails stays pending (never "removed")', () => {
    const h = new HealthTracker();
    assert.deepEqual(feed(h, URL_A, repeat(false, 10)), []);
    assert.equal(h.get(URL_A)?.state, 'pending');
    assert.equal(h.get(URL_A)?.failures, 10);
    assert.match(h.get(URL_A)!.reason, /no usable card \(10 failed fetches\)/);
  });

  test('a per-call enterAfter: 1 lets that endpoint enter on its first good observation only', () => {
    const h = new HealthTracker();
    const t = h.observe(URL_A, GOOD, { enterAfter: 1 });
    assert.equal(t?.to, 'healthy');
    // Other endpoints keep the tracker default.
    assert.equal(h.observe(URL_B, GOOD), undefined);
    assert.equal(h.get(URL_B)?.state, 'pending');
  });

  test('a peer alternating good/bad for 50 fetches after becoming healthy never leaves or re-enters', () => {
    for (const pattern of [
      [false, true], // bad, good, bad, good...
      [false, false, true], // two bad, one good: still below leaveAfter=3
    ]) {
      const h = new HealthTracker();
      feed(h, URL_A, [true, true]);
      assert.equal(h.get(URL_A)?.state, 'healthy');
      const goods = Array.from({ length: 50 }, (_, i) => pattern[i % pattern.length]!);
      const ts = feed(h, URL_A, goods);
      assert.equal(membershipChanges(ts).length, 0, JSON.stringify(ts.map((t) => [t.at, t.to])));
      assert.ok(ts.every((t) => t.to !== 'removed' && t.to !== 'pending'));
      assert.ok(ts.some((t) => t.to === 'degraded'));
      assert.ok(isMember(h.get(URL_A)!.state));
    }
  });

  test('a member whose card is still usable stays (degraded) however many fetches fail', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    const ts = feed(h, URL_A, repeat(false, 50), { usable: () => true });
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [[1, 'healthy', 'degraded']],
    );
    assert.match(h.get(URL_A)!.reason, /50 failed fetches; its card is served stale/);
  });

  test('a member leaves once it has failed leaveAfter=3 times AND its card is no longer usable', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    // Usable for the first five failures, then past its allowed staleness.
    const ts = feed(h, URL_A, repeat(false, 8), { usable: (f) => f <= 5 });
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [
        [1, 'healthy', 'degraded'],
        [6, 'degraded', 'removed'],
      ],
    );
    assert.equal(h.get(URL_A)?.state, 'removed');
    assert.match(ts[1]!.status.reason, /6 consecutive failed fetches and its card is past its allowed staleness/);
  });

  test('an unusable card with fewer than leaveAfter failures degrades but does not leave', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    const ts = feed(h, URL_A, repeat(false, 2), { usable: () => false });
    assert.deepEqual(
      ts.map((t) => t.to),
      ['degraded'],
    );
  });

  test('leaveWhileUsable: a member leaves after leaveAfter failures even while its card is usable', () => {
    const h = new HealthTracker({ leaveWhileUsable: true });
    feed(h, URL_A, [true, true]);
    const ts = feed(h, URL_A, repeat(false, 3), { usable: () => true });
    assert.deepEqual(
      ts.map((t) => [t.at, t.to]),
      [
        [1, 'degraded'],
        [3, 'removed'],
      ],
    );
  });

  test('observations without a new failure (backoff cycles) change nothing', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    feed(h, URL_A, [false], { usable: () => true });
    // The loop observes every cycle; while the cache waits in backoff the counter stays at 1.
    for (let i = 0; i < 100; i++) assert.equal(h.observe(URL_A, { failures: 1, usable: true }), undefined);
    assert.equal(h.get(URL_A)?.state, 'degraded');
    assert.equal(h.get(URL_A)?.failures, 1);
  });

  test('a critical endpoint is never removed, whatever the failures: it is degraded instead', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true], { critical: true });
    const ts = feed(h, URL_A, repeat(false, 200), { critical: true });
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [[1, 'healthy', 'degraded']],
    );
    const status = h.get(URL_A)!;
    assert.equal(status.state, 'degraded');
    assert.equal(status.critical, true);
    assert.equal(status.failures, 200);
    assert.match(status.reason, /\(critical: kept while degraded\)/);
    // And it is healthy again on its next good observation.
    assert.equal(h.observe(URL_A, GOOD, { critical: true })?.to, 'healthy');
  });

  test('recovery from removed needs enterAfter consecutive good observations', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true, false, false, false]);
    assert.equal(h.get(URL_A)?.state, 'removed');
    const ts = feed(h, URL_A, [true, false, true, true]);
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [[4, 'removed', 'healthy']],
    );
    // With a per-call override the same recovery takes one success.
    const h2 = new HealthTracker();
    feed(h2, URL_A, [true, true, false, false, false]);
    assert.equal(h2.observe(URL_A, GOOD, { enterAfter: 1 })?.to, 'healthy');
  });

  test('a removed endpoint that answered once and failed again stays out, and its reason does not claim it left after one failure', async () => {
    const clock = new VirtualClock({ wallStart: 1_000_000 });
    const h = new HealthTracker({}, clock);
    feed(h, URL_A, [true, true]);
    feed(h, URL_A, repeat(false, 5), { usable: (f) => f <= 4 });
    assert.equal(h.get(URL_A)?.state, 'removed');
    await clock.advance(1_000);
    // One good observation (a 304 revalidation): its card is usable again, 1 of 2 before it returns.
    assert.equal(h.observe(URL_A, GOOD), undefined);
    await clock.advance(1_000);
    // Then one failed fetch (an invalid body) while the revalidated card is still usable.
    assert.equal(h.observe(URL_A, { failures: 1, usable: true }), undefined);
    const status = h.get(URL_A)!;
    assert.deepEqual([status.state, status.usable, status.failures, status.successes], ['removed', true, 1, 0], 'the failure starts the count of good observations again');
    assert.equal(status.since, 1_000_000, 'still out since it left');
    assert.doesNotMatch(status.reason, /consecutive failed fetch/);
    assert.equal(status.reason, '1 failed fetch since it last answered (its card is usable again); it returns after 2 good observations in a row');
    // Failures again with no usable card, fewer than leaveAfter: said as such.
    assert.equal(h.observe(URL_A, { failures: 2, usable: false }), undefined);
    assert.equal(h.get(URL_A)!.reason, '2 failed fetches since it last answered and no usable card; it returns after 2 good observations in a row');
    // As many failures as made it leave, card past its staleness: the reason it left, again.
    h.observe(URL_A, { failures: 3, usable: false });
    assert.equal(h.get(URL_A)!.reason, '3 consecutive failed fetches and its card is past its allowed staleness');
    // Two good observations in a row bring it back.
    assert.equal(h.observe(URL_A, GOOD), undefined);
    assert.equal(h.observe(URL_A, GOOD)?.to, 'healthy');
  });

  test('thresholds are configurable, and values below 1 are treated as 1', () => {
    const h = new HealthTracker({ enterAfter: 3, leaveAfter: 5 });
    assert.deepEqual(
      feed(h, URL_A, [true, true, true]).map((t) => t.at),
      [3],
    );
    assert.deepEqual(
      feed(h, URL_A, repeat(false, 6))
        .filter((t) => t.to === 'removed')
        .map((t) => t.at),
      [5],
    );
    const eager = new HealthTracker({ enterAfter: 0, leaveAfter: 0 });
    assert.equal(eager.observe(URL_A, GOOD)?.to, 'healthy');
    assert.equal(eager.observe(URL_A, { failures: 1, usable: false })?.to, 'removed');
  });

  test('since: the wall time the endpoint entered its state, kept while the state holds', async () => {
    const clock = new VirtualClock({ wallStart: 1_000_000 });
    const h = new HealthTracker({}, clock);
    h.observe(URL_A, GOOD);
    await clock.advance(10);
    h.observe(URL_A, GOOD);
    assert.equal(h.get(URL_A)?.since, 1_000_010);
    await clock.advance(10);
    h.observe(URL_A, GOOD);
    assert.equal(h.get(URL_A)?.since, 1_000_010);
    await clock.advance(10);
    h.observe(URL_A, { failures: 1, usable: true });
    assert.equal(h.get(URL_A)?.since, 1_000_030);
  });

  test('a steady endpoint keeps its status object, counting good observations in place; any other change is a new object and a new revision', () => {
    const h = new HealthTracker({ enterAfter: 1 });
    h.observe(URL_A, GOOD);
    const healthy = h.get(URL_A)!;
    const revision = h.revision;
    h.observe(URL_A, GOOD);
    h.observe(URL_A, GOOD);
    assert.equal(h.get(URL_A), healthy, 'the same object');
    assert.equal(healthy.successes, 3);
    assert.equal(h.revision, revision, 'no change but the count');
    h.observe(URL_A, { failures: 1, usable: true });
    const degraded = h.get(URL_A)!;
    assert.notEqual(degraded, healthy);
    assert.deepEqual([degraded.state, healthy.state, healthy.successes], ['degraded', 'healthy', 3], 'the old object is left as it was');
    assert.equal(h.revision, revision + 1);
    h.observe(URL_A, { failures: 2, usable: true });
    assert.equal(h.revision, revision + 2, 'a failure more changes the reason');
    h.forget(URL_A);
    assert.equal(h.revision, revision + 3);
  });

  test('forget() drops the endpoint; it starts over as new', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    assert.deepEqual(
      h.entries().map(([k]) => k),
      [URL_A],
    );
    h.forget(URL_A);
    assert.equal(h.get(URL_A), undefined);
    assert.equal(h.observe(URL_A, GOOD), undefined);
    assert.equal(h.get(URL_A)?.state, 'pending');
  });

  test('the reason names the cause the cache gave: a refused card is not a failed fetch; a cause is told only while fetches fail', () => {
    const h = new HealthTracker();
    const refused = { message: 'supportedInterfaces[0].url: the card\'s interface host is refused', stage: 'policy' };
    h.observe(URL_A, { failures: 2, usable: false, cause: refused });
    assert.equal(h.get(URL_A)!.reason, "no usable card (2 refused cards): supportedInterfaces[0].url: the card's interface host is refused");
    h.observe(URL_B, { failures: 1, usable: false, cause: { message: 'the token endpoint answered 500', stage: 'fetch' } });
    assert.equal(h.get(URL_B)!.reason, 'no usable card (1 failed fetch): the token endpoint answered 500');
    // A member served stale, then leaving: the last cause follows the count.
    const c = new HealthTracker({ leaveAfter: 2 });
    c.observe(URL_A, GOOD);
    c.observe(URL_A, GOOD);
    c.observe(URL_A, { failures: 1, usable: true, cause: { message: 'connection refused', stage: 'fetch' } });
    assert.equal(c.get(URL_A)!.reason, '1 failed fetch; its card is served stale; last: connection refused');
    c.observe(URL_A, { failures: 2, usable: false, cause: { message: 'connection refused', stage: 'fetch' } });
    assert.equal(c.get(URL_A)!.reason, '2 consecutive failed fetches and its card is past its allowed staleness; last: connection refused');
    // A stale cause with no failure is not told.
    c.observe(URL_A, { failures: 0, usable: true, cause: { message: 'connection refused' } });
    assert.equal(c.get(URL_A)!.reason, '1 of 2 good observations before it enters');
  });
});

describe('health from real calls', () => {
  const calls = (failures: number, message?: string): HealthObservation => ({ failures: 0, usable: true, calls: { failures, ...(message !== undefined && { message }) } });

  test('failed calls degrade a member, leave after callLeaveAfter in a row, and it returns after a good call and enterAfter good observations', () => {
    const t = new HealthTracker({ enterAfter: 2, callLeaveAfter: 3 }, new VirtualClock());
    t.observe(URL_A, GOOD);
    t.observe(URL_A, GOOD);
    assert.equal(t.get(URL_A)!.state, 'healthy');
    assert.equal(t.observe(URL_A, calls(1, 'returns_agent answered 500'))?.to, 'degraded');
    assert.match(t.get(URL_A)!.reason, /1 failed call in a row; last: returns_agent answered 500/);
    assert.equal(t.observe(URL_A, calls(2)), undefined, 'still degraded');
    assert.equal(t.observe(URL_A, calls(3))?.to, 'removed');
    assert.match(t.get(URL_A)!.reason, /left new snapshots after 3 failed calls in a row/);
    // Its card is fine, but it stays out while its calls fail.
    assert.equal(t.observe(URL_A, calls(3)), undefined);
    assert.match(t.get(URL_A)!.reason, /returns after a good call/);
    // A good call (the active check, or a session still pinned to it), then enterAfter good observations.
    assert.equal(t.observe(URL_A, calls(0)), undefined, '1 of 2 good observations');
    assert.equal(t.observe(URL_A, calls(0))?.to, 'healthy');
  });

  test('a critical agent whose calls fail stays, degraded', () => {
    const t = new HealthTracker({ enterAfter: 1, callLeaveAfter: 2 }, new VirtualClock());
    t.observe(URL_B, GOOD, { critical: true });
    t.observe(URL_B, calls(5), { critical: true });
    assert.equal(t.get(URL_B)!.state, 'degraded');
    assert.match(t.get(URL_B)!.reason, /critical: kept while degraded/);
  });

  test('a failing fetch decides as before: calls only speak while the card fetches fine', () => {
    const t = new HealthTracker({ enterAfter: 1, leaveAfter: 3, callLeaveAfter: 1 }, new VirtualClock());
    t.observe(URL_A, GOOD);
    t.observe(URL_A, { failures: 1, usable: true, calls: { failures: 1 } });
    assert.equal(t.get(URL_A)!.state, 'degraded');
    assert.match(t.get(URL_A)!.reason, /1 failed fetch; its card is served stale/);
  });
});
