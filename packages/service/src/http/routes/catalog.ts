/**
 * The catalog resource: the current snapshot as an AI Catalog at ARD 0.91's manifest location and
 * its predecessor's (one document), robots.txt's `Agentmap` line, and the `Link` header naming the
 * catalog. Public metadata, like an agent card: outside /api/, so no bearer token is asked.
 *
 * @module
 */
import { Hono } from 'hono';
import { CATALOG_WELL_KNOWN_PATHS } from 'a2a-discovery/internal';
import type { AiCatalogRoute } from './ai-catalog-route.js';
import { AI_CATALOG_LINK } from './ai-catalog-route.js';
import type { AppContext } from '../context.js';
import { problemJson } from '../route.js';

/** The catalog's routes, served by `catalog`. */
export function catalogRoutes(ctx: AppContext, catalog: AiCatalogRoute): Hono {
  const app = new Hono();
  const catalogSpec = {
    tags: ['catalog'],
    summary: 'The current snapshot as an AI Catalog: the ARD 0.91 manifest (ard.json) and its predecessor (ai-catalog.json), one document',
    responses: {
      200: { description: 'the catalog', content: { 'application/ai-catalog+json': { schema: { type: 'object' as const, required: ['specVersion', 'entries'] } } } },
      304: { description: 'not modified (If-None-Match)' },
      503: problemJson('nothing published yet'),
    },
  };
  for (const path of CATALOG_WELL_KNOWN_PATHS) app.get(path, ...ctx.route('public', catalogSpec), (c) => catalog.handle(c));
  // Where the catalog is, for readers that start at the site (ARD §6.1): robots.txt's Agentmap line, and a Link header on the pages after.
  app.get('/robots.txt', ...ctx.route('public', { tags: ['catalog'], summary: 'robots.txt with the Agentmap line naming the manifest (ARD 0.91)', responses: { 200: { description: 'robots.txt', content: { 'text/plain': { schema: { type: 'string' } } } } } }), (c) => catalog.robots(c));
  app.use('*', async (c, next) => {
    await next();
    c.res.headers.append('link', AI_CATALOG_LINK);
  });
  return app;
}
