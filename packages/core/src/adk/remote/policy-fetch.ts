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
 * - redirects are never followed: `redirect: 'manual'`, and any 3xx is an error naming its
 *   Location;
 * - per-origin credentials are computed for the request's own origin only, and a 401 to a
 *   request that carried them is retried once, with headers asked anew, when the provider says a
 *   fresh token may help (the guarded connection's 401 rule; the body is resent);
 * - connect plus waiting for the response headers is bounded by `timeoutMs`, silence between
 *   body chunks by `bodyTimeoutMs`, and the bytes of one response by `maxResponseBytes`;
 *   streaming (SSE) bodies pass through chunk by chunk.
 *
 * Every check above but the bounds is the guarded connection's (`src/fetch/guarded-connection.ts`),
 * the same code the card fetcher dispatches through. It uses undici 7's own `fetch` with the
 * guarded connection's undici 7 `Agent` as dispatcher: Node 20's global `fetch` is undici 6,
 * whose dispatcher interface differs.
 *
 * @module
 */
import { fetch as undiciFetch, Headers as UndiciHeaders, Response as UndiciResponse } from 'undici';
import { DiscoveryError, findDiscoveryError, isDiscoveryError } from '../../errors.js';
import type { DiscoveryErrorCode } from '../../errors.js';
import { createGuardedConnection, NetworkOptionCheck, redirectRefusal, redactUrl } from '../../fetch/index.js';
import type { CredentialsInput, HostPolicy, OriginCredentials, Resolver, TrustedCa } from '../../fetch/index.js';
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
export type PolicyFetch = typeof fetch & {
  /** Aborts requests in flight and closes every connection. Idempotent. */
  close(): Promise<void>;
};

interface Settings {
  timeoutMs: number;
  bodyTimeoutMs: number;
  maxResponseBytes: number;
  userAgent: string;
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

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
  const connection = createGuardedConnection({
    policy: options.policy,
    ...(options.resolve !== undefined && { resolve: options.resolve }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    connectTimeoutMs: settings.timeoutMs,
    headersTimeoutMs: settings.timeoutMs,
    bodyTimeoutMs: settings.bodyTimeoutMs,
  });
  const inFlight = new Set<AbortController>();
  let closed = false;

  async function policyFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const request = await normalizeInput(input, init);
    const rawUrl = request.url;
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the policy fetch is closed', { url: redactUrl(rawUrl), stage: 'fetch' });
    const admitted = connection.admit(rawUrl);
    const url = admitted.url.href;

    const baseHeaders = new UndiciHeaders(request.headers as ConstructorParameters<typeof UndiciHeaders>[0]);
    if (!baseHeaders.has('user-agent')) baseHeaders.set('user-agent', settings.userAgent);
    const extra = await connection.credentialsFor(admitted.origin, url);
    // A body read once, so that a retry after a 401 sends the same bytes (streams cannot be replayed).
    const body = extra !== undefined && connection.hasCredentials ? await replayable(request.body) : request.body;
    const first = await exchange(url, request, withExtra(baseHeaders, extra), body);
    // The 401 rule (guarded-connection.ts): one retry with headers asked anew, for this origin only.
    if (first.status !== 401 || extra === undefined || !(await connection.retryAfter(admitted.origin, first.status, extra))) return finish(first, url);
    await first.body?.cancel().catch(() => undefined);
    const fresh = await connection.credentialsFor(admitted.origin, url);
    return finish(await exchange(url, request, withExtra(baseHeaders, fresh), body), url);
  }

  async function exchange(url: string, request: NormalizedRequest, headers: UndiciHeaders, body: unknown): Promise<UndiciResponse> {
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the policy fetch is closed', { url, stage: 'fetch' });
    // Our controller carries the headers deadline and close(); the caller's signal stays
    // attached for the whole exchange, body included (AbortSignal.any).
    const controller = new AbortController();
    // A request made inside a conversation turn is also aborted with the turn (turn-signal.ts).
    const callerSignal = withSignal(request.signal ?? undefined, currentTurnSignal());
    const signal = callerSignal === undefined ? controller.signal : AbortSignal.any([callerSignal, controller.signal]);
    const timer = setTimeout(() => {
      controller.abort(new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: no response headers within ${settings.timeoutMs} ms`, { url, stage: 'fetch' }));
    }, settings.timeoutMs);
    inFlight.add(controller);

    try {
      return await undiciFetch(url, { method: request.method, headers, body: body as never, signal, redirect: 'manual', dispatcher: connection.dispatcher });
    } catch (err) {
      throw classify(err, url, callerSignal, controller.signal);
    } finally {
      clearTimeout(timer);
      // After the headers, close() ends a body still being read by destroying the agent's sockets.
      inFlight.delete(controller);
    }
  }

  async function finish(res: UndiciResponse, url: string): Promise<Response> {
    const redirect = redirectRefusal(res.status, res.headers.get('location'), url);
    if (redirect !== undefined) {
      await res.body?.cancel().catch(() => undefined);
      throw redirect;
    }
    if (res.body === null || NULL_BODY_STATUS.has(res.status)) return res as unknown as Response;
    return limitBody(res, url, settings.maxResponseBytes) as unknown as Response;
  }

  const result = policyFetch as PolicyFetch;
  result.close = async () => {
    if (closed) return;
    closed = true;
    for (const controller of inFlight) controller.abort(new DiscoveryError('ERR_USAGE', 'the policy fetch was closed', { stage: 'fetch' }));
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

/** The caller's signal and the turn's, either one aborting (the same object when only one is set). */
function withSignal(caller: AbortSignal | undefined, turn: AbortSignal | undefined): AbortSignal | undefined {
  if (turn === undefined || turn === caller) return caller;
  return caller === undefined ? turn : AbortSignal.any([caller, turn]);
}

/** Counts the body bytes as they stream and errors the stream past the cap. */
function limitBody(res: UndiciResponse, url: string, max: number): UndiciResponse {
  let seen = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > max) {
        controller.error(new DiscoveryError('ERR_BODY_TOO_LARGE', `response body from ${url} exceeds maxResponseBytes ${max}`, { url, stage: 'fetch', status: res.status }));
        return;
      }
      controller.enqueue(chunk);
    },
  });
  const body = (res.body as ReadableStream<Uint8Array>).pipeThrough(counter);
  return new UndiciResponse(body as never, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Maps a rejected `fetch` onto a DiscoveryError (or the caller's own abort reason). */
function classify(err: unknown, url: string, callerSignal: AbortSignal | undefined, ours: AbortSignal): unknown {
  if (callerSignal?.aborted === true && err === callerSignal.reason) return err;
  if (ours.aborted && isDiscoveryError(ours.reason)) return ours.reason;
  const found = findDiscoveryError(err);
  if (found !== undefined) {
    return found.url !== undefined ? found : new DiscoveryError(found.code, `${found.message} (${url})`, { url, stage: found.stage ?? 'fetch', cause: found });
  }
  if (callerSignal?.aborted === true) return callerSignal.reason;
  const { message, code } = innermost(err);
  const timeout = code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
  const errCode: DiscoveryErrorCode = timeout ? 'ERR_FETCH_TIMEOUT' : 'ERR_FETCH_NETWORK';
  return new DiscoveryError(errCode, `${url}: ${message}${code === undefined ? '' : ` (${code})`}`, { url, stage: 'fetch', cause: err });
}


/** The most specific message and code in a `fetch failed` chain. */
function innermost(err: unknown): { message: string; code?: string } {
  let e: unknown = err;
  let message = err instanceof Error ? err.message : String(err);
  let code: string | undefined;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const { code: c, message: m, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof m === 'string' && m !== '') message = m;
    if (typeof c === 'string') code = c;
    e = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return code === undefined ? { message } : { message, code };
}

function validate(options: PolicyFetchOptions): Settings {
  const check = new NetworkOptionCheck('policy fetch', options);
  const settings: Settings = {
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
