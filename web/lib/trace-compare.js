// @ts-check
/**
 * What changed between a captured baseline run and the current one: the page's copy of
 * `compareTraces` (src/explorer/compare.ts), the same fields and the same sentences.
 */

/** @typedef {import('./types.js').TraceResult} TraceResult */
/** @typedef {import('./types.js').TraceStats} TraceStats */
/** @typedef {{ field: string, baseline: unknown, current: unknown }} Change */
/** @typedef {{ field: keyof TraceStats, baseline: number, current: number, delta: number }} StatChange */
/** @typedef {{ sameDecisions: boolean, inputs: Change[], attempts: { attempt: number, changes: Change[] }[], stats: StatChange[], lines: string[] }} Comparison */

/** Attempt fields compared, in display order (`endedAt` and messages left out, as in the library). */
export const COMPARED_ATTEMPT_FIELDS = /** @type {const} */ (['at', 'action', 'status', 'cardVersion', 'stale', 'outcome', 'stage', 'reason']);

/** @param {unknown} v */
const show = (v) => (v === undefined ? '—' : JSON.stringify(v));

/**
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @returns {Comparison}
 */
export function compareTraces(baseline, current) {
  /** @type {Change[]} */
  const inputs = [];
  const bi = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (baseline.inputs));
  const ci = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (current.inputs));
  for (const k of new Set([...Object.keys(bi), ...Object.keys(ci)])) if (bi[k] !== ci[k]) inputs.push({ field: k, baseline: bi[k], current: ci[k] });

  /** @type {{ attempt: number, changes: Change[] }[]} */
  const attempts = [];
  const n = Math.max(baseline.attempts.length, current.attempts.length);
  for (let i = 0; i < n; i++) {
    const b = baseline.attempts[i];
    const c = current.attempts[i];
    /** @type {Change[]} */
    const changes = [];
    if (b === undefined || c === undefined) {
      changes.push({ field: 'attempt', baseline: b === undefined ? undefined : 'present', current: c === undefined ? undefined : 'present' });
    } else {
      for (const f of COMPARED_ATTEMPT_FIELDS) if (b[f] !== c[f]) changes.push({ field: f, baseline: b[f], current: c[f] });
    }
    if (changes.length > 0) attempts.push({ attempt: i + 1, changes });
  }

  /** @type {StatChange[]} */
  const stats = [];
  for (const k of /** @type {(keyof TraceStats)[]} */ (Object.keys(current.stats))) {
    const b = baseline.stats[k] ?? 0;
    const c = current.stats[k];
    if (b !== c) stats.push({ field: k, baseline: b, current: c, delta: c - b });
  }

  const lines = [
    ...inputs.map((x) => `control ${x.field}: ${show(x.baseline)} → ${show(x.current)}`),
    ...attempts.flatMap((a) => a.changes.map((x) => `attempt ${a.attempt} ${x.field}: ${show(x.baseline)} → ${show(x.current)}`)),
    ...stats.map((x) => `${x.field}: ${x.baseline} → ${x.current} (${x.delta > 0 ? '+' : ''}${x.delta})`),
  ];
  return { sameDecisions: attempts.length === 0 && stats.length === 0, inputs, attempts, stats, lines };
}
