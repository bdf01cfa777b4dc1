/**
 * The `fetch` handed to both A2A SDK clients (ADK's nested 0.3 copy and @a2a-js/sdk 1.x), so
 * that every message sent to a remote agent goes through the same {@link HostPolicy} as
 * discovery:
 *
 * - the URL must pass `policy.check` (allowlisted origin, https or the loopback exemption, no
 *   userinfo) — refused before any socket is opened;
 * - host names resolve through the guarded lookup (every resolved address judged at connect
 *   time, so DNS rebinding cannot swap in a private address), IP-literal hosts are judged before
 *   dispatch, and the connected socket's peer address is judged once more;
 * - redirects are never followed: any 3xx is an error naming its Location;
 * - nothing is decompressed: `accept-encoding: identity` is asked, any other encoding refused;
 * - per-origin credentials are computed for the request's own origin only, and a 401 to a
 *   request that carried them is retried once, with headers asked anew, when the provider says a
 *   fresh token may help (the guarded connection's 401 rule; the body is resent);
 * - connect plus waiting for the response headers is bounded by `timeoutMs`, silence between
 *   body chunks by `bodyTimeoutMs`, and the bytes of one response by `maxResponseBytes`;
 *   streaming (SSE) bodies pass through chunk by chunk, any other is read before it is handed back.
 *
 * Every check above but the bounds is the guarded connection's (`src/fetch/guarded-connection.ts`),
 * the same code the card fetcher dispatches through: undici 7's `request()` on the guarded
 * connection's `Agent` (`guarded-fetch.ts`).
 *
 * @module
 */
import { createGuardedFetch, NetworkOptionCheck } from '../../fetch/index.js';
import type { CredentialsInput, GuardedFetch, HostPolicy, OriginCredentials, Resolver, TrustedCa } from '../../fetch/index.js';
import { currentTurnSignal } from './turn-signal.js';

export type { CredentialsInput, OriginCredentials };

/** Inputs of {@link createPolicyFetch}. Durations in milliseconds, sizes in bytes. */
export interface PolicyFetchOptions {
  /** Decides which URLs and resolved addresses may be contacted. Required. */
  policy: HostPolicy;
  /**
   * Bound on connecting (DNS, TCP, TLS) plus waiting for the response headers. A blocking
   * A2A `SendMessage` answers only when the remote task is done, so this also bounds the remote
   * agent's thinking time on non-streaming calls. Default 30000.
   */
  timeoutMs?: number;
  /** Bound on the silence between two body chunks (SSE streams included). Default 300000. */
  bodyTimeoutMs?: number;
  /** Cap on the bytes of one response body (after decoding). Default 16 MiB. */
  maxResponseBytes?: number;
  /**
   * Per-origin credentials (e.g. `{ authorization: 'Bearer …' }`). The headers returned are
   * attached to that request only, hence only to that origin; redirects are never followed, so
   * they cannot be carried elsewhere. A function or a `PeerCredentials` provider (not closed by
   * the policy fetch): a 401 is then retried once when the provider drops a cached token.
   */
  credentials?: CredentialsInput;
  /** DNS override (tests, custom resolvers). Default: the system resolver. */
  resolve?: Resolver;
  /** Sent when the caller sets no `user-agent`. Default `a2a-discovery/<version>`. */
  userAgent?: string;
  /**
   * Extra trusted CA certificates (PEM), added to Node's default roots, e.g. for in-cluster
   * agents behind a private CA. Verification itself can never be turned off.
   */
  ca?: TrustedCa;
}

/** A `fetch` for the A2A SDK clients, plus `close()` to release its connection pool. */
export type PolicyFetch = GuardedFetch;

/**
 * Creates a policy-bound `fetch`. No I/O happens until it is called.
 *
 * Errors are {@link DiscoveryError}s: `ERR_HOST_NOT_ALLOWED` / `ERR_INSECURE_URL` (refused by
 * the policy, nothing sent), `ERR_ADDRESS_BLOCKED` (a resolved or connected address is refused),
 * `ERR_REDIRECT_REFUSED` (any 3xx), `ERR_FETCH_TIMEOUT`, `ERR_BODY_TOO_LARGE`,
 * `ERR_FETCH_NETWORK` (refused, reset, TLS, …), `ERR_USAGE` after `close()`. An abort by the
 * caller's own signal rejects with the signal's reason, as `fetch` does; so does an abort of the
 * conversation turn the request is made in (`SessionRunner.run`'s `signal`, turn-signal.ts).
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options.
 * @example
 * const policyFetch = createPolicyFetch({ policy, credentials: (origin) => tokens.get(origin) });
 * const factory = new JsonRpcTransportFactory({ fetchImpl: policyFetch });
 * // ... later
 * await policyFetch.close();
 */
export function createPolicyFetch(options: PolicyFetchOptions): PolicyFetch {
  const settings = validate(options);
  return createGuardedFetch({
    policy: options.policy,
    ...(options.resolve !== undefined && { resolve: options.resolve }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    ...settings,
    // A request made inside a conversation turn is also aborted with the turn (turn-signal.ts).
    ambientSignal: currentTurnSignal,
  });
}

function validate(options: PolicyFetchOptions): { timeoutMs: number; bodyTimeoutMs: number; maxResponseBytes: number; userAgent: string } {
  const check = new NetworkOptionCheck('policy fetch', options);
  const settings = {
    timeoutMs: check.positive('timeoutMs', 30_000),
    bodyTimeoutMs: check.positive('bodyTimeoutMs', 300_000),
    maxResponseBytes: check.positive('maxResponseBytes', 16 * 1024 * 1024),
    userAgent: check.userAgent(),
  };
  check.credentials();
  check.resolver('resolve');
  check.done();
  return settings;
}
