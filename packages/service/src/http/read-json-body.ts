/**
 * Reading a JSON request body under a byte cap: a declared `Content-Length` over the cap is
 * refused before any byte is read, and a streamed (chunked) body is read chunk by chunk and
 * abandoned as soon as it passes the cap, so no more than `maxBytes` (plus one chunk) is held.
 */
import type { Context } from 'hono';
import { readBoundedStream } from 'a2a-discovery/internal';

/** The outcome: the object, an empty body, or why not. */
export type JsonBody = { ok: true; value: Record<string, unknown> | undefined } | { ok: false; tooLarge: true } | { ok: false; tooLarge: false };

/**
 * Reads the body of `c` as a JSON object. `value` is undefined for an empty body; `ok: false`
 * with `tooLarge: false` when it is not a JSON object.
 */
export async function readJsonBody(c: Context, maxBytes: number): Promise<JsonBody> {
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return { ok: false, tooLarge: true };
  const bytes = await readBoundedStream(c.req.raw.body, maxBytes);
  if (bytes === undefined) return { ok: false, tooLarge: true };
  if (bytes.byteLength === 0) return { ok: true, value: undefined };
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ok: true, value: v as Record<string, unknown> } : { ok: false, tooLarge: false };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
