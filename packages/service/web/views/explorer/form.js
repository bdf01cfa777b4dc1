// @ts-check
/**
 * The explorer form's state: the controls as typed (an empty number field is allowed while
 * typing), the seed's defaults, and the conversion to the inputs the service runs.
 */

/** @typedef {import('../../lib/types.js').TraceInputs} TraceInputs */

/**
 * @typedef {object} Form
 * @property {string} condition
 * @property {boolean} credentials
 * @property {string} maxAgeSeconds
 * @property {boolean} publishV2
 * @property {string} publishV2AtSeconds
 * @property {boolean} requireStreaming
 * @property {boolean} cardStreaming
 * @property {string} intervalSeconds
 * @property {string} rttMs
 * @property {string} attempts
 * @property {boolean} backoff
 * @property {boolean} staleOnError
 * @property {boolean} failFrom
 * @property {string} failFromSeconds
 * @property {string} maxStaleSeconds
 * @property {boolean} jitter
 * @property {string} seed
 * @property {boolean} withCalls
 * @property {string} calls
 * @property {string} enterAfter
 * @property {string} callLeaveAfter
 * @property {boolean} v2Breaking
 * @property {boolean} rollout
 * @property {string} rolloutTrigger
 * @property {string} rolloutSteps
 * @property {string} rolloutHoldSeconds
 * @property {string} rolloutMinTurns
 * @property {string} rolloutMinSamples
 * @property {string} rolloutMaxErrorRateIncrease
 * @property {string} rolloutCandidateCalls
 * @property {string} rolloutCurrentCalls
 * @property {string} rolloutSessions
 */

/** The calls the form offers when "Calls of the agent" is first ticked: five failures in a row, then good calls. */
const SAMPLE_CALLS = 'ok ok 500 500 500 500 500 ok ok';

/** The seed's defaults (GET /api/trace/defaults replaces them when it answers). */
/** @type {TraceInputs} */
export const FALLBACK_DEFAULTS = {
  condition: 'healthy',
  credentials: false,
  maxAgeSeconds: 10,
  publishV2AtSeconds: 12,
  requireStreaming: false,
  cardStreaming: true,
  intervalSeconds: 6,
  rttMs: 100,
  attempts: 5,
  backoff: false,
  staleOnError: false,
  failFromSeconds: null,
  maxStaleSeconds: 3600,
  jitter: false,
  seed: 1,
  calls: null,
  enterAfter: 2,
  callLeaveAfter: 5,
  v2Breaking: false,
  rollout: false,
  rolloutTrigger: 'breaking',
  rolloutSteps: '5 25 100',
  rolloutHoldSeconds: 600,
  rolloutMinTurns: 20,
  rolloutMinSamples: 10,
  rolloutMaxErrorRateIncrease: 0.05,
  rolloutCandidateCalls: 'ok',
  rolloutCurrentCalls: 'ok',
  rolloutSessions: 2000,
};

/** @param {TraceInputs} i @returns {Form} */
export function formOf(i) {
  return {
    condition: i.condition,
    credentials: i.credentials,
    maxAgeSeconds: String(i.maxAgeSeconds),
    publishV2: i.publishV2AtSeconds !== null,
    publishV2AtSeconds: String(i.publishV2AtSeconds ?? 12),
    requireStreaming: i.requireStreaming,
    cardStreaming: i.cardStreaming,
    intervalSeconds: String(i.intervalSeconds),
    rttMs: String(i.rttMs),
    attempts: String(i.attempts),
    backoff: i.backoff,
    staleOnError: i.staleOnError,
    failFrom: i.failFromSeconds !== null,
    failFromSeconds: String(i.failFromSeconds ?? 11),
    maxStaleSeconds: String(i.maxStaleSeconds),
    jitter: i.jitter,
    seed: String(i.seed),
    withCalls: i.calls !== null,
    calls: i.calls ?? SAMPLE_CALLS,
    enterAfter: String(i.enterAfter),
    callLeaveAfter: String(i.callLeaveAfter),
    v2Breaking: i.v2Breaking,
    rollout: i.rollout,
    rolloutTrigger: i.rolloutTrigger,
    rolloutSteps: i.rolloutSteps,
    rolloutHoldSeconds: String(i.rolloutHoldSeconds),
    rolloutMinTurns: String(i.rolloutMinTurns),
    rolloutMinSamples: String(i.rolloutMinSamples),
    rolloutMaxErrorRateIncrease: String(i.rolloutMaxErrorRateIncrease),
    rolloutCandidateCalls: i.rolloutCandidateCalls,
    rolloutCurrentCalls: i.rolloutCurrentCalls,
    rolloutSessions: String(i.rolloutSessions),
  };
}

/**
 * The inputs to send, or the fields that are not numbers yet.
 * @param {Form} f
 * @returns {{ inputs: TraceInputs, invalid: Record<string, string> }}
 */
export function inputsOf(f) {
  /** @type {Record<string, string>} */
  const invalid = {};
  const n = (/** @type {string} */ key, /** @type {string} */ s) => {
    const v = s.trim() === '' ? NaN : Number(s);
    if (!Number.isFinite(v)) invalid[key] = 'must be a number';
    return v;
  };
  const inputs = /** @type {TraceInputs} */ ({
    condition: /** @type {TraceInputs['condition']} */ (f.condition),
    credentials: f.credentials,
    maxAgeSeconds: n('maxAgeSeconds', f.maxAgeSeconds),
    publishV2AtSeconds: f.publishV2 ? n('publishV2AtSeconds', f.publishV2AtSeconds) : null,
    requireStreaming: f.requireStreaming,
    cardStreaming: f.cardStreaming,
    intervalSeconds: n('intervalSeconds', f.intervalSeconds),
    rttMs: n('rttMs', f.rttMs),
    attempts: n('attempts', f.attempts),
    backoff: f.backoff,
    staleOnError: f.staleOnError,
    failFromSeconds: f.failFrom ? n('failFromSeconds', f.failFromSeconds) : null,
    maxStaleSeconds: n('maxStaleSeconds', f.maxStaleSeconds),
    jitter: f.jitter,
    seed: n('seed', f.seed),
    calls: f.withCalls ? f.calls : null,
    enterAfter: n('enterAfter', f.enterAfter),
    callLeaveAfter: n('callLeaveAfter', f.callLeaveAfter),
    v2Breaking: f.v2Breaking,
    rollout: f.rollout,
    rolloutTrigger: /** @type {TraceInputs['rolloutTrigger']} */ (f.rolloutTrigger),
    rolloutSteps: f.rolloutSteps,
    rolloutHoldSeconds: n('rolloutHoldSeconds', f.rolloutHoldSeconds),
    rolloutMinTurns: n('rolloutMinTurns', f.rolloutMinTurns),
    rolloutMinSamples: n('rolloutMinSamples', f.rolloutMinSamples),
    rolloutMaxErrorRateIncrease: n('rolloutMaxErrorRateIncrease', f.rolloutMaxErrorRateIncrease),
    rolloutCandidateCalls: f.rolloutCandidateCalls,
    rolloutCurrentCalls: f.rolloutCurrentCalls,
    rolloutSessions: n('rolloutSessions', f.rolloutSessions),
  });
  return { inputs, invalid };
}

/**
 * The inputs of a run as one string with sorted keys (tests wait for the run they asked for).
 * @param {TraceInputs} inputs
 */
export function inputsKey(inputs) {
  return JSON.stringify(Object.fromEntries(Object.entries(inputs).sort(([a], [b]) => (a < b ? -1 : 1))));
}
