/**
 * The fetcher's shared deadline timer: every member is expired once its deadline passes, also
 * one added after a member with a later deadline (a fetch that waited for its credentials).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineQueue, type Expiring } from '../../packages/core/src/fetch/deadlines.js';

function member(name: string, inMs: number, expired: string[]): Expiring {
  return { deadline: performance.now() + inMs, expire: () => expired.push(name) };
}

test('a deadline added after a later one still expires at its own time, and the later one waits', async () => {
  const q = new DeadlineQueue<Expiring>();
  const expired: string[] = [];
  const late = member('late', 2_000, expired);
  q.add(late);
  q.add(member('early', 30, expired));
  for (let i = 0; i < 100 && expired.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(expired, ['early'], 'the early member expired, long before the late one');
  assert.equal(q.size, 1);
  q.delete(late);
  assert.equal(q.size, 0, 'the last removal stops the timer (the test process would otherwise wait 2 s)');
});

test('a member deleted before its deadline is never expired', async () => {
  const q = new DeadlineQueue<Expiring>();
  const expired: string[] = [];
  const a = member('a', 20, expired);
  q.add(a);
  q.add(member('b', 40, expired));
  q.delete(a);
  for (let i = 0; i < 100 && expired.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(expired, ['b']);
});
