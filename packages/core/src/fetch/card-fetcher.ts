/**
 * The safe card fetcher: the only code that touches the network for discovery.
 *
 * One GET, bounded in every dimension (threats T1–T12 of the reference). The network checks are
 * those of the guarded connection (`guarded-connection.ts`, shared with the A2A policy fetch):
 * - the URL must pass the {@link HostPolicy} (https only, allowlisted origin, no userinfo);
 * - IP-literal hosts are checked before dispatch, resolved addresses inside the connection path
 *   (see `address-guard.ts`), and the connected socket's peer address once more;
 * - redirects are never followed (any 3xx but 304 is an error naming its Location);
 * - connect, headers, body-idle and one total deadline bound the time, `maxBodyBytes` bounds the
 *   bytes received, and nothing is decompressed (`accept-encoding: identity` is requested and any
 *   other content-encoding is refused), so gzip bombs cannot expand;
 * - certificates are always verified (TLS 1.2+), env proxies are ignored, credentials are sent
 *   only to the origin they were issued for.
 *
 * Every status other than a redirect is returned as a {@link FetchResult}: what 304, 401 or 503
 * mean is the cache's decision.
 *
 * @module
 */
import diagnostics from 'node:diagnostics_channel';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { DiscoveryError, findDiscoveryError } from '../errors.js';
import { NetworkOptionCheck } from './option-check.js';
import type { Resolver } from './address-guard.js';
import { DeadlineQueue, type Expiring } from './deadlines.js';
import { createGuardedConnection, type OriginCredentials, redirectRefusal, type TrustedCa } from './guarded-connection.js';
import { type HostPolicy, safeUrlForMessage } from './host-policy.js';
import { CACHE_DEFAULTS } from '../rules/defaults.js';
import { DEFAULT_MAX_CARD_BYTES } from '../rules/limits.js';

/**
 * Inputs of {@link createCardFetcher}. All durations are milliseconds, all sizes bytes.
 * undici runs the connect, headers and body timeouts on a coarse timer (they may fire ~0.5 s
 * late); `totalTimeoutMs` is a plain timer and is the bound to rely on for tight deadlines.
 */
export interface CardFetcherOptions {
  /** Decides which URLs and addresses may be contacted. */
  policy: HostPolicy;
  /** Bound on DNS resolution plus TCP and TLS handshakes. Default 3000. */
  connectTimeoutMs?: number;
  /** Bound on waiting for the response headers once the request is sent. Default 3000. */
  headersTimeoutMs?: number;
  /** Bound on the silence between two body chunks. Default 2000. */
  bodyTimeoutMs?: number;
  /** One deadline for the whole fetch, body included (slow-drip bodies fail here). Default 5000. */
  totalTimeoutMs?: number;
  /** Cap on the body bytes received (never decompressed). Default 65536. */
  maxBodyBytes?: number;
  /**
   * Per-origin credentials. Called with the request's exact origin (`https://host[:port]`); the
   * headers returned are sent only on that request, hence only to that origin.
   */
  credentials?: OriginCredentials;
  /** DNS override (tests, custom resolvers). Default: `dns.lookup` with `all: true`. */
  lookup?: Resolver;
  /** Default `a2a-discovery/<version>`. */
  userAgent?: string;
  /** Connections kept per origin (politeness). Default 1. */
  maxConnectionsPerOrigin?: number;
  /** Record the peer address of each response in `FetchResult.remoteAddress` (costs a little per request). Default false. */
  recordRemoteAddress?: boolean;
  /**
   * Extra trusted CA certificates (PEM), added to Node's default roots, e.g. for in-cluster
   * services behind a private CA. Verification itself can never be turned off.
   */
  ca?: TrustedCa;
}

/** One HTTP response, returned for every status except a refused redirect. */
export interface FetchResult {
  /** The URL fetched (host normalized by the policy). */
  url: string;
  status: number;
  /** Lower-case names, first value of each. */
  headers: Record<string, string>;
  /** The raw bytes received, at most `maxBodyBytes`. Empty for 304. */
  body: Buffer;
  /** Wall time of the whole fetch, from `performance.now()`. */
  durationMs: number;
  /** The peer address of the connection that carried the request (with `recordRemoteAddress`). */
  remoteAddress?: string;
}

/** A long-lived fetcher with its own connection pool. */
export interface CardFetcher {
  /**
   * GETs `url` under all the bounds of the fetcher.
   *
   * @throws DiscoveryError with one of these codes:
   *   `ERR_HOST_NOT_ALLOWED` (stage `resolve`), `ERR_INSECURE_URL` (stage `policy`),
   *   `ERR_ADDRESS_BLOCKED` (stage `address`), `ERR_REDIRECT_REFUSED` (stage `fetch`, message names
   *   the Location), `ERR_FETCH_TIMEOUT` (message names the bound: connect, headers, body or total
   *   deadline, with its ms), `ERR_FETCH_NETWORK` (refused, reset, truncated, TLS certificate,
   *   aborted by the caller), `ERR_BODY_TOO_LARGE`, `ERR_CONTENT_ENCODING`, `ERR_USAGE` after close().
   * @example
   * const res = await fetcher.fetch(cardUrl, { headers: { 'if-none-match': etag } });
   * if (res.status === 304) keepCachedCard();
   */
  fetch(url: string, init?: { headers?: Record<string, string>; signal?: AbortSignal }): Promise<FetchResult>;
  /** Aborts fetches in flight and closes every connection. Idempotent. */
  close(): Promise<void>;
}

interface Settings {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  totalTimeoutMs: number;
  maxBodyBytes: number;
  maxConnectionsPerOrigin: number;
  userAgent: string;
}

/** Pending fetches waiting to learn their peer address, keyed by `origin path`. */
interface Pending {
  remoteAddress?: string;
}

class DeadlineExceeded extends Error {}
class FetcherClosed extends Error {}

const TLS_CERT_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_|ERR_SSL_/;
const SEND_HEADERS_CHANNEL = 'undici:client:sendHeaders';

/**
 * Creates a fetcher. No I/O happens until {@link CardFetcher.fetch}.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options (every problem in
 *   `problems`) and when `NODE_TLS_REJECT_UNAUTHORIZED=0` is set in the environment.
 * @example
 * const fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: ['https://*.example.com'] }) });
 * try { const res = await fetcher.fetch('https://a.example.com/.well-known/agent-card.json'); }
 * finally { await fetcher.close(); }
 */
export function createCardFetcher(options: CardFetcherOptions): CardFetcher {
  const settings = validate(options);
  const { policy } = options;
  const ourSockets = new WeakSet<net.Socket>();
  const connection = createGuardedConnection({
    policy,
    ...(options.lookup !== undefined && { resolve: options.lookup }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    connectTimeoutMs: settings.connectTimeoutMs,
    headersTimeoutMs: settings.headersTimeoutMs,
    bodyTimeoutMs: settings.bodyTimeoutMs,
    connections: settings.maxConnectionsPerOrigin,
    // Counted on the bytes received (nothing is decompressed), with or without content-length.
    maxResponseSize: settings.maxBodyBytes,
    onSocket: (socket) => ourSockets.add(socket),
  });
  const hasCredentials = options.credentials !== undefined;
  const pendingByKey = new Map<string, Pending[]>();
  /** Fetches in flight, oldest first, each with its total deadline (one timer for all). */
  const deadlines = new DeadlineQueue<Exchange>();
  let closed = false;

  // Learn which socket carried each request (public undici diagnostics, our sockets only).
  const onSendHeaders = (message: unknown): void => {
    const { request: req, socket } = message as { request: { origin?: unknown; path?: unknown }; socket: net.Socket };
    if (!ourSockets.has(socket)) return;
    const waiting = pendingByKey.get(`${String(req.origin)} ${String(req.path)}`);
    const entry = waiting?.find((p) => p.remoteAddress === undefined);
    if (entry !== undefined) entry.remoteAddress = socket.remoteAddress ?? '';
  };
  const recordRemote = options.recordRemoteAddress === true;
  if (recordRemote) diagnostics.subscribe(SEND_HEADERS_CHANNEL, onSendHeaders);
  // The policy is immutable: judge each distinct URL once (refusals are not cached).
  // Strings only: a URL object per endpoint would cost hundreds of bytes each, for ever.
  const admitted = new Map<string, { href: string; origin: string; path: string; key: string }>();
  const origins = new Map<string, string>();

  async function fetchCard(rawUrl: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<FetchResult> {
    const started = performance.now();
    if (closed) throw new DiscoveryError('ERR_USAGE', 'the card fetcher is closed', { url: safeUrlForMessage(rawUrl), stage: 'fetch' });
    let judged = admitted.get(rawUrl);
    if (judged === undefined) {
      const verdict = connection.admit(rawUrl);
      // Reuse equal strings already held (the caller's URL, one origin string per origin).
      let origin = origins.get(verdict.origin);
      if (origin === undefined) origins.set(verdict.origin, (origin = verdict.origin));
      const href = verdict.url.href === rawUrl ? rawUrl : verdict.url.href;
      // undici's request target: the path and query (a fragment is never sent).
      const path = `${verdict.url.pathname}${verdict.url.search}`;
      judged = { href, origin, path, key: recordRemote ? `${origin} ${path}` : '' };
      if (admitted.size >= 100_000) admitted.clear();
      admitted.set(rawUrl, judged);
    }
    const url = judged.href;
    const headers = hasCredentials ? buildHeaders(init.headers, await connection.credentialsFor(judged.origin, url)) : buildHeaders(init.headers, undefined);
    const callerSignal = init.signal;
    if (callerSignal?.aborted === true) throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted by the caller`, { url, stage: 'fetch', cause: callerSignal.reason });
    if (closed) throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted because the card fetcher was closed`, { url, stage: 'fetch' });

    return new Promise<FetchResult>((resolve, reject) => {
      const exchange = new Exchange(url, started, settings, resolve, reject, callerSignal, () => {
        deadlines.delete(exchange);
        if (recordRemote) forgetPending(judged.key, exchange.pending);
      });
      deadlines.add(exchange);
      if (recordRemote) {
        let list = pendingByKey.get(judged.key);
        if (list === undefined) pendingByKey.set(judged.key, (list = []));
        list.push(exchange.pending);
      }
      connection.dispatcher.dispatch({ origin: judged.origin, path: judged.path, method: 'GET', headers }, exchange);
    });
  }

  function forgetPending(key: string, pending: Pending): void {
    const list = pendingByKey.get(key);
    if (list === undefined) return;
    const i = list.indexOf(pending);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) pendingByKey.delete(key);
  }

  function buildHeaders(callerHeaders: Record<string, string> | undefined, extra: Record<string, string> | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': settings.userAgent };
    if (callerHeaders !== undefined) for (const name in callerHeaders) headers[name.toLowerCase()] = String(callerHeaders[name]);
    if (extra !== undefined) for (const name in extra) headers[name.toLowerCase()] = String(extra[name]);
    // Nothing is ever decompressed: ask for the identity encoding whatever the caller set.
    headers['accept-encoding'] = 'identity';
    return headers;
  }

  return {
    fetch: fetchCard,
    async close() {
      if (closed) return;
      closed = true;
      for (const exchange of [...deadlines.values()]) exchange.cancel(new FetcherClosed('the card fetcher was closed'));
      if (recordRemote) diagnostics.unsubscribe(SEND_HEADERS_CHANNEL, onSendHeaders);
      await connection.close();
    },
  };
}

interface ClassifyContext {
  url: string;
  phase: 'request' | 'body';
  status: number | undefined;
  deadlineHit: boolean;
  reason: unknown;
  callerAborted: boolean;
  settings: Settings;
}

/** Maps anything thrown during a fetch onto one DiscoveryError with url, stage and cause. */
function classify(err: unknown, ctx: ClassifyContext): DiscoveryError {
  const { url, settings } = ctx;
  const base = { url, stage: 'fetch' as const, cause: err, ...(ctx.status !== undefined && { status: ctx.status }) };
  if (ctx.deadlineHit) {
    return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: total deadline of ${settings.totalTimeoutMs} ms exceeded${ctx.phase === 'body' ? ' while reading the body' : ''}`, base);
  }
  if (ctx.reason instanceof FetcherClosed) return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted because the card fetcher was closed`, base);
  const found = findDiscoveryError(err);
  if (found !== undefined) {
    if (found.url !== undefined) return found;
    return new DiscoveryError(found.code, `${found.message} (${url})`, { ...base, cause: found, stage: found.stage ?? 'fetch' });
  }
  if (ctx.callerAborted) return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted by the caller`, base);
  const code = errorCode(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: connect timeout of ${settings.connectTimeoutMs} ms exceeded (DNS, TCP and TLS)`, base);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: headers timeout of ${settings.headersTimeoutMs} ms exceeded`, base);
    case 'UND_ERR_BODY_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: body timeout of ${settings.bodyTimeoutMs} ms between chunks exceeded`, base);
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return new DiscoveryError('ERR_BODY_TOO_LARGE', `${url}: body exceeds maxBodyBytes ${settings.maxBodyBytes}`, base);
    default:
      break;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (code !== undefined && TLS_CERT_ERROR.test(code)) {
    return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: TLS certificate rejected (${code}): ${message}`, base);
  }
  if (ctx.phase === 'body') {
    return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: connection failed before the body was complete (truncated): ${message}${code ? ` (${code})` : ''}`, base);
  }
  return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: ${message}${code ? ` (${code})` : ''}`, base);
}


function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    e = Array.isArray(errors) && errors.length > 0 ? errors[0] : (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const EMPTY = Buffer.alloc(0);

/**
 * One GET as an undici dispatch handler: the response is read straight from the connection (no
 * body stream), and the fetch settles exactly once, whichever comes first: the response, an
 * error, a refusal of ours (redirect, encoding, declared size), the total deadline (from the
 * fetcher's {@link DeadlineQueue}), the caller's signal, or close().
 */
class Exchange implements Expiring, Dispatcher.DispatchHandler {
  readonly deadline: number;
  readonly pending: Pending = {};
  #abort: ((reason: Error) => void) | undefined;
  /** Why we stopped the request, passed to undici's abort when it comes. */
  #reason: Error | undefined;
  #settled = false;
  #phase: 'request' | 'body' = 'request';
  #status: number | undefined;
  #headers: Record<string, string> | undefined;
  #declared: number | undefined;
  #chunks: Buffer[] | undefined;
  #received = 0;
  #deadlineHit = false;
  #callerAborted = false;

  constructor(
    readonly url: string,
    readonly started: number,
    readonly settings: Settings,
    readonly resolve: (r: FetchResult) => void,
    readonly reject: (e: DiscoveryError) => void,
    readonly signal: AbortSignal | undefined,
    readonly done: () => void,
  ) {
    this.deadline = started + settings.totalTimeoutMs;
    signal?.addEventListener('abort', this, { once: true });
  }

  // ---- undici's handler interface -----------------------------------------------------------

  onConnect(abort: (reason?: Error) => void): void {
    if (this.#reason !== undefined) abort(this.#reason);
    else this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (this.#settled) return false;
    if (statusCode < 200) return true; // 1xx: the final response follows
    const { url, settings } = this;
    const headers = firstValues(rawHeaders);
    this.#status = statusCode;
    this.#headers = headers;
    const redirect = redirectRefusal(statusCode, headers['location'], url);
    if (redirect !== undefined) return this.#refuse(redirect);
    const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (statusCode !== 304 && encoding !== '' && encoding !== 'identity') {
      return this.#refuse(
        new DiscoveryError('ERR_CONTENT_ENCODING', `refused content-encoding ${JSON.stringify(encoding.slice(0, 100))} from ${url}; only identity is accepted (nothing is decompressed)`, {
          url,
          stage: 'fetch',
          status: statusCode,
        }),
      );
    }
    const declared = parseContentLength(headers['content-length']);
    if (declared !== undefined && declared > settings.maxBodyBytes) {
      return this.#refuse(new DiscoveryError('ERR_BODY_TOO_LARGE', `content-length ${declared} from ${url} exceeds maxBodyBytes ${settings.maxBodyBytes}`, { url, stage: 'fetch', status: statusCode }));
    }
    this.#declared = declared;
    this.#phase = 'body';
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    (this.#chunks ??= []).push(chunk);
    this.#received += chunk.byteLength;
    return true;
  }

  onComplete(): void {
    if (this.#settled) return;
    const { url } = this;
    const status = this.#status ?? 0;
    const received = this.#received;
    const declared = this.#declared;
    if (declared !== undefined && status !== 304 && status !== 204 && received !== declared) {
      this.#settle(new DiscoveryError('ERR_FETCH_NETWORK', `body from ${url} truncated: received ${received} of ${declared} declared bytes`, { url, stage: 'fetch', status }));
      return;
    }
    // One copy out of the connection's buffers (never a view that would pin them).
    const body = this.#chunks === undefined ? EMPTY : Buffer.concat(this.#chunks, received);
    const result: FetchResult = { url, status, headers: this.#headers ?? {}, body, durationMs: performance.now() - this.started };
    if (this.pending.remoteAddress !== undefined && this.pending.remoteAddress !== '') result.remoteAddress = this.pending.remoteAddress;
    this.#settle(undefined, result);
  }

  onError(err: Error): void {
    if (this.#settled) return;
    this.#settle(this.#classify(err));
  }

  // ---- our side -----------------------------------------------------------------------------

  /** The total deadline passed (called by the queue, which has already let go of this fetch). */
  expire(): void {
    this.#deadlineHit = true;
    this.cancel(new DeadlineExceeded(`total deadline of ${this.settings.totalTimeoutMs} ms exceeded`));
  }

  /** The caller's signal fired (EventTarget listener object). */
  handleEvent(): void {
    this.#callerAborted = true;
    this.cancel(this.signal?.reason instanceof Error ? this.signal.reason : new Error('aborted by the caller'));
  }

  /** Stops the request for `reason` and rejects the fetch (classified). */
  cancel(reason: Error): void {
    if (this.#settled) return;
    this.#reason = reason;
    this.#settle(this.#classify(reason));
    this.#abort?.(reason);
  }

  /** Rejects with our own refusal, then aborts the response (its error is ignored). */
  #refuse(err: DiscoveryError): boolean {
    this.#reason = err;
    this.#settle(err);
    this.#abort?.(err);
    return false;
  }

  #classify(err: unknown): DiscoveryError {
    return classify(err, {
      url: this.url,
      phase: this.#phase,
      status: this.#status,
      deadlineHit: this.#deadlineHit,
      reason: this.#reason,
      callerAborted: this.#callerAborted,
      settings: this.settings,
    });
  }

  #settle(error: DiscoveryError | undefined, result?: FetchResult): void {
    this.#settled = true;
    this.#chunks = undefined;
    this.signal?.removeEventListener('abort', this);
    this.done();
    if (error !== undefined) this.reject(error);
    else this.resolve(result!);
  }
}

/** Response headers from undici's raw list: lower-case names, the first value of each. */
function firstValues(raw: Buffer[]): Record<string, string> {
  const out: Record<string, string> = {};
  // From the last to the first, so the first value of a repeated header is the one kept.
  for (let i = (raw.length & ~1) - 2; i >= 0; i -= 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    // `__proto__` would set the object's prototype, not a header.
    if (name !== '__proto__') out[name] = raw[i + 1]!.toString('latin1');
  }
  return out;
}

function parseContentLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function validate(options: CardFetcherOptions): Settings {
  const check = new NetworkOptionCheck('card fetcher', options);
  const settings: Settings = {
    connectTimeoutMs: check.positive('connectTimeoutMs', 3000),
    headersTimeoutMs: check.positive('headersTimeoutMs', 3000),
    bodyTimeoutMs: check.positive('bodyTimeoutMs', 2000),
    totalTimeoutMs: check.positive('totalTimeoutMs', CACHE_DEFAULTS.totalTimeoutMs),
    maxBodyBytes: check.positive('maxBodyBytes', DEFAULT_MAX_CARD_BYTES, true),
    maxConnectionsPerOrigin: check.positive('maxConnectionsPerOrigin', 1, true),
    userAgent: check.userAgent(),
  };
  check.credentials();
  check.resolver('lookup');
  check.done();
  return settings;
}
