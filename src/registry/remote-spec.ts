/**
 * `remoteSpec`: a registry spec for an agent reached over A2A, built from a card we already
 * hold. ADK's `RemoteA2AAgent` accepts a URL instead of a card and would then fetch it on the
 * first run, on the request path; it is always given the cached card object here, so building
 * a tree never touches the network and no turn can fail on a card fetch.
 */
import { RemoteA2AAgent } from '@google/adk';
import type { BaseAgent, RemoteA2AAgentConfig } from '@google/adk';
import type { AgentCardModel } from '../card/index.js';
import { toAdkCard } from '../card/index.js';
import type { Problem } from '../errors.js';
import type { AgentSpec } from './agent-spec.js';
import { registryError } from './registry-error.js';

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
  /**
   * ADK's 0.3 `ClientFactory` (custom fetch, auth, allowlist), passed through to
   * `RemoteA2AAgent`. Typed loosely because it comes from ADK's nested `@a2a-js/sdk` 0.3 copy
   * (or an alias of it); it must have a `createFromAgentCard` method.
   */
  clientFactory?: unknown;
  /**
   * ADK `beforeRequestCallbacks` (`(ctx, params) => void | Promise<void>`), passed through:
   * for instance to strip the `adk_*` session metadata ADK adds to every outgoing message.
   */
  beforeRequestCallbacks?: unknown[];
  /**
   * Builds the agent when the peer speaks only A2A 1.0 (ADK's 0.3 client cannot reach it),
   * e.g. an agent over the 1.x client. It receives the spec and must return a new agent named
   * `spec.name` on every call. Not used when the card offers 0.3 interfaces.
   */
  v1Agent?: (spec: AgentSpec) => BaseAgent;
}

/**
 * A `remote` spec whose factory builds a `RemoteA2AAgent` from the cached card, with **our**
 * name and reviewed description (`spec.name` / `spec.description` at build time). The card is
 * converted once, here, with `toAdkCard`; the factory performs no I/O and ADK's constructor
 * fetches nothing when given a card object. When the card lists only 1.0 interfaces the
 * factory calls `options.v1Agent`.
 *
 * @throws {DiscoveryError} `ERR_REGISTRY_INVALID`, stage `build`, when the card is 1.0-only and
 *   no `v1Agent` is given, or when `clientFactory` / `beforeRequestCallbacks` have the wrong shape.
 * @example
 * const result = parseAgentCard(cachedBytes, { hostPolicy });
 * const billing = remoteSpec({ name: 'billing', description: 'Answers invoice questions.', card: result.card! });
 * const registry = AgentRegistry.of([router, billing]);
 */
export function remoteSpec(options: RemoteSpecOptions): AgentSpec {
  const { name, description, card, clientFactory, beforeRequestCallbacks, v1Agent } = options;
  const problems: Problem[] = [];
  if (clientFactory !== undefined && typeof (clientFactory as { createFromAgentCard?: unknown })?.createFromAgentCard !== 'function') {
    problems.push({ path: 'clientFactory', message: `'${name}': clientFactory must be an A2A 0.3 ClientFactory (createFromAgentCard)` });
  }
  if (beforeRequestCallbacks !== undefined && (!Array.isArray(beforeRequestCallbacks) || !beforeRequestCallbacks.every((c) => typeof c === 'function'))) {
    problems.push({ path: 'beforeRequestCallbacks', message: `'${name}': beforeRequestCallbacks must be an array of functions` });
  }
  const adk = toAdkCard(card);
  if (adk.kind === 'v1-only' && v1Agent === undefined) {
    problems.push({
      path: 'card.supportedInterfaces',
      message: `'${name}': ${adk.reason}; ADK's RemoteA2AAgent cannot reach it, pass v1Agent (an agent over the A2A 1.x client)`,
    });
  }
  if (problems.length > 0) throw registryError(`Cannot make a remote spec for '${name}'`, problems, 'build');

  const factory =
    adk.kind === 'adk'
      ? (spec: AgentSpec): BaseAgent => {
          const config: RemoteA2AAgentConfig = {
            name: spec.name,
            description: spec.description,
            agentCard: adk.card as RemoteA2AAgentConfig['agentCard'],
            ...(clientFactory !== undefined && { clientFactory: clientFactory as RemoteA2AAgentConfig['clientFactory'] }),
            ...(beforeRequestCallbacks !== undefined && {
              beforeRequestCallbacks: [...beforeRequestCallbacks] as RemoteA2AAgentConfig['beforeRequestCallbacks'],
            }),
          };
          return new RemoteA2AAgent(config);
        }
      : (spec: AgentSpec): BaseAgent => v1Agent!(spec);

  return Object.freeze({
    name,
    description,
    version: options.version ?? card.version,
    kind: 'remote',
    children: Object.freeze([]),
    factory,
  });
}
