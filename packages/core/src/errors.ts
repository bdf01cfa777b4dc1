/**
 * The one error type of a2a-discovery.
 *
 * Every error the library throws or reports is a {@link DiscoveryError} with a stable `code`
 * (never parse messages), a `failure` class that keeps unrelated faults apart, and the context
 * a user needs to act on it: the URL, the pipeline stage, the JSON path or config location.
 * Two kinds of plain `Error` exist on purpose and never reach a caller as such: the reasons
 * handed to an `AbortController` (the fetcher reports the abort as its own `DiscoveryError`),
 * and the guarded DNS lookup's errno-shaped errors (`ENOTFOUND`, the shape undici expects from a
 * lookup; the fetcher reports them as `ERR_FETCH_NETWORK`). Errors of the libraries called on a
 * turn (ADK's runner, a peer's client) reach the caller as ADK reports them.
 *
 * Failure classes, matching the stages of the dashboard:
 * - `network`: the peer could not be reached or answered badly (timeouts, status codes, size).
 * - `invalid`: the content was rejected (not JSON, schema problems, bad signature).
 * - `policy`: our own rules refused it (host not allowlisted, blocked address, insecure interface).
 * - `unsuitable`: a valid card that no need matches; it is still cached.
 * - `state`: not possible now (no snapshot published yet, a session upgrade refused).
 * - `config`: the user's configuration or command line is wrong.
 * - `internal`: a broken invariant inside the library (a bug, not bad input).
 *
 * @module
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export type DiscoveryErrorCode =
  // network
  | 'ERR_FETCH_NETWORK'
  | 'ERR_FETCH_TIMEOUT'
  | 'ERR_FETCH_STATUS'
  | 'ERR_BODY_TOO_LARGE'
  | 'ERR_CONTENT_ENCODING'
  // invalid content
  | 'ERR_CARD_TOO_LARGE'
  | 'ERR_CARD_MALFORMED'
  | 'ERR_CARD_INVALID'
  | 'ERR_SIGNATURE_MISSING'
  | 'ERR_SIGNATURE_INVALID'
  /** A card whose bytes do not match the digest its publisher pinned (an AI Catalog Trust Manifest). */
  | 'ERR_DIGEST_MISMATCH'
  // policy refusal
  | 'ERR_HOST_NOT_ALLOWED'
  | 'ERR_ADDRESS_BLOCKED'
  | 'ERR_INSECURE_URL'
  | 'ERR_INSECURE_INTERFACE'
  | 'ERR_REDIRECT_REFUSED'
  // unsuitable
  | 'ERR_UNSUITABLE'
  // not possible in the current state
  | 'ERR_NOT_READY'
  | 'ERR_UPGRADE_REFUSED'
  | 'ERR_SESSION_LIMIT'
  /** The state store is held by another process (a SQLite file opened for writing twice). */
  | 'ERR_STORE_LOCKED'
  /** The state store could not be opened, migrated, read or written. */
  | 'ERR_STORE_UNAVAILABLE'
  /** A write of a former leader refused by the fencing epoch: another replica leads now. */
  | 'ERR_STORE_FENCED'
  // configuration and usage
  | 'ERR_CONFIG_INVALID'
  | 'ERR_REGISTRY_INVALID'
  | 'ERR_USAGE'
  | 'ERR_SESSION_INVALID'
  // internal
  | 'ERR_INTERNAL';

/** Which kind of fault an error is. See the module comment. */
export type FailureClass = 'network' | 'invalid' | 'policy' | 'unsuitable' | 'state' | 'config' | 'internal';

/** The pipeline stage that decided (the stages of docs/pipeline.md). */
export type Stage =
  | 'source'
  | 'resolve'
  | 'address'
  | 'fetch'
  | 'parse'
  | 'schema'
  | 'policy'
  | 'signature'
  | 'match'
  | 'health'
  | 'snapshot'
  | 'build'
  | 'config'
  | 'store';

const FAILURE_OF: Record<DiscoveryErrorCode, FailureClass> = {
  ERR_FETCH_NETWORK: 'network',
  ERR_FETCH_TIMEOUT: 'network',
  ERR_FETCH_STATUS: 'network',
  ERR_BODY_TOO_LARGE: 'network',
  ERR_CONTENT_ENCODING: 'network',
  ERR_CARD_TOO_LARGE: 'invalid',
  ERR_CARD_MALFORMED: 'invalid',
  ERR_CARD_INVALID: 'invalid',
  ERR_SIGNATURE_MISSING: 'invalid',
  ERR_SIGNATURE_INVALID: 'invalid',
  ERR_DIGEST_MISMATCH: 'invalid',
  ERR_HOST_NOT_ALLOWED: 'policy',
  ERR_ADDRESS_BLOCKED: 'policy',
  ERR_INSECURE_URL: 'policy',
  ERR_INSECURE_INTERFACE: 'policy',
  ERR_REDIRECT_REFUSED: 'policy',
  ERR_UNSUITABLE: 'unsuitable',
  ERR_NOT_READY: 'state',
  ERR_UPGRADE_REFUSED: 'state',
  ERR_SESSION_LIMIT: 'state',
  ERR_STORE_LOCKED: 'state',
  ERR_STORE_UNAVAILABLE: 'state',
  ERR_STORE_FENCED: 'state',
  ERR_CONFIG_INVALID: 'config',
  ERR_REGISTRY_INVALID: 'config',
  ERR_USAGE: 'config',
  ERR_SESSION_INVALID: 'config',
  ERR_INTERNAL: 'internal',
};

/** The failure class of a code. */
function failureOf(code: DiscoveryErrorCode): FailureClass {
  return FAILURE_OF[code];
}

/** One problem found in a card, a config file or a registry, located precisely. */
export interface Problem {
  /** JSON path such as `skills[2].tags`, or `$` for the whole document. */
  readonly path: string;
  /** A sentence the author of the document understands. */
  readonly message: string;
  /** For config files: 1-based line and column, when known. */
  readonly line?: number;
  readonly column?: number;
}

export interface DiscoveryErrorOptions {
  cause?: unknown;
  url?: string;
  stage?: Stage;
  /** JSON path of the first problem, when the error is about a document. */
  path?: string;
  status?: number;
  /** Every problem found, for errors that collect them. */
  problems?: readonly Problem[];
}

const BRAND = Symbol.for('a2a-discovery.DiscoveryError');

/**
 * The base error. `switch (err.code)` is the supported way to branch on it;
 * `err.failure` groups codes into the classes above.
 *
 * @example
 * try { await cache.refresh(url) } catch (err) {
 *   if (isDiscoveryError(err) && err.failure === 'network') retryLater();
 * }
 */
export class DiscoveryError extends Error {
  readonly code: DiscoveryErrorCode;
  readonly failure: FailureClass;
  readonly url?: string;
  readonly stage?: Stage;
  readonly path?: string;
  readonly status?: number;
  readonly problems: readonly Problem[];

  constructor(code: DiscoveryErrorCode, message: string, options: DiscoveryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.failure = failureOf(code);
    if (options.url !== undefined) this.url = options.url;
    if (options.stage !== undefined) this.stage = options.stage;
    if (options.path !== undefined) this.path = options.path;
    if (options.status !== undefined) this.status = options.status;
    this.problems = Object.freeze([...(options.problems ?? [])]);
  }

  /** Survives duplicated copies of this package in one process. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  get [BRAND](): true {
    return true;
  }

  /** A plain object for JSON output and events. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      failure: this.failure,
      message: this.message,
      ...(this.url !== undefined && { url: this.url }),
      ...(this.stage !== undefined && { stage: this.stage }),
      ...(this.path !== undefined && { path: this.path }),
      ...(this.status !== undefined && { status: this.status }),
      ...(this.problems.length > 0 && { problems: this.problems }),
    };
  }
}

/** True for a {@link DiscoveryError}, from any copy of this package. */
export function isDiscoveryError(value: unknown): value is DiscoveryError {
  return value instanceof DiscoveryError;
}

/** Wraps anything thrown into a DiscoveryError, keeping the original as `cause`. */
export function toDiscoveryError(
  err: unknown,
  code: DiscoveryErrorCode,
  options: Omit<DiscoveryErrorOptions, 'cause'> = {},
): DiscoveryError {
  if (isDiscoveryError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DiscoveryError(code, message, { ...options, cause: err });
}

/**
 * The first DiscoveryError in an error's `cause` / `errors` chain (undici and `net` wrap the
 * errors our connector and DNS guard raise), or undefined.
 */
export function findDiscoveryError(err: unknown): DiscoveryError | undefined {
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 16; i++) {
    const e = queue[i];
    if (isDiscoveryError(e)) return e;
    if (typeof e === 'object' && e !== null) {
      const { cause, errors } = e as { cause?: unknown; errors?: unknown };
      if (cause !== undefined) queue.push(cause);
      if (Array.isArray(errors)) queue.push(...errors);
    }
  }
  return undefined;
}
