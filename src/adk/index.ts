/**
 * ADK JS integration: one root per snapshot digest, sessions pinned to digests, the offline
 * routed root and the model root, and a runner helper over one shared session service.
 *
 * @module
 */
export { TreeFactory } from './tree-factory.js';
export type { TreeFactoryOptions, PinnedSession } from './tree-factory.js';
export { SessionRunner } from './session-runner.js';
export type { SessionRunnerOptions, TurnResult } from './session-runner.js';
export { buildRootAgent, ROUTER_INSTRUCTION } from './root-agent.js';
export type { RootKind } from './root-agent.js';
export { keywordRouter, words } from './keyword-router.js';
export type { RouteHints, RouteDecision } from './keyword-router.js';
