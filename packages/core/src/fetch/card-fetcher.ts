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
import { DiscoveryError } from '../errors.js';
import { NetworkOptionCheck } from './option-check.js';
import type { Resolver } from './address-guard.js';
import { DeadlineQueue } from './deadlines.js';
import { Exchange, FetcherClosed, type FetchResult, type Pending, type Settings } from './card-exchange.js';
import { createGuardedConnection, type TrustedCa } from './guarded-connection.js';
import type { CredentialsInput } from '../rules/credentials.js';
import { type HostPolicy } from './host-policy.js';
import { redactUrl } from '../rules/redaction.js';
import type { OriginBudget } from './origin-budget.js';
import { BoundedMemo, URL_MEMO_ENTRIES } from './bounded-memo.js';
import { CACHE_DEFAULTS } from '../rules/defaults.js';
import { DEFAULT_MAX_CARD_BYTES } from '../rules/limits.js';

export type { FetchResult } from './card-exchange.js';

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
   * Per-origin credentials: a function or a `PeerCredentials` provider (not closed by the
   * fetcher). Asked with the request's exact origin (`https://host[:port]`); the headers returned
   * are sent only on that request, hence only to that origin. A 401 to a request that carried
   * them is retried once when the provider says fresh headers may help (a dropped OAuth token).
   */
  credentials?: CredentialsInput;
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
  /**
   * The upstream request budget this fetcher draws on (shared with other fetchers): each request
   * takes a token of its origin's bucket first. With none available, the request waits for its
   * turn up to `maxWaitMs` (0: it is refused at once); past that it fails with
   * `ERR_FETCH_NETWORK` (stage `fetch`) saying the budget for the origin is spent and when to
   * retry, and nothing is sent. `caller` labels the budget's counters. Default: no budget.
   */
  originBudget?: { budget: OriginBudget; maxWaitMs: number; caller: string };
}


/**
 * One request of {@link CardFetcher.fetch}: a GET by default; a POST with a JSON `body` for the
 * calls discovery makes on an agent's interface (the extended card's JSON-RPC method), under the
 * same bounds, policy and per-origin credentials.
 */
interface FetchInit {
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Default `GET`. */
  method?: 'GET' | 'POST';
  /** The request body (JSON text) of a POST, sent as `application/json`. */
  body?: string;
}

/** A long-lived fetcher with its own connection pool. */
export interface CardFetcher {
  /**
   * GETs `url` (or POSTs `init.body`) under all the bounds of the fetcher.
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
  fetch(url: string, init?: FetchInit): Promise<FetchResult>;
  /** Aborts fetches in flight and closes every connection. Idempotent. */
  close(): Promise<void>;
}

const SEND_HEADERS_CHANNEL = 'undici:client:sendHeaders';

/** A URL as the policy admitted it: its href, origin and request target, and its pending-list key. */
interface Judged {
  readonly href: string;
  readonly origin: string;
  readonly path: string;
  readonly key: string;
}

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
  const { hasCredentials } = connection;
  const { originBudget } = options;
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
  // Each distinct URL is judged once under the policy's rules in force (refusals are not cached),
  // in a bounded memo so URLs no longer fetched (churned endpoints) are forgotten. A reload that
  // changes the rules (`HostPolicy.update`) empties it: a host the allowlist no longer names is
  // refused at once, not once its URL leaves the memo.
  // Strings only: a URL object per endpoint would cost hundreds of bytes each.
  let admitted = new BoundedMemo<Judged>(URL_MEMO_ENTRIES);
  let admittedUnder = policy.generation;
  const origins = new BoundedMemo<string>(URL_MEMO_ENTRIES);

  function fetchCard(rawUrl: string, init: FetchInit = {}): Promise<FetchResult> {
    const started = performance.now();
    if (closed) return Promise.reject(new DiscoveryError('ERR_USAGE', 'the card fetcher is closed', { url: redactUrl(rawUrl), stage: 'fetch' }));
    let judged: Judged;
    try {
      judged = judge(rawUrl);
    } catch (err) {
      return Promise.reject(err);
    }
    const callerSignal = init.signal;
    if (callerSignal?.aborted === true) return Promise.reject(new DiscoveryError('ERR_FETCH_NETWORK', `${judged.href}: aborted by the caller`, { url: judged.href, stage: 'fetch', cause: callerSignal.reason }));
    // Nothing to wait for (no credentials, no upstream budget): the exchange's own promise is the
    // answer, without an async layer of its own (issue 43: the 304 path's turns).
    if (!hasCredentials && originBudget === undefined) return send(judged, init, buildHeaders(init.headers, undefined), started, callerSignal);
    return fetchAfterWaits(judged, init, started, callerSignal);
  }

  /** The URL judged under the policy's rules in force (memoized per URL); throws the refusal. */
  function judge(rawUrl: string): Judged {
    if (admittedUnder !== policy.generation) {
      admitted = new BoundedMemo(URL_MEMO_ENTRIES);
      admittedUnder = policy.generation;
    }
    let judged = admitted.get(rawUrl);
    if (judged === undefined) {
      const verdict = connection.admit(rawUrl);
      // Reuse equal strings already held (the caller's URL, one origin string per origin).
      let origin = origins.get(verdict.origin);
      if (origin === undefined) origins.set(verdict.origin, (origin = verdict.origin));
      const href = verdict.url.href === rawUrl ? rawUrl : verdict.url.href;
      // undici's request target: the path and query (a fragment is never sent). Taken from `href`
      // when it is there, which the memo holds anyway: the URL parser's own pieces would keep its
      // copy of the whole URL alive too (72 B an endpoint).
      const target = `${verdict.url.pathname}${verdict.url.search}`;
      const path = href.startsWith(target, origin.length) ? href.slice(origin.length, origin.length + target.length) : target;
      judged = { href, origin, path, key: recordRemote ? `${origin} ${path}` : '' };
      admitted.set(rawUrl, judged);
    }
    return judged;
  }

  /** A fetch that first takes its credentials or its turn under the origin's budget. */
  async function fetchAfterWaits(judged: Judged, init: FetchInit, started: number, callerSignal: AbortSignal | undefined): Promise<FetchResult> {
    const url = judged.href;
    const extra = hasCredentials ? await connection.credentialsFor(judged.origin, url) : undefined;
    if (callerSignal?.aborted === true) throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted by the caller`, { url, stage: 'fetch', cause: callerSignal.reason });
    // The origin's turn under the shared budget; the fetch's own deadlines start after the wait.
    if (originBudget !== undefined && (await takeTurn(originBudget, judged.origin, url, callerSignal))) started = performance.now();
    if (closed) throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted because the card fetcher was closed`, { url, stage: 'fetch' });
    const first = await send(judged, init, buildHeaders(init.headers, extra), started, callerSignal);
    // The 401 rule (guarded-connection.ts): one retry with headers asked anew, for this origin only.
    if (extra === undefined || !(await connection.retryAfter(judged.origin, first.status, extra))) return first;
    const fresh = await connection.credentialsFor(judged.origin, url);
    if (closed) throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted because the card fetcher was closed`, { url, stage: 'fetch' });
    return send(judged, init, buildHeaders(init.headers, fresh), performance.now(), callerSignal);
  }

  function send(judged: Judged, init: FetchInit, headers: Record<string, string>, started: number, callerSignal: AbortSignal | undefined): Promise<FetchResult> {
    const url = judged.href;
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
      if (init.method === 'POST') {
        headers['content-type'] = 'application/json';
        connection.dispatcher.dispatch({ origin: judged.origin, path: judged.path, method: 'POST', headers, body: init.body ?? '' }, exchange);
      } else connection.dispatcher.dispatch({ origin: judged.origin, path: judged.path, method: 'GET', headers }, exchange);
    });
  }

  /** Takes a token of `origin`: true after a wait, false when one was there; throws when the budget is spent or the wait aborted. */
  async function takeTurn(o: NonNullable<CardFetcherOptions['originBudget']>, origin: string, url: string, signal: AbortSignal | undefined): Promise<boolean> {
    const waitMs = o.budget.reserve(origin, o.maxWaitMs, o.caller);
    if (waitMs === undefined) throw budgetSpent(o.budget, origin, url);
    if (waitMs === 0) return false;
    try {
      await o.budget.sleep(waitMs, signal);
    } catch (err) {
      o.budget.refund(origin);
      throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted by the caller`, { url, stage: 'fetch', cause: err });
    }
    return true;
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

/** The refusal of a request the origin's budget has no room for: nothing was sent. */
function budgetSpent(budget: OriginBudget, origin: string, url: string): DiscoveryError {
  const retry = Math.max(1, Math.ceil(budget.retryAfterMs(origin) / 1000));
  const message = `${url}: not requested: the upstream budget for ${origin} is spent (${budget.requestsPerSecond} requests/s, burst ${budget.burst}: cache.originRequestsPerSecond, cache.originBurst); retry in ${retry} s`;
  return new DiscoveryError('ERR_FETCH_NETWORK', message, { url, stage: 'fetch' });
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
