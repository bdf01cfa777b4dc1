/**
 * Google ID tokens for peers on Cloud Run or behind Identity-Aware Proxy: an OIDC ID token whose
 * audience is the peer (its origin by default, or the IAP client id), obtained through
 * `google-auth-library` from the environment's Google credentials (a service account key,
 * workload identity, the metadata server) and sent as `Authorization: Bearer …` to the
 * configured origins only. `google-auth-library` is an optional peer dependency, loaded on first
 * use; its token traffic goes over its own transport (to Google's endpoints or the metadata
 * server), not through the guarded connection.
 *
 * @module
 */
import { decodeJwt } from 'jose';
import type { Clock, Random } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { DiscoveryError, findDiscoveryError } from '../errors.js';
import type { PeerCredentials, PresentableScheme } from '../rules/credentials.js';
import { TokenCache, type TokenRequestOutcome } from './token-cache.js';

/** What the provider needs of google-auth-library: an ID token for an audience. */
export interface GoogleIdTokenSource {
  fetchIdToken(audience: string): Promise<string>;
}

/** Inputs of {@link googleIdToken}. Durations in ms. */
export interface GoogleIdTokenOptions {
  /** The peers' exact origins the token is sent to. */
  origins: readonly string[];
  /** The token's audience: a Cloud Run service URL or an IAP OAuth client id. Default: each origin. */
  audience?: string;
  /** The token source. Default: google-auth-library's `GoogleAuth` (application default credentials). */
  source?: GoogleIdTokenSource;
  clock?: Clock;
  random?: Random;
  /** A token is replaced this long before its `exp`, at most 10 % of its lifetime. Default 60000. */
  refreshBeforeMs?: number;
  /** Told of each token request: the origin and the outcome (a metric). */
  onTokenRequest?: (event: { origin: string; outcome: TokenRequestOutcome }) => void;
}

/**
 * Credentials of Google ID tokens, one cached token per audience. No I/O until the first
 * {@link PeerCredentials.headers}.
 *
 * @throws (from `headers()`) DiscoveryError `ERR_CONFIG_INVALID` when google-auth-library is not
 *   installed, `ERR_FETCH_NETWORK` when no token could be obtained (never with the token).
 * @example googleIdToken({ origins: ['https://billing-abc123-uc.a.run.app'] })
 */
export function googleIdToken(options: GoogleIdTokenOptions): PeerCredentials {
  const origins = new Set(options.origins);
  const clock = options.clock ?? systemClock;
  const schemes: readonly PresentableScheme[] = Object.freeze([{ type: 'openIdConnect' }, { type: 'http', scheme: 'bearer' }]);
  let source: Promise<GoogleIdTokenSource> | undefined;
  const caches = new Map<string, TokenCache>();
  const audienceOf = (origin: string): string => options.audience ?? origin;

  const cacheFor = (origin: string): TokenCache => {
    const audience = audienceOf(origin);
    let cache = caches.get(audience);
    if (cache !== undefined) return cache;
    cache = new TokenCache({
      clock,
      ...(options.random !== undefined && { random: options.random }),
      ...(options.refreshBeforeMs !== undefined && { refreshBeforeMs: options.refreshBeforeMs }),
      ...(options.onTokenRequest !== undefined && { onRequest: (outcome: TokenRequestOutcome) => options.onTokenRequest!({ origin, outcome }) }),
      request: async () => {
        let token: string;
        try {
          token = await (await (source ??= loadSource(options.source))).fetchIdToken(audience);
        } catch (err) {
          throw failure(err, audience);
        }
        return { token, ...lifetimeOf(token, clock) };
      },
    });
    caches.set(audience, cache);
    return cache;
  };

  return {
    async headers(origin) {
      if (!origins.has(origin)) return undefined;
      return { authorization: `Bearer ${await cacheFor(origin).get()}` };
    },
    identity: (origin) => (origins.has(origin) ? `google id token for audience ${JSON.stringify(audienceOf(origin))}` : undefined),
    schemes: (origin) => (origins.has(origin) ? schemes : []),
    async rejected(origin) {
      if (!origins.has(origin)) return false;
      caches.get(audienceOf(origin))?.invalidate();
      return true;
    },
    async close() {
      for (const cache of caches.values()) cache.close();
    },
  };
}

/** What is used of google-auth-library (an optional peer dependency). */
interface GoogleAuthLibrary {
  GoogleAuth: new () => { getIdTokenClient(audience: string): Promise<{ idTokenProvider: GoogleIdTokenSource }> };
}

/** google-auth-library's application default credentials, imported on first use. */
async function loadSource(given: GoogleIdTokenSource | undefined): Promise<GoogleIdTokenSource> {
  if (given !== undefined) return given;
  let lib: GoogleAuthLibrary;
  try {
    lib = (await import('google-auth-library')) as unknown as GoogleAuthLibrary;
  } catch (err) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', 'google-id-token credentials need the optional package google-auth-library: npm install google-auth-library', { stage: 'config', cause: err });
  }
  const auth = new lib.GoogleAuth();
  return { fetchIdToken: async (audience) => (await auth.getIdTokenClient(audience)).idTokenProvider.fetchIdToken(audience) };
}

/** The lifetime left by the token's `exp` claim (it is not verified: we are its bearer, not its audience). */
function lifetimeOf(token: string, clock: Clock): { lifetimeMs?: number } {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? { lifetimeMs: exp * 1000 - clock.wallNow() } : {};
  } catch {
    return {};
  }
}

/** A failure without the library's details, which may quote credentials. */
function failure(err: unknown, audience: string): DiscoveryError {
  const found = findDiscoveryError(err);
  if (found?.code === 'ERR_CONFIG_INVALID') return found;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? ` (${(err as { code: string }).code})` : '';
  return new DiscoveryError('ERR_FETCH_NETWORK', `google id token for audience ${JSON.stringify(audience)} could not be obtained${code}`, { stage: 'fetch' });
}
