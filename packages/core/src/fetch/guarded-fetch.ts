/**
 * The guarded `fetch`: the one way a request that is not a card GET leaves this project. A2A calls
 * (`adk/remote/policy-fetch.ts`), token requests (`auth/token-fetch.ts`), the service's OIDC
 * discovery document and JWKS, the follower's reads from its leader and the CLI's reads of a
 * running service all are this function over a {@link createGuardedConnection guarded connection},
 * each with its own allowlist and bounds. So every one of them gets, from one place:
 *
 * - the connection's checks: allowlist verdict, IP literals, the guarded lookup, the connected
 *   peer's address, TLS;
 * - redirects refused, never followed (`redirect: 'manual'`, any 3xx an error naming its Location);
 * - credentials for the request's own origin, and the 401 rule: one retry, with headers asked
 *   anew, only when the provider says fresh ones may help (`GuardedConnection.retryAfter`);
 * - a deadline on connect plus headers (`timeoutMs`), on the silence between body chunks
 *   (`bodyTimeoutMs`), and with `read: 'whole'` on the whole exchange, body included;
 * - the one byte cap (`body-cap.ts`): streamed bodies are counted as they pass, whole ones read
 *   into memory no further than `maxResponseBytes`;
 * - the one failure classification (`failure.ts`) and the one URL redaction in every message.
 *
 * It is undici 7's own `fetch` with the guarded connection's `Agent` as dispatcher (Node 20's
 * global `fetch` is undici 6, whose dispatcher interface differs); the Response it returns is
 * the global kind, so libraries that check it (oauth4webapi, jose) accept it.
 *
 * @module
 */
import { fetch as undiciFetch, Headers as UndiciHeaders, type Response as UndiciResponse } from 'undici';
import { DiscoveryError, isDiscoveryError } from '../errors.js';
import { redactUrl } from '../rules/redaction.js';
import { secureOrLoopback } from '../rules/origins.js';
import { VERSION } from '../version.js';
import { exactOriginPolicy, HostPolicy } from './host-policy.js';
import { capStream, readBoundedStream } from './body-cap.js';
import { abortAfter } from './deadlines.js';
import { networkFailure } from './failure.js';
import { createGuardedConnection, redirectRefusal, type GuardedConnectionOptions } from './guarded-connection.js';

/** Inputs of {@link createGuardedFetch}. Durations in milliseconds, sizes in bytes. */
export interface GuardedFetchOptions extends Pick<GuardedConnectionOptions, 'policy' | 'resolve' | 'ca' | 'credentials'> {
  /** Bound on connecting (DNS, TCP, TLS) plus waiting for the response headers. */
  timeoutMs: number;
  /** Bound on the silence between two body chunks. Default `timeoutMs`. */
  bodyTimeoutMs?: number;
  /** Cap on the bytes of one response body. */
  maxResponseBytes: number;
  /** The setting that holds the cap, named in the error (e.g. `server.oidc.maxBytes`). Default `maxResponseBytes`. */
  maxResponseName?: string;
  /**
   * `stream` (default): the body passes chunk by chunk through the cap (SSE). `whole`: the body is
   * read into memory before the Response is returned, and `timeoutMs` bounds the whole exchange.
   */
  read?: 'stream' | 'whole';
  /** Sent when the caller sets no `user-agent`. */
  userAgent: string;
  /** A signal of the surrounding work, read per request (the conversation turn's); aborting it aborts the request. */
  ambientSignal?: () => AbortSignal | undefined;
  /** Told when a response is refused by the byte cap or the deadline (a metric). */
  onBoundsRefused?: (what: 'too-large' | 'timeout') => void;
}

/** A `fetch` bound to one guarded connection, plus `close()` to release its pool. */
export type GuardedFetch = typeof fetch & {
  /** Aborts requests in flight and closes every connection. Idempotent. */
  close(): Promise<void>;
};

/** Statuses whose response has no body (fetch never returns an interim 1xx). */
const NULL_BODY_STATUS = new Set([204, 205, 304]);

/**
 * Creates a guarded `fetch`. No I/O happens until it is called.
 *
 * Errors are {@link DiscoveryError}s: `ERR_HOST_NOT_ALLOWED` / `ERR_INSECURE_URL` (refused before
 * anything is sent), `ERR_ADDRESS_BLOCKED`, `ERR_REDIRECT_REFUSED`, `ERR_FETCH_TIMEOUT`,
 * `ERR_BODY_TOO_LARGE`, `ERR_FETCH_NETWORK`, `ERR_USAGE` after `close()`. An abort by the
 * caller's own signal (or the ambient one) rejects with the signal's reason, as `fetch` does.
 *
 * @example
 * const keys = createGuardedFetch({ policy: HostPolicy.from({ allow: ['https://idp.example.com'] }), timeoutMs: 5000, maxResponseBytes: 65_536, read: 'whole', userAgent: 'a2a-discovery' });
 * const res = await keys('https://idp.example.com/jwks');
 */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const connection = createGuardedConnection({
    policy: options.policy,
    ...(options.resolve !== undefined && { resolve: options.resolve }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    connectTimeoutMs: options.timeoutMs,
    headersTimeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? options.timeoutMs,
  });
  const whole = options.read === 'whole';
  const bounds = { connectTimeoutMs: options.timeoutMs, headersTimeoutMs: options.timeoutMs, bodyTimeoutMs: options.bodyTimeoutMs ?? options.timeoutMs, maxBodyBytes: options.maxResponseBytes, maxBodyName: options.maxResponseName ?? 'maxResponseBytes' };
  const inFlight = new Set<AbortController>();
  let closed = false;

  function tooLarge(url: string, status: number): DiscoveryError {
    options.onBoundsRefused?.('too-large');
    return new DiscoveryError('ERR_BODY_TOO_LARGE', `response body from ${url} exceeds ${bounds.maxBodyName} ${options.maxResponseBytes}`, { url, stage: 'fetch', status });
  }

  async function guardedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const request = await normalizeInput(input, init);
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the guarded fetch is closed', { url: redactUrl(request.url), stage: 'fetch' });
    const admitted = connection.admit(request.url);
    const url = redactUrl(admitted.url);
    const baseHeaders = new UndiciHeaders(request.headers as ConstructorParameters<typeof UndiciHeaders>[0]);
    if (!baseHeaders.has('user-agent')) baseHeaders.set('user-agent', options.userAgent);
    const extra = await connection.credentialsFor(admitted.origin, url);
    // A body read once, so that a retry after a 401 sends the same bytes (streams cannot be replayed).
    const body = extra !== undefined ? await replayable(request.body) : request.body;
    const first = await exchange(admitted.url.href, url, request, withExtra(baseHeaders, extra), body);
    // The 401 rule (guarded-connection.ts): one retry with headers asked anew, for this origin only.
    if (extra === undefined || !(await connection.retryAfter(admitted.origin, first.response.status, extra))) return first.finish();
    await first.response.body?.cancel().catch(() => undefined);
    first.release();
    const fresh = await connection.credentialsFor(admitted.origin, url);
    return (await exchange(admitted.url.href, url, request, withExtra(baseHeaders, fresh), body)).finish();
  }

  /** One request; `finish()` checks the redirect, applies the cap (and for `whole`, reads the body), then releases the deadline. */
  async function exchange(href: string, url: string, request: NormalizedRequest, headers: UndiciHeaders, body: unknown): Promise<{ response: UndiciResponse; finish: () => Promise<Response>; release: () => void }> {
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the guarded fetch is closed', { url, stage: 'fetch' });
    const controller = new AbortController();
    const callerSignal = anyOf(request.signal ?? undefined, options.ambientSignal?.());
    const signal = callerSignal === undefined ? controller.signal : AbortSignal.any([callerSignal, controller.signal]);
    const deadline = abortAfter(controller, options.timeoutMs, () => {
      options.onBoundsRefused?.('timeout');
      return new DiscoveryError('ERR_FETCH_TIMEOUT', whole ? `${url}: no complete answer within ${options.timeoutMs} ms` : `${url}: no response headers within ${options.timeoutMs} ms`, { url, stage: 'fetch' });
    });
    inFlight.add(controller);
    const release = () => {
      deadline.cancel();
      inFlight.delete(controller);
    };
    let response: UndiciResponse;
    try {
      response = await undiciFetch(href, { method: request.method, headers, body: body as never, signal, redirect: 'manual', dispatcher: connection.dispatcher });
    } catch (err) {
      release();
      throw failure(err, url, 'request', callerSignal, controller.signal);
    }
    // The headers are in: a streamed body is bounded by bodyTimeoutMs and the cap from here on.
    if (!whole) release();
    const finish = async (): Promise<Response> => {
      try {
        const redirect = redirectRefusal(response.status, response.headers.get('location'), url);
        if (redirect !== undefined) {
          await response.body?.cancel().catch(() => undefined);
          throw redirect;
        }
        const status = response.status;
        const init = { status, statusText: response.statusText, headers: response.headers as unknown as Headers };
        if (response.body === null || NULL_BODY_STATUS.has(status)) {
          await response.body?.cancel().catch(() => undefined);
          return new Response(null, init);
        }
        if (!whole) return new Response(capStream(response.body as ReadableStream<Uint8Array>, options.maxResponseBytes, () => tooLarge(url, status)), init);
        const declared = Number(response.headers.get('content-length') ?? Number.NaN);
        if (Number.isFinite(declared) && declared > options.maxResponseBytes) {
          await response.body.cancel().catch(() => undefined);
          throw tooLarge(url, status);
        }
        let bytes: Buffer | undefined;
        try {
          bytes = await readBoundedStream(response.body as ReadableStream<Uint8Array>, options.maxResponseBytes);
        } catch (err) {
          throw failure(err, url, 'body', callerSignal, controller.signal);
        }
        if (bytes === undefined) throw tooLarge(url, status);
        return new Response(bytes, init);
      } finally {
        release();
      }
    };
    return { response, finish, release };
  }

  function failure(err: unknown, url: string, phase: 'request' | 'body', callerSignal: AbortSignal | undefined, ours: AbortSignal): unknown {
    if (callerSignal?.aborted === true && err === callerSignal.reason) return err;
    if (ours.aborted && isDiscoveryError(ours.reason)) return ours.reason;
    if (callerSignal?.aborted === true && !isDiscoveryError(err)) return callerSignal.reason;
    return networkFailure(err, url, phase, bounds);
  }

  const result = guardedFetch as GuardedFetch;
  result.close = async () => {
    if (closed) return;
    closed = true;
    for (const controller of inFlight) controller.abort(new DiscoveryError('ERR_USAGE', 'the guarded fetch was closed', { stage: 'fetch' }));
    await connection.close();
  };
  return result;
}

interface NormalizedRequest {
  url: string;
  method: string;
  headers: unknown;
  body: unknown;
  signal: AbortSignal | null | undefined;
}

/** Accepts what `fetch` accepts: a URL string, a URL, or a Request (its fields read out). */
async function normalizeInput(input: string | URL | Request, init: RequestInit | undefined): Promise<NormalizedRequest> {
  if (typeof input === 'string' || input instanceof URL) {
    return { url: String(input), method: init?.method ?? 'GET', headers: init?.headers, body: init?.body ?? undefined, signal: init?.signal };
  }
  const req = input as Request;
  const body = init?.body ?? (req.body === null ? undefined : await req.arrayBuffer());
  return { url: req.url, method: init?.method ?? req.method, headers: init?.headers ?? req.headers, body, signal: init?.signal ?? req.signal };
}

/** The request's headers plus the credentials' (a copy: a retry starts again from the request's own). */
function withExtra(base: UndiciHeaders, extra: Record<string, string> | undefined): UndiciHeaders {
  const headers = new UndiciHeaders(base);
  for (const [name, value] of Object.entries(extra ?? {})) headers.set(name, String(value));
  return headers;
}

/** A body that can be sent twice: a stream is read into bytes; every other body kind is reusable as it is. */
async function replayable(body: unknown): Promise<unknown> {
  if (!(body instanceof ReadableStream)) return body;
  return new Uint8Array(await new Response(body as ReadableStream<Uint8Array>).arrayBuffer());
}

/** Either signal aborting (the same object when only one is set). */
function anyOf(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (b === undefined || b === a) return a;
  return a === undefined ? b : AbortSignal.any([a, b]);
}

/** Inputs of {@link createOriginFetch}: a guarded fetch to a few exact origins the operator configured. */
export interface OriginFetchOptions extends Omit<GuardedFetchOptions, 'policy' | 'read' | 'userAgent'> {
  /** The exact origins admitted (`https://idp.example.com`): https, or http to a loopback host with `allowLoopback`. */
  origins: readonly string[];
  /** http and loopback addresses for loopback hosts (development, tests). Default false. */
  allowLoopback?: boolean;
  /** Address ranges permitted at connect time besides public unicast (CIDR), e.g. an in-cluster identity provider. */
  allowCidrs?: readonly string[];
  /** Default `a2a-discovery`. */
  userAgent?: string;
}

/**
 * A guarded fetch whose allowlist is exactly `origins` (a token endpoint, an identity provider, a
 * leader replica, the service a CLI command reads): each origin must pass {@link secureOrLoopback};
 * bodies are read whole, `timeoutMs` bounds the whole exchange.
 *
 * @throws DiscoveryError `ERR_INSECURE_URL` (stage `policy`) for an origin that is not https (or loopback http with `allowLoopback`).
 * @example const idp = createOriginFetch({ origins: ['https://idp.example.com'], timeoutMs: 5000, maxResponseBytes: 65_536 });
 */
export function createOriginFetch(options: OriginFetchOptions): GuardedFetch {
  const allowLoopback = options.allowLoopback ?? false;
  for (const origin of options.origins) {
    const problem = secureOrLoopback(origin, allowLoopback);
    if (problem !== undefined) throw new DiscoveryError('ERR_INSECURE_URL', `${redactUrl(origin)}: ${problem}`, { url: redactUrl(origin), stage: 'policy' });
  }
  const { origins, allowCidrs, userAgent, ...rest } = options;
  const policy = HostPolicy.from({ allow: [...origins], allowLoopback, ...(allowCidrs !== undefined && { allowCidrs }) });
  // The policy's allowlist is exactly these origins (no wildcard, the default port normalized).
  return createGuardedFetch({ ...rest, policy, read: 'whole', userAgent: userAgent ?? `a2a-discovery/${VERSION}` });
}

/** Where an operator's own services live besides loopback: the private-use ranges, shared address space and unique-local IPv6 (a pod network, a VPC). */
const DEPLOYMENT_RANGES = Object.freeze(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7']);

/** Inputs of {@link createDeploymentFetch}. */
export interface DeploymentFetchOptions extends Omit<GuardedFetchOptions, 'policy' | 'read' | 'userAgent' | 'credentials'> {
  /** The one origin (http or https) of the operator's own service: a leader replica, the service a CLI command reads. */
  origin: string;
  /** Address ranges (CIDR) besides loopback and the private ranges (the configuration's `allowCidrs`). */
  allowCidrs?: readonly string[];
  /** Default `a2a-discovery/<version>`. */
  userAgent?: string;
  /** `whole` (default): the answer read into memory within `timeoutMs`; `stream`: an event stream, `bodyTimeoutMs` between chunks. */
  read?: 'stream' | 'whole';
}

/**
 * A guarded fetch to one origin of the operator's own deployment, named by the operator or by the
 * deployment itself rather than by a card: http or https as written, addresses on loopback, the
 * private ranges and `allowCidrs` — never link-local (the cloud metadata address), unspecified,
 * multicast or reserved —, no redirects, the whole answer bounded by `timeoutMs` and the cap.
 *
 * @example const service = createDeploymentFetch({ origin: 'http://127.0.0.1:7340', timeoutMs: 10_000, maxResponseBytes: 32 << 20 });
 */
export function createDeploymentFetch(options: DeploymentFetchOptions): GuardedFetch {
  const { origin, allowCidrs, userAgent, read, ...rest } = options;
  const addresses = HostPolicy.from({ allow: [], allowLoopback: true, allowCidrs: [...DEPLOYMENT_RANGES, ...(allowCidrs ?? [])] });
  return createGuardedFetch({ ...rest, policy: exactOriginPolicy(origin, addresses), read: read ?? 'whole', userAgent: userAgent ?? `a2a-discovery/${VERSION}` });
}
