/**
 * Remote agents for ADK JS trees, in both A2A protocol worlds, every request through our
 * {@link HostPolicy}:
 * - {@link remoteAgentFor} picks ADK's own `RemoteA2AAgent` (A2A 0.3, with a policy-bound
 *   0.3 client) or a {@link V1RemoteAgent} (A2A 1.0 only, over @a2a-js/sdk 1.x);
 * - {@link createPolicyFetch} is the `fetch` both SDK clients use;
 * - ADK's local identifiers are stripped from outgoing metadata unless allowed.
 *
 * @module
 */
export { remoteAgentFor, createAdkClientFactory, adkCardTransports } from './remote-agent-for.js';
export type { RemoteAgentOptions, AdkCardTransport } from './remote-agent-for.js';
export { V1RemoteAgent, usableV1Interfaces } from './v1-remote-agent.js';
export type { V1RemoteAgentConfig } from './v1-remote-agent.js';
export { createPolicyFetch } from './policy-fetch.js';
export type { PolicyFetch, PolicyFetchOptions, OriginCredentials, CredentialsInput } from './policy-fetch.js';
export { ADK_IDENTIFIER_METADATA_KEYS, stripAdkIdentifiers, stripAdkMetadataCallback } from './adk-metadata.js';
