/**
 * ADK JS integration: one root per snapshot digest, sessions pinned to digests, the offline
 * routed root and the model root, and a runner helper over one shared session service.
 *
 * @module
 */
export { TreeFactory, SESSION_ID_PATTERN, checkSessionId } from './tree-factory.js';
export type { TreeFactoryOptions, PinnedSession, SessionPin, PinRelease } from './tree-factory.js';
export { SessionRunner } from './session-runner.js';
export { Foreground } from '../cache/foreground.js';
export type { BatchedAppends, RunTurnOptions, SessionRunnerOptions, TurnFailure, TurnResult } from './session-runner.js';
export { buildRootAgent, buildDomainRouter, explainRoute, ROUTER_INSTRUCTION, DOMAIN_ROUTER_INSTRUCTION } from './root-agent.js';
export { routingPlan } from './routing-plan.js';
export type { RoutingPlan, RoutePath } from './routing-plan.js';
export { contentText } from './content-text.js';
export type { RootKind } from './root-agent.js';
export { keywordRouter, defaultAgent, words } from './keyword-router.js';
export type { RouteHints, RouteDecision } from './keyword-router.js';
export { snapshotTreeBuilder } from './snapshot-tree.js';
export type { SnapshotTreeOptions, SnapshotTreeBuilder } from './snapshot-tree.js';
export {
  remoteAgentFor,
  createAdkClientFactory,
  adkCardTransports,
  V1RemoteAgent,
  usableV1Interfaces,
  createPolicyFetch,
  ADK_IDENTIFIER_METADATA_KEYS,
  stripAdkIdentifiers,
  stripAdkMetadataCallback,
} from './remote/index.js';
export type { RemoteAgentOptions, AdkCardTransport, V1RemoteAgentConfig, PolicyFetch, PolicyFetchOptions, OriginCredentials, CredentialsInput } from './remote/index.js';
export { AgentRegistry, AGENT_NAME_PATTERN, RESERVED_AGENT_NAME, verifyTree, RegistryHolder } from '../registry/index.js';
export type { AgentSpec, AgentFactory, RegistrySwapResult } from '../registry/index.js';
export { remoteSpec } from './remote-spec.js';
export type { RemoteSpecOptions } from './remote-spec.js';
export { devUiLoader, devUiAppName } from './dev-ui-loader.js';
export type { DevUiAgentLoader } from './dev-ui-loader.js';
