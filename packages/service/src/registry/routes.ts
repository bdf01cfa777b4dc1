/**
 * The ARD registry API (spec v0.9 §7; docs/registry-api.md) under {@link REGISTRY_BASE}:
 *
 * - `POST /api/registry/search`: text over every admitted card, filters, `pageToken` paging
 *   whose order is pinned when the first page is answered (a later publication neither
 *   duplicates nor skips an entry on later pages), the federation hook.
 * - `POST /api/registry/explore`: facets with counts over the matched set.
 * - `GET /api/registry/agents`: the list by identifier (Appendix A filters), and with
 *   `updated_since` (or `filter=updatedAfter:…`) the change feed, tombstones included.
 * - `GET /api/registry/agents/{identifier}` (ARD 0.91, mandatory): one entry by its URL-encoded
 *   identifier, `urn:ai:` and `urn:air:` alike; otherwise 404, a problem (`application/problem+json`)
 *   that is also ARD's error (`errorCode: "NOT_FOUND"`, `message`).
 *
 * Every limit is a `server.registry` key; a refusal answers the ARD error shape (Appendix B) and
 * is counted (`a2a_discovery_http_refusals_total{reason="registry_…"}`).
 */
import { randomBytes } from 'node:crypto';
import { Pacer } from 'a2a-discovery/internal';
import type { Context, Hono } from 'hono';
import { resolver } from 'hono-openapi';
import { json, routeToolkit } from '../http/route.js';
import type { RouteToolkit } from '../http/route.js';
import { ArdErrorSchema } from '../http/schemas.js';
import { ArdEntrySchema, ArdExploreRequestSchema, ArdExploreResponseSchema, ArdListResponseSchema, ArdSearchRequestSchema, ArdSearchResponseSchema } from './schemas.js';

import type { ServerRegistryConfig } from 'a2a-discovery/config';
import type { OnRefusal } from '../http/limits.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { ParsedFilter } from './filter.js';
import { filterPath, parseFilter, valuesAt } from './filter.js';
import { PageTokens, requestHash } from './page-token.js';
import type { MatchResult, RegistryIndex } from './registry-index.js';
import { queryTerms, REGISTRY_SLICE_MS } from './registry-index.js';
import type { ArdChangesResponse, ArdError, ArdExploreResponse, ArdFederation, ArdFederationReport, ArdSearchRequest, ArdSearchResponse, ArdSearchResult } from 'a2a-discovery/internal';

/** Where the registry API lives: the `url` a catalog's `application/ai-registry+json` entry gives. */
export const REGISTRY_BASE = '/api/registry';

/** Asks other registries (`federation` `auto` or `referrals`); default: the local answer with `referrals: []`. */
export type Federate = (request: ArdSearchRequest, local: ArdSearchResponse) => Promise<ArdSearchResponse>;

/** Inputs of {@link mountRegistry}. */
export interface RegistryApiOptions {
  readonly index: RegistryIndex;
  readonly settings: ServerRegistryConfig;
  readonly onRefusal?: OnRefusal;
  readonly federate?: Federate;
  /** Wall clock, epoch ms. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Runs the heavy part of a search's first page or of an explore ({@link runSearch},
   * {@link runExplore}: the index brought up to date, the text scored, the filter and the facets
   * read): the seam where a concurrency gate (a fair pool per client and overall) wraps them; it
   * may answer a Response of its own (a 429) instead. Default: runs it.
   */
  readonly heavy?: HeavyWork;
  /**
   * The route declarations of the app (http/route.ts): each route a viewer's, or everyone's with
   * `anonymous`. Default: an open toolkit (a bare app without people or a token, as in tests).
   */
  readonly route?: RouteToolkit['route'];
}

/** Wraps the heavy part of a registry request (see {@link RegistryApiOptions.heavy}). */
export type HeavyWork = (c: Context, kind: 'search' | 'explore', work: () => Promise<Response>) => Promise<Response>;

/** `GET /agents` page size when none is asked (ARD §7.4). */
const LIST_PAGE_SIZE = 20;
/** `POST /search` page size when none is asked (ARD §7.2). */
const SEARCH_PAGE_SIZE = 10;
/** Results one search pins and pages through, best first: what `maxPinnedSearches` pins stays bounded (docs/registry-api.md). */
const SEARCH_MAX_RESULTS = 1_000;
/** The longest identifier `GET /agents/{identifier}` looks up (as an AI Catalog entry's, catalog/ai-catalog.ts). */
const MAX_IDENTIFIER = 1_024;
/** Facet buckets when a facet asks no `limit` (ARD §7.3). */
const FACET_LIMIT = 20;

/** A search's order, pinned on its first page. */
interface Pin {
  readonly ids: readonly { identifier: string; score?: number }[];
  readonly expiresAt: number;
}

/** Registers the routes on `app`. */
// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function mountRegistry(app: Hono, o: RegistryApiOptions): void {
  const s = o.settings;
  const now = o.now ?? Date.now;
  const refuse: OnRefusal = o.onRefusal ?? (() => undefined);
  const tokens = new PageTokens(s.pageTokenTtlMs, now);
  const pins = new Map<string, Pin>();
  const index = o.index;
  const heavy: HeavyWork = o.heavy ?? ((_c, _kind, work) => work());
  const route = o.route ?? routeToolkit({ guarded: false }).route;

  const fail = (c: Context, status: 400 | 410 | 413, code: string, message: string): Response => c.json({ errorCode: code, message } satisfies ArdError, status);
  const invalid = (c: Context, reason: Parameters<OnRefusal>[0] | undefined, message: string): Response => {
    if (reason !== undefined) refuse(reason);
    return fail(c, 400, 'INVALID_ARGUMENT', message);
  };
  const body = async (c: Context): Promise<Record<string, unknown> | Response> => {
    const read = await readJsonBody(c, s.maxBodyBytes);
    if (read.ok) return read.value ?? {};
    if (read.tooLarge) {
      refuse('registry_body_bytes');
      c.header('Connection', 'close');
      return fail(c, 413, 'INVALID_ARGUMENT', `the request body is larger than ${s.maxBodyBytes} bytes (server.registry.maxBodyBytes)`);
    }
    return invalid(c, undefined, 'the body must be a JSON object');
  };
  /** `query.text` and `query.filter`, or the 400. */
  const readQuery = (c: Context, raw: unknown, textRequired: boolean): { text?: string; filter: ParsedFilter } | Response => {
    if (raw === undefined && !textRequired) return { filter: [] };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid(c, undefined, textRequired ? 'query is required: {"query": {"text": "…"}}' : 'query must be an object');
    const q = raw as Record<string, unknown>;
    const text = q['text'];
    if (text !== undefined && typeof text !== 'string') return invalid(c, undefined, 'query.text must be a string');
    if (textRequired && (text === undefined || text.trim() === '')) return invalid(c, undefined, 'query.text is required for search');
    if (text !== undefined && text.length > s.maxTextLength) return invalid(c, 'registry_text', `query.text is ${text.length} characters; at most ${s.maxTextLength} are accepted (server.registry.maxTextLength)`);
    const terms = text === undefined ? 0 : queryTerms(text).length;
    if (terms > s.maxQueryTerms) return invalid(c, 'registry_terms', `query.text has ${terms} distinct terms; at most ${s.maxQueryTerms} are accepted (server.registry.maxQueryTerms)`);
    const filter = parseFilter(q['filter'], { maxKeys: s.maxFilterKeys, maxValues: s.maxFilterValues });
    if (typeof filter === 'string') return invalid(c, 'registry_filter', filter);
    return { ...(text !== undefined && { text }), filter };
  };
  /**
   * `pageSize` as given (`undefined`: the default), or the 400: in a JSON body a number (`"10"` is
   * refused, as any string), in a query string digits only.
   */
  const readPageSize = (c: Context, raw: unknown, fallback: number, from: 'body' | 'query'): number | Response => {
    if (raw === undefined) return Math.min(fallback, s.maxPageSize);
    if (from === 'body' && typeof raw !== 'number') return invalid(c, 'registry_page_size', `pageSize must be a positive integer (a JSON number), not ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`}`);
    if (from === 'query' && (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw))) return invalid(c, 'registry_page_size', 'pageSize must be a positive integer (digits only)');
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) return invalid(c, 'registry_page_size', 'pageSize must be a positive integer');
    if (n > s.maxPageSize) return invalid(c, 'registry_page_size', `pageSize ${n} is larger than ${s.maxPageSize} (server.registry.maxPageSize)`);
    return n;
  };
  /** The payload of `pageToken` when it continues the request `hash`, or the 400. */
  const readToken = (c: Context, raw: unknown, kind: string, hash: string): Record<string, unknown> | undefined | Response => {
    if (raw === undefined || raw === '') return undefined;
    if (typeof raw !== 'string') return invalid(c, 'registry_page_token', 'pageToken must be a string');
    if (raw.length > s.maxPageTokenBytes) return invalid(c, 'registry_page_token', `pageToken is longer than ${s.maxPageTokenBytes} characters (server.registry.maxPageTokenBytes)`);
    const opened = tokens.open(raw);
    if (!opened.ok) return invalid(c, 'registry_page_token', opened.reason);
    if (opened.payload['k'] !== kind || opened.payload['q'] !== hash) return invalid(c, 'registry_page_token', 'the pageToken belongs to another request: repeat the same query with it');
    return opened.payload;
  };

  app.post(`${REGISTRY_BASE}/search`, ...route('viewer', { tags: ['registry'], summary: 'ARD search: ranked entries for a text and a filter (§7.2)', requestBody: { required: true, content: { 'application/json': { schema: resolver(ArdSearchRequestSchema) } } }, responses: { 200: json('a page of results', ArdSearchResponseSchema), 400: json('a bad request', ArdErrorSchema), 413: json('the body is too large', ArdErrorSchema), 429: json('searches are busy', ArdErrorSchema) } }), async (c) => {
    const read = await body(c);
    if (read instanceof Response) return read;
    const query = readQuery(c, read['query'], true);
    if (query instanceof Response) return query;
    const federation = read['federation'] ?? 'auto';
    if (federation !== 'auto' && federation !== 'referrals' && federation !== 'none') return invalid(c, undefined, 'federation must be auto, referrals or none');
    const pageSize = readPageSize(c, read['pageSize'], SEARCH_PAGE_SIZE, 'body');
    if (pageSize instanceof Response) return pageSize;
    const hash = requestHash(read['query']);
    const token = readToken(c, read['pageToken'], 's', hash);
    if (token instanceof Response) return token;

    for (const [id, pin] of pins) if (pin.expiresAt < now()) pins.delete(id);
    if (token) {
      const pinId = String(token['p']);
      const pin = pins.get(pinId);
      if (pin === undefined) return invalid(c, 'registry_page_token', 'the search this pageToken continues is no longer held (server.registry.pageTokenTtlMs, maxPinnedSearches); start again from the first page');
      return page(c, read, federation, pageSize, hash, pinId, pin, typeof token['o'] === 'number' ? token['o'] : 0);
    }
    // The first page: the heavy part, then the page of its pinned order.
    return heavy(c, 'search', async () => {
      const found = await runSearch(index, query.text!, query.filter, s);
      if (found.cut) refuse('registry_candidates');
      const id = randomBytes(9).toString('base64url');
      const pinned: Pin = { ids: found.hits.slice(0, SEARCH_MAX_RESULTS), expiresAt: now() + s.pageTokenTtlMs };
      pins.set(id, pinned);
      while (pins.size > s.maxPinnedSearches) pins.delete(pins.keys().next().value!);
      return page(c, read, federation, pageSize, hash, id, pinned, 0);
    });
  });

  /** A page of a pinned search, then the federation hook. */
  const page = async (c: Context, read: Record<string, unknown>, federation: unknown, pageSize: number, hash: string, pinId: string, pin: Pin, offset: number): Promise<Response> => {
    const source = registryUrl(c);
    const results: ArdSearchResult[] = [];
    let next = offset;
    // Entries removed since the first page are left out of later ones; the order never changes.
    while (results.length < pageSize && next < pin.ids.length) {
      const hit = pin.ids[next++]!;
      const entry = index.get(hit.identifier);
      if (entry) results.push({ ...entry, ...(hit.score !== undefined && { score: hit.score }), source });
    }
    const local: ArdSearchResponse = { results, ...(next < pin.ids.length && { pageToken: tokens.seal({ k: 's', q: hash, p: pinId, o: next }) }) };
    if (federation === 'none') return c.json(local);
    const request: ArdSearchRequest = { query: read['query'] as ArdSearchRequest['query'], federation: federation as ArdFederation, pageSize, ...(typeof read['pageToken'] === 'string' && { pageToken: read['pageToken'] }) };
    const answer = o.federate ? await o.federate(request, local) : { ...local, referrals: [] };
    // ARD's SearchResponse admits no other member: the federation report travels in a header.
    const { federation: report, ...wire } = answer;
    if (report !== undefined) c.header(FEDERATION_HEADER, federationHeader(report));
    return c.json(wire);
  };

  app.post(`${REGISTRY_BASE}/explore`, ...route('viewer', { tags: ['registry'], summary: 'ARD explore: facets with counts over the matched set (§7.3)', requestBody: { required: true, content: { 'application/json': { schema: resolver(ArdExploreRequestSchema) } } }, responses: { 200: json('facets', ArdExploreResponseSchema), 400: json('a bad request', ArdErrorSchema), 413: json('the body is too large', ArdErrorSchema), 429: json('explores are busy', ArdErrorSchema) } }), async (c) => {
    const read = await body(c);
    if (read instanceof Response) return read;
    const query = readQuery(c, read['query'], false);
    if (query instanceof Response) return query;
    const resultType = read['resultType'];
    const facets = typeof resultType === 'object' && resultType !== null ? (resultType as Record<string, unknown>)['facets'] : undefined;
    if (!Array.isArray(facets) || facets.length === 0) return invalid(c, undefined, 'resultType.facets is required: [{"field": "type"}, …]');
    if (facets.length > s.maxFacets) return invalid(c, 'registry_facets', `resultType.facets has ${facets.length} facets; at most ${s.maxFacets} are accepted (server.registry.maxFacets)`);
    const asked: AskedFacet[] = [];
    for (const f of facets as unknown[]) {
      const r = typeof f === 'object' && f !== null ? (f as Record<string, unknown>) : {};
      const field = r['field'];
      if (typeof field !== 'string') return invalid(c, undefined, 'each facet needs a field (a field path, as filter keys)');
      const path = filterPath(field);
      if (typeof path === 'string') return invalid(c, 'registry_facets', path.replace('query.filter key', 'facet field'));
      const limit = r['limit'] ?? FACET_LIMIT;
      const minCount = r['minCount'] ?? 1;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1_000) return invalid(c, 'registry_facets', `facet ${field}: limit must be an integer from 1 to 1000`);
      if (typeof minCount !== 'number' || !Number.isInteger(minCount) || minCount < 0) return invalid(c, 'registry_facets', `facet ${field}: minCount must be a non-negative integer`);
      asked.push({ field, path, limit, minCount });
    }
    return heavy(c, 'explore', async () => {
      const facetsOut = await runExplore(index, query.text, query.filter, asked, s);
      if ('candidates' in facetsOut) {
        refuse('registry_candidates');
        return fail(c, 400, 'INVALID_ARGUMENT', `the query matches ${facetsOut.candidates} entries; explore counts at most ${s.maxCandidates} (server.registry.maxCandidates): narrow it with query.text or query.filter`);
      }
      return c.json({ resultType: 'facets', facets: facetsOut.facets } satisfies ArdExploreResponse);
    });
  });

  // ARD 0.91: one entry by its identifier (URL-encoded); `urn:ai:x` finds the entry of `urn:air:x`.
  app.get(`${REGISTRY_BASE}/agents/:identifier`, ...route('viewer', { tags: ['registry'], summary: 'ARD 0.91: one entry by its URL-encoded identifier (urn:ai: and urn:air: are one)', responses: { 200: json('the entry', ArdEntrySchema), 400: json('an identifier too long', ArdErrorSchema), 404: { description: 'no such entry (a problem that is also an ARD error)', content: { 'application/problem+json': { schema: resolver(ArdErrorSchema) } } } } }), async (c) => {
    const identifier = c.req.param('identifier');
    if (identifier.length > MAX_IDENTIFIER) return invalid(c, undefined, `the identifier is ${identifier.length} characters; at most ${MAX_IDENTIFIER} are accepted`);
    await index.fresh();
    const entry = index.get(identifier);
    if (entry === undefined) {
      // A problem (RFC 9457) that is also ARD's Error (Appendix B: `errorCode`, `message`).
      const message = `no entry with the identifier ${JSON.stringify(identifier.slice(0, 200))} (urn:ai: and urn:air: are one)`;
      const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: message, errorCode: 'NOT_FOUND', message } satisfies ArdError & Record<string, unknown>;
      return c.body(JSON.stringify(problem), 404, { 'content-type': 'application/problem+json' });
    }
    return c.json(entry);
  });

  app.get(`${REGISTRY_BASE}/agents`, ...route('viewer', { tags: ['registry'], summary: 'ARD list by identifier, and with updated_since the change feed, tombstones included (§7.4)', parameters: [{ name: 'pageSize', in: 'query', schema: { type: 'integer', minimum: 1 } }, { name: 'pageToken', in: 'query', schema: { type: 'string' } }, { name: 'filter', in: 'query', schema: { type: 'string' } }, { name: 'orderBy', in: 'query', schema: { type: 'string' } }, { name: 'updated_since', in: 'query', schema: { type: 'string' } }], responses: { 200: json('a page of entries', ArdListResponseSchema), 400: json('a bad query', ArdErrorSchema), 410: json('the change feed no longer reaches that far', ArdErrorSchema) } }), async (c) => {
    const filter = parseListFilter(c.req.query('filter'), s.maxFilterKeys, s.maxFilterValues);
    if (typeof filter === 'string') return invalid(c, 'registry_filter', filter);
    const orderBy = c.req.query('orderBy');
    if (orderBy !== undefined && orderBy.trim() !== 'identifier') return invalid(c, undefined, 'orderBy: this registry lists by identifier only (omit orderBy, or give "identifier")');
    const pageSize = readPageSize(c, c.req.query('pageSize'), LIST_PAGE_SIZE, 'query');
    if (pageSize instanceof Response) return pageSize;
    const updatedSince = c.req.query('updated_since');
    const hash = requestHash([c.req.query('filter') ?? '', updatedSince ?? '']);
    const changeFeed = updatedSince !== undefined || filter.updatedAfter !== undefined;
    const token = readToken(c, c.req.query('pageToken'), changeFeed ? 'c' : 'l', hash);
    if (token instanceof Response) return token;
    if (!token) await index.fresh();

    if (!changeFeed) {
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

    let since: { afterSeq: number } | { afterTime: number };
    if (token) since = { afterSeq: Number(token['a']) };
    else if (updatedSince !== undefined) {
      const cursor = /^([A-Za-z0-9_-]{12})\.(\d{1,15})$/.exec(updatedSince);
      if (cursor) {
        if (cursor[1] !== index.instance) {
          refuse('registry_cursor_expired');
          return fail(c, 410, 'CURSOR_EXPIRED', 'the cursor is from another run of this registry (a restart, or another replica): read everything again (GET /agents without updated_since)');
        }
        since = { afterSeq: Number(cursor[2]) };
      } else {
        const t = Date.parse(updatedSince);
        if (!Number.isFinite(t)) return invalid(c, undefined, 'updated_since must be a cursor this registry gave, or an ISO 8601 time');
        since = { afterTime: Math.max(t, filter.updatedAfter ?? t) };
      }
    } else since = { afterTime: filter.updatedAfter! };
    const changes = await index.changes(since, (view) => keepListed(view, undefined, filter));
    if (changes === undefined) {
      refuse('registry_cursor_expired');
      return fail(c, 410, 'CURSOR_EXPIRED', 'removals since then are no longer remembered (server.registry.maxTombstones, tombstoneTtlMs, or a restart): read everything again (GET /agents without updated_since)');
    }
    const page = changes.slice(0, pageSize);
    const more = changes.length > pageSize;
    const results = page.map((ch) => (ch.entry.status === 'deleted' ? ch.entry : { ...ch.entry, status: 'active' as const }));
    return c.json({
      items: results,
      ...(more ? { pageToken: tokens.seal({ k: 'c', q: hash, a: page.at(-1)!.seq }) } : { cursor: `${index.instance}.${index.generation}` }),
    } satisfies ArdChangesResponse);
  });
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

/** A facet as an explore request asks it. */
interface AskedFacet {
  readonly field: string;
  readonly path: readonly string[];
  readonly limit: number;
  readonly minCount: number;
}

/**
 * The heavy part of an explore: the matched set (at most `maxCandidates` entries, else
 * `{ candidates }`: counts over a part would be wrong), then each facet counted over it, yielding
 * to the event loop in slices.
 */
async function runExplore(
  index: RegistryIndex,
  text: string | undefined,
  filter: ParsedFilter,
  asked: readonly AskedFacet[],
  s: Pick<ServerRegistryConfig, 'maxCandidates'>,
): Promise<{ facets: ArdExploreResponse['facets'] } | { candidates: number }> {
  await index.fresh();
  const matched = await index.match(text, filter, { maxCandidates: s.maxCandidates, overflow: 'refuse' });
  if (!matched.ok) return { candidates: matched.candidates };
  const pacer = new Pacer(REGISTRY_SLICE_MS);
  const out: Record<string, { buckets: { value: string; count: number }[]; otherCount?: number }> = {};
  for (const f of asked) {
    const counts = new Map<string, number>();
    for (const m of matched.hits) {
      await pacer.tick();
      const view = index.view(m.identifier);
      for (const v of new Set(valuesAt(view, f.path, false))) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const buckets = [...counts].filter(([, n]) => n >= f.minCount).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    await pacer.tick();
    const other = buckets.slice(f.limit).reduce((sum, [, n]) => sum + n, 0);
    out[f.field] = { buckets: buckets.slice(0, f.limit).map(([value, count]) => ({ value, count })), ...(other > 0 && { otherCount: other }) };
  }
  return { facets: out };
}

/** The registry's API base URL as the caller reached it (each result's `source`). */
function registryUrl(c: Context): string {
  return new URL(`${REGISTRY_BASE}/`, c.req.url).href;
}

/** The filter of `GET /agents` (Appendix A). */
interface ListFilter {
  readonly displayName?: readonly string[];
  readonly type?: ReadonlySet<string>;
  readonly publisherId?: ReadonlySet<string>;
  readonly createdAfter?: number;
  readonly updatedAfter?: number;
}

/**
 * Appendix A's filter: terms joined by ` AND ` (or `;`), each `key:value`, `key = 'value'` or
 * `key > 'time'`; comma-separated values are OR'ed. Keys: `displayName` (case-insensitive
 * substring), `type`, `publisherId` (exact, case-insensitive), `createdAfter`, `updatedAfter`
 * (ISO 8601).
 */
function parseListFilter(raw: string | undefined, maxKeys: number, maxValues: number): ListFilter | string {
  if (raw === undefined || raw.trim() === '') return {};
  if (raw.length > 4_096) return 'filter is longer than 4096 characters';
  const terms = raw.split(/\s+AND\s+|;/i).map((t) => t.trim()).filter((t) => t !== '');
  if (terms.length > maxKeys) return `filter has ${terms.length} terms; at most ${maxKeys} are accepted (server.registry.maxFilterKeys)`;
  const out: { -readonly [K in keyof ListFilter]: ListFilter[K] } = {};
  let count = 0;
  for (const term of terms) {
    const m = /^([A-Za-z]+)\s*(?:=|:|>=|>)\s*(.*)$/.exec(term);
    if (!m) return `filter term ${JSON.stringify(term.slice(0, 64))} is not key:value (Appendix A: displayName, type, publisherId, createdAfter, updatedAfter)`;
    const key = m[1]!;
    const value = m[2]!.trim().replace(/^'(.*)'$/, '$1').replace(/^"(.*)"$/, '$1');
    const values = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
    count += values.length;
    if (values.length === 0) return `filter term ${key} has no value`;
    if (count > maxValues) return `filter has more than ${maxValues} values in all (server.registry.maxFilterValues)`;
    if (key === 'displayName') out.displayName = values.map((v) => v.toLowerCase());
    else if (key === 'type') out.type = new Set(values.map((v) => v.toLowerCase()));
    else if (key === 'publisherId') out.publisherId = new Set(values.map((v) => v.toLowerCase()));
    else if (key === 'createdAfter' || key === 'updatedAfter') {
      const t = Date.parse(value);
      if (!Number.isFinite(t)) return `filter ${key} must be an ISO 8601 time, got ${JSON.stringify(value.slice(0, 64))}`;
      out[key] = t;
    } else return `filter key ${JSON.stringify(key)} is not one of displayName, type, publisherId, createdAfter, updatedAfter`;
  }
  return out;
}

/** Whether a listed entry (or, in the change feed, a tombstone: `type` only) passes the list filter. */
function keepListed(view: Readonly<Record<string, unknown>>, createdAt: number | undefined, f: ListFilter): boolean {
  if (f.type && !f.type.has(String(view['type']).toLowerCase())) return false;
  if (view['status'] === 'deleted') return true;
  if (f.displayName) {
    const name = String(view['displayName']).toLowerCase();
    if (!f.displayName.some((v) => name.includes(v))) return false;
  }
  if (f.publisherId && !f.publisherId.has(String(view['publisher']).toLowerCase())) return false;
  if (f.createdAfter !== undefined && createdAt !== undefined && createdAt <= f.createdAfter) return false;
  return true;
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
