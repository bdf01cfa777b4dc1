/**
 * The page's copy of `compareTraces` (packages/service/web/views/explorer/compare.js) gives exactly
 * what the library's gives — attribution included — for pairs of runs that change decisions, only
 * the timeline, max-age, several controls at once, or nothing; and the page's labels are the
 * library's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attributeChanges, compareTraces, DEFAULT_TRACE_INPUTS, MAX_SINGLE_CHANGES, runTrace, TRACE_CONDITION_LABELS, TRACE_CONDITIONS, TRACE_INPUT_LABELS, traceInputText } from '../../packages/core/src/explorer/index.js';
import type { TraceInputs } from '../../packages/core/src/explorer/index.js';
// @ts-expect-error -- plain JavaScript with JSDoc types, served to the browser as is
import * as web from '../../packages/service/web/views/explorer/compare.js';
// @ts-expect-error -- plain JavaScript with JSDoc types, served to the browser as is
import * as labels from '../../packages/service/web/views/explorer/labels.js';
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
  [{}, { maxAgeSeconds: 30, rttMs: 300 }],
  [{ condition: 'malformed' }, { maxAgeSeconds: 30 }],
  [{ condition: 'unavailable', failFromSeconds: 11 }, { condition: 'unavailable', failFromSeconds: 11, staleOnError: true }],
  [{}, { condition: 'unavailable', failFromSeconds: 11, staleOnError: true, maxStaleSeconds: 5, rttMs: 250, seed: 3 }],
  [{ attempts: 9 }, { attempts: 9, calls: 'ok ok 500 500 500 500 500 ok ok' }],
  [{ rollout: true }, { rollout: true, v2Breaking: true, rolloutCandidateCalls: 'ok 500' }],
];

for (const [a, b] of PAIRS) {
  test(`the page compares ${JSON.stringify(a)} with ${JSON.stringify(b)} as the library does`, async () => {
    const [ra, rb] = [await runTrace(a), await runTrace(b)];
    assert.deepEqual(JSON.parse(JSON.stringify(web.compareTraces(ra, rb))), JSON.parse(JSON.stringify(compareTraces(ra, rb))));
  });
}

for (const [a, b] of PAIRS) {
  test(`the page tries each change of ${JSON.stringify(a)} → ${JSON.stringify(b)} alone as the library does`, async () => {
    const [ra, rb] = [await runTrace(a), await runTrace(b)];
    const run = (i: TraceInputs) => runTrace(i);
    assert.deepEqual(JSON.parse(JSON.stringify((await web.attributeChanges(ra, rb, run)) ?? null)), JSON.parse(JSON.stringify((await attributeChanges(ra, rb)) ?? null)));
  });
}

test("the page's limit on changes tried alone is the library's", () => {
  assert.equal(web.MAX_SINGLE_CHANGES, MAX_SINGLE_CHANGES);
});

test("the page's labels and value texts are the library's (one mapping, the same on both sides)", () => {
  assert.deepEqual({ ...labels.INPUT_LABELS }, { ...TRACE_INPUT_LABELS });
  assert.deepEqual({ ...labels.CONDITION_LABELS }, { ...TRACE_CONDITION_LABELS });
  assert.deepEqual(Object.keys(labels.CONDITION_LABELS), [...TRACE_CONDITIONS]);
  const samples: [string, unknown][] = [
    ['condition', 'malformed'], ['maxAgeSeconds', 30], ['publishV2AtSeconds', 12], ['publishV2AtSeconds', null], ['failFromSeconds', null],
    ['failFromSeconds', 11], ['rttMs', 100], ['staleOnError', true], ['jitter', false], ['attempts', 5], ['seed', 1], ['maxStaleSeconds', 5], ['x', undefined],
    ['calls', null], ['calls', 'ok 500'], ['rolloutHoldSeconds', 600], ['rolloutSteps', '5 25 100'], ['rolloutMaxErrorRateIncrease', 0.05], ['rolloutTrigger', 'any'],
  ];
  for (const [field, value] of samples) assert.equal(labels.inputText(field, value), traceInputText(field, value), `${field} ${String(value)}`);
});

test("the page's first-render defaults are the library's (GET /api/trace/defaults replaces them; they must not differ meanwhile)", () => {
  assert.deepEqual(FALLBACK_DEFAULTS, { ...DEFAULT_TRACE_INPUTS });
});
