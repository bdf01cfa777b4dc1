/**
 * {@link remoteAgentFor}: one entry point that picks the right remote agent for a card.
 *
 * - The card has an A2A 0.3 interface the policy admits (a 0.3 peer, or a 1.0 peer that also
 *   serves 0.3): ADK's own `RemoteA2AAgent`, given the 0.3 card object from `toAdkCard` (never a
 *   URL, so nothing is fetched on the request path) and a 0.3 `ClientFactory` from ADK's own
 *   SDK copy whose transports use the policy fetch.
 * - Otherwise (a peer that serves only A2A 1.0): a {@link V1RemoteAgent}.
 *
 * @module
 */
import { RemoteA2AAgent } from '@google/adk';
import type { BaseAgent, RemoteA2AAgentConfig } from '@google/adk';
import type { AgentCardModel, AdkAgentCard } from '../../card/index.js';
import { toAdkCard } from '../../card/index.js';
import { DiscoveryError } from '../../errors.js';
import type { HostPolicy } from '../../fetch/index.js';
import { adkA2aClient } from './adk-a2a-client.js';
import type { AdkClientFactory } from './adk-a2a-client.js';
import { stripAdkMetadataCallback } from './adk-metadata.js';
import { createPolicyFetch } from './policy-fetch.js';
import type { OriginCredentials } from './policy-fetch.js';
import { V1RemoteAgent, usableV1Interfaces } from './v1-remote-agent.js';

/** Transports ADK's 0.3 client factory can build. */
const ADK_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

/** Inputs of {@link remoteAgentFor}. */
export interface RemoteAgentOptions {
  /** The local agent name (from our configuration, never from the card). */
  name: string;
  /** The reviewed description (from our configuration, never from the card). */
  description: string;
  /** The peer's card, as parsed and normalized by `parseAgentCard`. */
  card: AgentCardModel;
  /** The allowlist every request goes through. */
  policy: HostPolicy;
  /** Let ADK's `adk_app_name`, `adk_user_id`, `adk_session_id` reach the peer. Default false. */
  allowAdkMetadata?: boolean;
  /** Per-origin credentials for the default policy fetch (ignored when `fetchImpl` is given). */
  credentials?: OriginCredentials;
  /** Headers deadline of the default policy fetch (ignored when `fetchImpl` is given). */
  timeoutMs?: number;
  /**
   * The `fetch` both SDK clients use. Default: a new {@link createPolicyFetch} for this agent.
   * Pass one shared policy fetch to pool connections across a tree (and close it with the tree).
   */
  fetchImpl?: typeof fetch;
}

/** One transport of a 0.3 card, as ADK's 0.3 `ClientFactory` reads it. */
export interface AdkCardTransport {
  transport: string;
  url: string;
}

/**
 * The transports of a 0.3 card exactly as the 0.3 `ClientFactory.createFromAgentCard` maps
 * them: `preferredTransport` (default JSONRPC) → `url`, then each `additionalInterfaces` entry,
 * a later entry for the same transport (case-insensitive) replacing the earlier URL.
 */
export function adkCardTransports(card: Readonly<AdkAgentCard>): AdkCardTransport[] {
  const map = new Map<string, AdkCardTransport>();
  const put = (transport: string, url: string): void => {
    map.set(transport.toUpperCase(), { transport: transport.toUpperCase(), url });
  };
  put(card.preferredTransport ?? 'JSONRPC', card.url);
  for (const i of card.additionalInterfaces ?? []) put(i.transport, i.url);
  return [...map.values()];
}

/**
 * A 0.3 `ClientFactory` (ADK's own SDK copy) whose JSON-RPC and REST transports use `fetchImpl`.
 * `preferredTransports` steers the choice to admitted interfaces. No I/O.
 *
 * @example new RemoteA2AAgent({ name, description, agentCard, clientFactory: createAdkClientFactory({ fetchImpl }) })
 */
export function createAdkClientFactory(options: { fetchImpl: typeof fetch; preferredTransports?: readonly string[] }): AdkClientFactory {
  const sdk = adkA2aClient();
  return new sdk.ClientFactory({
    transports: [new sdk.JsonRpcTransportFactory({ fetchImpl: options.fetchImpl }), new sdk.RestTransportFactory({ fetchImpl: options.fetchImpl })],
    ...(options.preferredTransports !== undefined && options.preferredTransports.length > 0 && { preferredTransports: [...options.preferredTransports] }),
  });
}

/**
 * Builds the remote agent for a card: ADK's `RemoteA2AAgent` when the card has an admitted
 * A2A 0.3 interface, else a {@link V1RemoteAgent}. Both send every request through the host
 * policy (refused before any I/O, no redirects, guarded DNS) and strip ADK's identifiers from
 * message metadata unless `allowAdkMetadata` is set. No network I/O happens here.
 *
 * @throws DiscoveryError (stage `build`): `ERR_HOST_NOT_ALLOWED` / `ERR_INSECURE_URL` when the
 *   policy refuses every interface either client could use; `ERR_UNSUITABLE` when the card has
 *   no JSONRPC or HTTP+JSON interface in A2A 0.3 or 1.x. ADK's own name checks still throw
 *   plain errors (e.g. an invalid name).
 * @example
 * const billing = remoteAgentFor({ name: 'billing', description: 'Answers billing questions.', card, policy, fetchImpl: shared });
 */
export function remoteAgentFor(options: RemoteAgentOptions): BaseAgent {
  const { name, description, card, policy } = options;
  const policyFetch = (): typeof fetch =>
    options.fetchImpl ??
    createPolicyFetch({
      policy,
      ...(options.credentials !== undefined && { credentials: options.credentials }),
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    });

  const adk = toAdkCard(card);
  const refused03: string[] = [];
  if (adk.kind === 'adk') {
    const transports = adkCardTransports(adk.card).filter((t) => ADK_BINDINGS.has(t.transport));
    const admitted = transports.filter((t) => policy.check(t.url).allowed);
    refused03.push(...transports.filter((t) => !admitted.includes(t)).map((t) => t.url));
    if (admitted.length > 0) {
      const config: RemoteA2AAgentConfig = {
        name,
        description,
        agentCard: adk.card,
        clientFactory: createAdkClientFactory({ fetchImpl: policyFetch(), preferredTransports: admitted.map((t) => t.transport) }),
        ...(options.allowAdkMetadata !== true && { beforeRequestCallbacks: [stripAdkMetadataCallback] }),
      };
      return new RemoteA2AAgent(config);
    }
  }

  if (usableV1Interfaces(card, policy).length === 0 && refused03.length > 0) {
    const first = policy.check(refused03[0] as string);
    throw new DiscoveryError(first.allowed ? 'ERR_HOST_NOT_ALLOWED' : first.code, `remote agent ${name}: the host policy refuses every interface of the card (${refused03.join(', ')})`, {
      stage: 'build',
      url: refused03[0] as string,
    });
  }
  // Without a caller's fetch the V1RemoteAgent owns its policy fetch (released by its close()).
  return new V1RemoteAgent({
    name,
    description,
    card,
    policy,
    ...(options.fetchImpl !== undefined && { fetchImpl: options.fetchImpl }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.allowAdkMetadata !== undefined && { allowAdkMetadata: options.allowAdkMetadata }),
  });
}
