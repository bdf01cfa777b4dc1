/**
 * `compareTraces`: what changed between a captured baseline run and the current one — the
 * controls, each attempt's decision, its timing, and each statistic — for the explorer's
 * "capture a baseline and record what changed" step. A change of timing alone (interval, round
 * trip) is told apart from a change of decisions. The differences are attributed to a control
 * only when it is the only one that differs (otherwise the comparison says several changed and
 * names none as the cause), so a change of max-age alone is stated as the
 * freshness-versus-requests trade-off with the numbers of both runs. Controls are named with the
 * form's labels (`Cache max-age 10 s → 30 s`).
 *
 * The page keeps a copy (packages/service/web/lib/trace-compare.js); test/explorer/compare-web.test.ts holds
 * them to the same answers.
 *
 * @module
 */
import { TRACE_INPUT_LABELS, traceInputChangeText } from './inputs.js';
import type { TraceInputs } from './inputs.js';
import { runTrace } from './run-trace.js';
import type { TraceAttempt, TraceResult, TraceStats } from './types.js';

/** One value that differs. */
export interface TraceChange {
  /** The control, attempt field or statistic, e.g. `maxAgeSeconds`, `cardVersion`, `networkFetches`. */
  readonly field: string;
  readonly baseline: unknown;
  readonly current: unknown;
  /** For a control: the change in the form's words, e.g. `Cache max-age 10 s → 30 s`. */
  readonly text?: string;
}

/**
 * Which change the differences are attributed to. Only a single changed control is named as the
 * cause: when several controls differ, the comparison says so and names none of them.
 */
export interface TraceAttribution {
  /** `none`: no control differs; `one`: exactly one does, so every difference is its doing; `several`: more than one does, and which caused what is not known. */
  readonly kind: 'none' | 'one' | 'several';
  /** The controls that differ (input names), in the form's order. */
  readonly fields: readonly string[];
  /** The same in one sentence, with the form's labels. */
  readonly sentence: string;
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
  /**
   * True when the sequence of decisions is the same: per attempt the action, status, card used,
   * staleness, outcome and rejecting stage, and every statistic (controls and times may differ).
   */
  readonly sameDecisions: boolean;
  /** True when some attempt starts at another time. */
  readonly timelineChanged: boolean;
  /** `Nothing changed`, `Timeline changed, decisions the same`, `Same decisions` (controls differ, nothing else) or `Decisions changed`. */
  readonly headline: string;
  readonly inputs: readonly TraceChange[];
  readonly attempts: readonly AttemptChanges[];
  readonly stats: readonly StatChange[];
  /** Which change caused the differences: one named control, or several and no pretence of knowing which. */
  readonly attribution: TraceAttribution;
  /** The freshness-versus-requests trade-off in words, when max-age is the only control that differs. */
  readonly tradeOff?: string;
  /** One sentence per change, for a person. */
  readonly lines: readonly string[];
}

/** Attempt fields that make up a decision, in display order. */
export const DECISION_FIELDS: readonly (keyof TraceAttempt)[] = Object.freeze(['action', 'status', 'cardVersion', 'stale', 'outcome', 'stage', 'reason'] as const);

/** Attempt fields compared, in display order: the start time, then the decision. `endedAt` and messages are left out on purpose. */
export const COMPARED_ATTEMPT_FIELDS: readonly (keyof TraceAttempt)[] = Object.freeze(['at', ...DECISION_FIELDS] as (keyof TraceAttempt)[]);

const s = (n: number): string => `${Math.round(n * 1000) / 1000} s`;
const requests = (n: number): string => `${n} network request${n === 1 ? '' : 's'}`;

/** When v2 was first used, in words. */
function seenV2(r: TraceResult): string {
  return r.freshness.v2FirstUsedAt === null ? 'never in the run' : `at ${s(r.freshness.v2FirstUsedAt)}`;
}

/** The controls that differ between two runs, in the form's order. */
function differingInputs(baseline: TraceResult, current: TraceResult): TraceChange[] {
  const inputs: TraceChange[] = [];
  const keys = new Set([...Object.keys(baseline.inputs), ...Object.keys(current.inputs)]);
  for (const k of keys) {
    const b = (baseline.inputs as unknown as Record<string, unknown>)[k];
    const c = (current.inputs as unknown as Record<string, unknown>)[k];
    if (b !== c) inputs.push({ field: k, baseline: b, current: c, text: traceInputChangeText(k, b, c) });
  }
  return inputs;
}

/** The attribution sentence (see {@link TraceAttribution}); `differs` is whether any attempt or statistic differs. */
function attributionOf(inputs: readonly TraceChange[], differs: boolean): TraceAttribution {
  const fields = inputs.map((x) => x.field);
  if (inputs.length === 0) return { kind: 'none', fields, sentence: 'No control changed.' };
  if (inputs.length === 1) {
    const text = (inputs[0] as TraceChange).text ?? '';
    return { kind: 'one', fields, sentence: differs ? `One control changed, so every difference below is its doing: ${text}.` : `One control changed (${text}), and no attempt or statistic changed with it.` };
  }
  const labels = fields.map((f) => (TRACE_INPUT_LABELS as Record<string, string>)[f] ?? f).join(', ');
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
 * else: when another control differs too, the numbers could come from it, so there is no
 * trade-off to state (`undefined`).
 *
 * @example tradeOffOf(base, longCache) // "Longer max-age (30 s instead of 10 s): 1 network request instead of 3, but v2 is seen later: never in the run instead of at 12 s."
 */
export function tradeOffOf(baseline: TraceResult, current: TraceResult): string | undefined {
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
 * Lists what changed from `baseline` to `current`.
 *
 * @example
 * const base = await runTrace();
 * const cmp = compareTraces(base, await runTrace({ maxAgeSeconds: 30 }));
 * cmp.stats.find((s) => s.field === 'networkFetches')?.delta; // -2
 */
export function compareTraces(baseline: TraceResult, current: TraceResult): TraceComparison {
  const inputs = differingInputs(baseline, current);

  const attempts: AttemptChanges[] = [];
  let decisionChanged = false;
  let timelineChanged = false;
  const n = Math.max(baseline.attempts.length, current.attempts.length);
  for (let i = 0; i < n; i++) {
    const b = baseline.attempts[i];
    const c = current.attempts[i];
    const changes: TraceChange[] = [];
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

  const stats: StatChange[] = [];
  for (const k of Object.keys(current.stats) as (keyof TraceStats)[]) {
    const b = baseline.stats[k] ?? 0;
    const c = current.stats[k];
    if (b !== c) stats.push({ field: k, baseline: b, current: c, delta: c - b });
  }

  const sameDecisions = !decisionChanged && stats.length === 0;
  const headline = !sameDecisions
    ? 'Decisions changed'
    : timelineChanged
      ? 'Timeline changed, decisions the same'
      : inputs.length > 0
        ? 'Same decisions'
        : 'Nothing changed';
  const tradeOff = tradeOffOf(baseline, current);
  const attribution = attributionOf(inputs, attempts.length > 0 || stats.length > 0);
  const show = (v: unknown): string => (v === undefined ? '—' : JSON.stringify(v));
  const lines = [
    ...inputs.map((x) => x.text ?? x.field),
    ...attempts.flatMap((a) => a.changes.map((x) => `attempt ${a.attempt} ${x.field}: ${show(x.baseline)} → ${show(x.current)}`)),
    ...stats.map((x) => `${x.field}: ${x.baseline} → ${x.current} (${x.delta > 0 ? '+' : ''}${x.delta})`),
  ];
  return { sameDecisions, timelineChanged, headline, inputs, attempts, stats, attribution, ...(tradeOff !== undefined && { tradeOff }), lines };
}

/** At most this many controls are tried one at a time by {@link attributeChanges}. */
export const MAX_SINGLE_CHANGES = 4;

/** What one changed control does on its own: the baseline rerun with only that control changed. */
export interface SingleChangeEffect {
  /** The control (an input name). */
  readonly field: string;
  /** The change in the form's words, e.g. `Cache max-age 10 s → 30 s`. */
  readonly text: string;
  /** Changed alone, it already gives the current run's decisions and statistics: the other changes make no difference here. */
  readonly explainsAll: boolean;
  /** Changed alone, it changes no decision and no statistic of the baseline. */
  readonly changesNothing: boolean;
  /** The same in one sentence, with the numbers. */
  readonly sentence: string;
}

/** The baseline's inputs with one control taken from the current run: the counterfactual run of {@link attributeChanges}. */
function singleChangeInputs(baseline: TraceResult, current: TraceResult, field: string): TraceInputs {
  return { ...baseline.inputs, [field]: (current.inputs as unknown as Record<string, unknown>)[field] } as TraceInputs;
}

/** `1 network request instead of 5, 5 accepted instead of 0`: the headline statistics of `r` against `base`. */
function statsAgainst(r: TraceResult, base: TraceResult): string {
  const parts = [
    r.stats.networkFetches === base.stats.networkFetches ? `the same ${requests(r.stats.networkFetches)}` : `${requests(r.stats.networkFetches)} instead of ${base.stats.networkFetches}`,
    r.stats.accepted === base.stats.accepted ? `the same ${r.stats.accepted} accepted` : `${r.stats.accepted} accepted instead of ${base.stats.accepted}`,
  ];
  return parts.join(', ');
}

/**
 * What one control does on its own, from the run of {@link singleChangeInputs} (`alone`): it gives
 * the current run's decisions (then the other changes make no difference here), it changes nothing,
 * or it changes the baseline by so many requests and acceptances.
 */
function singleChangeEffect(baseline: TraceResult, alone: TraceResult, current: TraceResult, field: string): SingleChangeEffect {
  const text = traceInputChangeText(field, (baseline.inputs as unknown as Record<string, unknown>)[field], (current.inputs as unknown as Record<string, unknown>)[field]);
  const explainsAll = compareTraces(alone, current).sameDecisions;
  const changesNothing = compareTraces(baseline, alone).sameDecisions;
  const sentence = changesNothing
    ? `${text} alone changes no decision (${statsAgainst(alone, baseline)}).`
    : `${text} alone: ${statsAgainst(alone, baseline)}${explainsAll ? ' — already this run’s decisions, so the other changes make no difference here' : ''}.`;
  return { field, text, explainsAll, changesNothing, sentence };
}

/**
 * When several controls differ, tries each one alone — the baseline rerun with only that control
 * changed, by the real library (`run`, `runTrace` by default) — and says what each does on its own.
 * This is what can honestly be said of several changes: each one's own effect, measured; not a
 * share of the combined difference (controls interact: max-age changes nothing for a malformed
 * card, and much for a valid one). `undefined` when fewer than two or more than
 * {@link MAX_SINGLE_CHANGES} controls differ.
 *
 * @example
 * const effects = await attributeChanges(await runTrace({ condition: 'malformed' }), await runTrace({ maxAgeSeconds: 30 }));
 * effects?.map((e) => e.sentence);
 * // ["Endpoint / card condition Malformed JSON → Healthy alone: 3 network requests instead of 5, 5 accepted instead of 0.",
 * //  "Cache max-age 10 s → 30 s alone changes no decision (the same 5 network requests, the same 0 accepted)."]
 */
export async function attributeChanges(
  baseline: TraceResult,
  current: TraceResult,
  run: (inputs: TraceInputs) => Promise<TraceResult> = runTrace,
): Promise<readonly SingleChangeEffect[] | undefined> {
  const fields = differingInputs(baseline, current).map((c) => c.field);
  if (fields.length < 2 || fields.length > MAX_SINGLE_CHANGES) return undefined;
  const runs = await Promise.all(fields.map((f) => run(singleChangeInputs(baseline, current, f))));
  return fields.map((f, i) => singleChangeEffect(baseline, runs[i] as TraceResult, current, f));
}
