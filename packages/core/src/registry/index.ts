/**
 * The agent registry: agent specs with factories (recipes, never shared instances),
 * whole-registry validation that reports every problem, fresh and verified ADK agent trees,
 * and registry versions swapped in only after every root built. Remote specs from cached cards
 * (`remoteSpec`) live in the ADK module, beside the remote agents they build.
 *
 * This module imports only types from `@google/adk`.
 *
 * @module
 */
export { AgentRegistry } from './agent-registry.js';
export { AGENT_NAME_PATTERN, RESERVED_AGENT_NAME } from './agent-spec.js';
export type { AgentSpec, AgentFactory } from './agent-spec.js';
export { verifyTree } from './verify-tree.js';
export { RegistryHolder } from './registry-holder.js';
export type { RegistrySwapResult } from './registry-holder.js';
