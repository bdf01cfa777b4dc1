/**
 * The service's own agent card: the orchestrator discovery builds, described for other agents.
 *
 * Two forms of one card, as `@a2a-js/sdk` 1.x serves them (its `agentCardHandler` with
 * `legacyCompat`): the A2A 1.0 card (`supportedInterfaces`, 1.0 security schemes) for a client
 * that asks with `A2A-Version: 1.0` or later, and for every other request the 0.3 card (`url`,
 * `protocolVersion`, `preferredTransport`, OpenAPI-style security) with the 1.0 interfaces
 * embedded — a 0.3 client reads its own fields and ignores the rest, a 1.x client sees
 * `supportedInterfaces` and reads it as 1.0. Both list one JSON-RPC endpoint twice, for 1.0 and
 * for 0.3 (the SDK's `duplicateInterfacesForLegacy`): the endpoint answers each version by the
 * request's `A2A-Version`.
 *
 * Skills are the routed domains (with routing domains) or the routed agents of the snapshot, each
 * with our reviewed text and tags — never a remote card's — and the vocabulary's examples and
 * keywords of its tags.
 */
import { AgentCard } from '@a2a-js/sdk';
import type { Snapshot } from 'a2a-discovery';
import { oidcDiscoveryUrl } from '../../auth/people-auth.js';

/** The path of the JSON-RPC endpoint (under `/api/`: the request guard and the role table apply). */
export const A2A_RPC_PATH = '/api/a2a';
/** The well-known card paths: A2A 0.3 and later, and the 0.2 one. */
export const AGENT_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;
/** Mastra's client's paths for an agent (its `apiPrefix` `/api`, the card's name as `agentId`): aliases of the card and the endpoint. */
export const MASTRA_CARD_PATH = '/api/.well-known/:agentId/agent-card.json';
export const MASTRA_RPC_PATH = `${A2A_RPC_PATH}/:agentId`;

/** Examples per skill at most (the vocabulary's examples first, then its keywords). */
const MAX_EXAMPLES = 8;

/** What the card says about the service's own authentication. */
interface CardAuth {
  /** A static bearer token (`server.tokenEnv` / `tokenFile`). */
  readonly token: boolean;
  /** People's OIDC tokens (`server.oidc`): the issuer URL. */
  readonly oidcIssuer?: string;
}

/** Inputs of {@link buildAgentCards}. */
export interface AgentCardOptions {
  readonly name: string;
  readonly description: string;
  /** The service's version (the card's `version`). */
  readonly version: string;
  /** The service's base URL, without a trailing slash (`https://discovery.example`). */
  readonly baseUrl: string;
  readonly auth: CardAuth;
  /** The reviewed vocabulary: each tag's examples and keywords become its skills' examples. */
  readonly vocabulary: ReadonlyArray<{ readonly tag: string; readonly keywords?: readonly string[]; readonly examples?: readonly string[] }>;
}

/** The two wire forms of the card (JSON objects). */
export interface AgentCards {
  /** A2A 1.0. */
  readonly v1: Record<string, unknown>;
  /** A2A 0.3 with the 1.0 interfaces embedded. */
  readonly v03: Record<string, unknown>;
}

interface Skill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
}

/** The skills of `snapshot`: one per routing domain when it has domains, else one per agent. */
function orchestratorSkills(snapshot: Snapshot, vocabulary: AgentCardOptions['vocabulary']): Skill[] {
  const hints = new Map(vocabulary.map((v) => [v.tag, [...(v.examples ?? []), ...(v.keywords ?? [])]]));
  const skill = (id: string, description: string, tags: readonly string[]): Skill => {
    const examples = [...new Set(tags.flatMap((t) => hints.get(t) ?? []))].slice(0, MAX_EXAMPLES);
    return { id, name: id, description, tags: [...tags], ...(examples.length > 0 && { examples }) };
  };
  if (snapshot.domains && snapshot.domains.length > 0) {
    return snapshot.domains.map((d) => {
      const tags = [...new Set(snapshot.agents.filter((a) => d.agents.includes(a.localName)).flatMap((a) => a.tags))];
      return skill(d.name, d.description, tags);
    });
  }
  return snapshot.agents.map((a) => skill(a.localName, a.description, a.tags));
}

/** Every reviewed tag the snapshot routes by, in agent order. */
export function orchestratorTags(snapshot: Snapshot): string[] {
  return [...new Set(snapshot.agents.flatMap((a) => a.tags))];
}

/**
 * The card of the orchestrator over `snapshot` (undefined: before the first snapshot, with no
 * skill at all). The 1.0 form is normalized through the SDK's `AgentCard` codec.
 *
 * @example
 * const { v1, v03 } = buildAgentCards(loop.current()!, { name: 'a2a-discovery', description: '…', version: '1.2.0', baseUrl: 'http://127.0.0.1:7340', auth: { token: false }, vocabulary: [] });
 */
export function buildAgentCards(snapshot: Snapshot | undefined, o: AgentCardOptions): AgentCards {
  const url = `${o.baseUrl}${A2A_RPC_PATH}`;
  const skills = snapshot ? orchestratorSkills(snapshot, o.vocabulary) : [];
  const interfaces = [
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
  ];
  const schemes = securitySchemes(o.auth);
  const common = { name: o.name, description: o.description, version: o.version, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills };
  const v1 = AgentCard.toJSON(
    AgentCard.fromJSON({
      ...common,
      supportedInterfaces: interfaces,
      capabilities: { streaming: true, pushNotifications: false },
      ...(schemes.length > 0 && {
        securitySchemes: Object.fromEntries(schemes.map((s) => [s.name, s.v1])),
        securityRequirements: schemes.map((s) => ({ schemes: { [s.name]: { list: [] } } })),
      }),
    }),
  ) as Record<string, unknown>;
  // The codec drops an empty list; A2A 1.0 requires `skills` (empty before the first snapshot).
  v1['skills'] ??= [];
  const v03: Record<string, unknown> = {
    ...common,
    protocolVersion: '0.3.0',
    url,
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: true, pushNotifications: false },
    ...(schemes.length > 0 && {
      securitySchemes: Object.fromEntries(schemes.map((s) => [s.name, s.v03])),
      security: schemes.map((s) => ({ [s.name]: [] })),
    }),
    supportedInterfaces: interfaces,
  };
  return { v1, v03 };
}

/** One scheme per way in, each its own requirement (a client meets one of them). */
function securitySchemes(auth: CardAuth): Array<{ name: string; v1: Record<string, unknown>; v03: Record<string, unknown> }> {
  const out: Array<{ name: string; v1: Record<string, unknown>; v03: Record<string, unknown> }> = [];
  if (auth.token) {
    const description = 'The service’s bearer token (server.tokenEnv / server.tokenFile).';
    out.push({ name: 'bearer', v1: { httpAuthSecurityScheme: { scheme: 'bearer', description } }, v03: { type: 'http', scheme: 'bearer', description } });
  }
  if (auth.oidcIssuer !== undefined) {
    const openIdConnectUrl = oidcDiscoveryUrl(auth.oidcIssuer);
    const description = 'A person’s OIDC access token from this issuer, with a role the service maps (server.oidc).';
    out.push({ name: 'oidc', v1: { openIdConnectSecurityScheme: { openIdConnectUrl, description } }, v03: { type: 'openIdConnect', openIdConnectUrl, description } });
  }
  return out;
}
