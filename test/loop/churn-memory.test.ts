/**
 * Endpoint churn does not grow memory (issue #24, item 1): a source listing new card URLs on every
 * cycle (a hostile AI Catalog) makes endpoints come, go and be evicted by the thousand; whatever
 * was kept per endpoint (activity counters, rate series, health, schedules, cached cards, agents
 * held in snapshots by the removal guard) goes with it. Measured after GC in a child process (churn-child.ts), so this process's own heap and
 * the test runner do not blur it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runHeapChild } from '../helpers/heap-child.js';

const CHILD = fileURLToPath(new URL('./churn-child.ts', import.meta.url));

interface ChurnResult {
  heapWarm: number;
  heapAfter: number;
  evicted: number;
  current: number;
  agents: number;
  massRemovalAlerts: number;
  listed: string[];
  known: string[];
}

function churn(env: Record<string, string>): Promise<ChurnResult> {
  return runHeapChild(CHILD, env);
}

test('thousands of evicted endpoints leave (almost) nothing behind, and /api/activity lists only current endpoints', async (t) => {
  const r = await churn({ CHURN_PER_CYCLE: '10', CHURN_WARM_CYCLES: '30', CHURN_CYCLES: '200' });
  assert.ok(r.evicted >= 1_900, `endpoints evicted during the measure: ${r.evicted}`);
  const perEvicted = (r.heapAfter - r.heapWarm) / r.evicted;
  t.diagnostic(`heap after GC ${r.heapWarm} → ${r.heapAfter} over ${r.evicted} evictions: ${Math.round(perEvicted)} bytes per evicted endpoint`);
  // The bound leaves room for the fetcher's and the policy's memos of judged URLs (a few hundred
  // bytes per URL, up to 10,000 URLs each: this run's 2,300 endpoints all fit; past the bound
  // they are forgotten, see test/fetch/memo-memory.test.ts — with 50 endpoints a cycle, 12,000
  // warm and 15,000 evicted, 29 bytes per evicted endpoint, 357 before the bound); before, each
  // evicted endpoint kept ~10 KB of activity counters and rate series for ever.
  assert.ok(perEvicted < 2_048, `retained ${Math.round(perEvicted)} bytes per evicted endpoint (heap after GC ${r.heapWarm} → ${r.heapAfter} over ${r.evicted} evictions)`);
  // The mass-removal guard still holds what was published before the churn (and alerts), but
  // not every agent that came and went since: the snapshot stays that plus the current ones.
  assert.ok(r.massRemovalAlerts >= 1, 'the guard holds the removal of the agents published before');
  assert.ok(r.agents <= 20, `agents in the current snapshot: ${r.agents}`);
  assert.equal(r.known.length, r.current);
  assert.deepEqual(r.listed, [...r.known].sort(), 'activity lists the endpoints discovery knows now, no evicted one');
});
