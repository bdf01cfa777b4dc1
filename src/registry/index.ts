/**
 * The agent registry: agent specs with factories (recipes, never shared instances),
 * whole-registry validation that reports every problem, fresh and verified ADK agent trees,
 * remote specs from cached cards (no network at build time), and registry versions swapped in
 * only after every root built.
 *
 * This module imports `@google/adk` at runtime (`RemoteA2AAgent`).
 *
 * @module
 */
export { AgentRegistry } from './agent-registry.js';
export { AGENT_NAME_PATTERN, RESERVED_AGENT_NAME } from './agent-spec.js';
export type { AgentSpec, AgentFactory } from './agent-spec.js';
export { verifyTree } from './verify-tree.js';
export { remoteSpec } from './remote-spec.js';
export type { RemoteSpecOptions } from './remote-spec.js';
export { RegistryHolder } from './registry-holder.js';
export type { RegistrySwapResult } from './registry-holder.js';
