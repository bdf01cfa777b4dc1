/**
 * `compareTraces`: what changed between a captured baseline run and the current one — the
 * controls, each attempt's decision, and each statistic — for the explorer's "capture a
 * baseline and record what changed" step.
 *
 * @module
 */
import type { TraceAttempt, TraceResult, TraceStats } from './run-trace.js';

/** One value that differs. */
export interface TraceChange {
  /** The control, attempt field or statistic, e.g. `maxAgeSeconds`, `cardVersion`, `networkFetches`. */
  readonly field: string;
  readonly baseline: unknown;
  readonly current: unknown;
}

/** The differences of one attempt (present in either run). */
export interface AttemptChanges {
  /** 1-based attempt index. */
  readonly attempt: number;
  readonly changes: readonly TraceChange[];
}

/** A statistic that differs, with the signed difference. */
export interface StatChange extends TraceChange {
  readonly field: keyof TraceStats;
  readonly baseline: number;
  readonly current: number;
  readonly delta: number;
}

/** The result of {@link compareTraces}. */
export interface TraceComparison {
  /** True when no attempt decision and no statistic changed (controls may still differ). */
  readonly sameDecisions: boolean;
  readonly inputs: readonly TraceChange[];
  readonly attempts: readonly AttemptChanges[];
  readonly stats: readonly StatChange[];
  /** One sentence per change, for a person. */
  readonly lines: readonly string[];
}

/** Attempt fields compared, in display order. `endedAt` and messages are left out on purpose. */
export const COMPARED_ATTEMPT_FIELDS: readonly (keyof TraceAttempt)[] = Object.freeze([
  'at',
  'action',
  'status',
  'cardVersion',
  'stale',
  'outcome',
  'stage',
  'reason',
] as const);

/**
 * Lists what changed from `baseline` to `current`.
 *
 * @example
 * const base = await runTrace();
 * const cmp = compareTraces(base, await runTrace({ maxAgeSeconds: 30 }));
 * cmp.stats.find((s) => s.field === 'networkFetches')?.delta; // -2
 */
export function compareTraces(baseline: TraceResult, current: TraceResult): TraceComparison {
  const inputs: TraceChange[] = [];
  const keys = new Set([...Object.keys(baseline.inputs), ...Object.keys(current.inputs)]);
  for (const k of keys) {
    const b = (baseline.inputs as unknown as Record<string, unknown>)[k];
    const c = (current.inputs as unknown as Record<string, unknown>)[k];
    if (b !== c) inputs.push({ field: k, baseline: b, current: c });
  }

  const attempts: AttemptChanges[] = [];
  const n = Math.max(baseline.attempts.length, current.attempts.length);
  for (let i = 0; i < n; i++) {
    const b = baseline.attempts[i];
    const c = current.attempts[i];
    const changes: TraceChange[] = [];
    if (b === undefined || c === undefined) {
      changes.push({ field: 'attempt', baseline: b === undefined ? undefined : 'present', current: c === undefined ? undefined : 'present' });
    } else {
      for (const f of COMPARED_ATTEMPT_FIELDS) {
        if (b[f] !== c[f]) changes.push({ field: f, baseline: b[f], current: c[f] });
      }
    }
    if (changes.length > 0) attempts.push({ attempt: i + 1, changes });
  }

  const stats: StatChange[] = [];
  for (const k of Object.keys(current.stats) as (keyof TraceStats)[]) {
    const b = baseline.stats[k] ?? 0;
    const c = current.stats[k];
    if (b !== c) stats.push({ field: k, baseline: b, current: c, delta: c - b });
  }

  const show = (v: unknown): string => (v === undefined ? '—' : JSON.stringify(v));
  const lines = [
    ...inputs.map((x) => `control ${x.field}: ${show(x.baseline)} → ${show(x.current)}`),
    ...attempts.flatMap((a) => a.changes.map((x) => `attempt ${a.attempt} ${x.field}: ${show(x.baseline)} → ${show(x.current)}`)),
    ...stats.map((x) => `${x.field}: ${x.baseline} → ${x.current} (${x.delta > 0 ? '+' : ''}${x.delta})`),
  ];
  return { sameDecisions: attempts.length === 0 && stats.length === 0, inputs, attempts, stats, lines };
}
