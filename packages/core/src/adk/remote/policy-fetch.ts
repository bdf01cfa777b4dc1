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
 * - per-origin credentials are computed for the request's own origin only;
 * - connect plus waiting for the response headers is bounded by `timeoutMs`, silence between
 *   body chunks by `bodyTimeoutMs`, and the bytes of one response by `maxResponseBytes`;
 *   streaming (SSE) bodies pass through chunk by chunk.
 *
 * It uses undici 7's own `fetch` with an undici 7 `Agent` as dispatcher: Node 20's global
 * `fetch` is undici 6, whose dispatcher interface differs.
 *
 * @module
 */
import net from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch, Headers as UndiciHeaders, Response as UndiciResponse } from 'undici';
import { DiscoveryError, findDiscoveryError, isDiscoveryError } from '../../errors.js';
import type { DiscoveryErrorCode } from '../../errors.js';
import { createGuardedLookup, NetworkOptionCheck } from '../../fetch/index.js';
import type { HostPolicy, Resolver } from '../../fetch/index.js';

/** Per-origin credentials: called with the request's exact origin (`https://host[:port]`). */
export type OriginCredentials = (origin: string) => Record<string, string> | undefined | Promise<Record<string, string> | undefined>;

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
   * they cannot be carried elsewhere.
   */
  credentials?: OriginCredentials;
  /** DNS override (tests, custom resolvers). Default: the system resolver. */
  resolve?: Resolver;
  /** Sent when the caller sets no `user-agent`. Default `a2a-discovery/<version>`. */
  userAgent?: string;
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
 * caller's own signal rejects with the signal's reason, as `fetch` does.
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
  const { policy, credentials } = options;
  const lookup = createGuardedLookup({ policy, ...(options.resolve !== undefined && { resolve: options.resolve }) });
  const baseConnect = buildConnector({ rejectUnauthorized: true, minVersion: 'TLSv1.2', lookup, timeout: settings.timeoutMs });
  // Defense in depth: whatever produced the socket, its peer must be an allowed address.
  const connect: buildConnector.connector = (connectOptions, callback) => {
    baseConnect(connectOptions, (...args: [null, net.Socket] | [Error, null]) => {
      if (args[0] !== null) {
        callback(args[0], null);
        return;
      }
      const socket = args[1];
      const remote = socket.remoteAddress;
      if (remote === undefined || !policy.isAddressAllowed(remote)) {
        socket.destroy();
        callback(new DiscoveryError('ERR_ADDRESS_BLOCKED', `connected peer address ${remote ?? '(unknown)'} of ${connectOptions.hostname} is blocked`, { stage: 'address' }), null);
        return;
      }
      callback(null, socket);
    });
  };
  const agent = new Agent({ connect, headersTimeout: settings.timeoutMs, bodyTimeout: settings.bodyTimeoutMs });
  const inFlight = new Set<AbortController>();
  let closed = false;

  async function policyFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const request = await normalizeInput(input, init);
    const rawUrl = request.url;
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the policy fetch is closed', { url: safeUrl(rawUrl), stage: 'fetch' });
    const verdict = policy.check(rawUrl);
    if (!verdict.allowed) {
      throw new DiscoveryError(verdict.code, `${verdict.reason} (${safeUrl(rawUrl)})`, {
        url: safeUrl(rawUrl),
        stage: verdict.code === 'ERR_INSECURE_URL' ? 'policy' : 'resolve',
      });
    }
    const url = verdict.url.href;
    const host = verdict.url.hostname.startsWith('[') ? verdict.url.hostname.slice(1, -1) : verdict.url.hostname;
    // IP literals never reach a lookup function: judge them here.
    if (net.isIP(host) !== 0 && !policy.isAddressAllowed(host)) {
      throw new DiscoveryError('ERR_ADDRESS_BLOCKED', `address ${host} is blocked (only public unicast addresses and configured ranges may be contacted)`, {
        url,
        stage: 'address',
      });
    }

    const headers = new UndiciHeaders(request.headers as ConstructorParameters<typeof UndiciHeaders>[0]);
    if (!headers.has('user-agent')) headers.set('user-agent', settings.userAgent);
    if (credentials !== undefined) {
      let extra: Record<string, string> | undefined;
      try {
        extra = await credentials(verdict.origin);
      } catch (err) {
        throw new DiscoveryError('ERR_FETCH_NETWORK', `credentials provider failed for ${verdict.origin}`, { cause: err, url, stage: 'fetch' });
      }
      for (const [name, value] of Object.entries(extra ?? {})) headers.set(name, String(value));
    }

    // Our controller carries the headers deadline and close(); the caller's signal stays
    // attached for the whole exchange, body included (AbortSignal.any).
    const controller = new AbortController();
    const callerSignal = request.signal ?? undefined;
    const signal = callerSignal === undefined ? controller.signal : AbortSignal.any([callerSignal, controller.signal]);
    const timer = setTimeout(() => {
      controller.abort(new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: no response headers within ${settings.timeoutMs} ms`, { url, stage: 'fetch' }));
    }, settings.timeoutMs);
    inFlight.add(controller);

    let res: UndiciResponse;
    try {
      res = await undiciFetch(url, { method: request.method, headers, body: request.body as never, signal, redirect: 'manual', dispatcher: agent });
    } catch (err) {
      throw classify(err, url, callerSignal, controller.signal);
    } finally {
      clearTimeout(timer);
      // After the headers, close() ends a body still being read by destroying the agent's sockets.
      inFlight.delete(controller);
    }

    if (res.status >= 300 && res.status < 400 && res.status !== 304) {
      await res.body?.cancel().catch(() => undefined);
      const location = res.headers.get('location');
      throw new DiscoveryError(
        'ERR_REDIRECT_REFUSED',
        `refused redirect ${res.status} from ${url} to ${location === null ? '(no Location header)' : JSON.stringify(location.slice(0, 500))}; redirects are never followed`,
        { url, stage: 'fetch', status: res.status },
      );
    }
    if (res.body === null || NULL_BODY_STATUS.has(res.status)) return res as unknown as Response;
    return limitBody(res, url, settings.maxResponseBytes) as unknown as Response;
  }

  const result = policyFetch as PolicyFetch;
  result.close = async () => {
    if (closed) return;
    closed = true;
    for (const controller of inFlight) controller.abort(new DiscoveryError('ERR_USAGE', 'the policy fetch was closed', { stage: 'fetch' }));
    await agent.destroy();
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

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url.slice(0, 200);
  }
}

function validate(options: PolicyFetchOptions): Settings {
  const check = new NetworkOptionCheck('policy fetch', options);
  const settings: Settings = {
    timeoutMs: check.positive('timeoutMs', 30_000),
    bodyTimeoutMs: check.positive('bodyTimeoutMs', 300_000),
    maxResponseBytes: check.positive('maxResponseBytes', 16 * 1024 * 1024),
    userAgent: check.userAgent(),
  };
  check.fn('credentials', '(origin) => headers');
  check.fn('resolve', '(hostname) => Promise<addresses>');
  check.done();
  return settings;
}
