/**
 * The orchestrator root over a snapshot's specialists. Two kinds:
 *
 * - `routed` (the embedded default, no model key): ADK's `RoutedAgent` with the deterministic
 *   {@link keywordRouter} over reviewed tags, keywords and examples from our configuration.
 * - `model`: an `LlmAgent` that routes with `transfer_to_agent` over the specialists' reviewed
 *   descriptions, with our own instruction.
 *
 * Card text reaches neither: names and descriptions come from the snapshot's reviewed fields.
 */
import type { BaseAgent, BaseLlm } from '@google/adk';
import { LlmAgent, RoutedAgent } from '@google/adk';
import type { Snapshot } from '../snapshot/index.js';
import { contentText } from './content-text.js';
import type { RouteHints } from './keyword-router.js';
import type { RoutePath } from './routing-plan.js';
import { routingPlan } from './routing-plan.js';

export type RootKind =
  /** `fallback`: the local name answering what no vocabulary matches (default: first critical, then by name); `false`: none. */
  | {
      readonly kind: 'routed';
      readonly hints?: readonly RouteHints[];
      readonly fallback?: string | false;
      /**
       * The measured record of an agent's real calls (`CallHealth.score` of its base URL; higher is
       * better), read at each decision: among agents that fit a message equally, the better one answers.
       */
      readonly record?: (baseUrl: string) => number;
    }
  | { readonly kind: 'model'; readonly model: string | BaseLlm; readonly instruction?: string };

/** The instruction of a model root: ours, fixed, and free of card text. */
export const ROUTER_INSTRUCTION =
  'You are an orchestrator. Route each request to the one specialist whose description fits it, using transfer_to_agent. ' +
  'If none fits, say that no specialist is available.';

/** The instruction of a model domain sub-router (two-level trees): ours, fixed, free of card text. */
export const DOMAIN_ROUTER_INSTRUCTION =
  'You route requests within one domain. Transfer each request to the one specialist whose description fits it, using transfer_to_agent. ' +
  'If none fits, transfer back to your parent agent.';

/** The routed roots' routers, so a caller can say how a message was (or would be) routed. */
const routers = new WeakMap<BaseAgent, { route: (message: string) => RoutePath; version: number }>();

/**
 * How a routed root routes `message` (the same decision its router takes), with a notice when
 * no agent matched and the default agent answers. Undefined for model roots.
 *
 * @example
 * explainRoute(root, 'Is serial 123 under warranty?')?.notice
 * // 'no agent in snapshot v5 matched this request; answered by the default agent billing_agent'
 */
export function explainRoute(root: BaseAgent, message: string): (RoutePath & { notice?: string }) | undefined {
  const router = routers.get(root);
  if (!router) return undefined;
  const decision = router.route(message);
  if (!decision.fallback || decision.agent === undefined) return decision;
  return { ...decision, notice: `no agent in snapshot v${router.version} matched this request; answered by the default agent ${decision.agent}` };
}

/**
 * Builds the root agent for `snapshot` over already built children, in snapshot order: the
 * specialists, or, for a two-level snapshot (`snapshot.domains`), the domain sub-routers built
 * with {@link buildDomainRouter}.
 *
 * @example
 * const root = buildRootAgent('orchestrator', snapshot, specialists, { kind: 'routed', hints });
 */
export function buildRootAgent(name: string, snapshot: Snapshot, specialists: BaseAgent[], kind: RootKind): BaseAgent {
  const description = `Orchestrator over snapshot v${snapshot.version} (${snapshot.digest.slice(0, 12)}).`;
  if (kind.kind === 'model') {
    return new LlmAgent({ name, description, model: kind.model, instruction: kind.instruction ?? ROUTER_INSTRUCTION, subAgents: specialists });
  }
  const plan = routingPlan(snapshot, kind.hints ?? [], kind.fallback, recordOf(snapshot, kind.record));
  const root = new RoutedAgent({
    name,
    description,
    agents: specialists,
    router: (agents, context, errorContext) => {
      // After a failure, do not retry another specialist with the same request: surface it.
      if (errorContext) return undefined;
      const decision = plan.top(contentText(context.userContent, ' ')).agent;
      return decision !== undefined && decision in agents ? decision : undefined;
    },
  });
  routers.set(root, { route: (message) => plan.route(message), version: snapshot.version });
  return root;
}

/** The record of a snapshot's agents by local name, from a record by base URL. */
function recordOf(snapshot: Snapshot, record: ((baseUrl: string) => number) | undefined): ((localName: string) => number) | undefined {
  if (record === undefined) return undefined;
  const urls = new Map(snapshot.agents.map((a) => [a.localName, a.baseUrl]));
  return (name) => {
    const url = urls.get(name);
    return url === undefined ? 0 : record(url);
  };
}

/**
 * Builds the sub-router of one routing domain of a two-level snapshot, over its already built
 * specialists: a `RoutedAgent` over the domain's keyword router, or an `LlmAgent` with
 * {@link DOMAIN_ROUTER_INSTRUCTION} for a model root. Its description is the domain's reviewed one.
 */
export function buildDomainRouter(domain: string, snapshot: Snapshot, specialists: BaseAgent[], kind: RootKind): BaseAgent {
  const layout = snapshot.domains?.find((d) => d.name === domain);
  const description = layout?.description ?? `Routes the ${domain} domain.`;
  if (kind.kind === 'model') {
    return new LlmAgent({ name: domain, description, model: kind.model, instruction: DOMAIN_ROUTER_INSTRUCTION, subAgents: specialists });
  }
  const plan = routingPlan(snapshot, kind.hints ?? [], kind.fallback, recordOf(snapshot, kind.record));
  return new RoutedAgent({
    name: domain,
    description,
    agents: specialists,
    router: (agents, context, errorContext) => {
      if (errorContext) return undefined;
      const decision = plan.inDomain(domain, contentText(context.userContent, ' ')).agent;
      return decision !== undefined && decision in agents ? decision : undefined;
    },
  });
}
