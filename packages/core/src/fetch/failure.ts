/**
 * The one classification of a failed request: whatever undici, Node's sockets or TLS threw is
 * mapped onto one {@link DiscoveryError} with the request's URL, stage `fetch`, the cause, and a
 * message that names the bound that was hit. The card exchange and the guarded fetch (A2A calls,
 * token requests, the OIDC keys, the follower's reads) both end here, so a timeout, a size cap, a
 * TLS refusal or a truncated body reads the same whoever made the request.
 *
 * @module
 */
import { DiscoveryError, findDiscoveryError } from '../errors.js';

/** The bounds a request ran under (named in the messages); milliseconds and bytes. */
export interface FailureBounds {
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxBodyBytes?: number;
  /** The setting that holds `maxBodyBytes`, as the user knows it. Default `maxBodyBytes`. */
  maxBodyName?: string;
}

/** Whether the response's headers had arrived: a failure after them is a truncated body. */
export type FailurePhase = 'request' | 'body';

const TLS_CERT_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_|ERR_SSL_/;

/**
 * The DiscoveryError for `err`, thrown while requesting `url` (already redacted). A DiscoveryError
 * found in the chain (a refusal of the guard, of the policy, of a cap) is kept, given the URL when
 * it has none. Otherwise undici's codes become `ERR_FETCH_TIMEOUT` or `ERR_BODY_TOO_LARGE`, and
 * everything else `ERR_FETCH_NETWORK` with the most specific message and code of the chain
 * (`fetch failed` wraps the real reason; Happy Eyeballs wraps one per address in an AggregateError).
 *
 * @example networkFailure(err, 'https://a.example/', 'request', { headersTimeoutMs: 3000 }).message
 * // 'https://a.example/: headers timeout of 3000 ms exceeded'
 */
export function networkFailure(err: unknown, url: string, phase: FailurePhase, bounds: FailureBounds = {}, status?: number): DiscoveryError {
  const base = { url, stage: 'fetch' as const, cause: err, ...(status !== undefined && { status }) };
  const found = findDiscoveryError(err);
  if (found !== undefined) {
    if (found.url !== undefined) return found;
    return new DiscoveryError(found.code, `${found.message} (${url})`, { ...base, cause: found, stage: found.stage ?? 'fetch' });
  }
  const { message, code } = innermost(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: connect timeout${ms(bounds.connectTimeoutMs)} exceeded (DNS, TCP and TLS)`, base);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: headers timeout${ms(bounds.headersTimeoutMs)} exceeded`, base);
    case 'UND_ERR_BODY_TIMEOUT':
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${url}: body timeout${ms(bounds.bodyTimeoutMs)} between chunks exceeded`, base);
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return new DiscoveryError('ERR_BODY_TOO_LARGE', `${url}: body exceeds ${bounds.maxBodyName ?? 'maxBodyBytes'}${bounds.maxBodyBytes === undefined ? '' : ` ${bounds.maxBodyBytes}`}`, base);
    default:
      break;
  }
  const suffix = code === undefined ? '' : ` (${code})`;
  if (code !== undefined && TLS_CERT_ERROR.test(code)) return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: TLS certificate rejected (${code}): ${message}`, base);
  if (phase === 'body') return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: connection failed before the body was complete (truncated): ${message}${suffix}`, base);
  return new DiscoveryError('ERR_FETCH_NETWORK', `${url}: ${message}${suffix}`, base);
}

function ms(value: number | undefined): string {
  return value === undefined ? '' : ` of ${value} ms`;
}

/**
 * The most specific message and code in an error's chain: `cause` links, and the first of an
 * AggregateError's `errors` (undici's `fetch failed`, Node's Happy Eyeballs). At most 5 levels.
 */
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
