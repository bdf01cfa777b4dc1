/**
 * The internal agent-card model: the A2A 1.0 card in its JSON wire form (proto3 JSON mapping),
 * deeply frozen. Every card we accept, whatever protocol version it was published in, is
 * normalized into this one shape; matching, digests and the dashboard work on it.
 *
 * It is deliberately the JSON form and not @a2a-js/sdk 1.x's decoded TypeScript form
 * (`{scheme: {$case, value}}`, numeric enums): the JSON form is what signatures and hashes are
 * computed over, and what can be shown to a user as-is.
 */

/** Protocol versions we recognise on the wire. */
export type CardProtocolVersion = '1.0' | '0.3' | '0.2';

export interface AgentInterfaceModel {
  readonly url: string;
  /** 'JSONRPC', 'GRPC' or 'HTTP+JSON' (others are kept, and warned about). */
  readonly protocolBinding: string;
  /** Major.Minor, e.g. '1.0' or '0.3'. */
  readonly protocolVersion: string;
  readonly tenant?: string;
}

interface AgentProviderModel {
  readonly organization: string;
  readonly url: string;
}

interface AgentExtensionModel {
  readonly uri: string;
  readonly description?: string;
  readonly required?: boolean;
  readonly params?: Readonly<Record<string, unknown>>;
}

interface AgentCapabilitiesModel {
  readonly streaming?: boolean;
  readonly pushNotifications?: boolean;
  readonly extendedAgentCard?: boolean;
  readonly extensions?: readonly AgentExtensionModel[];
}

/** `{ schemes: { [schemeName]: { list: scopes } } }` (scopes omitted when empty). */
export interface SecurityRequirementModel {
  readonly schemes: Readonly<Record<string, { readonly list?: readonly string[] }>>;
}

/** One security scheme in proto JSON form: exactly one of these keys is present. */
export type SecuritySchemeModel = Readonly<
  Partial<
    Record<
      | 'apiKeySecurityScheme'
      | 'httpAuthSecurityScheme'
      | 'oauth2SecurityScheme'
      | 'openIdConnectSecurityScheme'
      | 'mtlsSecurityScheme',
      Readonly<Record<string, unknown>>
    >
  >
>;

export interface AgentSkillModel {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly examples?: readonly string[];
  readonly inputModes?: readonly string[];
  readonly outputModes?: readonly string[];
  readonly securityRequirements?: readonly SecurityRequirementModel[];
}

interface AgentCardSignatureModel {
  readonly protected: string;
  readonly signature: string;
  readonly header?: Readonly<Record<string, unknown>>;
}

/** An A2A 1.0 agent card (JSON form), frozen. Card text is third-party: never put it in a prompt. */
export interface AgentCardModel {
  readonly name: string;
  readonly description: string;
  readonly version: string;
  /** Ordered; the first is the publisher's preferred interface. Never empty. */
  readonly supportedInterfaces: readonly AgentInterfaceModel[];
  readonly provider?: AgentProviderModel;
  readonly documentationUrl?: string;
  readonly iconUrl?: string;
  readonly capabilities: AgentCapabilitiesModel;
  readonly securitySchemes?: Readonly<Record<string, SecuritySchemeModel>>;
  readonly securityRequirements?: readonly SecurityRequirementModel[];
  readonly defaultInputModes: readonly string[];
  readonly defaultOutputModes: readonly string[];
  readonly skills: readonly AgentSkillModel[];
  readonly signatures?: readonly AgentCardSignatureModel[];
}

/** True when no skill of the card carries a tag (including a card with no skills): a static entry's tags vouch for such a card. */
export function isUntagged(card: AgentCardModel): boolean {
  return card.skills.every((s) => s.tags.length === 0);
}

/** Freezes a JSON value and everything under it, iteratively (no stack limit on deep values). Store engines freeze what they load with it. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return value;
}
