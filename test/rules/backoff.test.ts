/** The one backoff (issue 37): capped, exponential, jittered on the injected random source. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay } from '../../packages/core/src/rules/backoff.js';
import { seededRandom } from '../../packages/core/src/clock/index.js';

const none = () => 0;

test('doubles from the base per failure and stops at the cap', () => {
  const o = { baseMs: 1_000, maxMs: 60_000, jitter: 0, random: none };
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map((k) => backoffDelay(k, o)), [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  assert.equal(backoffDelay(0, o), 1_000);
  assert.equal(backoffDelay(10_000, o), 60_000);
});

test('jitter shortens by up to its fraction, from the injected source', () => {
  const o = { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 };
  assert.equal(backoffDelay(3, { ...o, random: () => 0 }), 4_000);
  assert.equal(backoffDelay(3, { ...o, random: () => 0.5 }), 3_000);
  assert.ok(backoffDelay(3, { ...o, random: () => 0.999_999 }) > 2_000);
  const random = seededRandom(7);
  for (let i = 0; i < 1_000; i++) {
    const d = backoffDelay(20, { ...o, random });
    assert.ok(d > 30_000 && d <= 60_000, String(d));
  }
  // The same seed, the same delays: replicas differ only by their sources.
  const a = seededRandom(1);
  const b = seededRandom(1);
  assert.deepEqual([1, 2, 3].map((k) => backoffDelay(k, { ...o, random: a })), [1, 2, 3].map((k) => backoffDelay(k, { ...o, random: b })));
});

test('a jitter outside [0, 1] is clamped: never a negative or a longer delay', () => {
  assert.equal(backoffDelay(1, { baseMs: 1_000, maxMs: 60_000, jitter: 5, random: () => 0.999 }) >= 0, true);
  assert.equal(backoffDelay(1, { baseMs: 1_000, maxMs: 60_000, jitter: -1, random: () => 0.5 }), 1_000);
});
