// @ts-check
/**
 * What changed between two runs of the trace explorer, and which change caused it: the page's
 * copy of `compareTraces` and `tradeOffOf` (packages/core/src/explorer/compare.ts) — the same
 * fields, the same headline, the same attribution (a cause is named only when one control
 * differs) and the same sentences; test/explorer/compare-web.test.ts holds the two to the same
 * answers.
 */
import { INPUT_LABELS, inputChangeText } from './labels.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../../lib/types.js').TraceStats} TraceStats */
/** @typedef {{ field: string, baseline: unknown, current: unknown, text?: string }} Change */
/** @typedef {{ kind: 'none' | 'one' | 'several', fields: string[], sentence: string }} Attribution */
/** @typedef {{ field: keyof TraceStats, baseline: number, current: number, delta: number }} StatChange */
/**
 * @typedef {object} Comparison
 * @property {boolean} sameDecisions
 * @property {boolean} timelineChanged
 * @property {string} headline
 * @property {Change[]} inputs
 * @property {{ attempt: number, changes: Change[] }[]} attempts
 * @property {StatChange[]} stats
 * @property {Attribution} attribution
 * @property {string} [tradeOff]
 * @property {string[]} lines
 */

/** Attempt fields that make up a decision, in display order. */
export const DECISION_FIELDS = /** @type {const} */ (['action', 'status', 'cardVersion', 'stale', 'outcome', 'stage', 'reason']);
/** Attempt fields compared: the start time, then the decision (`endedAt` and messages left out, as in the library). */
export const COMPARED_ATTEMPT_FIELDS = /** @type {const} */ (['at', ...DECISION_FIELDS]);

/** @param {unknown} v */
const show = (v) => (v === undefined ? '—' : JSON.stringify(v));
/** @param {number} n */
const s = (n) => `${Math.round(n * 1000) / 1000} s`;
/** @param {number} n */
const requests = (n) => `${n} network request${n === 1 ? '' : 's'}`;
/** @param {TraceResult} r */
const seenV2 = (r) => (r.freshness.v2FirstUsedAt === null ? 'never in the run' : `at ${s(r.freshness.v2FirstUsedAt)}`);

/**
 * The controls that differ between two runs, in the form's order.
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @returns {Change[]}
 */
function differingInputs(baseline, current) {
  /** @type {Change[]} */
  const inputs = [];
  const bi = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (baseline.inputs));
  const ci = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (current.inputs));
  for (const k of new Set([...Object.keys(bi), ...Object.keys(ci)])) if (bi[k] !== ci[k]) inputs.push({ field: k, baseline: bi[k], current: ci[k], text: inputChangeText(k, bi[k], ci[k]) });
  return inputs;
}

/**
 * Which change the differences are attributed to: one named control, or several and no pretence of knowing which.
 * @param {Change[]} inputs
 * @param {boolean} differs whether any attempt or statistic differs
 * @returns {Attribution}
 */
function attributionOf(inputs, differs) {
  const fields = inputs.map((x) => x.field);
  if (inputs.length === 0) return { kind: 'none', fields, sentence: 'No control changed.' };
  if (inputs.length === 1) {
    const text = inputs[0]?.text ?? '';
    return { kind: 'one', fields, sentence: differs ? `One control changed, so every difference below is its doing: ${text}.` : `One control changed (${text}), and no attempt or statistic changed with it.` };
  }
  const labels = fields.map((f) => /** @type {Record<string, string>} */ (INPUT_LABELS)[f] ?? f).join(', ');
  return {
    kind: 'several',
    fields,
    sentence: differs
      ? `${inputs.length} controls changed (${labels}): the differences below come from these changes together, and which one caused which is not known. Change one control at a time to see what each does.`
      : `${inputs.length} controls changed (${labels}), and no attempt or statistic changed with them.`,
  };
}

/**
 * The freshness-versus-requests trade-off between two runs whose max-age differs — and nothing
 * else (another changed control could be the cause of the numbers: then `undefined`).
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @returns {string | undefined}
 */
export function tradeOffOf(baseline, current) {
  const b = baseline.inputs.maxAgeSeconds;
  const c = current.inputs.maxAgeSeconds;
  const differing = differingInputs(baseline, current);
  if (differing.length !== 1 || differing[0]?.field !== 'maxAgeSeconds') return undefined;
  const longer = c > b;
  const [bn, cn] = [baseline.stats.networkFetches, current.stats.networkFetches];
  const head = `${longer ? 'Longer' : 'Shorter'} max-age (${c} s instead of ${b} s): ${bn === cn ? `the same ${requests(cn)}` : `${requests(cn)} instead of ${bn}`}`;
  if (current.inputs.publishV2AtSeconds === null || baseline.inputs.publishV2AtSeconds === null) {
    return `${head}; no v2 is published, so freshness is not at stake here.`;
  }
  const bt = baseline.freshness.v2FirstUsedAt ?? Infinity;
  const ct = current.freshness.v2FirstUsedAt ?? Infinity;
  if (ct === bt) return `${head}; ${ct === Infinity ? 'v2 is used in neither run' : `v2 is seen at ${s(ct)} in both runs`}.`;
  const later = ct > bt;
  return `${head}, ${later === longer ? 'but' : 'and'} v2 is seen ${later ? 'later' : 'sooner'}: ${seenV2(current)} instead of ${seenV2(baseline)}.`;
}

/**
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @returns {Comparison}
 */
export function compareTraces(baseline, current) {
  const inputs = differingInputs(baseline, current);

  /** @type {{ attempt: number, changes: Change[] }[]} */
  const attempts = [];
  let decisionChanged = false;
  let timelineChanged = false;
  const n = Math.max(baseline.attempts.length, current.attempts.length);
  for (let i = 0; i < n; i++) {
    const b = baseline.attempts[i];
    const c = current.attempts[i];
    /** @type {Change[]} */
    const changes = [];
    if (b === undefined || c === undefined) {
      changes.push({ field: 'attempt', baseline: b === undefined ? undefined : 'present', current: c === undefined ? undefined : 'present' });
      decisionChanged = true;
    } else {
      for (const f of COMPARED_ATTEMPT_FIELDS) {
        if (b[f] === c[f]) continue;
        changes.push({ field: f, baseline: b[f], current: c[f] });
        if (f === 'at') timelineChanged = true;
        else decisionChanged = true;
      }
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

  const sameDecisions = !decisionChanged && stats.length === 0;
  const headline = !sameDecisions ? 'Decisions changed' : timelineChanged ? 'Timeline changed, decisions the same' : inputs.length > 0 ? 'Same decisions' : 'Nothing changed';
  const tradeOff = tradeOffOf(baseline, current);
  const attribution = attributionOf(inputs, attempts.length > 0 || stats.length > 0);
  const lines = [
    ...inputs.map((x) => x.text ?? x.field),
    ...attempts.flatMap((a) => a.changes.map((x) => `attempt ${a.attempt} ${x.field}: ${show(x.baseline)} → ${show(x.current)}`)),
    ...stats.map((x) => `${x.field}: ${x.baseline} → ${x.current} (${x.delta > 0 ? '+' : ''}${x.delta})`),
  ];
  return { sameDecisions, timelineChanged, headline, inputs, attempts, stats, attribution, ...(tradeOff !== undefined && { tradeOff }), lines };
}

/** At most this many controls are tried one at a time (MAX_SINGLE_CHANGES). */
export const MAX_SINGLE_CHANGES = 4;

/** @typedef {{ field: string, text: string, explainsAll: boolean, changesNothing: boolean, sentence: string }} SingleChangeEffect */

/**
 * The baseline's inputs with one control taken from the current run (the counterfactual run).
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @param {string} field
 * @returns {TraceResult['inputs']}
 */
function singleChangeInputs(baseline, current, field) {
  return /** @type {TraceResult['inputs']} */ ({ ...baseline.inputs, [field]: /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (current.inputs))[field] });
}

/**
 * @param {TraceResult} r
 * @param {TraceResult} base
 */
function statsAgainst(r, base) {
  return [
    r.stats.networkFetches === base.stats.networkFetches ? `the same ${requests(r.stats.networkFetches)}` : `${requests(r.stats.networkFetches)} instead of ${base.stats.networkFetches}`,
    r.stats.accepted === base.stats.accepted ? `the same ${r.stats.accepted} accepted` : `${r.stats.accepted} accepted instead of ${base.stats.accepted}`,
  ].join(', ');
}

/**
 * What one control does on its own, from the run of {@link singleChangeInputs} (`alone`).
 * @param {TraceResult} baseline
 * @param {TraceResult} alone
 * @param {TraceResult} current
 * @param {string} field
 * @returns {SingleChangeEffect}
 */
function singleChangeEffect(baseline, alone, current, field) {
  const bi = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (baseline.inputs));
  const ci = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (current.inputs));
  const text = inputChangeText(field, bi[field], ci[field]);
  const explainsAll = compareTraces(alone, current).sameDecisions;
  const changesNothing = compareTraces(baseline, alone).sameDecisions;
  const sentence = changesNothing
    ? `${text} alone changes no decision (${statsAgainst(alone, baseline)}).`
    : `${text} alone: ${statsAgainst(alone, baseline)}${explainsAll ? ' — already this run’s decisions, so the other changes make no difference here' : ''}.`;
  return { field, text, explainsAll, changesNothing, sentence };
}

/**
 * When several controls differ, runs each one alone (the baseline with only that control changed,
 * by the service: `run`) and says what each does on its own; `undefined` when fewer than two or
 * more than {@link MAX_SINGLE_CHANGES} differ. The page's copy of the library's `attributeChanges`.
 * @param {TraceResult} baseline
 * @param {TraceResult} current
 * @param {(inputs: TraceResult['inputs']) => Promise<TraceResult>} run
 * @returns {Promise<SingleChangeEffect[] | undefined>}
 */
export async function attributeChanges(baseline, current, run) {
  const fields = differingInputs(baseline, current).map((c) => c.field);
  if (fields.length < 2 || fields.length > MAX_SINGLE_CHANGES) return undefined;
  const runs = await Promise.all(fields.map((f) => run(singleChangeInputs(baseline, current, f))));
  return fields.map((f, i) => singleChangeEffect(baseline, /** @type {TraceResult} */ (runs[i]), current, f));
}
