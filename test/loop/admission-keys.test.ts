/**
 * An endpoint keeps the very string it was first admitted under when its source lists it again as
 * a new string of the same text: the card cache, health and the refresh schedule key their maps by
 * it, and a map finds its own key object without comparing characters (docs/benchmarks.md, "a
 * steady cycle's lookups by the very key string"). Measured as heap in a child process
 * (keys-child.ts), as no JavaScript operation tells two equal strings apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runHeapChild } from '../helpers/heap-child.js';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./keys-child.ts', import.meta.url));

test('a source listing its 50,000 endpoints again as new strings: the admission keeps the first strings as its keys', async (t) => {
  const r = await runHeapChild<{ both: number; keysOnly: number; n: number; equal: boolean }>(CHILD, { KEYS_N: '50000' });
  assert.equal(r.equal, true, 'the second admission has every endpoint of the first, and one more');
  const freed = (r.both - r.keysOnly) / r.n;
  t.diagnostic(`heap after GC with the first URLs and the keys ${r.both}, with the keys only ${r.keysOnly}: ${freed.toFixed(1)} bytes per endpoint freed`);
  // The array of the first URLs is 8 bytes an endpoint; keys that are the second list's strings
  // leave the first list's strings to be freed too, about 100 bytes an endpoint more.
  assert.ok(freed < 32, `${freed.toFixed(1)} bytes per endpoint freed: the keys are not the strings first admitted`);
});
