/**
 * The controls of the discovery-trace explorer: what the teaching model lets a learner change,
 * plus the extra controls for what the model leaves out (backoff, stale-on-error, jitter), and
 * their validation. Times are in model seconds, except the round trip (milliseconds).
 *
 * @module
 */
import { DiscoveryError, type Problem } from '../errors.js';
import { HEALTH_DEFAULTS, ROLLOUT_DEFAULTS } from '../rules/defaults.js';
import { parseCallScript } from './call-script.js';
import { TRACE_CONDITIONS, TRACE_ROLLOUT_TRIGGERS } from './types.js';

/**
 * What the scripted endpoint does with a request:
 * - `healthy`: the card, with an ETag and `Cache-Control: max-age`;
 * - `not-found`: 404; `unavailable`: 503;
 * - `unauthorized`: 401 unless the request carries credentials (see {@link TraceInputs.credentials});
 * - `malformed`: 1,200 bytes that are not JSON (a truncated card);
 * - `insecure`: a well-formed card whose interface is `http://` (refused by the HTTPS policy).
 */
export type TraceCondition = 'healthy' | 'not-found' | 'unavailable' | 'unauthorized' | 'malformed' | 'insecure';


/** The explorer's controls, fully resolved. */
export interface TraceInputs {
  /** Endpoint / card condition. Default `healthy`. */
  readonly condition: TraceCondition;
  /** Supply discovery credentials (a simulated boolean: a placeholder header, never a secret). Default false. */
  readonly credentials: boolean;
  /** `Cache-Control: max-age` the endpoint sends, whole seconds; 0 means revalidate every time. Default 10. */
  readonly maxAgeSeconds: number;
  /** Model time at which card v2 replaces v1, seconds; `null` keeps v1 throughout. Default 12. */
  readonly publishV2AtSeconds: number | null;
  /** The client requires the streaming capability. Default false. */
  readonly requireStreaming: boolean;
  /** The card advertises `capabilities.streaming`. Default true. */
  readonly cardStreaming: boolean;
  /** Seconds between the starts of two attempts (attempts stay sequential). Default 6. */
  readonly intervalSeconds: number;
  /**
   * Network round trip of every request, milliseconds (the server sees the request half-way).
   * At least 1: a request takes time, and with 0 a refresh failing at the very instant of expiry
   * would still be inside the library's (inclusive) stale bound of 0. Default 100.
   */
  readonly rttMs: number;
  /** Number of discovery attempts. Default 5. */
  readonly attempts: number;
  /** Extra control: the library's capped exponential backoff after failures. Default false. */
  readonly backoff: boolean;
  /** Extra control: serve a card seen before when a refresh fails, within `maxStaleSeconds`. Default false. */
  readonly staleOnError: boolean;
  /**
   * Extra control: the condition applies only from this model time (seconds); before it the
   * endpoint is healthy. `null` = from the start. Default null.
   */
  readonly failFromSeconds: number | null;
  /** Extra control: how long past its expiry a stale card may be served (with `staleOnError`). Default 3,600. */
  readonly maxStaleSeconds: number;
  /** Extra control: the library's expiry jitter (and backoff jitter), from a seeded random source. Default false. */
  readonly jitter: boolean;
  /** Seed of the random source used by jitter (runs are deterministic per seed). Default 1. */
  readonly seed: number;
  /**
   * The agent's A2A calls, one per attempt, made when the attempt ends: `ok`, an HTTP status
   * 400–599, `network` (no answer) or `-` (no call), optionally `@<ms>`; e.g. `ok ok 500 500 500
   * 500 500 ok ok`. Calls past the last attempt are not made (the health lane says so). Given, the run shows the agent's health after each attempt, decided by the
   * library's `CallHealth` and `HealthTracker`. `null`: no calls, no health lane. Default null.
   */
  readonly calls: string | null;
  /** Health: good observations in a row before the agent enters (or returns to) snapshots (`health.enterAfter`). Default 2. */
  readonly enterAfter: number;
  /** Health: failed calls in a row before the agent leaves new snapshots (`health.callLeaveAfter`). Default 5. */
  readonly callLeaveAfter: number;
  /** Card v2 renames its skill (`order-status` → `order-tracking`): a breaking change. Default false (v2 only rewords it). */
  readonly v2Breaking: boolean;
  /** Explain how the change from card v1 to v2 rolls out: staged, judged on the calls below, by the library's `Rollouts`. Default false. */
  readonly rollout: boolean;
  /** Which changes roll out by stages (`rollout.trigger`): `breaking`, `any` or `off`. Default `breaking`. */
  readonly rolloutTrigger: 'breaking' | 'any' | 'off';
  /** Shares of new sessions the candidate gets, percent, ascending (`rollout.steps`), e.g. `5 25 100`. */
  readonly rolloutSteps: string;
  /** Each step lasts at least this long, model seconds (`rollout.holdMs`). Default 600. */
  readonly rolloutHoldSeconds: number;
  /** Each step lasts at least this many turns on the candidate (`rollout.minTurns`). Default 20. */
  readonly rolloutMinTurns: number;
  /** Turns on the candidate before its figures are judged (`rollout.minSamples`). Default 10. */
  readonly rolloutMinSamples: number;
  /** How much higher the candidate's turn error rate may be, as a fraction (`rollout.maxErrorRateIncrease`). Default 0.05. */
  readonly rolloutMaxErrorRateIncrease: number;
  /** What the turns on the candidate come to, a pattern repeated (same words as `calls`), e.g. `ok 500` (fails 50 %). Default `ok`. */
  readonly rolloutCandidateCalls: string;
  /** What the turns on the current snapshot come to, a pattern repeated. Default `ok`. */
  readonly rolloutCurrentCalls: string;
  /** New sessions, one a model second, each with one turn, while the rollout runs. Default 2,000. */
  readonly rolloutSessions: number;
}

/** The seed's defaults: five attempts six seconds apart, max-age 10 s, v2 at 12 s, backoff and jitter off. */
export const DEFAULT_TRACE_INPUTS: Readonly<TraceInputs> = Object.freeze({
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
  maxStaleSeconds: 3_600,
  jitter: false,
  seed: 1,
  calls: null,
  enterAfter: HEALTH_DEFAULTS.enterAfter,
  callLeaveAfter: HEALTH_DEFAULTS.callLeaveAfter,
  v2Breaking: false,
  rollout: false,
  rolloutTrigger: ROLLOUT_DEFAULTS.trigger,
  rolloutSteps: ROLLOUT_DEFAULTS.steps.join(' '),
  rolloutHoldSeconds: ROLLOUT_DEFAULTS.holdMs / 1000,
  rolloutMinTurns: ROLLOUT_DEFAULTS.minTurns,
  rolloutMinSamples: ROLLOUT_DEFAULTS.minSamples,
  rolloutMaxErrorRateIncrease: ROLLOUT_DEFAULTS.maxErrorRateIncrease,
  rolloutCandidateCalls: 'ok',
  rolloutCurrentCalls: 'ok',
  rolloutSessions: 2_000,
});

/**
 * What a person reads for each condition: the explorer's condition menu shows these, and every
 * sentence about a change of condition uses them.
 */
export const TRACE_CONDITION_LABELS: Readonly<Record<TraceCondition, string>> = Object.freeze({
  healthy: 'Healthy',
  'not-found': '404: card not found',
  unavailable: '503: service unavailable',
  unauthorized: '401 unless credentials supplied',
  malformed: 'Malformed JSON',
  insecure: 'Non-HTTPS advertised interface',
});

/**
 * The label of each control as the explorer's form shows it: the one mapping from an input's
 * name to what a person reads (the page's form and "Last change" use the same labels; the
 * page's copy is held equal by test/explorer/compare-web.test.ts).
 */
export const TRACE_INPUT_LABELS: Readonly<Record<keyof TraceInputs, string>> = Object.freeze({
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
 * One control's value as the form shows it, with its unit: `10 s`, `100 ms`, `on`, `off`,
 * `Malformed JSON`, `at 12 s` (v2), `off` for a `null` time.
 *
 * @example traceInputText('maxAgeSeconds', 30) // "30 s"
 */
export function traceInputText(field: string, value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === null) return 'off';
  if (field === 'condition') return TRACE_CONDITION_LABELS[value as TraceCondition] ?? String(value);
  if (field === 'publishV2AtSeconds') return `at ${String(value)} s`;
  if (field === 'rttMs') return `${String(value)} ms`;
  if (field.endsWith('Seconds')) return `${String(value)} s`;
  return String(value);
}

/**
 * A change of one control in the form's words.
 *
 * @example traceInputChangeText('maxAgeSeconds', 10, 30) // "Cache max-age 10 s → 30 s"
 */
export function traceInputChangeText(field: string, baseline: unknown, current: unknown): string {
  const label = (TRACE_INPUT_LABELS as Record<string, string>)[field] ?? field;
  return `${label} ${traceInputText(field, baseline)} → ${traceInputText(field, current)}`;
}

/** Upper bounds that keep a run small enough to play back. */
export const TRACE_LIMITS = Object.freeze({
  attempts: 100,
  maxAgeSeconds: 86_400,
  intervalSeconds: 86_400,
  rttMs: 60_000,
  timeSeconds: 8_640_000,
  rolloutSessions: 10_000,
  rolloutSteps: 10,
  health: 100,
});


/**
 * The shares of a rollout's steps, read from `5 25 100` (spaces or commas): whole or decimal
 * percentages above 0 and at most 100, ascending. Returns them, or the problem in words.
 *
 * @example parseRolloutSteps('5, 25, 100').steps // [5, 25, 100]
 */
export function parseRolloutSteps(text: string): { steps?: number[]; problem?: string } {
  const parts = text.split(/[\s,]+/).filter((t) => t !== '');
  if (parts.length === 0 || parts.length > TRACE_LIMITS.rolloutSteps) return { problem: `must hold 1 to ${TRACE_LIMITS.rolloutSteps} shares, e.g. 5 25 100` };
  const steps = parts.map(Number);
  if (steps.some((n) => !Number.isFinite(n) || n <= 0 || n > 100)) return { problem: 'each share must be a percentage above 0 and at most 100' };
  if (steps.some((n, i) => i > 0 && n <= (steps[i - 1] as number))) return { problem: 'the shares must grow step by step' };
  return { steps };
}

/**
 * Fills in defaults and checks every control; every problem is reported at once.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) naming each bad control.
 * @example resolveTraceInputs({ maxAgeSeconds: 0 }).attempts // 5
 */
export function resolveTraceInputs(partial: Partial<TraceInputs> = {}): TraceInputs {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<TraceInputs>;
  const inputs: TraceInputs = { ...DEFAULT_TRACE_INPUTS, ...defined };
  const problems: Problem[] = [];
  const bad = (path: string, message: string): void => void problems.push({ path, message });
  const num = (path: keyof TraceInputs, value: unknown, min: number, max: number, integer: boolean): void => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return bad(path, 'must be a number');
    if (integer && !Number.isInteger(value)) bad(path, 'must be a whole number');
    if (value < min || value > max) bad(path, `must be between ${min} and ${max}`);
  };
  const bool = (path: keyof TraceInputs, value: unknown): void => {
    if (typeof value !== 'boolean') bad(path, 'must be true or false');
  };
  const unknown = Object.keys(partial).filter((k) => !(k in DEFAULT_TRACE_INPUTS));
  for (const k of unknown) bad(k, 'is not a control of the explorer');

  if (!TRACE_CONDITIONS.includes(inputs.condition)) bad('condition', `must be one of ${TRACE_CONDITIONS.join(', ')}`);
  for (const k of ['credentials', 'requireStreaming', 'cardStreaming', 'backoff', 'staleOnError', 'jitter'] as const) bool(k, inputs[k]);
  num('maxAgeSeconds', inputs.maxAgeSeconds, 0, TRACE_LIMITS.maxAgeSeconds, true);
  if (inputs.publishV2AtSeconds !== null) num('publishV2AtSeconds', inputs.publishV2AtSeconds, 0, TRACE_LIMITS.timeSeconds, false);
  num('intervalSeconds', inputs.intervalSeconds, 0, TRACE_LIMITS.intervalSeconds, false);
  if (typeof inputs.intervalSeconds === 'number' && inputs.intervalSeconds <= 0) bad('intervalSeconds', 'must be more than 0');
  num('rttMs', inputs.rttMs, 1, TRACE_LIMITS.rttMs, false);
  num('attempts', inputs.attempts, 1, TRACE_LIMITS.attempts, true);
  if (inputs.failFromSeconds !== null) num('failFromSeconds', inputs.failFromSeconds, 0, TRACE_LIMITS.timeSeconds, false);
  num('maxStaleSeconds', inputs.maxStaleSeconds, 0, TRACE_LIMITS.timeSeconds, false);
  num('seed', inputs.seed, 0, 2 ** 32 - 1, true);
  for (const k of ['v2Breaking', 'rollout'] as const) bool(k, inputs[k]);
  const script = (path: keyof TraceInputs, value: unknown): void => {
    if (typeof value !== 'string') return bad(path, 'must be a call script, e.g. ok ok 500');
    const problem = parseCallScript(value, 1).problem;
    if (problem !== undefined) bad(path, problem);
  };
  if (inputs.calls !== null) script('calls', inputs.calls);
  num('enterAfter', inputs.enterAfter, 1, TRACE_LIMITS.health, true);
  num('callLeaveAfter', inputs.callLeaveAfter, 1, TRACE_LIMITS.health, true);
  if (!TRACE_ROLLOUT_TRIGGERS.includes(inputs.rolloutTrigger)) bad('rolloutTrigger', `must be one of ${TRACE_ROLLOUT_TRIGGERS.join(', ')}`);
  if (typeof inputs.rolloutSteps !== 'string') bad('rolloutSteps', 'must be shares in percent, e.g. 5 25 100');
  else {
    const problem = parseRolloutSteps(inputs.rolloutSteps).problem;
    if (problem !== undefined) bad('rolloutSteps', problem);
  }
  num('rolloutHoldSeconds', inputs.rolloutHoldSeconds, 0, TRACE_LIMITS.timeSeconds, false);
  num('rolloutMinTurns', inputs.rolloutMinTurns, 0, TRACE_LIMITS.rolloutSessions, true);
  num('rolloutMinSamples', inputs.rolloutMinSamples, 1, TRACE_LIMITS.rolloutSessions, true);
  num('rolloutMaxErrorRateIncrease', inputs.rolloutMaxErrorRateIncrease, 0, 1, false);
  script('rolloutCandidateCalls', inputs.rolloutCandidateCalls);
  script('rolloutCurrentCalls', inputs.rolloutCurrentCalls);
  num('rolloutSessions', inputs.rolloutSessions, 1, TRACE_LIMITS.rolloutSessions, true);

  if (problems.length > 0) {
    const first = problems[0] as Problem;
    throw new DiscoveryError('ERR_CONFIG_INVALID', `trace: ${problems.length} invalid control(s); first: ${first.path} ${first.message}`, {
      stage: 'config',
      path: first.path,
      problems,
    });
  }
  return Object.freeze(inputs);
}
