/**
 * The registry's entries by identifier:
 *
 * - `GET /api/registry/agents/{identifier}` (ARD 0.91, mandatory): one entry by its URL-encoded
 *   identifier, `urn:ai:` and `urn:air:` alike; otherwise 404, a problem
 *   (`application/problem+json`) that is also ARD's error (`errorCode: "NOT_FOUND"`, `message`).
 * - `GET /api/registry/agents` (ARD §7.4): the list by identifier (Appendix A filters), and with
 *   `updated_since` (or `filter=updatedAfter:…`) the change feed, tombstones included.
 *
 * @module
 */
import type { Context, Hono } from 'hono';
import { resolver } from 'hono-openapi';
import type { ArdChangesResponse, ArdError } from 'a2a-discovery/internal';
import { json } from '../http/route.js';
import { ArdErrorSchema } from '../http/schemas.js';
import type { ListFilter } from './list-filter.js';
import { keepListed, parseListFilter } from './list-filter.js';
import { requestHash } from './page-token.js';
import type { RegistryRouteContext } from './route-context.js';
import { fail, invalid, readPageSize, readToken, REGISTRY_BASE } from './route-context.js';
import { ArdEntrySchema, ArdListResponseSchema } from './schemas.js';

/** `GET /agents` page size when none is asked (ARD §7.4). */
const LIST_PAGE_SIZE = 20;
/** The longest identifier `GET /agents/{identifier}` looks up (as an AI Catalog entry's, catalog/ai-catalog.ts). */
const MAX_IDENTIFIER = 1_024;

/** A `GET /agents` request as read from its query string. */
interface ListRequest {
  readonly filter: ListFilter;
  readonly pageSize: number;
  readonly updatedSince: string | undefined;
  readonly hash: string;
  /** With `updated_since` or `filter=updatedAfter:…`: the change feed rather than the list. */
  readonly changeFeed: boolean;
  readonly token: Record<string, unknown> | undefined;
}

/** Registers `GET /agents/{identifier}`, then `GET /agents` (the list and the change feed), on `app`. */
export function mountAgents(app: Hono, ctx: RegistryRouteContext): void {
  mountAgentByIdentifier(app, ctx);
  mountAgentList(app, ctx);
}

/** `GET /agents/{identifier}`: one entry, or the 404 problem. */
function mountAgentByIdentifier(app: Hono, ctx: RegistryRouteContext): void {
  // ARD 0.91: one entry by its identifier (URL-encoded); `urn:ai:x` finds the entry of `urn:air:x`.
  app.get(`${REGISTRY_BASE}/agents/:identifier`, ...ctx.route('viewer', { tags: ['registry'], summary: 'ARD 0.91: one entry by its URL-encoded identifier (urn:ai: and urn:air: are one)', responses: { 200: json('the entry', ArdEntrySchema), 400: json('an identifier too long', ArdErrorSchema), 404: { description: 'no such entry (a problem that is also an ARD error)', content: { 'application/problem+json': { schema: resolver(ArdErrorSchema) } } } } }), async (c) => {
    const identifier = c.req.param('identifier');
    if (identifier.length > MAX_IDENTIFIER) return invalid(ctx, c, undefined, `the identifier is ${identifier.length} characters; at most ${MAX_IDENTIFIER} are accepted`);
    await ctx.index.fresh();
    const entry = ctx.index.get(identifier);
    if (entry === undefined) {
      // A problem (RFC 9457) that is also ARD's Error (Appendix B: `errorCode`, `message`).
      const message = `no entry with the identifier ${JSON.stringify(identifier.slice(0, 200))} (urn:ai: and urn:air: are one)`;
      const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: message, errorCode: 'NOT_FOUND', message } satisfies ArdError & Record<string, unknown>;
      return c.body(JSON.stringify(problem), 404, { 'content-type': 'application/problem+json' });
    }
    return c.json(entry);
  });
}

/** `GET /agents`: a page of the list by identifier, or of the change feed. */
function mountAgentList(app: Hono, ctx: RegistryRouteContext): void {
  app.get(`${REGISTRY_BASE}/agents`, ...ctx.route('viewer', { tags: ['registry'], summary: 'ARD list by identifier, and with updated_since the change feed, tombstones included (§7.4)', parameters: [{ name: 'pageSize', in: 'query', schema: { type: 'integer', minimum: 1 } }, { name: 'pageToken', in: 'query', schema: { type: 'string' } }, { name: 'filter', in: 'query', schema: { type: 'string' } }, { name: 'orderBy', in: 'query', schema: { type: 'string' } }, { name: 'updated_since', in: 'query', schema: { type: 'string' } }], responses: { 200: json('a page of entries', ArdListResponseSchema), 400: json('a bad query', ArdErrorSchema), 410: json('the change feed no longer reaches that far', ArdErrorSchema) } }), async (c) => {
    const request = readListRequest(ctx, c);
    if (request instanceof Response) return request;
    if (!request.token) await ctx.index.fresh();
    return request.changeFeed ? changesPage(ctx, c, request) : listPage(ctx, c, request);
  });
}

/** Reads the query string of `GET /agents` (filter, orderBy, pageSize, updated_since, pageToken), or answers the 400. */
function readListRequest(ctx: RegistryRouteContext, c: Context): ListRequest | Response {
  const s = ctx.settings;
  const filter = parseListFilter(c.req.query('filter'), s.maxFilterKeys, s.maxFilterValues);
  if (typeof filter === 'string') return invalid(ctx, c, 'registry_filter', filter);
  const orderBy = c.req.query('orderBy');
  if (orderBy !== undefined && orderBy.trim() !== 'identifier') return invalid(ctx, c, undefined, 'orderBy: this registry lists by identifier only (omit orderBy, or give "identifier")');
  const pageSize = readPageSize(ctx, c, c.req.query('pageSize'), LIST_PAGE_SIZE, 'query');
  if (pageSize instanceof Response) return pageSize;
  const updatedSince = c.req.query('updated_since');
  const hash = requestHash([c.req.query('filter') ?? '', updatedSince ?? '']);
  const changeFeed = updatedSince !== undefined || filter.updatedAfter !== undefined;
  const token = readToken(ctx, c, c.req.query('pageToken'), changeFeed ? 'c' : 'l', hash);
  if (token instanceof Response) return token;
  return { filter, pageSize, updatedSince, hash, changeFeed, token };
}

/** A page of the list by identifier; the last page gives the cursor of the change feed. */
async function listPage(ctx: RegistryRouteContext, c: Context, request: ListRequest): Promise<Response> {
  const { index, tokens } = ctx;
  const { token, filter, pageSize, hash } = request;
  const after = token && typeof token['a'] === 'string' ? token['a'] : undefined;
  // The generation the first page was read at: the last page's cursor replays every change since (a change to an entry already listed included).
  const generation = token && typeof token['g'] === 'number' ? token['g'] : index.generation;
  const listed = await index.list((view, createdAt) => keepListed(view, createdAt, filter), after, pageSize);
  const last = listed.entries.at(-1)?.identifier;
  return c.json({
    items: listed.entries,
    ...(listed.more && last !== undefined ? { pageToken: tokens.seal({ k: 'l', q: hash, a: last, g: generation }) } : { cursor: `${index.instance}.${generation}` }),
  } satisfies ArdChangesResponse);
}

/** A page of the change feed, tombstones included, or the 410 when it no longer reaches that far. */
async function changesPage(ctx: RegistryRouteContext, c: Context, request: ListRequest): Promise<Response> {
  const { index, tokens } = ctx;
  const { filter, pageSize, hash } = request;
  const since = readSince(ctx, c, request);
  if (since instanceof Response) return since;
  const changes = await index.changes(since, (view) => keepListed(view, undefined, filter));
  if (changes === undefined) {
    ctx.refuse('registry_cursor_expired');
    return fail(c, 410, 'CURSOR_EXPIRED', 'removals since then are no longer remembered (server.registry.maxTombstones, tombstoneTtlMs, or a restart): read everything again (GET /agents without updated_since)');
  }
  const page = changes.slice(0, pageSize);
  const more = changes.length > pageSize;
  const results = page.map((ch) => (ch.entry.status === 'deleted' ? ch.entry : { ...ch.entry, status: 'active' as const }));
  return c.json({
    items: results,
    ...(more ? { pageToken: tokens.seal({ k: 'c', q: hash, a: page.at(-1)!.seq }) } : { cursor: `${index.instance}.${index.generation}` }),
  } satisfies ArdChangesResponse);
}

/**
 * Where the change feed starts: after the page token's sequence number, after the cursor
 * `updated_since` gives (the 410 when another run of this registry gave it), or after the time it
 * gives (or `filter=updatedAfter:…`, the later of the two); or the 400.
 */
function readSince(ctx: RegistryRouteContext, c: Context, request: ListRequest): { afterSeq: number } | { afterTime: number } | Response {
  const { token, updatedSince, filter } = request;
  if (token) return { afterSeq: Number(token['a']) };
  if (updatedSince === undefined) return { afterTime: filter.updatedAfter! };
  const cursor = /^([A-Za-z0-9_-]{12})\.(\d{1,15})$/.exec(updatedSince);
  if (cursor) {
    if (cursor[1] !== ctx.index.instance) {
      ctx.refuse('registry_cursor_expired');
      return fail(c, 410, 'CURSOR_EXPIRED', 'the cursor is from another run of this registry (a restart, or another replica): read everything again (GET /agents without updated_since)');
    }
    return { afterSeq: Number(cursor[2]) };
  }
  const t = Date.parse(updatedSince);
  if (!Number.isFinite(t)) return invalid(ctx, c, undefined, 'updated_since must be a cursor this registry gave, or an ISO 8601 time');
  return { afterTime: Math.max(t, filter.updatedAfter ?? t) };
}
