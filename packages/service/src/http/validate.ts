/**
 * Reading a request body under a byte cap ({@link readObjectBody}: a declared `Content-Length`
 * over the cap is refused before any byte is read, and a streamed body is abandoned as soon as it
 * passes the cap, so no more than the cap plus one chunk is held), and the API's validator
 * middleware over it: a route's JSON body ({@link jsonBody}) and query
 * ({@link validQuery}) checked against the zod schema declared beside the route, before its
 * handler runs. A refusal is a 400 problem (problem.ts) whose `message` is the first problem's and
 * whose `problems` list every one by JSON path. Both carry hono-openapi's description, so the
 * OpenAPI document's request body and parameters are generated from the same schemas.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { resolver, uniqueSymbol, validator } from 'hono-openapi';
import type { z, ZodType } from 'zod';
import type { Problem } from 'a2a-discovery';
import { formatPath, readBoundedStream } from 'a2a-discovery/internal';
import { problem } from './problem.js';
import { problemJson } from './route.js';

/** Where a body's cap is read and how its refusal is counted (a `server.limits` key). */
export interface BodyLimit {
  /** The cap in bytes, read at each request (a reload changes it in place). */
  readonly maxBytes: () => number;
  /** The configuration key the 413 names, e.g. `server.limits.maxBodyBytes`. */
  readonly key: string;
  /** Counts a body refused for its size. */
  readonly onTooLarge?: () => void;
}

/** A schema issue's path as the API names it (`skills[2].tags`, `$`). */
type IssuePath = ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;

/** The problems of a failed validation, by JSON path. */
function problemsOf(issues: ReadonlyArray<{ readonly message: string; readonly path?: IssuePath }>): Problem[] {
  return issues.map((i) => {
    const keys = (i.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)).filter((p): p is string | number => typeof p !== 'symbol');
    return { path: formatPath(keys), message: i.message };
  });
}

/** The 400 of a body or query that fails its schema. */
function invalid(c: Context, issues: ReadonlyArray<{ readonly message: string; readonly path?: IssuePath }>): Response {
  return problem(c, 400, 'bad-request', issues[0]?.message ?? 'the request is not valid', { problems: problemsOf(issues) });
}

/** The outcome: the object, an empty body, or why not. */
type JsonBody = { ok: true; value: Record<string, unknown> | undefined } | { ok: false; tooLarge: true } | { ok: false; tooLarge: false };

/**
 * The body of `c` as the Node server received it, while nothing has read it yet: no web `Request`
 * and stream are built around it (issue 43: about half a millisecond of a chat turn). Otherwise
 * (another adapter, `app.request()` in tests, a body already being read) the request's web body.
 */
function bodyOf(c: Context): AsyncIterable<Uint8Array> | null {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming !== undefined && incoming.readableFlowing === null && !incoming.readableDidRead && !incoming.destroyed) return incoming;
  return c.req.raw.body;
}

/**
 * Reads the body of `c` as a JSON object. `value` is undefined for an empty body; `ok: false`
 * with `tooLarge: false` when it is not a JSON object.
 */
async function readJsonBody(c: Context, maxBytes: number): Promise<JsonBody> {
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return { ok: false, tooLarge: true };
  const bytes = await readBoundedStream(bodyOf(c), maxBytes);
  if (bytes === undefined) return { ok: false, tooLarge: true };
  if (bytes.byteLength === 0) return { ok: true, value: undefined };
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ok: true, value: v as Record<string, unknown> } : { ok: false, tooLarge: false };
  } catch {
    return { ok: false, tooLarge: false };
  }
}

/** How a refused body is answered: the API's problem, or another protocol's error (ARD, JSON-RPC). */
export type BodyRefusal = (c: Context, status: 400 | 413, message: string) => Response;

const asProblem: BodyRefusal = (c, status, message) => problem(c, status, status === 413 ? 'payload-too-large' : 'bad-request', message);

/**
 * The JSON object body of `c` under `limit`, or the answer to send instead: 413 naming the limit
 * (the connection closed), or 400 when it is not a JSON object, in `refusal`'s shape (default
 * the API's problem). An empty body is `{}`. The one reader of a request body in the service.
 */
export async function readObjectBody(c: Context, limit: BodyLimit, refusal: BodyRefusal = asProblem): Promise<Record<string, unknown> | Response> {
  const maxBytes = limit.maxBytes();
  const read = await readJsonBody(c, maxBytes);
  if (read.ok) return read.value ?? {};
  if (read.tooLarge) {
    limit.onTooLarge?.();
    c.header('Connection', 'close');
    return refusal(c, 413, `the request body is larger than ${maxBytes} bytes (${limit.key})`);
  }
  return refusal(c, 400, 'the body must be a JSON object');
}

/**
 * A route's JSON body, read under its cap ({@link readObjectBody}) and validated by `schema`; the
 * handler reads it with {@link validBody}. The body is read whatever its declared type (a token's
 * holder may omit it; the request guard asks the others for `application/json`), which is why this
 * is not Hono's own JSON validator. Its OpenAPI description (the request body, `required` unless
 * the route takes none, and the 400 and 413) is carried as hono-openapi's route description.
 */
export function jsonBody(schema: ZodType, limit: BodyLimit, o: { required?: boolean } = {}): MiddlewareHandler {
  const middleware: MiddlewareHandler = async (c, next) => {
    const read = await readObjectBody(c, limit);
    if (read instanceof Response) return read;
    const result = await schema['~standard'].validate(read);
    if (result.issues !== undefined) return invalid(c, result.issues);
    c.req.addValidatedData('json', result.value as object);
    return next();
  };
  const spec = {
    requestBody: { required: o.required ?? true, content: { 'application/json': { schema: resolver(schema) } } },
    responses: { 400: problemJson('the body is not a JSON object, or does not fit its schema (every problem by JSON path)'), 413: problemJson(`the body is larger than ${limit.key}`) },
  };
  return Object.assign(middleware, { [uniqueSymbol]: { spec } });
}

/** A route's query, validated by `schema` (hono-openapi's validator); the handler reads it with {@link validQueryOf}. */
export function validQuery(schema: ZodType): MiddlewareHandler {
  return validator('query', schema, (result, c) => (result.success ? undefined : invalid(c, result.error)));
}

/** The body {@link jsonBody} validated with `schema`. */
export function validBody<S extends ZodType>(c: Context, _schema: S): z.output<S> {
  return c.req.valid('json' as never) as z.output<S>;
}

/** The query {@link validQuery} validated with `schema`. */
export function validQueryOf<S extends ZodType>(c: Context, _schema: S): z.output<S> {
  return c.req.valid('query' as never) as z.output<S>;
}
