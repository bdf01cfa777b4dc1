/**
 * How the offline (routed) tree of a snapshot routes a message, as a pure function: the same
 * keyword routers the `RoutedAgent`s run, at one level (root → agent) or two (root → domain
 * sub-router → agent). The tree builder and the routing evaluation both use it, so what is
 * measured is what is served.
 */
import type { Snapshot, SnapshotAgent } from '../snapshot/index.js';
import type { RouteDecision, RouteHints } from './keyword-router.js';
import { defaultAgent, keywordRouter } from './keyword-router.js';

/** Where a message goes: the domain (two-level trees) and the agent. */
export interface RoutePath extends RouteDecision {
  /** Two-level trees: the sub-router the root chose. */
  readonly domain?: string;
}

export interface RoutingPlan {
  /** 1: every agent under the root; 2: the root routes to one sub-router per domain. */
  readonly levels: 1 | 2;
  /** The whole path of a message, down to the agent. */
  route(message: string): RoutePath;
  /** The root's own decision: an agent (one level) or a domain's sub-router (two levels). */
  top(message: string): RouteDecision;
  /** A domain sub-router's decision (two levels only). */
  inDomain(domain: string, message: string): RouteDecision;
}

type PlanAgent = Pick<SnapshotAgent, 'localName' | 'tags' | 'critical' | 'domain'>;

/**
 * The routing plan of a snapshot's routed tree. `fallback` is the root's configured default agent
 * (`false`: none). At two levels the root's default is the domain holding the default agent, and
 * each sub-router's default is the default agent among its own agents. `record`: ties between
 * agents that fit equally go to the better measured record (higher is better).
 *
 * @example
 * routingPlan(snapshot, hints, 'billing_agent').route('Is serial 123 under warranty?')
 * // { domain: 'hardware', agent: 'warranty_agent', score: 2, matched: ['serial', 'warranty'], fallback: false }
 */
export function routingPlan(
  snapshot: { readonly agents: readonly PlanAgent[]; readonly domains?: Snapshot['domains'] },
  hints: readonly RouteHints[],
  fallback?: string | false,
  record?: (localName: string) => number,
): RoutingPlan {
  const domains = snapshot.domains ?? [];
  if (domains.length === 0) {
    const route = keywordRouter(snapshot.agents, hints, fallback, record);
    return {
      levels: 1,
      route,
      top: route,
      inDomain: () => ({ agent: undefined, score: 0, matched: [], fallback: false }),
    };
  }
  const byName = new Map(snapshot.agents.map((a) => [a.localName, a]));
  const members = new Map(domains.map((d) => [d.name, d.agents.map((n) => byName.get(n)).filter((a): a is PlanAgent => a !== undefined)]));
  // The root routes over one pseudo-agent per domain: the union of its agents' tags.
  const pseudo = domains.map((d) => {
    const agents = members.get(d.name)!;
    return { localName: d.name, tags: [...new Set(agents.flatMap((a) => a.tags))], critical: agents.some((a) => a.critical) };
  });
  const fallbackAgent = fallback === false ? undefined : defaultAgent(snapshot.agents, fallback);
  const fallbackDomain = fallbackAgent === undefined ? undefined : byName.get(fallbackAgent)?.domain;
  const top = keywordRouter(pseudo, hints, fallback === false || fallbackDomain === undefined ? false : fallbackDomain);
  const sub = new Map(
    domains.map((d) => {
      const agents = members.get(d.name)!;
      const own = fallback === false ? false : agents.some((a) => a.localName === fallbackAgent) ? fallbackAgent : undefined;
      return [d.name, keywordRouter(agents, hints, own, record)] as const;
    }),
  );
  const inDomain = (domain: string, message: string): RouteDecision =>
    sub.get(domain)?.(message) ?? { agent: undefined, score: 0, matched: [], fallback: false };
  return {
    levels: 2,
    top,
    inDomain,
    route(message) {
      const first = top(message);
      if (first.agent === undefined) return first;
      const second = inDomain(first.agent, message);
      return { ...second, domain: first.agent, fallback: first.fallback || second.fallback };
    },
  };
}
