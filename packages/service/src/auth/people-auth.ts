/**
 * People on the service's API (docs/authentication.md, "People and roles on the service's API"):
 * OIDC bearer tokens — JWTs signed by the configured provider — verified with `jose` against the
 * provider's JWKS: signature (asymmetric algorithms only: never `none`, never an HMAC), issuer,
 * audience and expiry (with a clock tolerance). The token's roles claim (an array, or a
 * space-separated string like `scope`) is mapped to a role of the service — viewer, operator or
 * admin; the highest mapped value wins.
 *
 * The discovery document and the JWKS are fetched through the guarded fetch (`createOriginFetch`
 * of the library: each document's own origin only, https or loopback http under
 * allowLoopback, every address judged like discovery's — public unicast or `allowCidrs` —,
 * no redirects, the whole answer bounded in time and bytes). A `jwks_uri` read from the discovery
 * document is judged like the issuer: loopback addresses only when the issuer itself is a
 * loopback host under allowLoopback and the `jwks_uri` names a loopback host too (a name that
 * resolves to loopback is refused before any connection).
 *
 * The keys are fetched here, not by jose's remote key set: one fetch at a time (concurrent
 * tokens share it), and after ANY fetch — good or failed — no other before `cooldownMs` has
 * passed. Meanwhile the last good keys serve (past their `keysMaxAgeMs` too, while the provider
 * fails); with none, the token is refused at once (401) without asking the provider again. A
 * token naming a key not held asks again only once the cooldown has passed (rotation). So a
 * failing or hostile provider gets at most one request per cooldown however many tokens arrive.
 * The state is one key set, one discovered `jwks_uri` and two guarded fetches at most.
 *
 * Tokens themselves are never kept, logged or echoed: only the claims read from them.
 */
import { createLocalJWKSet, errors, jwtVerify } from 'jose';
import type { FlattenedJWSInput, JSONWebKeySet, JWSHeaderParameters, JWTPayload } from 'jose';
import { DiscoveryError, isDiscoveryError, systemClock } from 'a2a-discovery';
import { createOriginFetch, isLoopbackHost, originOf, secureOrLoopback, type GuardedFetch } from 'a2a-discovery/internal';
import type { Clock } from 'a2a-discovery';
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
   * After any fetch of the keys (good or failed), none other before this long: a token naming an
   * unknown key (rotation) or a provider that failed is asked again at most once per period,
   * however many tokens arrive. Default 30 s.
   */
  cooldownMs?: number;
  /** The cooldown's and the keys' age clock. Default the system clock. */
  clock?: Clock;
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

type KeySet = ReturnType<typeof createLocalJWKSet>;

/** The issuer's OpenID Connect discovery document (OpenID Connect Discovery 1.0 §4). */
export function oidcDiscoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

export class PeopleAuth {
  readonly #o: PeopleAuthOptions;
  readonly #clock: Clock;
  /** One guarded fetch per origin, each admitting that origin only: the issuer's, the JWKS's (configured, or discovered once). At most two. */
  readonly #fetches = new Map<string, GuardedFetch>();
  /** The `jwks_uri` the discovery document named (asked once it answered well). */
  #discovered: string | undefined;
  /** The last good keys, and when they were read. */
  #keys: { set: KeySet; at: number } | undefined;
  /** No fetch of the keys before this time (the cooldown after any fetch). */
  #nextFetchAt = Number.NEGATIVE_INFINITY;
  /** Why the last fetch failed (for the refusal; never a token). */
  #lastFailure: unknown;
  /** The fetch under way, shared by every token that needs it (single flight). */
  #inFlight: Promise<void> | undefined;
  #closed = false;

  /** No I/O: the provider is first asked when the first token is verified. */
  constructor(o: PeopleAuthOptions) {
    checkUrl(o.issuer, 'server.oidc.issuer', o.allowLoopback === true);
    if (o.jwksUrl !== undefined) checkUrl(o.jwksUrl, 'server.oidc.jwksUrl', o.allowLoopback === true);
    for (const alg of o.algorithms ?? []) {
      if (!DEFAULT_OIDC_ALGORITHMS.includes(alg)) throw new DiscoveryError('ERR_CONFIG_INVALID', `server.oidc.algorithms: ${alg} is not an accepted asymmetric algorithm (${DEFAULT_OIDC_ALGORITHMS.join(', ')})`, { path: 'server.oidc.algorithms' });
    }
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  /** Releases the provider's connections. */
  async close(): Promise<void> {
    this.#closed = true;
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
      ({ payload } = await jwtVerify(token, (header, jws) => this.#key(header, jws), {
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

  /**
   * The key a token names: from the keys held, read first when there are none or they are older
   * than `keysMaxAgeMs`, and read again for a key not held — each read only outside the cooldown.
   */
  async #key(header: JWSHeaderParameters, jws: FlattenedJWSInput): Promise<Awaited<ReturnType<KeySet>>> {
    if (this.#keys === undefined || this.#clock.now() - this.#keys.at >= OIDC_DEFAULTS.keysMaxAgeMs) await this.#refresh();
    const held = this.#keys;
    if (held === undefined) throw new KeysUnavailable(this.#lastFailure);
    try {
      return await held.set(header, jws);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      // A key not held: the provider may have rotated; asked again only outside the cooldown.
      await this.#refresh();
      const fresh = this.#keys;
      if (fresh === undefined || fresh === held) throw err;
      return fresh.set(header, jws);
    }
  }

  /** Reads the keys once, unless a read is under way (joined) or the cooldown has not passed (nothing). Never throws. */
  #refresh(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    if (this.#closed || this.#clock.now() < this.#nextFetchAt) return Promise.resolve();
    const flight = this.#readKeys().then(
      (set) => {
        this.#keys = { set, at: this.#clock.now() };
        this.#lastFailure = undefined;
      },
      (err: unknown) => {
        // The last good keys, if any, keep serving.
        this.#lastFailure = err;
      },
    ).finally(() => {
      this.#nextFetchAt = this.#clock.now() + (this.#o.cooldownMs ?? OIDC_DEFAULTS.cooldownMs);
      this.#inFlight = undefined;
    });
    this.#inFlight = flight;
    return flight;
  }

  async #readKeys(): Promise<KeySet> {
    const url = await this.#jwksUrl();
    const res = await this.#documentFetch(url)(url);
    if (res.status !== 200) throw new OidcSetupError(`the JWKS answered HTTP ${res.status}`);
    let jwks: unknown;
    try {
      jwks = await res.json();
    } catch {
      throw new OidcSetupError('the JWKS is not JSON');
    }
    // jose judges the set (JWKSInvalid: no `keys` array).
    return createLocalJWKSet(jwks as JSONWebKeySet);
  }

  async #jwksUrl(): Promise<string> {
    if (this.#o.jwksUrl !== undefined) return this.#o.jwksUrl;
    if (this.#discovered !== undefined) return this.#discovered;
    const discovery = oidcDiscoveryUrl(this.#o.issuer);
    const res = await this.#documentFetch(discovery)(discovery);
    if (res.status !== 200) throw new OidcSetupError(`the issuer's discovery document answered HTTP ${res.status}`);
    let doc: { jwks_uri?: unknown; issuer?: unknown };
    try {
      doc = (await res.json()) as typeof doc;
    } catch {
      throw new OidcSetupError('the issuer’s discovery document is not JSON');
    }
    if (doc === null || typeof doc !== 'object' || typeof doc.jwks_uri !== 'string') throw new OidcSetupError('the issuer’s discovery document has no jwks_uri');
    if (doc.issuer !== undefined && doc.issuer !== this.#o.issuer) throw new OidcSetupError('the issuer’s discovery document names another issuer');
    checkUrl(doc.jwks_uri, 'jwks_uri', this.#o.allowLoopback === true);
    this.#discovered = doc.jwks_uri;
    return doc.jwks_uri;
  }

  /**
   * The fetch for a document at `url` (the discovery document, the JWKS): the guarded fetch to that
   * document's origin only, bounded by fetchTimeoutMs and maxBytes. A refusal of the
   * guard or the bounds becomes a {@link BoundsError} (the token is refused, fail closed).
   *
   * Loopback addresses are admitted as they are for the issuer: under allowLoopback, and for a
   * document URL that is not the operator's own (a discovered `jwks_uri`) only when both the
   * issuer and that URL name a loopback host, so a discovery document cannot point the service at
   * its own loopback services through a name.
   */
  #documentFetch(url: string): (target: string) => Promise<Response> {
    const origin = originOf(url) ?? url;
    let guarded = this.#fetches.get(origin);
    if (guarded === undefined) {
      const operators = origin === originOf(this.#o.issuer) || url === this.#o.jwksUrl;
      const loopback = this.#o.allowLoopback === true && (operators || (isLoopbackHost(new URL(this.#o.issuer).hostname) && isLoopbackHost(new URL(url).hostname)));
      guarded = createOriginFetch({
        origins: [origin],
        allowLoopback: loopback,
        ...(this.#o.allowCidrs !== undefined && { allowCidrs: this.#o.allowCidrs }),
        ...(this.#o.resolve !== undefined && { resolve: this.#o.resolve }),
        timeoutMs: this.#o.fetchTimeoutMs ?? OIDC_DEFAULTS.fetchTimeoutMs,
        maxResponseBytes: this.#o.maxBytes ?? OIDC_DEFAULTS.maxBytes,
        maxResponseName: 'server.oidc.maxBytes',
        onBoundsRefused: () => this.#o.onFetchRefused?.(),
      });
      this.#fetches.set(origin, guarded);
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

/** No keys are held and the provider cannot be read now (or was asked within the cooldown). */
class KeysUnavailable extends Error {
  constructor(cause: unknown) {
    super('the identity provider’s keys could not be read', { cause });
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
  if (err instanceof KeysUnavailable || err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err instanceof OidcSetupError || err instanceof BoundsError) {
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
