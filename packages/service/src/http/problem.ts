/**
 * The one shape of the API's errors: RFC 9457 problem details (`application/problem+json`),
 * with the API's stable `error` code and its `message` kept as extension members, so a client
 * written against either reads it. `type` is `about:blank` (the code is `error`); `title` is the
 * status's phrase; `detail` repeats the message. Every route, the request guard and the role
 * check answer through {@link problem}; a thrown error reaches {@link onError}.
 *
 * The registry API (registry/routes.ts) keeps ARD's error shape, which its spec requires, and the
 * A2A endpoint answers JSON-RPC errors.
 *
 * @module
 */
import { STATUS_CODES } from 'node:http';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { HTTPException } from 'hono/http-exception';
import { isDiscoveryError } from 'a2a-discovery';

/** The media type of an error answer (RFC 9457 §3). */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/**
 * The error answer `status` with the stable code `error` and `message`; `extra` members (the
 * limit that bit, a `Retry-After` in seconds, problems by path) are added beside them. Headers set
 * on `c` before (`Retry-After`, `Connection: close`) are kept.
 */
export function problem(c: Context, status: ContentfulStatusCode, error: string, message: string, extra: Record<string, unknown> = {}): Response {
  const body = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail: message, error, message, ...extra };
  return c.body(JSON.stringify(body), status, { 'content-type': PROBLEM_MEDIA_TYPE });
}

/**
 * The answer to a thrown error: a DiscoveryError keeps its code (`ERR_…`) with the status of its
 * kind (a session limit 429, a state 409, a policy 403, a configuration 400) and its problems by
 * path; Hono's HTTPException its status; anything else is a 500.
 */
export function errorProblem(c: Context, err: unknown): Response {
  if (isDiscoveryError(err)) {
    const status = err.code === 'ERR_SESSION_LIMIT' ? 429 : err.failure === 'state' ? 409 : err.failure === 'policy' ? 403 : err.failure === 'config' ? 400 : 500;
    return problem(c, status, err.code, err.message, err.problems.length > 0 ? { problems: err.problems } : {});
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    return problem(c, status, status === 400 ? 'bad-request' : 'http-error', err.message);
  }
  return problem(c, 500, 'internal', err instanceof Error ? err.message : String(err));
}

/** The app's error handler (`app.onError`): every error a handler throws, as a problem. */
export const onError = (err: Error, c: Context): Response => errorProblem(c, err);
