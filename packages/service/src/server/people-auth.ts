/**
 * People on the service's API (docs/authentication.md, "People and roles on the service's API"):
 * OIDC bearer tokens — JWTs signed by the configured provider — verified with `jose` against the
 * provider's JWKS: signature (asymmetric algorithms only: never `none`, never an HMAC), issuer,
 * audience and expiry (with a clock tolerance). The token's roles claim (an array, or a
 * space-separated string like `scope`) is mapped to a role of the service — viewer, operator or
 * admin; the highest mapped value wins.
 *
 * The discovery document and the JWKS are fetched through the guarded fetch (`createOriginFetch`
 * of the library: the issuer's and the JWKS's origins only, https or loopback http under
 * allowLoopback, every address judged like discovery's — public unicast or `allowCidrs` —,
 * no redirects, the whole answer bounded in time and bytes); jose caches the JWKS and fetches it
 * again when a token names a key it does not hold (rotation), at most once per cooldown. A JWKS
 * that cannot be read (too large, too slow, not JSON, a forbidden address) fails closed: the
 * token is refused (401).
 *
 * Tokens themselves are never kept, logged or echoed: only the claims read from them.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify } from 'jose';
import type { FetchImplementation, JWTPayload } from 'jose';
import { createOriginFetch, DiscoveryError, isDiscoveryError, originOf, secureOrLoopback, type GuardedFetch } from 'a2a-discovery';
import { OIDC_ALGORITHMS, OIDC_DEFAULTS } from 'a2a-discovery/config';

/** A role on the service's API: viewer (read) < operator (refresh, inspect, chat) < admin (others' sessions, confirm). */
export type Role = 'viewer' | 'operator' | 'admin';
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

/** The asymmetric algorithms accepted by default (`server.oidc.algorithms` narrows them). */
const DEFAULT_OIDC_ALGORITHMS: readonly string[] = OIDC_ALGORITHMS;

export interface PeopleAuthOptions {
  /** The provider's issuer URL (`iss` must equal it). */
  issuer: string;
  /** The audience (`aud` must contain one of them). */
  audience: string | readonly string[];
  /** The JWKS URL; default the issuer's discovery document's `jwks_uri`. */
  jwksUrl?: string;
  /** The claim holding the roles (a dotted path reaches nested claims: `realm_access.roles`). Default `roles`. */
  rolesClaim?: string;
  /** Claim value → role. */
  roles: Readonly<Record<string, Role>>;
  /** Clock skew tolerated on `exp`/`nbf`/`iat`, in milliseconds. Default 30 s. */
  clockToleranceMs?: number;
  /** Accepted signature algorithms (asymmetric only). Default {@link DEFAULT_OIDC_ALGORITHMS}. */
  algorithms?: readonly string[];
  /** Plain http to a loopback issuer/JWKS (tests, a local provider). Default false: https only. */
  allowLoopback?: boolean;
  /** Address ranges besides public unicast where the provider may be reached (CIDR; an in-cluster provider). */
  allowCidrs?: readonly string[];
  /** One JWKS or discovery document fetch, in milliseconds. Default 5 s. */
  fetchTimeoutMs?: number;
  /** The largest JWKS or discovery document, in bytes. Default 64 KiB. */
  maxBytes?: number;
  /**
   * After a JWKS fetch, a token naming an unknown key waits this long before the JWKS is fetched
   * again (key rotation; a flood of made-up key ids costs one fetch per period). Default 30 s.
   */
  cooldownMs?: number;
  /** Told when a JWKS or discovery fetch is refused by its bounds (the metrics' counter). */
  onFetchRefused?: () => void;
  /** DNS override for the provider's host names (tests). */
  resolve?: Parameters<typeof createOriginFetch>[0]['resolve'];
}

/** A person a token was verified for. */
export interface Person {
  readonly issuer: string;
  readonly sub: string;
  /** `name`, `preferred_username` or `email`, when the token carries one. */
  readonly name?: string;
  /** Undefined when none of the token's role values is mapped. */
  readonly role: Role | undefined;
  /** The role values the token carried (for the 403's message). */
  readonly claimed: readonly string[];
  /** When the token expires (its `exp`, epoch ms): an event stream opened with it ends then. */
  readonly expiresAt?: number;
}

export type Verified = { ok: true; person: Person } | { ok: false; message: string };

/** Whether a bearer value looks like a JWS in compact form (three base64url parts). */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}

export class PeopleAuth {
  readonly #o: PeopleAuthOptions;
  /** One guarded fetch per origin set: the issuer's (and a configured JWKS's), then a discovered JWKS's. */
  readonly #fetches = new Map<string, GuardedFetch>();
  #jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  /** No I/O: the provider is first asked when the first token is verified. */
  constructor(o: PeopleAuthOptions) {
    checkUrl(o.issuer, 'server.oidc.issuer', o.allowLoopback === true);
    if (o.jwksUrl !== undefined) checkUrl(o.jwksUrl, 'server.oidc.jwksUrl', o.allowLoopback === true);
    for (const alg of o.algorithms ?? []) {
      if (!DEFAULT_OIDC_ALGORITHMS.includes(alg)) throw new DiscoveryError('ERR_CONFIG_INVALID', `server.oidc.algorithms: ${alg} is not an accepted asymmetric algorithm (${DEFAULT_OIDC_ALGORITHMS.join(', ')})`, { path: 'server.oidc.algorithms' });
    }
    this.#o = o;
  }

  /** Releases the provider's connections. */
  async close(): Promise<void> {
    const fetches = [...this.#fetches.values()];
    this.#fetches.clear();
    await Promise.all(fetches.map((f) => f.close()));
  }

  get issuer(): string {
    return this.#o.issuer;
  }

  /** Verifies a bearer token; the person it names, or why it is refused (never the token itself). */
  async verify(token: string): Promise<Verified> {
    let payload: JWTPayload;
    try {
      const jwks = await this.#keySet();
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: this.#o.issuer,
        audience: typeof this.#o.audience === 'string' ? this.#o.audience : [...this.#o.audience],
        algorithms: [...(this.#o.algorithms ?? DEFAULT_OIDC_ALGORITHMS)],
        clockTolerance: Math.round((this.#o.clockToleranceMs ?? OIDC_DEFAULTS.clockToleranceMs) / 1000),
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      return { ok: false, message: refusal(err) };
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') return { ok: false, message: 'the token has no subject (sub)' };
    const claimed = roleValues(claimAt(payload, this.#o.rolesClaim ?? OIDC_DEFAULTS.rolesClaim));
    let role: Role | undefined;
    for (const value of claimed) {
      const mapped = Object.hasOwn(this.#o.roles, value) ? this.#o.roles[value] : undefined;
      if (mapped !== undefined && (role === undefined || ROLES.indexOf(mapped) > ROLES.indexOf(role))) role = mapped;
    }
    const name = [payload.name, payload.preferred_username, payload.email].find((v): v is string => typeof v === 'string' && v !== '' && v.length <= 256);
    return { ok: true, person: { issuer: this.#o.issuer, sub: payload.sub, ...(name !== undefined && { name }), role, claimed: claimed.slice(0, 16).map((v) => v.slice(0, 64)), ...(typeof payload.exp === 'number' && { expiresAt: payload.exp * 1000 }) } };
  }

  /** The remote key set, built once its URL is known (a failed discovery is tried again by the next token). */
  #keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.#jwks ??= this.#jwksUrl().then(
      (url) =>
        createRemoteJWKSet(new URL(url), {
          // The guarded fetch's own deadline (fetchTimeoutMs, counted as a refusal) ends the request first.
          timeoutDuration: (this.#o.fetchTimeoutMs ?? OIDC_DEFAULTS.fetchTimeoutMs) + 1_000,
          cooldownDuration: this.#o.cooldownMs ?? OIDC_DEFAULTS.cooldownMs,
          cacheMaxAge: OIDC_DEFAULTS.keysMaxAgeMs,
          [customFetch]: ((target) => this.#documentFetch(url)(target)) satisfies FetchImplementation,
        }),
      (err: unknown) => {
        this.#jwks = undefined;
        throw err;
      },
    );
    return this.#jwks;
  }

  async #jwksUrl(): Promise<string> {
    if (this.#o.jwksUrl !== undefined) return this.#o.jwksUrl;
    const discovery = `${this.#o.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const res = await this.#documentFetch(discovery)(discovery);
    if (res.status !== 200) throw new OidcSetupError(`the issuer's discovery document answered HTTP ${res.status}`);
    const doc = (await res.json()) as { jwks_uri?: unknown; issuer?: unknown };
    if (typeof doc.jwks_uri !== 'string') throw new OidcSetupError('the issuer’s discovery document has no jwks_uri');
    if (doc.issuer !== undefined && doc.issuer !== this.#o.issuer) throw new OidcSetupError('the issuer’s discovery document names another issuer');
    checkUrl(doc.jwks_uri, 'jwks_uri', this.#o.allowLoopback === true);
    return doc.jwks_uri;
  }

  /**
   * The fetch for a document at `url` (the discovery document, the JWKS): the guarded fetch to the
   * issuer's origin and that document's, bounded by fetchTimeoutMs and maxBytes. A refusal of the
   * guard or the bounds becomes a {@link BoundsError} (the token is refused, fail closed).
   */
  #documentFetch(url: string): (target: string) => Promise<Response> {
    const origins = [...new Set([originOf(this.#o.issuer), originOf(url)].filter((o): o is string => o !== undefined))].sort();
    const key = origins.join(' ');
    let guarded = this.#fetches.get(key);
    if (guarded === undefined) {
      guarded = createOriginFetch({
        origins,
        allowLoopback: this.#o.allowLoopback === true,
        ...(this.#o.allowCidrs !== undefined && { allowCidrs: this.#o.allowCidrs }),
        ...(this.#o.resolve !== undefined && { resolve: this.#o.resolve }),
        timeoutMs: this.#o.fetchTimeoutMs ?? OIDC_DEFAULTS.fetchTimeoutMs,
        maxResponseBytes: this.#o.maxBytes ?? OIDC_DEFAULTS.maxBytes,
        maxResponseName: 'server.oidc.maxBytes',
        onBoundsRefused: () => this.#o.onFetchRefused?.(),
      });
      this.#fetches.set(key, guarded);
    }
    const inner = guarded;
    return async (target) => {
      try {
        return await inner(target, { method: 'GET', headers: { accept: 'application/json' } });
      } catch (err) {
        throw isDiscoveryError(err) ? new BoundsError(err.message) : err;
      }
    };
  }
}

class OidcSetupError extends Error {}

/** A short reason a token is refused, for the 401's `error_description` (no token content). */
function refusal(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return 'the token was issued by another issuer';
    if (err.claim === 'aud') return 'the token is meant for another audience';
    if (err.claim === 'nbf') return 'the token is not valid yet';
    return `the token's ${err.claim} claim is not acceptable`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm that is not accepted';
  if (err instanceof errors.JWKSNoMatchingKey) return 'the token is signed with a key the provider does not publish';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token’s signature does not verify';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err instanceof OidcSetupError || err instanceof BoundsError) {
    return 'the identity provider’s keys could not be read, so no token can be verified now';
  }
  if (err instanceof errors.JOSEError) return 'the token is not a valid signed JWT';
  return 'the identity provider’s keys could not be read, so no token can be verified now';
}

/** A claim by dotted path. */
function claimAt(payload: JWTPayload, path: string): unknown {
  let at: unknown = payload;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** Role values from an array of strings or a space-separated string. */
function roleValues(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter((v) => v !== '');
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return [];
}

function checkUrl(value: string, path: string, allowLoopback: boolean): void {
  if (!URL.canParse(value)) throw new DiscoveryError('ERR_CONFIG_INVALID', `${path} must be an absolute URL`, { path });
  const insecure = secureOrLoopback(value, allowLoopback);
  if (insecure === undefined) return;
  if (path === 'jwks_uri') throw new OidcSetupError(`the issuer’s discovery document’s jwks_uri must be https: ${insecure}`);
  throw new DiscoveryError('ERR_CONFIG_INVALID', `${path} must be https: ${insecure}`, { path });
}

/** The guarded fetch refused a document (its origin, its address, its size or its time): the keys cannot be read. */
class BoundsError extends Error {}
