/**
 * The demo's rate limit on failure lines: a failing endpoint is said once, "still failing" at most
 * once per reminder interval, a new error at once, and its recovery once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureNotices } from '../../packages/service/src/demo/notices.js';

test('a failure is said once, then "still failing" at most every reminder interval, and its recovery once', () => {
  let now = 0;
  const minute = 60_000;
  const n = failureNotices({ now: () => now, reminderMs: 5 * minute, clock: (ms) => `t${ms / minute}` });
  const fail = (code = 'ERR_FETCH_TIMEOUT') => n.failed({ endpoint: 'http://w/', code, meanwhile: 'retried on backoff' });
  const said: string[] = [];
  // 100 failed fetches, one every 3 s: 5 minutes
  for (let i = 0; i < 100; i++, now += 3_000) {
    const line = fail();
    if (line !== undefined) said.push(line);
  }
  assert.deepEqual(said, ['http://w/ failed (ERR_FETCH_TIMEOUT); retried on backoff']);
  now = 5 * minute;
  assert.equal(fail(), 'http://w/ still failing (ERR_FETCH_TIMEOUT): 101 failed fetches since t0; retried on backoff');
  now += 1_000;
  assert.equal(fail(), undefined);
  assert.equal(fail('ERR_FETCH_STATUS'), 'http://w/ now fails with ERR_FETCH_STATUS (103 failed fetches since t0); retried on backoff');
  assert.deepEqual(n.failing(), [{ endpoint: 'http://w/', code: 'ERR_FETCH_STATUS', attempts: 103, since: 0 }]);
  assert.equal(n.answered('http://w/'), 'http://w/ answers again, after 103 failed fetches since t0');
  assert.equal(n.answered('http://w/'), undefined, 'recovery is said once');
  assert.equal(n.answered('http://other/'), undefined, 'an endpoint that never failed is not news');
  assert.deepEqual(n.failing(), []);
  assert.equal(fail(), 'http://w/ failed (ERR_FETCH_TIMEOUT); retried on backoff', 'a new failure after recovery is said again');
});
