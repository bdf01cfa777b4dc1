/**
 * The endpoints and sources resources: every endpoint discovery knows (verdict, cache entry,
 * health, access), one endpoint's cached card, and what each source is doing. On a follower
 * replica they are the leader's (context.ts, `fromLeader`).
 *
 * @module
 */
import { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { CachedCardSchema, CardQuerySchema, EndpointsSchema, SourcesSchema } from '../schemas.js';
import { sourcesJson } from './sources-json.js';
import { validQuery, validQueryOf } from '../validate.js';

/** The endpoints' and sources' routes. */
export function endpointRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();

  app.get('/api/endpoints', ...route('viewer', { tags: ['endpoints'], summary: 'Every endpoint discovery knows, with its verdict, cache entry, health and access', responses: { 200: json('endpoints', EndpointsSchema), 503: problemJson('a follower cannot reach the leader') } }), async (c) => (await ctx.fromLeader(c, '/api/endpoints')) ?? c.json({ endpoints: await o.loop.status(), ...ctx.servedBy() }));

  // What each source is doing: state, error, problems by path, and an AI Catalog source's documents.
  app.get('/api/sources', ...route('viewer', { tags: ['sources'], summary: 'What each source is doing: state, error, problems by path', responses: { 200: json('sources', SourcesSchema), 503: problemJson('a follower cannot reach the leader') } }), async (c) => (await ctx.fromLeader(c, '/api/sources')) ?? c.json({ ...sourcesJson(o.loop.sources), ...ctx.servedBy() }));

  app.get('/api/endpoints/card', ...route('viewer', { tags: ['endpoints'], summary: "An endpoint's cached card and entry", responses: { 200: json('the cached card', CachedCardSchema), 400: problemJson('url missing'), 404: problemJson('nothing cached') } }), validQuery(CardQuerySchema), async (c) => {
    const { url } = validQueryOf(c, CardQuerySchema);
    const leader = await ctx.fromLeader(c, '/api/endpoints/card');
    if (leader) return leader;
    // A thrown error (a URL the cache refuses) is answered by the app's one handler (problem.ts).
    const entry = await o.cache.peek(url);
    if (!entry) return problem(c, 404, 'not-found', 'no card is cached for this endpoint', { lastFailure: o.cache.lastFailure(url)?.error.toJSON() ?? null });
    return c.json({ baseUrl: entry.baseUrl, cardUrl: entry.cardUrl, body: entry.body, warnings: entry.warnings, lastError: entry.lastError ?? null, card: entry.card, ...ctx.servedBy() });
  });
  return app;
}
