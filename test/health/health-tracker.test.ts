import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthTracker, isMember, type HealthTransition } from '../../src/health/index.js';

const URL_A = 'https://a.example.com/';
const URL_B = 'https://b.example.com/';

/** Feeds observations and returns every transition, with the 1-based observation index. */
function feed(
  tracker: HealthTracker,
  endpoint: string,
  goods: readonly boolean[],
  options: { critical?: boolean; enterAfter?: number } = {},
): Array<HealthTransition & { at: number }> {
  const out: Array<HealthTransition & { at: number }> = [];
  goods.forEach((good, i) => {
    const t = tracker.observe(endpoint, good, options);
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
    assert.equal(h.observe(URL_A, true), undefined);
    assert.equal(h.get(URL_A)?.state, 'pending');
    assert.ok(!isMember(h.get(URL_A)!.state));
    const t = h.observe(URL_A, true);
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
  });

  test('a per-call enterAfter: 1 lets that endpoint enter on its first good observation only', () => {
    const h = new HealthTracker();
    const t = h.observe(URL_A, true, { enterAfter: 1 });
    assert.equal(t?.to, 'healthy');
    // Other endpoints keep the tracker default.
    assert.equal(h.observe(URL_B, true), undefined);
    assert.equal(h.get(URL_B)?.state, 'pending');
  });

  test('a peer alternating good/bad for 50 observations after becoming healthy never leaves or re-enters', () => {
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
      // It does report degraded/healthy in between (observable, but not membership).
      assert.ok(ts.some((t) => t.to === 'degraded'));
      assert.ok(isMember(h.get(URL_A)!.state));
    }
  });

  test('a peer failing exactly leaveAfter=3 times is removed at the 3rd failure, once', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    const ts = feed(h, URL_A, [...repeat(false, 3), ...repeat(false, 20)]);
    assert.deepEqual(
      ts.map((t) => [t.at, t.from, t.to]),
      [
        [1, 'healthy', 'degraded'],
        [3, 'degraded', 'removed'],
      ],
    );
    assert.equal(membershipChanges(ts).length, 1);
    assert.equal(h.get(URL_A)?.state, 'removed');
  });

  test('two failures then a success resets the failure count', () => {
    const h = new HealthTracker();
    feed(h, URL_A, [true, true]);
    const ts = feed(h, URL_A, [false, false, true, false, false]);
    assert.ok(ts.every((t) => t.to !== 'removed'));
    assert.equal(h.get(URL_A)?.failures, 2);
    assert.equal(h.get(URL_A)?.state, 'degraded');
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
    // And it is healthy again on its next good observation.
    assert.equal(h.observe(URL_A, true, { critical: true })?.to, 'healthy');
  });

  test('recovery from removed needs enterAfter consecutive successes', () => {
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
    assert.equal(h2.observe(URL_A, true, { enterAfter: 1 })?.to, 'healthy');
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
    assert.equal(eager.observe(URL_A, true)?.to, 'healthy');
    assert.equal(eager.observe(URL_A, false)?.to, 'removed');
  });

  test('status counters: one of successes/failures is always 0; forget() drops the endpoint', () => {
    const h = new HealthTracker();
    for (const good of [true, true, false, true, false, false]) {
      h.observe(URL_A, good);
      const s = h.get(URL_A)!;
      assert.ok(s.successes === 0 || s.failures === 0);
    }
    assert.deepEqual(
      h.entries().map(([k]) => k),
      [URL_A],
    );
    h.forget(URL_A);
    assert.equal(h.get(URL_A), undefined);
    // A forgotten endpoint starts over as new.
    assert.equal(h.observe(URL_A, true), undefined);
    assert.equal(h.get(URL_A)?.state, 'pending');
  });
});
