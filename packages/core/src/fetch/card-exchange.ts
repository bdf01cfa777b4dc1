/**
 * One card GET as an undici dispatch handler, and how its failures become errors: the response is
 * read straight from the connection, bounded by the fetcher's settings, and settles exactly once.
 * `card-fetcher.ts` admits the URL, builds the headers and dispatches it.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { DiscoveryError, findDiscoveryError } from '../errors.js';
import type { Expiring } from './deadlines.js';
import { encodingRefusal, parseContentLength, redirectRefusal } from './guarded-connection.js';
import { networkFailure, type FailurePhase } from './failure.js';

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

/** The fetcher's validated options, as every exchange reads them. */
export interface Settings {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  totalTimeoutMs: number;
  maxBodyBytes: number;
  maxConnectionsPerOrigin: number;
  userAgent: string;
}

/** Pending fetches waiting to learn their peer address, keyed by `origin path`. */
export interface Pending {
  remoteAddress?: string;
}

class DeadlineExceeded extends Error {}
export class FetcherClosed extends Error {}

interface ClassifyContext {
  url: string;
  phase: FailurePhase;
  status: number | undefined;
  deadlineHit: boolean;
  reason: unknown;
  callerAborted: boolean;
  settings: Settings;
}

/** Maps anything thrown during a fetch onto one DiscoveryError: our own stops first, then the one classification (`failure.ts`). */
function classify(err: unknown, ctx: ClassifyContext): DiscoveryError {
  const { url, settings } = ctx;
  const base = { url, stage: 'fetch' as const, cause: err, ...(ctx.status !== undefined && { status: ctx.status }) };
  if (ctx.deadlineHit) {
    return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: total deadline of ${settings.totalTimeoutMs} ms exceeded${ctx.phase === 'body' ? ' while reading the body' : ''}`, base);
  }
  if (ctx.reason instanceof FetcherClosed) return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted because the card fetcher was closed`, base);
  if (ctx.callerAborted && findDiscoveryError(err) === undefined) return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: aborted by the caller`, base);
  return networkFailure(err, url, ctx.phase, settings, ctx.status);
}

const EMPTY = Buffer.alloc(0);

/**
 * One GET as an undici dispatch handler: the response is read straight from the connection (no
 * body stream), and the fetch settles exactly once, whichever comes first: the response, an
 * error, a refusal of ours (redirect, encoding, declared size), the total deadline (from the
 * fetcher's {@link DeadlineQueue}), the caller's signal, or close().
 */
export class Exchange implements Expiring, Dispatcher.DispatchHandler {
  readonly deadline: number;
  readonly pending: Pending = {};
  #abort: ((reason: Error) => void) | undefined;
  /** Why we stopped the request, passed to undici's abort when it comes. */
  #reason: Error | undefined;
  #settled = false;
  #phase: FailurePhase = 'request';
  #status: number | undefined;
  #headers: Record<string, string> | undefined;
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
    const encoded = encodingRefusal(statusCode, headers['content-encoding'], url);
    if (encoded !== undefined) return this.#refuse(encoded);
    const declared = parseContentLength(headers['content-length']);
    if (declared !== undefined && declared > settings.maxBodyBytes) {
      return this.#refuse(new DiscoveryError('ERR_BODY_TOO_LARGE', `content-length ${declared} from ${url} exceeds maxBodyBytes ${settings.maxBodyBytes}`, { url, stage: 'fetch', status: statusCode }));
    }
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
    // A body shorter than its Content-Length never completes: undici reports it through onError
    // (classified "truncated" by failure.ts; test/fetch/card-fetcher.test.ts "truncated").
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

