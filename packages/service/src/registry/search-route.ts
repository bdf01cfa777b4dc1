/**
 * `POST /api/registry/search` (ARD §7.2): text over every admitted card, filters, `pageToken`
 * paging whose order is pinned when the first page is answered (a later publication neither
 * duplicates nor skips an entry on later pages), then the federation hook, whose report travels
 * in a header.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { resolver } from 'hono-openapi';
import type { ServerRegistryConfig } from 'a2a-discovery/config';
import type { ArdFederation, ArdFederationReport, ArdSearchRequest, ArdSearchResponse, ArdSearchResult } from 'a2a-discovery/internal';
import { json } from '../http/route.js';
import { ArdErrorSchema } from '../http/schemas.js';
import type { ParsedFilter } from './filter.js';
import { requestHash } from './page-token.js';
import type { MatchResult, RegistryIndex } from './registry-index.js';
import type { ReadQuery, RegistryRouteContext } from './route-context.js';
import { invalid, readBody, readPageSize, readQuery, readToken, REGISTRY_BASE } from './route-context.js';
import { ArdSearchRequestSchema, ArdSearchResponseSchema } from './schemas.js';

/** `POST /search` page size when none is asked (ARD §7.2). */
const SEARCH_PAGE_SIZE = 10;
/** Results one search pins and pages through, best first: what `maxPinnedSearches` pins stays bounded (docs/registry-api.md). */
const SEARCH_MAX_RESULTS = 1_000;

/** A search's order, pinned on its first page. */
interface Pin {
  readonly ids: readonly { identifier: string; score?: number }[];
  readonly expiresAt: number;
}

/** A search request as read: the body, its query, and what pages it. */
interface SearchRequest {
  readonly read: Record<string, unknown>;
  readonly query: ReadQuery;
  readonly federation: unknown;
  readonly pageSize: number;
  readonly hash: string;
  readonly token: Record<string, unknown> | undefined;
}

/** Registers `POST /search` on `app`; its pinned searches live as long as the app. */
export function mountSearch(app: Hono, ctx: RegistryRouteContext): void {
  const pins = new Map<string, Pin>();
  app.post(`${REGISTRY_BASE}/search`, ...ctx.route('viewer', { tags: ['registry'], summary: 'ARD search: ranked entries for a text and a filter (§7.2)', requestBody: { required: true, content: { 'application/json': { schema: resolver(ArdSearchRequestSchema) } } }, responses: { 200: json('a page of results', ArdSearchResponseSchema), 400: json('a bad request', ArdErrorSchema), 413: json('the body is too large', ArdErrorSchema), 429: json('searches are busy', ArdErrorSchema) } }), async (c) => {
    const read = await readBody(ctx, c);
    if (read instanceof Response) return read;
    const request = readSearchRequest(ctx, c, read);
    if (request instanceof Response) return request;

    for (const [id, pin] of pins) if (pin.expiresAt < ctx.now()) pins.delete(id);
    if (request.token) {
      const pinId = String(request.token['p']);
      const pin = pins.get(pinId);
      if (pin === undefined) return invalid(ctx, c, 'registry_page_token', 'the search this pageToken continues is no longer held (server.registry.pageTokenTtlMs, maxPinnedSearches); start again from the first page');
      return searchPage(ctx, c, request, pinId, pin, typeof request.token['o'] === 'number' ? request.token['o'] : 0);
    }
    return firstPage(ctx, c, request, pins);
  });
}

/** Reads the parts of a search body after the body itself (query, federation, pageSize, pageToken), or answers the 400. */
function readSearchRequest(ctx: RegistryRouteContext, c: Context, read: Record<string, unknown>): SearchRequest | Response {
  const query = readQuery(ctx, c, read['query'], true);
  if (query instanceof Response) return query;
  const federation = read['federation'] ?? 'auto';
  if (federation !== 'auto' && federation !== 'referrals' && federation !== 'none') return invalid(ctx, c, undefined, 'federation must be auto, referrals or none');
  const pageSize = readPageSize(ctx, c, read['pageSize'], SEARCH_PAGE_SIZE, 'body');
  if (pageSize instanceof Response) return pageSize;
  const hash = requestHash(read['query']);
  const token = readToken(ctx, c, read['pageToken'], 's', hash);
  if (token instanceof Response) return token;
  return { read, query, federation, pageSize, hash, token };
}

/** The first page: the heavy part, its order pinned (the oldest pins dropped past `maxPinnedSearches`), then the page of that order. */
function firstPage(ctx: RegistryRouteContext, c: Context, request: SearchRequest, pins: Map<string, Pin>): Promise<Response> {
  const s = ctx.settings;
  return ctx.heavy(c, 'search', async () => {
    const found = await runSearch(ctx.index, request.query.text!, request.query.filter, s);
    if (found.cut) ctx.refuse('registry_candidates');
    const id = randomBytes(9).toString('base64url');
    const pinned: Pin = { ids: found.hits.slice(0, SEARCH_MAX_RESULTS), expiresAt: ctx.now() + s.pageTokenTtlMs };
    pins.set(id, pinned);
    while (pins.size > s.maxPinnedSearches) pins.delete(pins.keys().next().value!);
    return searchPage(ctx, c, request, id, pinned, 0);
  });
}

/** A page of a pinned search from `offset`, then the federation hook. */
async function searchPage(ctx: RegistryRouteContext, c: Context, request: SearchRequest, pinId: string, pin: Pin, offset: number): Promise<Response> {
  const source = registryUrl(c);
  const results: ArdSearchResult[] = [];
  let next = offset;
  // Entries removed since the first page are left out of later ones; the order never changes.
  while (results.length < request.pageSize && next < pin.ids.length) {
    const hit = pin.ids[next++]!;
    const entry = ctx.index.get(hit.identifier);
    if (entry) results.push({ ...entry, ...(hit.score !== undefined && { score: hit.score }), source });
  }
  const local: ArdSearchResponse = { results, ...(next < pin.ids.length && { pageToken: ctx.tokens.seal({ k: 's', q: request.hash, p: pinId, o: next }) }) };
  if (request.federation === 'none') return c.json(local);
  return federated(ctx, c, request, local);
}

/** The local page as the request's `federation` asks it (the federation hook), its report in {@link FEDERATION_HEADER}. */
async function federated(ctx: RegistryRouteContext, c: Context, request: SearchRequest, local: ArdSearchResponse): Promise<Response> {
  const { read, federation, pageSize } = request;
  const asked: ArdSearchRequest = { query: read['query'] as ArdSearchRequest['query'], federation: federation as ArdFederation, pageSize, ...(typeof read['pageToken'] === 'string' && { pageToken: read['pageToken'] }) };
  const answer = ctx.federate ? await ctx.federate(asked, local) : { ...local, referrals: [] };
  // ARD's SearchResponse admits no other member: the federation report travels in a header.
  const { federation: report, ...wire } = answer;
  if (report !== undefined) c.header(FEDERATION_HEADER, federationHeader(report));
  return c.json(wire);
}

/**
 * The heavy part of a search's first page: the index brought up to date, the text scored term by
 * term and the filter read, yielding to the event loop in slices; at most `maxCandidates` hits
 * considered, the best ones (`cut` says when more matched).
 */
async function runSearch(index: RegistryIndex, text: string, filter: ParsedFilter, s: Pick<ServerRegistryConfig, 'maxCandidates'>): Promise<Extract<MatchResult, { ok: true }>> {
  await index.fresh();
  const found = await index.match(text, filter, { maxCandidates: s.maxCandidates, overflow: 'best' });
  // With `best`, the index never refuses.
  return found.ok ? found : { ok: true, hits: [], candidates: found.candidates, cut: true };
}

/** The registry's API base URL as the caller reached it (each result's `source`). */
function registryUrl(c: Context): string {
  return new URL(`${REGISTRY_BASE}/`, c.req.url).href;
}

/** The response header that carries a `federation: auto` search's report (JSON). */
const FEDERATION_HEADER = 'A2A-Discovery-Federation';

/** Largest report header sent; past it, the registries' messages are left out (their outcomes stay). */
const MAX_FEDERATION_HEADER = 8 * 1024;

/** The report as header-safe JSON (ASCII only: `\u` escapes for the rest), bounded. */
function federationHeader(report: ArdFederationReport): string {
  const ascii = (value: unknown): string => JSON.stringify(value).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const full = ascii(report);
  if (full.length <= MAX_FEDERATION_HEADER) return full;
  const brief = ascii({ ...report, registries: report.registries.map(({ message: _message, ...r }) => r) });
  return brief.length <= MAX_FEDERATION_HEADER ? brief : ascii({ registries: [], truncated: true });
}
