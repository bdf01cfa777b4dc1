/**
 * The guarded `fetch`: the one way a request that is not a card GET leaves this project. A2A calls
 * (`adk/remote/policy-fetch.ts`), token requests (`auth/token-fetch.ts`), the service's OIDC
 * discovery document and JWKS, the follower's reads from its leader and the CLI's reads of a
 * running service all are this function over a {@link createGuardedConnection guarded connection},
 * each with its own allowlist and bounds. So every one of them gets, from one place:
 *
 * - the connection's checks: allowlist verdict, IP literals, the guarded lookup, the connected
 *   peer's address, TLS;
 * - redirects refused, never followed (any 3xx an error naming its Location);
 * - nothing decompressed: `accept-encoding: identity` asked, any other encoding refused
 *   (`encodingRefusal`, the card fetcher's rule);
 * - credentials for the request's own origin, and the 401 rule: one retry, with headers asked
 *   anew, only when the provider says fresh ones may help (`GuardedConnection.retryAfter`);
 * - a deadline on connect plus headers (`timeoutMs`), on the silence between body chunks
 *   (`bodyTimeoutMs`), and with `read: 'whole'` on the whole exchange, body included;
 * - the one byte cap (`body-cap.ts`): streamed bodies are counted as they pass, whole ones read
 *   into memory no further than `maxResponseBytes`;
 * - the one failure classification (`failure.ts`) and the one URL redaction in every message.
 *
 * It is undici 7's `request()` on the guarded connection's `Agent` (Node 20's global `fetch` is
 * undici 6, whose dispatcher interface differs): half the CPU per call of undici's own `fetch`
 * with the stream wrappers it needed. It takes what `fetch` takes (a URL or a Request, the body
 * kinds `fetch` sends, with the content type `fetch` gives them) and returns the global Response,
 * so the A2A SDKs and the libraries that check it (oauth4webapi, jose) accept it. An event stream
 * is handed back as a stream; any other body is read within the cap first.
 *
 * @module
 */
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { Headers as UndiciHeaders, type Dispatcher } from 'undici';
import { DiscoveryError, isDiscoveryError } from '../errors.js';
import { redactUrl } from '../rules/redaction.js';
import { secureOrLoopback } from '../rules/origins.js';
import { VERSION } from '../version.js';
import { exactOriginPolicy, HostPolicy } from './host-policy.js';
import { capStream, readBoundedStream } from './body-cap.js';
import { abortAfter } from './deadlines.js';
import { networkFailure } from './failure.js';
import { createGuardedConnection, encodingRefusal, parseContentLength, redirectRefusal, type GuardedConnectionOptions } from './guarded-connection.js';

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
    if (!baseHeaders.has('accept')) baseHeaders.set('accept', '*/*');
    // Nothing is decompressed (encodingRefusal): whatever the caller asked for, identity is asked.
    baseHeaders.set('accept-encoding', 'identity');
    const requestBody = await bodyToSend(request.body, baseHeaders);
    const extra = await connection.credentialsFor(admitted.origin, url);
    // A body read once, so that a retry after a 401 sends the same bytes (streams cannot be replayed).
    const body = extra !== undefined ? await replayable(requestBody) : requestBody;
    const first = await exchange(admitted.url, url, request, withExtra(baseHeaders, extra), body);
    // The 401 rule (guarded-connection.ts): one retry with headers asked anew, for this origin only.
    if (extra === undefined || !(await connection.retryAfter(admitted.origin, first.status, extra))) return first.finish();
    first.discard();
    const fresh = await connection.credentialsFor(admitted.origin, url);
    return (await exchange(admitted.url, url, request, withExtra(baseHeaders, fresh), body)).finish();
  }

  /**
   * One request through the guarded connection's dispatcher (undici's `request()`: no redirect
   * followed, nothing decompressed). `finish()` checks the redirect and the encoding, applies the
   * cap and builds the Response (an event stream passes through chunk by chunk; any other body is
   * read first), then releases the deadline; `discard()` drops the answer unread.
   */
  async function exchange(target: URL, url: string, request: NormalizedRequest, headers: Record<string, string>, body: RequestBody): Promise<{ status: number; finish: () => Promise<Response>; discard: () => void }> {
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
    let response: Dispatcher.ResponseData;
    try {
      response = await connection.dispatcher.request({ origin: target.origin, path: `${target.pathname}${target.search}`, method: request.method as Dispatcher.HttpMethod, headers, body: typeof body === 'string' || body instanceof Uint8Array || body === undefined ? (body ?? null) : Readable.from(body), signal });
    } catch (err) {
      release();
      throw failure(err, url, 'request', callerSignal, controller.signal);
    }
    // The headers are in: a streamed body is bounded by bodyTimeoutMs and the cap from here on.
    if (!whole) release();
    const status = response.statusCode;
    const answer = response.body;
    // Its errors reach whoever reads it (the cap's iteration); one after it was dropped is no one's.
    answer.on('error', ignore);
    const bodyFailure = (err: unknown) => failure(err, url, 'body', callerSignal, controller.signal);
    const finish = async (): Promise<Response> => {
      try {
        const raw = response.headers;
        const refusal = redirectRefusal(status, firstValue(raw['location']), url) ?? encodingRefusal(status, firstValue(raw['content-encoding']), url);
        if (refusal !== undefined) throw refusal;
        const init = { status, statusText: STATUS_CODES[status] ?? '', headers: webHeaders(raw) };
        if (request.method === 'HEAD' || NULL_BODY_STATUS.has(status)) {
          answer.destroy();
          return new Response(null, init);
        }
        const declared = parseContentLength(firstValue(raw['content-length']));
        if (declared !== undefined && declared > options.maxResponseBytes) throw tooLarge(url, status);
        if (!whole && isEventStream(firstValue(raw['content-type']))) return new Response(capStream(answer, options.maxResponseBytes, () => tooLarge(url, status), bodyFailure), init);
        let bytes: Buffer | undefined;
        try {
          bytes = await readBoundedStream(answer, options.maxResponseBytes);
        } catch (err) {
          throw bodyFailure(err);
        }
        if (bytes === undefined) throw tooLarge(url, status);
        return new Response(bytes, init);
      } catch (err) {
        answer.destroy();
        // A refusal, a cap, a body failure (already classified), or headers the global Headers refuses.
        throw isDiscoveryError(err) ? err : failure(err, url, 'request', callerSignal, controller.signal);
      } finally {
        release();
      }
    };
    const discard = () => {
      answer.destroy();
      release();
    };
    return { status, finish, discard };
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
    return { url: String(input), method: normalizeMethod(init?.method ?? 'GET'), headers: init?.headers, body: init?.body ?? undefined, signal: init?.signal };
  }
  const req = input as Request;
  const body = init?.body ?? (req.body === null ? undefined : await req.arrayBuffer());
  return { url: req.url, method: normalizeMethod(init?.method ?? req.method), headers: init?.headers ?? req.headers, body, signal: init?.signal ?? req.signal };
}

/** The methods `fetch` writes in capitals whatever their case (any other is sent as given). */
const FETCH_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);

function normalizeMethod(method: string): string {
  const upper = method.toUpperCase();
  return FETCH_METHODS.has(upper) ? upper : method;
}

/** The request's headers plus the credentials', as the plain record `request()` sends (a retry starts again from the request's own). */
function withExtra(base: UndiciHeaders, extra: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of base) headers[name] = value;
  for (const [name, value] of Object.entries(extra ?? {})) headers[name.toLowerCase()] = String(value);
  return headers;
}

/** What `request()` sends: text, bytes, or a stream of bytes. */
type RequestBody = string | Uint8Array | AsyncIterable<Uint8Array> | undefined;

/**
 * A request body as `fetch` would send it: text, bytes and streams as they are; form parameters,
 * a Blob or FormData serialized. The content type `fetch` would give it is set when the caller set
 * none (text is `text/plain;charset=UTF-8`).
 */
async function bodyToSend(body: unknown, headers: UndiciHeaders): Promise<RequestBody> {
  if (body === undefined || body === null) return undefined;
  const type = (value: string): void => {
    if (!headers.has('content-type')) headers.set('content-type', value);
  };
  if (typeof body === 'string') {
    type('text/plain;charset=UTF-8');
    return body;
  }
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) {
    type('application/x-www-form-urlencoded;charset=UTF-8');
    return body.toString();
  }
  if (body instanceof ReadableStream) return body as ReadableStream<Uint8Array>;
  // A Blob, FormData or anything else fetch accepts: serialized as fetch would, with its type.
  const serialized = new Response(body as ConstructorParameters<typeof Response>[0]);
  const contentType = serialized.headers.get('content-type');
  if (contentType !== null) type(contentType);
  return new Uint8Array(await serialized.arrayBuffer());
}

/** A body that can be sent twice: a stream is read into bytes; text and bytes are reusable as they are. */
async function replayable(body: RequestBody): Promise<RequestBody> {
  if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body as ReadableStream<Uint8Array>).arrayBuffer());
}

function ignore(): void {}

/** The first value of a response header as undici's `request()` gives it (a list for a repeated one). */
function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A response's headers as the global `Headers` of the Response handed back (repeated ones appended). */
function webHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (typeof value === 'string') headers.append(name, value);
    else for (const v of value) headers.append(name, v);
  }
  return headers;
}

/** An SSE answer, passed on chunk by chunk; every other answer is read first. */
function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.trim().toLowerCase().startsWith('text/event-stream');
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
