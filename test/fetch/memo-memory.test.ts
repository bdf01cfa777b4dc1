/**
 * The URL memos are bounded (issue 24, item 1): the host policy's normalized URLs and the card
 * fetcher's judged URLs keep the URLs in use, not every URL seen until a 100,000-entry map is
 * cleared. Measured as heap retained after GC per churned endpoint in a child process
 * (memo-child.ts), so this process's heap and the test runner do not blur it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { BoundedMemo } from '../../packages/core/src/fetch/bounded-memo.js';
import { runHeapChild } from '../helpers/heap-child.js';

const CHILD = fileURLToPath(new URL('./memo-child.ts', import.meta.url));

function run(env: Record<string, string>): Promise<{ heapWarm: number; heapAfter: number; churned: number }> {
  return runHeapChild(CHILD, env);
}

test('50,000 churned endpoints past a warm-up of 20,000: the URL memos retain (almost) nothing per endpoint', async (t) => {
  const r = await run({ MEMO_WARM: '20000', MEMO_CHURN: '50000' });
  const perEndpoint = (r.heapAfter - r.heapWarm) / r.churned;
  t.diagnostic(`heap after GC ${r.heapWarm} → ${r.heapAfter} over ${r.churned} endpoints: ${perEndpoint.toFixed(1)} bytes per endpoint`);
  // Before: both memos kept every URL until 100,000 (several hundred bytes per endpoint).
  assert.ok(perEndpoint < 32, `retained ${perEndpoint.toFixed(1)} bytes per churned endpoint`);
});

test('a URL normalized already is given back as the very string: letting the 50,000 URLs go frees next to nothing once their keys are held', async (t) => {
  const r = (await run({ MEMO_MODE: 'given', MEMO_CHURN: '50000' })) as Awaited<ReturnType<typeof run>> & { equal: boolean };
  assert.equal(r.equal, true, 'each URL normalizes to its own text');
  const freed = (r.heapWarm - r.heapAfter) / r.churned;
  t.diagnostic(`heap after GC with the URLs and their keys ${r.heapWarm}, with the keys only ${r.heapAfter}: ${freed.toFixed(1)} bytes per URL freed`);
  // The array of URLs is 8 bytes a URL; keys built again from the URL's parts (a string each, the
  // URLs then garbage) free about 100 bytes a URL more. Every layer keys its per-endpoint maps by
  // this string: a map finds its own key object without comparing characters.
  assert.ok(freed < 32, `${freed.toFixed(1)} bytes per URL freed: the keys are other strings than the URLs`);
});

test('BoundedMemo: while there is room every key is kept; past it, at most max entries, and what is no longer asked for is gone', () => {
  const memo = new BoundedMemo<number>(1_000);
  for (let i = 0; i < 1_000; i++) memo.set(`k${i}`, i);
  assert.equal(memo.size, 1_000);
  for (let i = 0; i < 1_000; i++) assert.equal(memo.get(`k${i}`), i);
  memo.set('k0', -1);
  assert.equal(memo.get('k0'), -1, 'a key set again takes the new value');
  assert.equal(memo.size, 1_000);
  // Ten times as many newcomers: the size stays bounded and the keys nobody asks for again go.
  for (let i = 0; i < 10_000; i++) memo.set(`x${i}`, i);
  assert.equal(memo.size, 1_000);
  const left = Array.from({ length: 1_000 }, (_, i) => memo.get(`k${i}`)).filter((v) => v !== undefined).length;
  assert.ok(left <= 10, `${left} of the first 1,000 keys are still held after 10,000 newcomers`);
});

test('BoundedMemo: keys asked for in the same order each round, one more than it holds, are still mostly found', () => {
  // A fleet of 1,001 URLs, each judged once a cycle, through a memo of 1,000. A memo that drops
  // a generation whole (the previous design) asked for each key just after dropping it: 0 found.
  const memo = new BoundedMemo<number>(1_000);
  const keys = 1_001;
  let found = 0;
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < keys; i++) {
      if (memo.get(`u${i}`) === i) {
        if (round > 0) found++;
      } else memo.set(`u${i}`, i);
    }
  }
  assert.ok(found >= 0.9 * 4 * keys, `found ${found} of ${4 * keys} after the first round`);
  assert.equal(memo.size, 1_000);
});
