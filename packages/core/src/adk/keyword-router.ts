/**
 * The offline root's router: deterministic, no model, no card text. It picks the specialist
 * whose reviewed vocabulary (tag words, and the reviewed examples and keywords configuration
 * gives for each tag) best matches the words of the user's message.
 */
import type { SnapshotAgent } from '../snapshot/index.js';
import { compareLocalNames } from '../local-name.js';

/** Reviewed routing hints for one tag (from configuration, never from a card). */
export interface RouteHints {
  readonly tag: string;
  readonly keywords?: readonly string[];
  readonly examples?: readonly string[];
}

export interface RouteDecision {
  readonly agent: string | undefined;
  readonly score: number;
  readonly matched: readonly string[];
  /** True when no agent's vocabulary matched and `agent` is the fallback. */
  readonly fallback: boolean;
}

const STOP = new Set(['the', 'a', 'an', 'is', 'my', 'i', 'to', 'of', 'and', 'or', 'for', 'on', 'in', 'it', 'me', 'with', 'what', 'how', 'can', 'you', 'please', 'do', 'does', 'this', 'that']);

/** Lower-case word stems: `Refunds?` → `refund`. Deliberately simple and predictable. */
export function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOP.has(w)).map(stem);
}

function stem(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/**
 * The agent that answers what no vocabulary matches: the configured `fallback` when the snapshot
 * has it, else the first critical agent, else the first by name; undefined for no agents.
 */
export function defaultAgent(agents: readonly Pick<SnapshotAgent, 'localName' | 'critical'>[], fallback?: string): string | undefined {
  if (fallback !== undefined && agents.some((a) => a.localName === fallback)) return fallback;
  return [...agents].sort((a, b) => Number(b.critical) - Number(a.critical) || compareLocalNames(a.localName, b.localName))[0]?.localName;
}

/** Whether `name` wins a tie against `other`: the better record, then the name first in code-unit order. */
function before(name: string, other: string | undefined, record: ((localName: string) => number) | undefined): boolean {
  if (other === undefined) return true;
  if (record !== undefined) {
    const a = record(name);
    const b = record(other);
    if (a !== b) return a > b;
  }
  return name < other;
}

/**
 * Builds the router over a snapshot's agents. Ties go to critical agents, then (with `record`,
 * read at each decision) to the agent with the better measured record of real calls, then by name; a
 * message that matches nothing goes to the {@link defaultAgent} (`fallback: true` in the
 * decision, so the caller can say so), or to no agent when `fallback` is `false`.
 *
 * @example
 * const route = keywordRouter(snapshot.agents, [{ tag: 'warranty', keywords: ['guarantee'] }]);
 * route('Is my laptop still under warranty?').agent // 'warranty_agent'
 */
export function keywordRouter(
  agents: readonly Pick<SnapshotAgent, 'localName' | 'tags' | 'critical'>[],
  hints: readonly RouteHints[],
  fallback?: string | false,
  record?: (localName: string) => number,
): (message: string) => RouteDecision {
  const otherwise = fallback === false ? undefined : defaultAgent(agents, fallback);
  const byTag = new Map(hints.map((h) => [h.tag, h]));
  const vocab = agents.map((a) => {
    const terms = new Set<string>();
    for (const tag of a.tags) {
      for (const w of words(tag.replace(/[_-]/g, ' '))) terms.add(w);
      const h = byTag.get(tag);
      for (const k of h?.keywords ?? []) for (const w of words(k)) terms.add(w);
      for (const e of h?.examples ?? []) for (const w of words(e)) terms.add(w);
    }
    return { agent: a, terms };
  });
  return (message) => {
    const said = new Set(words(message));
    let best: RouteDecision = { agent: undefined, score: 0, matched: [], fallback: false };
    let bestCritical = false;
    for (const { agent, terms } of vocab) {
      const matched = [...said].filter((w) => terms.has(w));
      const score = matched.length;
      const better =
        score > best.score ||
        (score === best.score && score > 0 && ((agent.critical && !bestCritical) || (agent.critical === bestCritical && before(agent.localName, best.agent, record))));
      if (better) {
        best = { agent: agent.localName, score, matched, fallback: false };
        bestCritical = agent.critical;
      }
    }
    return best.agent === undefined && otherwise !== undefined ? { agent: otherwise, score: 0, matched: [], fallback: true } : best;
  };
}
