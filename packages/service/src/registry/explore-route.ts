/**
 * `POST /api/registry/explore` (ARD §7.3): facets with counts over the matched set, which holds
 * at most `maxCandidates` entries (counts over a part of it would be wrong).
 *
 * @module
 */
import { Pacer } from 'a2a-discovery/internal';
import type { ArdExploreResponse } from 'a2a-discovery/internal';
import type { ServerRegistryConfig } from 'a2a-discovery/config';
import type { Context, Hono } from 'hono';
import { resolver } from 'hono-openapi';
import { json } from '../http/route.js';
import { ArdErrorSchema } from '../http/schemas.js';
import type { ParsedFilter } from './filter.js';
import { filterPath, valuesAt } from './filter.js';
import type { RegistryIndex } from './registry-index.js';
import { REGISTRY_SLICE_MS } from './registry-index.js';
import type { RegistryRouteContext } from './route-context.js';
import { fail, invalid, readBody, readQuery, REGISTRY_BASE } from './route-context.js';
import { ArdExploreRequestSchema, ArdExploreResponseSchema } from './schemas.js';

/** Facet buckets when a facet asks no `limit` (ARD §7.3). */
const FACET_LIMIT = 20;

/** A facet as an explore request asks it. */
interface AskedFacet {
  readonly field: string;
  readonly path: readonly string[];
  readonly limit: number;
  readonly minCount: number;
}

/** Registers `POST /explore` on `app`. */
export function mountExplore(app: Hono, ctx: RegistryRouteContext): void {
  const s = ctx.settings;
  app.post(`${REGISTRY_BASE}/explore`, ...ctx.route('viewer', { tags: ['registry'], summary: 'ARD explore: facets with counts over the matched set (§7.3)', requestBody: { required: true, content: { 'application/json': { schema: resolver(ArdExploreRequestSchema) } } }, responses: { 200: json('facets', ArdExploreResponseSchema), 400: json('a bad request', ArdErrorSchema), 413: json('the body is too large', ArdErrorSchema), 429: json('explores are busy', ArdErrorSchema) } }), async (c) => {
    const read = await readBody(ctx, c);
    if (read instanceof Response) return read;
    const query = readQuery(ctx, c, read['query'], false);
    if (query instanceof Response) return query;
    const asked = readFacets(ctx, c, read['resultType']);
    if (asked instanceof Response) return asked;
    return ctx.heavy(c, 'explore', async () => {
      const facetsOut = await runExplore(ctx.index, query.text, query.filter, asked, s);
      if ('candidates' in facetsOut) {
        ctx.refuse('registry_candidates');
        return fail(c, 400, 'INVALID_ARGUMENT', `the query matches ${facetsOut.candidates} entries; explore counts at most ${s.maxCandidates} (server.registry.maxCandidates): narrow it with query.text or query.filter`);
      }
      return c.json({ resultType: 'facets', facets: facetsOut.facets } satisfies ArdExploreResponse);
    });
  });
}

/** The facets `resultType.facets` asks (each field a filter key's path), within `maxFacets`, or the 400. */
function readFacets(ctx: RegistryRouteContext, c: Context, resultType: unknown): AskedFacet[] | Response {
  const facets = typeof resultType === 'object' && resultType !== null ? (resultType as Record<string, unknown>)['facets'] : undefined;
  if (!Array.isArray(facets) || facets.length === 0) return invalid(ctx, c, undefined, 'resultType.facets is required: [{"field": "type"}, …]');
  if (facets.length > ctx.settings.maxFacets) return invalid(ctx, c, 'registry_facets', `resultType.facets has ${facets.length} facets; at most ${ctx.settings.maxFacets} are accepted (server.registry.maxFacets)`);
  const asked: AskedFacet[] = [];
  for (const f of facets as unknown[]) {
    const r = typeof f === 'object' && f !== null ? (f as Record<string, unknown>) : {};
    const field = r['field'];
    if (typeof field !== 'string') return invalid(ctx, c, undefined, 'each facet needs a field (a field path, as filter keys)');
    const path = filterPath(field);
    if (typeof path === 'string') return invalid(ctx, c, 'registry_facets', path.replace('query.filter key', 'facet field'));
    const limit = r['limit'] ?? FACET_LIMIT;
    const minCount = r['minCount'] ?? 1;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1_000) return invalid(ctx, c, 'registry_facets', `facet ${field}: limit must be an integer from 1 to 1000`);
    if (typeof minCount !== 'number' || !Number.isInteger(minCount) || minCount < 0) return invalid(ctx, c, 'registry_facets', `facet ${field}: minCount must be a non-negative integer`);
    asked.push({ field, path, limit, minCount });
  }
  return asked;
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
