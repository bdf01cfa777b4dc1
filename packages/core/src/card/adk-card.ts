/**
 * What ADK JS 2.0 needs: `RemoteA2AAgent` speaks A2A 0.3 through its own nested @a2a-js/sdk
 * 0.3 copy, so it must be handed a 0.3-shaped card object (never a URL: that would fetch on
 * the first run, on the request path).
 *
 * - A card published as 0.3 or 0.2, or a 1.0 "superset" card that also carries the 0.3 fields:
 *   the original JSON, untouched.
 * - A 1.0 card listing 0.3 interfaces (a 1.x server with legacy compatibility): a faithful
 *   conversion to the 0.3 shape over those interfaces.
 * - A 1.0 card with only 1.0 interfaces: ADK's 0.3 client cannot reach it; the result says so,
 *   and a 1.x client must be used instead.
 */
import type { RemoteA2AAgentConfig } from '@google/adk';
import type { AgentCardModel, AgentInterfaceModel, SecurityRequirementModel, SecuritySchemeModel } from './model.js';
import { deepFreeze } from './model.js';

/**
 * The A2A 0.3 agent card type ADK JS 2.0's `RemoteA2AAgent` accepts as `agentCard` (the type of
 * ADK's nested @a2a-js/sdk 0.3; a 1.x `AgentCard` is not assignable to it).
 */
export type AdkAgentCard = Exclude<RemoteA2AAgentConfig['agentCard'], string | undefined>;

export type AdkCardResult =
  | { kind: 'adk'; card: Readonly<AdkAgentCard>; source: 'original' | 'converted' }
  | { kind: 'v1-only'; reason: string };

// The card text as published, for cards that carry the 0.3 fields. Kept as the (shared) string,
// not a parsed copy: it is parsed only when a tree is built.
const originals = new WeakMap<AgentCardModel, string>();

/** Remembers the 0.3 JSON a card was published with (called by parseAgentCard). @internal */
export function rememberOriginal(card: AgentCardModel, raw: Record<string, unknown>, text: string): void {
  if (typeof raw.url === 'string') originals.set(card, text);
}

const LEGACY_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

function isLegacyInterface(i: AgentInterfaceModel): boolean {
  return /^0\.[23]$/.test(i.protocolVersion) && LEGACY_BINDINGS.has(i.protocolBinding);
}

/**
 * The card object to give ADK's `RemoteA2AAgent`, or a marker that only a 1.0 client can
 * reach the peer.
 *
 * @example
 * const adk = toAdkCard(result.card);
 * if (adk.kind === 'adk') new RemoteA2AAgent({ name: 'billing', description: reviewed, agentCard: adk.card });
 */
export function toAdkCard(card: AgentCardModel): AdkCardResult {
  const original = originals.get(card);
  if (original !== undefined) {
    // The text passed validation in its 0.3 dialect, so it has the 0.3 shape ADK reads.
    return { kind: 'adk', card: deepFreeze(JSON.parse(original) as AdkAgentCard), source: 'original' };
  }
  const legacy = card.supportedInterfaces.filter(isLegacyInterface);
  const first = legacy[0];
  if (first === undefined) {
    return {
      kind: 'v1-only',
      reason: `the card lists only A2A ${[...new Set(card.supportedInterfaces.map((i) => i.protocolVersion))].join(', ')} interfaces; ADK JS 2.0 speaks 0.3`,
    };
  }
  const out = {
    name: card.name,
    description: card.description,
    url: first.url,
    version: card.version,
    protocolVersion: '0.3.0',
    preferredTransport: first.protocolBinding,
    additionalInterfaces: legacy.map((i) => ({ url: i.url, transport: i.protocolBinding })),
    capabilities: {
      ...(card.capabilities.streaming !== undefined && { streaming: card.capabilities.streaming }),
      ...(card.capabilities.pushNotifications !== undefined && { pushNotifications: card.capabilities.pushNotifications }),
      ...(card.capabilities.extensions !== undefined && { extensions: structuredClone([...card.capabilities.extensions]) }),
    },
    defaultInputModes: [...card.defaultInputModes],
    defaultOutputModes: [...card.defaultOutputModes],
    skills: card.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: [...s.tags],
      ...(s.examples && { examples: [...s.examples] }),
      ...(s.inputModes && { inputModes: [...s.inputModes] }),
      ...(s.outputModes && { outputModes: [...s.outputModes] }),
      ...(s.securityRequirements && { security: s.securityRequirements.map(toLegacyRequirement) }),
    })),
    ...(card.provider && { provider: { ...card.provider } }),
    ...(card.documentationUrl !== undefined && { documentationUrl: card.documentationUrl }),
    ...(card.iconUrl !== undefined && { iconUrl: card.iconUrl }),
    ...(card.securitySchemes && { securitySchemes: mapValues(card.securitySchemes, toLegacyScheme) }),
    ...(card.securityRequirements && { security: card.securityRequirements.map(toLegacyRequirement) }),
    ...(card.capabilities.extendedAgentCard !== undefined && { supportsAuthenticatedExtendedCard: card.capabilities.extendedAgentCard }),
  };
  // Built field by field from the validated model, so the cast only bridges the SDK's
  // literal unions (security scheme `type`s) that the model stores as validated strings.
  return { kind: 'adk', card: deepFreeze(out) as unknown as AdkAgentCard, source: 'converted' };
}

function toLegacyRequirement(r: SecurityRequirementModel): Record<string, string[]> {
  return mapValues(r.schemes, (v) => [...(v.list ?? [])]);
}

/** 1.0 oneof-keyed scheme → 0.3 OpenAPI-style `{type, ...}`. */
function toLegacyScheme(s: SecuritySchemeModel): Record<string, unknown> {
  const [kind, body = {}] = Object.entries(s)[0] ?? ['', {}];
  const b = body as Record<string, unknown>;
  switch (kind) {
    case 'apiKeySecurityScheme':
      return { type: 'apiKey', in: b.location, name: b.name, ...(b.description !== undefined && { description: b.description }) };
    case 'httpAuthSecurityScheme':
      return { type: 'http', ...b };
    case 'oauth2SecurityScheme':
      return { type: 'oauth2', ...b };
    case 'openIdConnectSecurityScheme':
      return { type: 'openIdConnect', ...b };
    case 'mtlsSecurityScheme':
      return { type: 'mutualTLS', ...b };
    default:
      return { ...b };
  }
}

function mapValues<V, R>(obj: Readonly<Record<string, V>>, fn: (v: V) => R): Record<string, R> {
  const out: Record<string, R> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = fn(v);
  return out;
}
