/**
 * Card security schemes honoured: whether the credentials configured for an interface's origin
 * can satisfy what a card requires. Pure.
 *
 * A card's `securityRequirements` (0.3 `security`, wrapped by normalization) follow OpenAPI: the
 * list is an OR of requirements, each requirement an AND of named schemes from
 * `securitySchemes`; an empty requirement object means anonymous access is allowed, and no
 * requirement at all means none is needed. Scopes cannot be checked before a call and are shown,
 * not judged. Mutual TLS is never presentable (no client certificate is configured here).
 *
 * Everything in a scheme (names, descriptions, header names) is card text: it is shown as text
 * and never put in a prompt; the sentences below quote it bounded.
 *
 * @module
 */
import type { CredentialsInput, PresentableScheme } from '../rules/credentials.js';
import { toPeerCredentials } from '../rules/credentials.js';
import type { ChosenInterface, UrlJudge } from './interface-policy.js';
import { preferredInterface } from './interface-policy.js';
import type { AgentCardModel, SecuritySchemeModel } from './model.js';

/** One scheme the card declares, described for people. */
export interface DescribedScheme {
  /** The card's name for it (card text, bounded). */
  readonly name: string;
  readonly type: 'apiKey' | 'http' | 'oauth2' | 'openIdConnect' | 'mutualTLS' | 'unknown';
  /** What it asks for, e.g. `an API key in header X-API-Key`, `oauth2 client credentials`. */
  readonly needs: string;
  /** Whether the configured credentials for the origin can present it. */
  readonly presentable: boolean;
  /** The card's description of it (card text: shown as text only), bounded. */
  readonly description?: string;
}

/** What {@link checkSecurityRequirements} answers. */
export interface SecurityRequirementsResult {
  /**
   * `none`: no requirement, or one alternative allows anonymous access and nothing presentable
   * satisfies another; `satisfied`: the credentials satisfy every scheme of one alternative;
   * `unsatisfiable`: every alternative needs something they cannot present.
   */
  readonly status: 'none' | 'satisfied' | 'unsatisfiable';
  /** With `satisfied`: the scheme names of the first alternative satisfied, in the card's order. */
  readonly satisfiedBy?: readonly string[];
  /** The alternatives the card accepts, each the scheme names it combines (anonymous: `[]`). */
  readonly requirements: readonly (readonly string[])[];
  readonly schemes: readonly DescribedScheme[];
  /**
   * One sentence: `no security requirement`, `anonymous access allowed`,
   * `satisfied by bearer (a bearer token) for https://…`, or
   * `unauthorized: needs an API key in header X-API-Key or a bearer token for https://…`.
   */
  readonly message: string;
}

const MAX_NAME = 64;
const MAX_DESCRIPTION = 200;
const MAX_ALTERNATIVES = 5;
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * Whether `presentable` (what the credentials for `origin` can present:
 * `toPeerCredentials(c).schemes(origin)`) satisfies the card's security requirements. `origin`
 * is the chosen interface's origin; it is named in the sentence.
 *
 * @example checkSecurityRequirements(card, [{ type: 'http', scheme: 'bearer' }], 'https://billing.example.com').status // 'satisfied'
 */
export function checkSecurityRequirements(
  card: Pick<AgentCardModel, 'securitySchemes' | 'securityRequirements'>,
  presentable: readonly PresentableScheme[],
  origin: string,
): SecurityRequirementsResult {
  const declared = card.securitySchemes ?? {};
  const schemes = Object.entries(declared).map(([name, scheme]) => describe(name, scheme, presentable));
  const byName = new Map(schemes.map((s) => [s.name, s]));
  const requirements = (card.securityRequirements ?? []).map((r) => Object.keys(r.schemes ?? {}).map(bounded));
  if (requirements.length === 0) return { status: 'none', requirements, schemes, message: 'no security requirement' };

  // A requirement naming a scheme the card does not declare can never be met.
  const schemeOf = (name: string): DescribedScheme => byName.get(name) ?? { name, type: 'unknown', needs: `the undeclared scheme ${quote(name)}`, presentable: false };
  const satisfied = requirements.find((r) => r.length > 0 && r.every((n) => schemeOf(n).presentable));
  if (satisfied !== undefined) {
    return {
      status: 'satisfied',
      satisfiedBy: satisfied,
      requirements,
      schemes,
      message: `satisfied by ${satisfied.map((n) => `${quote(n)} (${schemeOf(n).needs})`).join(' and ')} for ${origin}`,
    };
  }
  if (requirements.some((r) => r.length === 0)) return { status: 'none', requirements, schemes, message: 'anonymous access allowed' };

  const alternatives = requirements.map((r) => r.map((n) => schemeOf(n).needs).join(' and '));
  const unique = [...new Set(alternatives)];
  const shown = unique.slice(0, MAX_ALTERNATIVES).join(' or ') + (unique.length > MAX_ALTERNATIVES ? ` or ${unique.length - MAX_ALTERNATIVES} more` : '');
  return { status: 'unsatisfiable', requirements, schemes, message: `unauthorized: needs ${shown} for ${origin}` };
}

/**
 * The origin whose credentials are judged against `card`'s requirements: that of the interface a
 * client here calls ({@link preferredInterface}), or of `baseUrl` when there is none. Undefined
 * when the card requires nothing (no credentials need looking up).
 */
export function securityOrigin(card: Pick<AgentCardModel, 'securityRequirements' | 'supportedInterfaces'>, baseUrl: string): string | undefined {
  if ((card.securityRequirements ?? []).length === 0) return undefined;
  const url = preferredInterface(card)?.url ?? baseUrl;
  try {
    return new URL(url).origin;
  } catch {
    return new URL(baseUrl).origin;
  }
}

/**
 * What `credentials` can present to `origin` (nothing without credentials). The function form
 * learns which headers it sets only when asked, so it is asked (a static lookup; the values are
 * dropped here). An object's `headers()` may fetch a token, so only its `schemes()` is read.
 */
export async function presentableSchemes(credentials: CredentialsInput | undefined, origin: string): Promise<readonly PresentableScheme[]> {
  if (credentials === undefined) return [];
  const peer = toPeerCredentials(credentials);
  try {
    if (typeof credentials === 'function') await peer.headers(origin);
    return peer.schemes(origin);
  } catch {
    return [];
  }
}

/** How a client here would call a card's agent: see {@link cardAccess}. */
export interface CardAccess {
  /** The interface a client here calls, with its tenant (absent when there is none). */
  readonly chosenInterface?: ChosenInterface;
  /** The card's security against the credentials for `origin` (the chosen interface's). */
  readonly security?: SecurityRequirementsResult & { readonly origin: string };
}

/**
 * The chosen interface ({@link preferredInterface}, judged by `judge` when given) and the card's
 * security requirements against what `credentials` present to its origin (`fallbackUrl`'s origin,
 * the card URL, when no interface is called). For probe, the inspector and the endpoint views.
 */
export async function cardAccess(card: AgentCardModel, fallbackUrl: string | undefined, credentials: CredentialsInput | undefined, judge?: UrlJudge): Promise<CardAccess> {
  const chosen = preferredInterface(card, judge);
  const origin = originOf(chosen?.url) ?? originOf(fallbackUrl);
  if (origin === undefined) return chosen ? { chosenInterface: chosen } : {};
  // Credentials are asked only when the card requires something.
  const presentable = (card.securityRequirements ?? []).length > 0 ? await presentableSchemes(credentials, origin) : [];
  const security = checkSecurityRequirements(card, presentable, origin);
  return { ...(chosen && { chosenInterface: chosen }), security: { ...security, origin } };
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  const origin = new URL(url).origin;
  return origin === 'null' ? undefined : origin;
}

function describe(rawName: string, scheme: SecuritySchemeModel, presentable: readonly PresentableScheme[]): DescribedScheme {
  const name = bounded(rawName);
  const withDescription = (s: Omit<DescribedScheme, 'name' | 'description'>, body: Readonly<Record<string, unknown>> | undefined): DescribedScheme => {
    const d = typeof body?.description === 'string' ? oneLine(body.description, MAX_DESCRIPTION) : '';
    return { name, ...s, ...(d !== '' && { description: d }) };
  };
  if (scheme.apiKeySecurityScheme !== undefined) {
    const body = scheme.apiKeySecurityScheme;
    const key = typeof body.name === 'string' ? body.name : '';
    const location = typeof body.location === 'string' ? body.location.toLowerCase() : 'header';
    const where = location === 'query' ? 'query parameter' : location === 'cookie' ? 'cookie' : 'header';
    const ok = location === 'header' && key !== '' && presentable.some((p) => p.type === 'apiKey' && p.in === 'header' && p.name.toLowerCase() === key.toLowerCase());
    return withDescription({ type: 'apiKey', needs: `an API key in ${where} ${quote(key)}`, presentable: ok }, body);
  }
  if (scheme.httpAuthSecurityScheme !== undefined) {
    const body = scheme.httpAuthSecurityScheme;
    const s = typeof body.scheme === 'string' ? body.scheme.toLowerCase() : '';
    const needs = s === 'bearer' ? 'a bearer token' : s === 'basic' ? 'HTTP basic credentials' : `HTTP ${quote(s)} credentials`;
    const ok = s !== '' && presentable.some((p) => p.type === 'http' && p.scheme.toLowerCase() === s);
    return withDescription({ type: 'http', needs, presentable: ok }, body);
  }
  if (scheme.oauth2SecurityScheme !== undefined) {
    const body = scheme.oauth2SecurityScheme;
    const flows = body.flows !== null && typeof body.flows === 'object' ? Object.keys(body.flows) : [];
    const flow = flows[0];
    const needs =
      flow === 'clientCredentials' ? 'oauth2 client credentials'
      : flow === 'authorizationCode' ? 'an oauth2 token from the authorization code flow'
      : flow === 'deviceCode' ? 'an oauth2 token from the device code flow'
      : flow === 'implicit' ? 'an oauth2 token from the implicit flow'
      : flow === 'password' ? 'an oauth2 token from the password flow'
      : 'an oauth2 token';
    // A token obtained out of band (a static bearer header) is presented for any flow; one this
    // product obtains itself only for the client-credentials flow it runs.
    const ok = presentable.some((p) => p.type === 'oauth2' && (p.flow === undefined || flow === undefined || p.flow === flow));
    return withDescription({ type: 'oauth2', needs, presentable: ok }, body);
  }
  if (scheme.openIdConnectSecurityScheme !== undefined) {
    const body = scheme.openIdConnectSecurityScheme;
    return withDescription({ type: 'openIdConnect', needs: 'an OpenID Connect token', presentable: presentable.some((p) => p.type === 'openIdConnect') }, body);
  }
  if (scheme.mtlsSecurityScheme !== undefined) {
    return withDescription({ type: 'mutualTLS', needs: 'a TLS client certificate (mutual TLS, which is not presented here)', presentable: false }, scheme.mtlsSecurityScheme);
  }
  return { name, type: 'unknown', needs: `the scheme ${quote(name)} of an unknown type`, presentable: false };
}

/** A header or scheme name as it appears in a sentence: bare when it is an HTTP token, quoted otherwise. */
function quote(s: string): string {
  const b = bounded(s);
  return TOKEN.test(b) ? b : JSON.stringify(b);
}

function bounded(s: string): string {
  return oneLine(s, MAX_NAME);
}

function oneLine(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
