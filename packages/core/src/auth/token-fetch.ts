/**
 * The connection token requests travel on: a guarded connection of their own
 * (`fetch/guarded-connection.ts`) whose policy admits only the identity provider's exact origins
 * (its issuer for discovery, its token endpoint), https only (http only for loopback hosts under
 * `allowLoopback`), every address judged, redirects refused, and each answer bounded in bytes and
 * time. Handed to oauth4webapi as its `customFetch`.
 *
 * @module
 */
import { fetch as undiciFetch } from 'undici';
import { DiscoveryError, findDiscoveryError } from '../errors.js';
import { createGuardedConnection, redirectRefusal, type TrustedCa } from '../fetch/guarded-connection.js';
import { HostPolicy } from '../fetch/host-policy.js';
import { redactUrl } from '../rules/redaction.js';
import { secureOrLoopback } from '../rules/origins.js';
import type { Resolver } from '../fetch/address-guard.js';

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
export interface TokenFetch {
  (url: string, init: { method?: string; headers?: Record<string, string>; body?: URLSearchParams | string; signal?: AbortSignal }): Promise<Response>;
  close(): Promise<void>;
}

export function createTokenFetch(options: TokenFetchOptions): TokenFetch {
  for (const origin of options.origins) {
    const problem = insecureProblem(origin, options.allowLoopback ?? false);
    if (problem !== undefined) throw new DiscoveryError('ERR_INSECURE_URL', `${origin}: ${problem}`, { url: origin, stage: 'policy' });
  }
  const policy = HostPolicy.from({
    allow: [...options.origins],
    allowLoopback: options.allowLoopback ?? false,
    ...(options.allowCidrs !== undefined && { allowCidrs: options.allowCidrs }),
  });
  const origins = new Set(options.origins);
  const connection = createGuardedConnection({
    policy,
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.resolve !== undefined && { resolve: options.resolve }),
    connectTimeoutMs: options.timeoutMs,
    headersTimeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.timeoutMs,
    maxResponseSize: options.maxBytes,
  });

  const tokenFetch = (async (rawUrl, init) => {
    const { url, origin } = connection.admit(rawUrl);
    // The policy admits wildcards and default ports; the token request goes to these origins only.
    if (!origins.has(origin)) throw new DiscoveryError('ERR_HOST_NOT_ALLOWED', `${redactUrl(rawUrl)} is not the identity provider's origin`, { url: redactUrl(rawUrl), stage: 'resolve' });
    const href = url.href;
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal === undefined ? deadline : AbortSignal.any([init.signal, deadline]);
    try {
      const res = await undiciFetch(href, {
        method: init.method ?? 'GET',
        ...(init.headers !== undefined && { headers: init.headers }),
        ...(init.body !== undefined && { body: init.body }),
        redirect: 'manual',
        signal,
        dispatcher: connection.dispatcher,
      });
      const refusal = redirectRefusal(res.status, res.headers.get('location'), href);
      if (refusal !== undefined) {
        await res.body?.cancel().catch(() => undefined);
        throw refusal;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      // A Response of the global kind: oauth4webapi checks what it is handed.
      return new Response(res.status === 204 ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers as unknown as Headers });
    } catch (err) {
      const found = findDiscoveryError(err);
      if (found !== undefined) throw found;
      if (deadline.aborted) throw new DiscoveryError('ERR_FETCH_TIMEOUT', `${href}: no complete answer within ${options.timeoutMs} ms`, { url: href, stage: 'fetch' });
      if (innerCode(err) === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') throw new DiscoveryError('ERR_BODY_TOO_LARGE', `${href}: answer exceeds ${options.maxBytes} bytes`, { url: href, stage: 'fetch' });
      throw new DiscoveryError('ERR_FETCH_NETWORK', `${href}: ${innerMessage(err)}`, { url: href, stage: 'fetch' });
    }
  }) as TokenFetch;
  tokenFetch.close = () => connection.close();
  return tokenFetch;
}

/** Token requests carry the client secret: the one transport rule ({@link secureOrLoopback}). */
export function insecureProblem(url: string, allowLoopback: boolean): string | undefined {
  const problem = secureOrLoopback(url, allowLoopback);
  return problem === undefined ? undefined : `a token endpoint must be https (token requests carry the client secret): ${problem}`;
}

function innerCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function innerMessage(err: unknown): string {
  let e: unknown = err;
  let message = err instanceof Error ? err.message : 'request failed';
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const m = (e as { message?: unknown }).message;
    if (typeof m === 'string' && m !== '') message = m;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}
