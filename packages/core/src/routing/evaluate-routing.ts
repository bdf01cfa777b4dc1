/**
 * Routing accuracy as a number: runs a snapshot's root (and its domain sub-routers) on labelled
 * cases and reports accuracy overall and per expected label, a confusion table and every
 * fallback. The routed root is evaluated through the very routing plan its `RoutedAgent`s run
 * (deterministic, no I/O); a model root is run for real through ADK with its `BaseLlm`, over
 * stand-in leaves, so no peer is ever called.
 */
import type { BaseAgent, BaseLlm } from '@google/adk';
import { InMemoryRunner } from '@google/adk';
import type { RouteHints } from '../adk/index.js';
import { buildDomainRouter, buildRootAgent, routingPlan } from '../adk/index.js';
import { ROUTING_DEFAULTS } from '../rules/defaults.js';
import type { Snapshot } from '../snapshot/index.js';
import type { RoutingCase } from './cases.js';
import { StandInAgent } from './stand-in.js';

export type EvaluationRoot =
  | { readonly kind: 'routed'; readonly hints: readonly RouteHints[]; readonly fallback?: string | false }
  | { readonly kind: 'model'; readonly model: string | BaseLlm; readonly rootName?: string };

export interface EvaluateRoutingOptions {
  readonly root: EvaluationRoot;
  readonly cases: readonly RoutingCase[];
  /** The vocabulary's tags: an `expect` that is one of them is a tag, otherwise an agent name. */
  readonly tags: readonly string[];
  /** Default 0.9. */
  readonly minAccuracy?: number;
}

export interface CaseResult {
  readonly message: string;
  readonly expect: string;
  readonly expectKind: 'tag' | 'agent';
  readonly source: RoutingCase['source'];
  /** The agent that would answer; undefined when none would. */
  readonly routedTo?: string;
  /** Two-level trees: the sub-router the root chose. */
  readonly domain?: string;
  /** No vocabulary matched (routed root), or the model reached no agent: the default answered. */
  readonly fallback: boolean;
  readonly correct: boolean;
  /** A model run that failed. */
  readonly error?: string;
}

export interface LabelAccuracy {
  readonly label: string;
  readonly cases: number;
  readonly correct: number;
  readonly accuracy: number;
}

/** Column of the confusion table for a case no agent answered. */
export const NO_AGENT = '(none)';

export interface RoutingReport {
  readonly version: number;
  readonly digest: string;
  readonly levels: 1 | 2;
  readonly rootKind: 'routed' | 'model';
  readonly minAccuracy: number;
  /** `accuracy >= minAccuracy`. */
  readonly passed: boolean;
  /** Correct over evaluated cases; 1 when no case applies. */
  readonly accuracy: number;
  /** Cases given, evaluated (their tag or agent is in the snapshot), and correct. */
  readonly total: number;
  readonly evaluated: number;
  readonly correct: number;
  /** Per expected label (tag or agent), in first-seen order. */
  readonly perLabel: readonly LabelAccuracy[];
  /** Rows: expected labels; columns: the agents routed to (and {@link NO_AGENT}); cells: counts. */
  readonly confusion: { readonly rows: readonly string[]; readonly columns: readonly string[]; readonly counts: Readonly<Record<string, Readonly<Record<string, number>>>> };
  readonly fallbacks: readonly CaseResult[];
  readonly mistakes: readonly CaseResult[];
  /** Cases whose tag no agent of the snapshot serves, or whose agent it lacks: not counted. */
  readonly skipped: ReadonlyArray<{ readonly message: string; readonly expect: string; readonly reason: string }>;
  readonly results: readonly CaseResult[];
}

/**
 * Evaluates routing of `snapshot` on `options.cases`.
 *
 * @example
 * const report = await evaluateRouting(snapshot, { root: { kind: 'routed', hints }, cases, tags: vocabulary.map((v) => v.tag) });
 * report.accuracy; // 0.95
 */
export async function evaluateRouting(snapshot: Snapshot, options: EvaluateRoutingOptions): Promise<RoutingReport> {
  const tags = new Set(options.tags);
  const agents = new Map(snapshot.agents.map((a) => [a.localName, a]));
  const servedTags = new Set(snapshot.agents.flatMap((a) => a.tags));
  const skipped: Array<{ message: string; expect: string; reason: string }> = [];
  const applicable: Array<RoutingCase & { expectKind: 'tag' | 'agent' }> = [];
  for (const c of options.cases) {
    if (tags.has(c.expect)) {
      if (servedTags.has(c.expect)) applicable.push({ ...c, expectKind: 'tag' });
      else skipped.push({ message: c.message, expect: c.expect, reason: `no agent of snapshot v${snapshot.version} serves tag ${c.expect}` });
    } else if (agents.has(c.expect)) applicable.push({ ...c, expectKind: 'agent' });
    else skipped.push({ message: c.message, expect: c.expect, reason: `${c.expect} is neither a vocabulary tag nor an agent of snapshot v${snapshot.version}` });
  }

  const route = options.root.kind === 'routed' ? routedRouter(snapshot, options.root) : await modelRouter(snapshot, options.root);
  const results: CaseResult[] = [];
  for (const c of applicable) {
    const r = await route(c.message);
    const routed = r.agent !== undefined ? agents.get(r.agent) : undefined;
    const correct = routed !== undefined && (c.expectKind === 'agent' ? routed.localName === c.expect : routed.tags.includes(c.expect));
    results.push({
      message: c.message,
      expect: c.expect,
      expectKind: c.expectKind,
      source: c.source,
      ...(r.agent !== undefined && { routedTo: r.agent }),
      ...(r.domain !== undefined && { domain: r.domain }),
      fallback: r.fallback,
      correct,
      ...(r.error !== undefined && { error: r.error }),
    });
  }
  return report(snapshot, options, results, skipped);
}

interface Routed {
  agent: string | undefined;
  domain?: string;
  fallback: boolean;
  error?: string;
}

function routedRouter(snapshot: Snapshot, root: Extract<EvaluationRoot, { kind: 'routed' }>): (message: string) => Routed {
  const plan = routingPlan(snapshot, root.hints, root.fallback);
  return (message) => {
    const r = plan.route(message);
    return { agent: r.agent, fallback: r.fallback, ...(r.domain !== undefined && { domain: r.domain }) };
  };
}

/**
 * A model root, run for real: the root and sub-routers as the tree builder makes them, with the
 * configured `BaseLlm`, over stand-in leaves. The answer is the first leaf that spoke.
 */
async function modelRouter(snapshot: Snapshot, root: Extract<EvaluationRoot, { kind: 'model' }>): Promise<(message: string) => Promise<Routed>> {
  const kind = { kind: 'model' as const, model: root.model };
  const leaf = (name: string): BaseAgent => new StandInAgent({ name, description: snapshot.agents.find((a) => a.localName === name)?.description ?? name });
  const domainOf = new Map((snapshot.domains ?? []).flatMap((d) => d.agents.map((a) => [a, d.name] as const)));
  const build = (): BaseAgent => {
    const children = snapshot.domains?.length
      ? snapshot.domains.map((d) => buildDomainRouter(d.name, snapshot, d.agents.map(leaf), kind))
      : snapshot.agents.map((a) => leaf(a.localName));
    return buildRootAgent(root.rootName ?? 'orchestrator', snapshot, children, kind);
  };
  const leaves = new Set(snapshot.agents.map((a) => a.localName));
  return async (message) => {
    // A fresh tree and runner per case: no history carries over between cases.
    const runner = new InMemoryRunner({ agent: build(), appName: 'routing_eval' });
    try {
      for await (const ev of runner.runEphemeral({ userId: 'eval', newMessage: { role: 'user', parts: [{ text: message }] } })) {
        if (ev.author !== undefined && leaves.has(ev.author)) {
          const domain = domainOf.get(ev.author);
          return { agent: ev.author, fallback: false, ...(domain !== undefined && { domain }) };
        }
        if (ev.errorMessage) return { agent: undefined, fallback: true, error: ev.errorMessage };
      }
      return { agent: undefined, fallback: true };
    } catch (err) {
      return { agent: undefined, fallback: true, error: err instanceof Error ? err.message : String(err) };
    }
  };
}

function report(
  snapshot: Snapshot,
  options: EvaluateRoutingOptions,
  results: CaseResult[],
  skipped: Array<{ message: string; expect: string; reason: string }>,
): RoutingReport {
  const minAccuracy = options.minAccuracy ?? ROUTING_DEFAULTS.minAccuracy;
  const correct = results.filter((r) => r.correct).length;
  const accuracy = results.length === 0 ? 1 : correct / results.length;
  const byLabel = new Map<string, { cases: number; correct: number }>();
  const rows: string[] = [];
  const columns = new Set<string>();
  const counts: Record<string, Record<string, number>> = {};
  for (const r of results) {
    let l = byLabel.get(r.expect);
    if (!l) {
      byLabel.set(r.expect, (l = { cases: 0, correct: 0 }));
      rows.push(r.expect);
      counts[r.expect] = {};
    }
    l.cases++;
    if (r.correct) l.correct++;
    const col = r.routedTo ?? NO_AGENT;
    columns.add(col);
    counts[r.expect]![col] = (counts[r.expect]![col] ?? 0) + 1;
  }
  const cols = [...columns].filter((c) => c !== NO_AGENT).sort();
  if (columns.has(NO_AGENT)) cols.push(NO_AGENT);
  return {
    version: snapshot.version,
    digest: snapshot.digest,
    levels: snapshot.domains?.length ? 2 : 1,
    rootKind: options.root.kind,
    minAccuracy,
    passed: accuracy >= minAccuracy,
    accuracy,
    total: options.cases.length,
    evaluated: results.length,
    correct,
    perLabel: rows.map((label) => {
      const l = byLabel.get(label)!;
      return { label, cases: l.cases, correct: l.correct, accuracy: l.correct / l.cases };
    }),
    confusion: { rows, columns: cols, counts },
    fallbacks: results.filter((r) => r.fallback),
    mistakes: results.filter((r) => !r.correct),
    skipped,
    results,
  };
}

/** The report as text, for the command line and logs. */
export function formatRoutingReport(r: RoutingReport): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines: string[] = [];
  lines.push(`routing of snapshot v${r.version} ${r.digest.slice(0, 12)} (${r.levels} level${r.levels === 2 ? 's' : ''}, ${r.rootKind} root)`);
  lines.push(`accuracy ${pct(r.accuracy)} (${r.correct} of ${r.evaluated} cases${r.skipped.length > 0 ? `, ${r.skipped.length} skipped` : ''}); threshold ${pct(r.minAccuracy)}: ${r.passed ? 'pass' : 'FAIL'}`);
  if (r.perLabel.length > 0) {
    lines.push('', 'per tag or agent:');
    const w = Math.max(...r.perLabel.map((l) => l.label.length));
    for (const l of r.perLabel) lines.push(`  ${l.label.padEnd(w)}  ${pct(l.accuracy).padStart(6)}  ${l.correct}/${l.cases}`);
    lines.push('', 'confusion (rows: expected; columns: routed to):');
    const first = Math.max(8, ...r.confusion.rows.map((x) => x.length));
    lines.push(`  ${''.padEnd(first)}  ${r.confusion.columns.map((c) => c.padStart(Math.max(3, c.length))).join('  ')}`);
    for (const row of r.confusion.rows) {
      lines.push(`  ${row.padEnd(first)}  ${r.confusion.columns.map((c) => String(r.confusion.counts[row]?.[c] ?? 0).padStart(Math.max(3, c.length))).join('  ')}`);
    }
  }
  const show = (c: CaseResult) =>
    `  ${JSON.stringify(c.message)} expects ${c.expect} → ${c.routedTo ?? NO_AGENT}${c.domain !== undefined ? ` (via ${c.domain})` : ''}${c.error !== undefined ? ` [${c.error}]` : ''}`;
  if (r.fallbacks.length > 0) lines.push('', `fallbacks (${r.fallbacks.length}): no vocabulary matched, the default agent answered`, ...r.fallbacks.map(show));
  const wrong = r.mistakes.filter((m) => !m.fallback);
  if (wrong.length > 0) lines.push('', `misrouted (${wrong.length}):`, ...wrong.map(show));
  if (r.skipped.length > 0) lines.push('', `skipped (${r.skipped.length}):`, ...r.skipped.map((s) => `  ${JSON.stringify(s.message)} expects ${s.expect}: ${s.reason}`));
  return lines.join('\n');
}
