/**
 * `remoteSpec`: a registry spec for an agent reached over A2A, built from a card we already
 * hold. Its factory is {@link remoteAgentFor}: ADK's `RemoteA2AAgent` (given the cached card
 * object, never a URL, so nothing is fetched on the request path) for a peer with a 0.3
 * interface, our `V1RemoteAgent` for a 1.0-only peer. Either way every call goes through the
 * host policy (allowlist, guarded DNS, no redirects) and ADK's `adk_*` identifiers are stripped
 * from outgoing metadata unless `allowAdkMetadata` is set: the safe path is the only path.
 */
import type { AgentCardModel } from '../card/index.js';
import type { HostPolicy } from '../fetch/index.js';
import type { AgentSpec } from '../registry/index.js';
import type { OriginCredentials } from './remote/index.js';
import { remoteAgentFor } from './remote/index.js';

/** Input of {@link remoteSpec}. */
export interface RemoteSpecOptions {
  /** Our local name for the agent (the card's `name` is never used). */
  name: string;
  /** Our reviewed description; it reaches the parent's prompt. The card's text never does. */
  description: string;
  /** Version of the spec; defaults to the card's `version`. */
  version?: string;
  /** The cached, validated card (our 1.0 model, from `parseAgentCard` or the card cache). */
  card: AgentCardModel;
  /** The allowlist every call to the peer goes through. Required. */
  policy: HostPolicy;
  /**
   * One shared policy fetch (`createPolicyFetch`) for every remote agent, so connections are
   * pooled and closed once, by its owner. Without it each agent gets its own.
   */
  fetchImpl?: typeof fetch;
  /** Per-origin credentials (only for the default policy fetch). */
  credentials?: OriginCredentials;
  /** Headers deadline of the default policy fetch. */
  timeoutMs?: number;
  /** Let ADK's `adk_app_name`, `adk_user_id`, `adk_session_id` reach the peer. Default false. */
  allowAdkMetadata?: boolean;
}

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
  const { name, description, card, policy } = options;
  return Object.freeze({
    name,
    description,
    version: options.version ?? card.version,
    kind: 'remote',
    children: Object.freeze([]),
    factory: (spec: AgentSpec) =>
      remoteAgentFor({
        name: spec.name,
        description: spec.description,
        card,
        policy,
        ...(options.fetchImpl !== undefined && { fetchImpl: options.fetchImpl }),
        ...(options.credentials !== undefined && { credentials: options.credentials }),
        ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
        ...(options.allowAdkMetadata !== undefined && { allowAdkMetadata: options.allowAdkMetadata }),
      }),
  });
}
