/**
 * `remoteSpec`: a registry spec for an agent reached over A2A, built from a card we already
 * hold. Its factory is {@link remoteAgentFor}: ADK's `RemoteA2AAgent` (given the cached card
 * object, never a URL, so nothing is fetched on the request path) for a peer with a 0.3
 * interface, our `V1RemoteAgent` for a 1.0-only peer. Either way every call goes through the
 * host policy (allowlist, guarded DNS, no redirects) and ADK's `adk_*` identifiers are stripped
 * from outgoing metadata unless `allowAdkMetadata` is set: the safe path is the only path.
 */
import type { AgentSpec } from '../registry/index.js';
import type { RemoteAgentOptions } from './remote/index.js';
import { remoteAgentFor } from './remote/index.js';

/**
 * Input of {@link remoteSpec}: {@link RemoteAgentOptions} (our name and reviewed description, the
 * cached card, the required host policy, an optional shared `fetchImpl`, credentials, timeout,
 * per-agent `transport` options, `allowAdkMetadata`) plus the spec's `version`, which defaults to the card's.
 */
export type RemoteSpecOptions = RemoteAgentOptions & { version?: string };

/**
 * A `remote` spec whose factory builds the remote agent from the cached card with **our** name
 * and reviewed description (`spec.name` / `spec.description` at build time). No I/O happens
 * here or when the tree is built.
 *
 * @example
 * const policyFetch = createPolicyFetch({ policy });
 * const warranty = remoteSpec({ name: 'warranty', description: 'Checks warranty status.', card: entry.card, policy, fetchImpl: policyFetch });
 * const root = AgentRegistry.of([routerSpec, warranty]).buildTree('router');
 * // ... when the tree is retired: await policyFetch.close();
 */
export function remoteSpec(options: RemoteSpecOptions): AgentSpec {
  const { version, ...agent } = options;
  return Object.freeze({
    name: agent.name,
    description: agent.description,
    version: version ?? agent.card.version,
    kind: 'remote',
    children: Object.freeze([]),
    // The registry may rename or re-describe the spec: the agent takes the spec's, at build time.
    factory: (spec: AgentSpec) => remoteAgentFor({ ...agent, name: spec.name, description: spec.description }),
  });
}
