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
import type { RouteHints } from './keyword-router.js';
import { keywordRouter } from './keyword-router.js';

export type RootKind =
  | { readonly kind: 'routed'; readonly hints?: readonly RouteHints[]; readonly fallback?: string }
  | { readonly kind: 'model'; readonly model: string | BaseLlm; readonly instruction?: string };

/** The instruction of a model root: ours, fixed, and free of card text. */
export const ROUTER_INSTRUCTION =
  'You are an orchestrator. Route each request to the one specialist whose description fits it, using transfer_to_agent. ' +
  'If none fits, say that no specialist is available.';

/**
 * Builds the root agent for `snapshot` over already built specialists (in snapshot order).
 *
 * @example
 * const root = buildRootAgent('orchestrator', snapshot, specialists, { kind: 'routed', hints });
 */
export function buildRootAgent(name: string, snapshot: Snapshot, specialists: BaseAgent[], kind: RootKind): BaseAgent {
  const description = `Orchestrator over snapshot v${snapshot.version} (${snapshot.digest.slice(0, 12)}).`;
  if (kind.kind === 'model') {
    return new LlmAgent({ name, description, model: kind.model, instruction: kind.instruction ?? ROUTER_INSTRUCTION, subAgents: specialists });
  }
  const route = keywordRouter(snapshot.agents, kind.hints ?? [], kind.fallback);
  const fallback = [...snapshot.agents].sort((a, b) => Number(b.critical) - Number(a.critical) || (a.localName < b.localName ? -1 : 1))[0]?.localName;
  return new RoutedAgent({
    name,
    description,
    agents: specialists,
    router: (agents, context, errorContext) => {
      // After a failure, do not retry another specialist with the same request: surface it.
      if (errorContext) return undefined;
      const text = (context.userContent?.parts ?? []).map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join(' ');
      const decision = route(text).agent ?? fallback;
      return decision !== undefined && decision in agents ? decision : undefined;
    },
  });
}
