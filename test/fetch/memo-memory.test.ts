/**
 * The URL memos are bounded (issue 24, item 1): the host policy's normalized URLs and the card
 * fetcher's judged URLs keep the URLs in use, not every URL seen until a 100,000-entry map is
 * cleared. Measured as heap retained after GC per churned endpoint in a child process
 * (memo-child.ts), so this process's heap and the test runner do not blur it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BoundedMemo } from '../../packages/core/src/fetch/bounded-memo.js';

const CHILD = fileURLToPath(new URL('./memo-child.ts', import.meta.url));

function run(env: Record<string, string>): Promise<{ heapWarm: number; heapAfter: number; churned: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as { heapWarm: number; heapAfter: number; churned: number });
    });
  });
}

test('50,000 churned endpoints past a warm-up of 20,000: the URL memos retain (almost) nothing per endpoint', async (t) => {
  const r = await run({ MEMO_WARM: '20000', MEMO_CHURN: '50000' });
  const perEndpoint = (r.heapAfter - r.heapWarm) / r.churned;
  t.diagnostic(`heap after GC ${r.heapWarm} → ${r.heapAfter} over ${r.churned} endpoints: ${perEndpoint.toFixed(1)} bytes per endpoint`);
  // Before: both memos kept every URL until 100,000 (several hundred bytes per endpoint).
  assert.ok(perEndpoint < 32, `retained ${perEndpoint.toFixed(1)} bytes per churned endpoint`);
});

test('BoundedMemo: at most max entries; what is used keeps its place, what is not is forgotten', () => {
  const memo = new BoundedMemo<number>(4);
  for (let i = 0; i < 4; i++) memo.set(`k${i}`, i);
  assert.equal(memo.size, 4);
  // k0 is used: it moves to the young generation and survives the next turnover.
  assert.equal(memo.get('k0'), 0);
  memo.set('k4', 4);
  memo.set('k5', 5);
  assert.ok(memo.size <= 4, `${memo.size} entries`);
  assert.equal(memo.get('k0'), 0);
  assert.equal(memo.get('k1'), undefined);
  for (let i = 0; i < 1_000; i++) memo.set(`x${i}`, i);
  assert.ok(memo.size <= 4);
});
