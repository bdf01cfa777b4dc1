/**
 * The page's copy of `compareTraces` (packages/service/web/lib/trace-compare.js) gives exactly what
 * the library's gives, for pairs of runs that change decisions, only the timeline, max-age, or
 * nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareTraces, DEFAULT_TRACE_INPUTS, runTrace } from '../../packages/core/src/explorer/index.js';
import type { TraceInputs } from '../../packages/core/src/explorer/index.js';
// @ts-expect-error -- plain JavaScript with JSDoc types, served to the browser as is
import * as web from '../../packages/service/web/lib/trace-compare.js';
// @ts-expect-error -- plain JavaScript with JSDoc types, served to the browser as is
import { FALLBACK_DEFAULTS } from '../../packages/service/web/views/explorer/form.js';

const PAIRS: [Partial<TraceInputs>, Partial<TraceInputs>][] = [
  [{}, {}],
  [{}, { maxAgeSeconds: 30 }],
  [{}, { maxAgeSeconds: 0 }],
  [{}, { intervalSeconds: 7, rttMs: 300 }],
  [{}, { intervalSeconds: 4 }],
  [{ condition: 'malformed' }, { condition: 'malformed', maxAgeSeconds: 30 }],
  [{ publishV2AtSeconds: null }, { publishV2AtSeconds: null, maxAgeSeconds: 30 }],
  [{ attempts: 3 }, {}],
];

for (const [a, b] of PAIRS) {
  test(`the page compares ${JSON.stringify(a)} with ${JSON.stringify(b)} as the library does`, async () => {
    const [ra, rb] = [await runTrace(a), await runTrace(b)];
    assert.deepEqual(JSON.parse(JSON.stringify(web.compareTraces(ra, rb))), JSON.parse(JSON.stringify(compareTraces(ra, rb))));
  });
}

test("the page's first-render defaults are the library's (GET /api/trace/defaults replaces them; they must not differ meanwhile)", () => {
  assert.deepEqual(FALLBACK_DEFAULTS, { ...DEFAULT_TRACE_INPUTS });
});
