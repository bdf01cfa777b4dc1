/**
 * `AgentSpec`: what the registry stores for one agent. A spec is a recipe, not an agent: it
 * names its children by registry name and carries a factory that builds a new ADK agent on
 * every call, so no agent object is ever shared between two trees.
 */
import type { BaseAgent } from '@google/adk';
import { LOCAL_NAME } from '../local-name.js';

/** ADK reserves this author name for end-user input in the event stream. */
export { RESERVED_AGENT_NAME } from '../local-name.js';

/**
 * The name rule for registered agents: lower snake case, 2 to 48 characters, starting with a
 * letter. Stricter than ADK JS's own rule (a Unicode identifier plus `$` and `-`), so the model
 * has exactly one spelling to reproduce in `transfer_to_agent`, and every name that passes is
 * also valid for ADK.
 */
export const AGENT_NAME_PATTERN: RegExp = LOCAL_NAME;

/**
 * Builds the agent for one tree position. It receives the spec it belongs to (use `spec.name`
 * and `spec.description`, so the registry stays the single source of both) and the children,
 * already built, in the order `spec.children` lists them. It must return a **new** agent named
 * `spec.name` with those children attached as its sub-agents.
 */
export type AgentFactory = (spec: AgentSpec, children: BaseAgent[]) => BaseAgent;

/**
 * One registered agent.
 *
 * @example
 * const refunds: AgentSpec = {
 *   name: 'refunds',
 *   description: 'Handles refund requests for orders placed in the last 90 days.',
 *   version: '3',
 *   kind: 'local',
 *   children: ['refund_order_lookup'],
 *   factory: (spec, children) =>
 *     new LlmAgent({ name: spec.name, description: spec.description, model, subAgents: children }),
 * };
 */
export interface AgentSpec {
  /** Unique in the registry; must match {@link AGENT_NAME_PATTERN} and not be `user`. */
  readonly name: string;
  /** Required: a parent LLM agent routes on its sub-agents' names and descriptions. */
  readonly description: string;
  /** Free-form version of the recipe (for humans and change logs). */
  readonly version: string;
  /** `remote` for agents reached over A2A (see `remoteSpec`), `local` otherwise. */
  readonly kind: 'local' | 'remote';
  /** Registry names of the children, in sub-agent order. */
  readonly children: readonly string[];
  readonly factory: AgentFactory;
}
