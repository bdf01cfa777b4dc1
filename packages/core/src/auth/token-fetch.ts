/**
 * The connection token requests travel on: a guarded connection of their own
 * (`fetch/guarded-connection.ts`) whose policy admits only the identity provider's exact origins
 * (its issuer for discovery, its token endpoint), https only (http only for loopback hosts under
 * `allowLoopback`), every address judged, redirects refused, and each answer bounded in bytes and
 * time: the guarded fetch (`fetch/guarded-fetch.ts`). Handed to oauth4webapi as its `customFetch`.
 *
 * @module
 */
import { createOriginFetch, type GuardedFetch } from '../fetch/guarded-fetch.js';
import type { TrustedCa } from '../fetch/guarded-connection.js';
import type { Resolver } from '../fetch/address-guard.js';
import { secureOrLoopback } from '../rules/origins.js';

/** Where token requests may go and how they are bounded. Durations in ms, sizes in bytes. */
export interface TokenFetchOptions {
  /** The exact origins admitted (`https://idp.example.com`). */
  origins: readonly string[];
  /** http and loopback addresses for loopback hosts (development, tests). Default false. */
  allowLoopback?: boolean;
  /** Extra address ranges permitted at connect time (CIDR). */
  allowCidrs?: readonly string[];
  /** Extra trusted CAs (PEM). */
  ca?: TrustedCa;
  /** DNS override (tests). */
  resolve?: Resolver;
  /** One deadline for a whole exchange, body included. */
  timeoutMs: number;
  /** Cap on an answer's body. */
  maxBytes: number;
}

/** A `fetch` for oauth4webapi, bound to the identity provider's origins, with `close()`. */
export type TokenFetch = GuardedFetch;

/**
 * The token requests' fetch: the guarded fetch to the identity provider's exact origins (every
 * check of the guarded connection, redirects refused, the whole answer bounded by `timeoutMs`
 * and `maxBytes`).
 *
 * @throws DiscoveryError `ERR_INSECURE_URL` (stage `policy`) for an origin that is not https (or loopback http with `allowLoopback`).
 */
export function createTokenFetch(options: TokenFetchOptions): TokenFetch {
  return createOriginFetch({
    origins: options.origins,
    allowLoopback: options.allowLoopback ?? false,
    ...(options.allowCidrs !== undefined && { allowCidrs: options.allowCidrs }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.resolve !== undefined && { resolve: options.resolve }),
    timeoutMs: options.timeoutMs,
    maxResponseBytes: options.maxBytes,
    maxResponseName: 'the token endpoint\'s answer cap',
  });
}

/** Token requests carry the client secret: the one transport rule ({@link secureOrLoopback}). */
export function insecureProblem(url: string, allowLoopback: boolean): string | undefined {
  const problem = secureOrLoopback(url, allowLoopback);
  return problem === undefined ? undefined : `a token endpoint must be https (token requests carry the client secret): ${problem}`;
}
