/**
 * The controls of the discovery-trace explorer: what the teaching model lets a learner change,
 * plus the extra controls for what the model leaves out (backoff, stale-on-error, jitter), and
 * their validation. Times are in model seconds, except the round trip (milliseconds).
 *
 * @module
 */
import { DiscoveryError, type Problem } from '../errors.js';

/**
 * What the scripted endpoint does with a request:
 * - `healthy`: the card, with an ETag and `Cache-Control: max-age`;
 * - `not-found`: 404; `unavailable`: 503;
 * - `unauthorized`: 401 unless the request carries credentials (see {@link TraceInputs.credentials});
 * - `malformed`: 1,200 bytes that are not JSON (a truncated card);
 * - `insecure`: a well-formed card whose interface is `http://` (refused by the HTTPS policy).
 */
export type TraceCondition = 'healthy' | 'not-found' | 'unavailable' | 'unauthorized' | 'malformed' | 'insecure';

/** Every condition, in the order a control lists them. */
export const TRACE_CONDITIONS: readonly TraceCondition[] = Object.freeze(['healthy', 'not-found', 'unavailable', 'unauthorized', 'malformed', 'insecure']);

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
});

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
