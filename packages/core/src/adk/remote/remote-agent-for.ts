/**
 * {@link remoteAgentFor}: one entry point that picks the right remote agent for a card.
 *
 * The interface is the card's first (A2A 1.0 §8.3.2: `supportedInterfaces` is in preference
 * order) that a client here speaks and the policy admits, of the configured tenant if any
 * (`preferredInterface`):
 * - an A2A 0.2/0.3 interface: ADK's own `RemoteA2AAgent`, given the 0.3 card object from
 *   `toAdkCard` narrowed to that interface (never a URL, so nothing is fetched on the request
 *   path) and a 0.3 `ClientFactory` from ADK's own SDK copy whose transports use the policy fetch;
 * - an A2A 1.x interface: a {@link V1RemoteAgent}.
 *
 * @module
 */
import { RemoteA2AAgent } from '@google/adk';
import type { BaseAgent, RemoteA2AAgentConfig } from '@google/adk';
import type { AgentCardModel, AdkAgentCard } from '../../card/index.js';
import { preferredInterface, reviewedInterface, toAdkCard } from '../../card/index.js';
import { DiscoveryError } from '../../errors.js';
import type { HostPolicy } from '../../fetch/index.js';
import { tracedA2aClient } from './a2a-client-span.js';
import { adkA2aClient } from './adk-a2a-client.js';
import type { AdkClientFactory } from './adk-a2a-client.js';
import { stripAdkMetadataCallback } from './adk-metadata.js';
import { createPolicyFetch } from './policy-fetch.js';
import type { CredentialsInput } from './policy-fetch.js';
import type { TransportOptions } from '../../sources/index.js';
import { agentFetch } from './agent-fetch.js';
import { V1RemoteAgent } from './v1-remote-agent.js';

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
  credentials?: CredentialsInput;
  /** Headers deadline of the default policy fetch (ignored when `fetchImpl` is given). */
  timeoutMs?: number;
  /**
   * How this agent is called (from its static entry or registry record): `streaming: false`,
   * extra `headers` (to its interface's origin only), `timeoutMs` (headers deadline of each call),
   * `tenant` (the card's interface of that tenant).
   */
  transport?: TransportOptions;
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
 * Builds the remote agent for a card, calling the interface {@link preferredInterface} chooses:
 * the first in the card's order (A2A 1.0 §8.3.2) that a client here speaks and the policy admits,
 * of `transport.tenant` when set. A 0.2/0.3 interface gets ADK's `RemoteA2AAgent`, a 1.x one a
 * {@link V1RemoteAgent}. The chosen interface's `tenant` is echoed on every 1.x call, and every
 * call carries `A2A-Version` (`0.3` from ADK's client, `1.0` from the 1.x client). Both send
 * every request through the host policy (refused before any I/O, no redirects, guarded DNS) and
 * strip ADK's identifiers from message metadata unless `allowAdkMetadata` is set. No network
 * I/O happens here.
 *
 * @throws DiscoveryError (stage `build`): `ERR_HOST_NOT_ALLOWED` / `ERR_INSECURE_URL` when the
 *   policy refuses every interface either client could use; `ERR_UNSUITABLE` when the card has
 *   no JSONRPC or HTTP+JSON interface in A2A 0.3 or 1.x (of `transport.tenant`, when set). ADK's
 *   own name checks still throw plain errors (e.g. an invalid name).
 * @example
 * const billing = remoteAgentFor({ name: 'billing', description: 'Answers billing questions.', card, policy, fetchImpl: shared });
 */
export function remoteAgentFor(options: RemoteAgentOptions): BaseAgent {
  const { name, description, policy, transport } = options;
  const tenant = transport?.tenant === undefined ? {} : { tenant: transport.tenant };
  // A static entry's interfaceUrl replaces an unroutable interface (0.0.0.0, ::) here, once, for
  // both clients; the host policy then judges the replacement like any interface URL.
  const { card } = reviewedInterface(options.card, { ...tenant, ...(transport?.interfaceUrl !== undefined && { interfaceUrl: transport.interfaceUrl }) });
  const chosen = preferredInterface(card, policy, tenant);
  if (chosen === undefined) throw noInterfaceError(name, card, policy, transport?.tenant);

  if (chosen.client === 'adk-0.3') {
    const adk = toAdkCard(card);
    if (adk.kind !== 'adk') throw new DiscoveryError('ERR_UNSUITABLE', `remote agent ${name}: ${adk.reason}`, { stage: 'build' });
    const base =
      options.fetchImpl ??
      createPolicyFetch({
        policy,
        ...(options.credentials !== undefined && { credentials: options.credentials }),
        ...((transport?.timeoutMs ?? options.timeoutMs) !== undefined && { timeoutMs: transport?.timeoutMs ?? options.timeoutMs }),
      });
    // Only the chosen interface, so ADK's 0.3 client factory cannot pick another one.
    const agentCard: AdkAgentCard = {
      ...adk.card,
      url: chosen.url,
      preferredTransport: chosen.binding,
      additionalInterfaces: [{ url: chosen.url, transport: chosen.binding }],
      // ADK streams unless the card says `streaming: false`.
      capabilities: { ...adk.card.capabilities, ...(transport?.streaming === false && { streaming: false }) },
    };
    const fetchImpl = agentFetch(base, {
      name,
      version: '0.3',
      origin: new URL(chosen.url).origin,
      ...(transport?.headers !== undefined && { headers: transport.headers }),
      ...(transport?.timeoutMs !== undefined && { timeoutMs: transport.timeoutMs }),
    });
    const clientFactory = createAdkClientFactory({ fetchImpl, preferredTransports: [chosen.binding] });
    // Every call of ADK's client in an A2A client span (a2a-client-span.ts).
    const create = clientFactory.createFromAgentCard.bind(clientFactory);
    const target = { localName: name, card, url: chosen.url, protocolVersion: chosen.protocolVersion, tenant: chosen.tenant };
    clientFactory.createFromAgentCard = async (...args) => tracedA2aClient(await create(...args), target);
    const config: RemoteA2AAgentConfig = {
      name,
      description,
      agentCard,
      clientFactory,
      ...(options.allowAdkMetadata !== true && { beforeRequestCallbacks: [stripAdkMetadataCallback] }),
    };
    return new RemoteA2AAgent(config);
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
    ...(transport !== undefined && { transport }),
  });
}

/** Why no interface of the card can be called: the tenant, the policy, or the card itself. */
function noInterfaceError(name: string, card: AgentCardModel, policy: HostPolicy, tenant: string | undefined): DiscoveryError {
  const spoken = preferredInterface(card, undefined, tenant === undefined ? {} : { tenant });
  if (spoken !== undefined) {
    const refused = card.supportedInterfaces.filter((i) => ADK_BINDINGS.has(i.protocolBinding.toUpperCase()) && (tenant === undefined || i.tenant === tenant)).map((i) => i.url);
    const first = policy.check(spoken.url);
    return new DiscoveryError(first.allowed ? 'ERR_HOST_NOT_ALLOWED' : first.code, `remote agent ${name}: the host policy refuses every interface of the card (${[...new Set(refused)].join(', ')})`, {
      stage: 'build',
      url: spoken.url,
    });
  }
  if (tenant !== undefined && preferredInterface(card) !== undefined) {
    const tenants = [...new Set(card.supportedInterfaces.map((i) => i.tenant).filter((t) => t !== undefined))];
    return new DiscoveryError('ERR_UNSUITABLE', `remote agent ${name}: the card has no interface of tenant ${JSON.stringify(tenant)} (tenants: ${tenants.length > 0 ? tenants.map((t) => JSON.stringify(t)).join(', ') : 'none'})`, { stage: 'build' });
  }
  const offered = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`).join(', ');
  return new DiscoveryError('ERR_UNSUITABLE', `remote agent ${name}: the card has no JSONRPC or HTTP+JSON interface in A2A 0.3 or 1.x (offers ${offered || 'none'})`, { stage: 'build' });
}
