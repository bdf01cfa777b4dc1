// @ts-check
/**
 * The one mapping from a control's name to what a person reads — the form's labels, with units —
 * used by the form itself and by every sentence about a change ("Last change", the baseline).
 * The page's copy of `TRACE_INPUT_LABELS`, `TRACE_CONDITION_LABELS`, `traceInputText` and
 * `traceInputChangeText` (packages/core/src/explorer/inputs.ts); test/explorer/compare-web.test.ts
 * holds the two to the same answers.
 */

/** @typedef {import('../../lib/types.js').TraceInputs} TraceInputs */

/** The condition menu, in the library's order (TRACE_CONDITIONS). */
export const CONDITION_LABELS = Object.freeze({
  healthy: 'Healthy',
  'not-found': '404: card not found',
  unavailable: '503: service unavailable',
  unauthorized: '401 unless credentials supplied',
  malformed: 'Malformed JSON',
  insecure: 'Non-HTTPS advertised interface',
});

/** @type {Readonly<Record<keyof TraceInputs, string>>} */
export const INPUT_LABELS = Object.freeze({
  condition: 'Endpoint / card condition',
  credentials: 'Supply discovery credentials',
  maxAgeSeconds: 'Cache max-age',
  publishV2AtSeconds: 'Publish card v2',
  requireStreaming: 'Client requires streaming',
  cardStreaming: 'Card advertises streaming',
  intervalSeconds: 'Discovery interval',
  rttMs: 'Network round trip',
  attempts: 'Number of attempts',
  backoff: 'Backoff after failures',
  staleOnError: 'Stale-on-error',
  failFromSeconds: 'Fail from time T',
  maxStaleSeconds: 'Max stale',
  jitter: 'Jitter',
  seed: 'Random seed',
  calls: 'Calls of the agent',
  enterAfter: 'Good observations to enter',
  callLeaveAfter: 'Failed calls to leave',
  v2Breaking: 'Card v2 renames its skill',
  rollout: 'Explain the rollout of v2',
  rolloutTrigger: 'Rollout trigger',
  rolloutSteps: 'Rollout steps (%)',
  rolloutHoldSeconds: 'Step hold',
  rolloutMinTurns: 'Turns per step',
  rolloutMinSamples: 'Turns before judging',
  rolloutMaxErrorRateIncrease: 'Max error rate increase',
  rolloutCandidateCalls: 'Calls on the candidate',
  rolloutCurrentCalls: 'Calls on the current snapshot',
  rolloutSessions: 'New sessions',
});

/**
 * One control's value as the form shows it, with its unit.
 * @param {string} field
 * @param {unknown} value
 */
export function inputText(field, value) {
  if (value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === null) return 'off';
  if (field === 'condition') return /** @type {Record<string, string>} */ (CONDITION_LABELS)[String(value)] ?? String(value);
  if (field === 'publishV2AtSeconds') return `at ${String(value)} s`;
  if (field === 'rttMs') return `${String(value)} ms`;
  if (field.endsWith('Seconds')) return `${String(value)} s`;
  return String(value);
}

/**
 * A change of one control in the form's words: `Cache max-age 10 s → 30 s`.
 * @param {string} field
 * @param {unknown} baseline
 * @param {unknown} current
 */
export function inputChangeText(field, baseline, current) {
  const label = /** @type {Record<string, string>} */ (INPUT_LABELS)[field] ?? field;
  return `${label} ${inputText(field, baseline)} → ${inputText(field, current)}`;
}
