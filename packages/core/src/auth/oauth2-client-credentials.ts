/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) for peers: an access token obtained with
 * `oauth4webapi` from a token endpoint (given, or discovered from an issuer's metadata), sent as
 * `Authorization: Bearer …` to the configured origins only.
 *
 * @module
 */
import * as oauth from 'oauth4webapi';
import type { Clock, Random } from '../clock/index.js';
import { DiscoveryError, findDiscoveryError } from '../errors.js';
import type { PeerCredentials, PresentableScheme } from '../rules/credentials.js';
import { redactUrl } from '../rules/redaction.js';
import type { Resolver } from '../fetch/address-guard.js';
import type { TrustedCa } from '../fetch/guarded-connection.js';
import { TokenCache, type TokenRequestOutcome } from './token-cache.js';
import { createTokenFetch, insecureProblem, type TokenFetch } from './token-fetch.js';

/** Inputs of {@link oauth2ClientCredentials}. Durations in ms, sizes in bytes. */
export interface OAuth2ClientCredentialsOptions {
  /** The peers' exact origins the token is sent to (`https://agents.example.com`). */
  origins: readonly string[];
  /** The token endpoint. Exactly one of `tokenUrl` and `issuer`. */
  tokenUrl?: string;
  /** An issuer whose metadata (`/.well-known/openid-configuration`) names the token endpoint. */
  issuer?: string;
  clientId: string;
  /** The client secret, already read (from an environment variable or a file). */
  clientSecret: string;
  /** `basic` (client_secret_basic, the default) or `post` (client_secret_post). */
  auth?: 'basic' | 'post';
  /** Requested scopes (`scope`, space-joined). */
  scopes?: readonly string[];
  /** `audience` parameter (Auth0, Okta and others). */
  audience?: string;
  /** RFC 8707 `resource` indicator. */
  resource?: string;
  /** Token requests may go to http loopback hosts (development, tests). Default false. */
  allowLoopback?: boolean;
  /** Extra address ranges the identity provider may resolve to (CIDR). */
  allowCidrs?: readonly string[];
  /** Extra trusted CAs (PEM). */
  ca?: TrustedCa;
  /** DNS override (tests). */
  resolve?: Resolver;
  clock?: Clock;
  random?: Random;
  /** A token is replaced this long before expiry, at most 10 % of its lifetime. Default 60000. */
  refreshBeforeMs?: number;
  /** Bound on one exchange with the identity provider, body included. Default 10000. */
  timeoutMs?: number;
  /** Cap on an answer of the identity provider. Default 65536. */
  maxResponseBytes?: number;
  /** Told of each token request: the first origin served and the outcome (a metric). */
  onTokenRequest?: (event: { origin: string; outcome: TokenRequestOutcome }) => void;
}

/**
 * Credentials from an OAuth 2.0 client-credentials grant. No I/O until the first
 * {@link PeerCredentials.headers}; the token is cached (see `token-cache.ts`), a 401 from a peer
 * drops it ({@link PeerCredentials.rejected} answers true).
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` for bad options (no client id, both or neither of
 *   `tokenUrl` and `issuer`, an http endpoint that is not loopback under `allowLoopback`). `headers()` rejects with
 *   `ERR_FETCH_STATUS` (the provider refused: its status and OAuth `error` code, never the
 *   secret), `ERR_FETCH_NETWORK` / `ERR_FETCH_TIMEOUT` /
 *   `ERR_BODY_TOO_LARGE` / `ERR_HOST_NOT_ALLOWED` / `ERR_REDIRECT_REFUSED` from the guarded token connection.
 * @example
 * const credentials = oauth2ClientCredentials({ origins: ['https://billing.example.com'], tokenUrl: 'https://idp.example.com/oauth/token', clientId: 'discovery', clientSecret: process.env.CLIENT_SECRET! });
 */
export function oauth2ClientCredentials(options: OAuth2ClientCredentialsOptions): PeerCredentials {
  const { issuer, tokenUrl, clientId, clientSecret } = options;
  if ((issuer === undefined) === (tokenUrl === undefined)) throw new DiscoveryError('ERR_CONFIG_INVALID', 'oauth2 credentials: set exactly one of tokenUrl and issuer', { stage: 'config' });
  if (clientId === '' || clientSecret === '') throw new DiscoveryError('ERR_CONFIG_INVALID', 'oauth2 credentials: clientId and the client secret must not be empty', { stage: 'config' });
  const endpoint = parseUrl(tokenUrl ?? issuer!, tokenUrl !== undefined ? 'tokenUrl' : 'issuer');
  const insecure = insecureProblem(endpoint.href, options.allowLoopback ?? false);
  if (insecure !== undefined) throw new DiscoveryError('ERR_CONFIG_INVALID', `oauth2 credentials: ${tokenUrl !== undefined ? 'tokenUrl' : 'issuer'} ${endpoint.origin}: ${insecure}`, { stage: 'config' });
  const origins = new Set(options.origins);
  const label = `oauth2 client ${JSON.stringify(clientId)} at ${redactUrl(endpoint)}`;
  const schemes: readonly PresentableScheme[] = Object.freeze([{ type: 'oauth2', flow: 'clientCredentials' }, { type: 'http', scheme: 'bearer' }]);
  const first = options.origins[0] ?? '';
  const client: oauth.Client = { client_id: clientId };
  const clientAuth = options.auth === 'post' ? oauth.ClientSecretPost(clientSecret) : oauth.ClientSecretBasic(clientSecret);
  const parameters = new URLSearchParams();
  if (options.scopes !== undefined && options.scopes.length > 0) parameters.set('scope', options.scopes.join(' '));
  if (options.audience !== undefined) parameters.set('audience', options.audience);
  if (options.resource !== undefined) parameters.set('resource', options.resource);

  const fetches: TokenFetch[] = [];
  const connect = (origin: string): TokenFetch => {
    const f = createTokenFetch({
      origins: [origin],
      timeoutMs: options.timeoutMs ?? 10_000,
      maxBytes: options.maxResponseBytes ?? 64 * 1024,
      ...(options.allowLoopback !== undefined && { allowLoopback: options.allowLoopback }),
      ...(options.allowCidrs !== undefined && { allowCidrs: options.allowCidrs }),
      ...(options.ca !== undefined && { ca: options.ca }),
      ...(options.resolve !== undefined && { resolve: options.resolve }),
    });
    fetches.push(f);
    return f;
  };
  const requestOptions = (f: TokenFetch, signal: AbortSignal) => ({ [oauth.customFetch]: f as never, [oauth.allowInsecureRequests]: endpoint.protocol === 'http:', signal });

  let server: { as: oauth.AuthorizationServer; fetch: TokenFetch } | undefined;
  const authorizationServer = async (signal: AbortSignal): Promise<{ as: oauth.AuthorizationServer; fetch: TokenFetch }> => {
    if (server !== undefined) return server;
    if (tokenUrl !== undefined) return (server = { as: { issuer: endpoint.origin, token_endpoint: endpoint.href }, fetch: connect(endpoint.origin) });
    const discovery = connect(endpoint.origin);
    const response = await oauth.discoveryRequest(endpoint, { algorithm: 'oidc', ...requestOptions(discovery, signal) });
    const as = await oauth.processDiscoveryResponse(endpoint, response);
    if (typeof as.token_endpoint !== 'string') throw new DiscoveryError('ERR_FETCH_STATUS', `issuer ${endpoint.href} names no token_endpoint`, { url: endpoint.href, stage: 'fetch' });
    const tokenOrigin = new URL(as.token_endpoint).origin;
    return (server = { as, fetch: tokenOrigin === endpoint.origin ? discovery : connect(tokenOrigin) });
  };

  const cache = new TokenCache({
    ...(options.clock !== undefined && { clock: options.clock }),
    ...(options.random !== undefined && { random: options.random }),
    ...(options.refreshBeforeMs !== undefined && { refreshBeforeMs: options.refreshBeforeMs }),
    ...(options.onTokenRequest !== undefined && { onRequest: (outcome: TokenRequestOutcome) => options.onTokenRequest!({ origin: first, outcome }) }),
    request: async (signal) => {
      try {
        const { as, fetch } = await authorizationServer(signal);
        const response = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, parameters, requestOptions(fetch, signal));
        const result = await oauth.processClientCredentialsResponse(as, client, response);
        if (result.token_type.toLowerCase() !== 'bearer') throw new DiscoveryError('ERR_FETCH_STATUS', `${label}: token_type ${JSON.stringify(result.token_type.slice(0, 40))} is not Bearer`, { stage: 'fetch' });
        return { token: result.access_token, ...(result.expires_in !== undefined && { lifetimeMs: result.expires_in * 1000 }) };
      } catch (err) {
        throw tokenFailure(err, label);
      }
    },
  });

  return {
    async headers(origin) {
      if (!origins.has(origin)) return undefined;
      return { authorization: `Bearer ${await cache.get()}` };
    },
    identity: (origin) => (origins.has(origin) ? label : undefined),
    schemes: (origin) => (origins.has(origin) ? schemes : []),
    async rejected(origin) {
      if (!origins.has(origin)) return false;
      cache.invalidate();
      return true;
    },
    async close() {
      cache.close();
      await Promise.allSettled(fetches.map((f) => f.close()));
    },
  };
}

function parseUrl(value: string, name: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `oauth2 credentials: ${name} is not a URL`, { stage: 'config' });
  }
}

/**
 * A failed token request as an error without secrets: oauth4webapi's errors may carry the
 * provider's answer (which can hold a token), so only the status and the OAuth `error` code are kept.
 */
function tokenFailure(err: unknown, label: string): DiscoveryError {
  const found = findDiscoveryError(err);
  if (found !== undefined) return new DiscoveryError(found.code, `${label}: ${found.message}`, { stage: 'fetch', ...(found.url !== undefined && { url: found.url }), ...(found.status !== undefined && { status: found.status }) });
  if (err instanceof oauth.ResponseBodyError) {
    const code = /^[\x20-\x7e]{1,64}$/.test(err.error) ? err.error : 'invalid';
    return new DiscoveryError('ERR_FETCH_STATUS', `${label}: the token endpoint answered ${err.status} (${code})`, { stage: 'fetch', status: err.status });
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return new DiscoveryError('ERR_FETCH_STATUS', `${label}: the token endpoint answered ${err.status} with a WWW-Authenticate challenge (client authentication refused)`, { stage: 'fetch', status: err.status });
  }
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'unknown';
  // oauth4webapi keeps the Response of an unexpected status as the cause: its status says what happened.
  const status = (err as { cause?: { status?: unknown } })?.cause?.status;
  if (typeof status === 'number' && (status < 200 || status > 299)) {
    return new DiscoveryError('ERR_FETCH_STATUS', `${label}: the token endpoint answered ${status} (not an OAuth error response: ${code})`, { stage: 'fetch', status });
  }
  return new DiscoveryError('ERR_FETCH_STATUS', `${label}: the token endpoint's answer was refused (${code})`, { stage: 'fetch' });
}
