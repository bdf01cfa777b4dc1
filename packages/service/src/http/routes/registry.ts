/**
 * The ARD registry API (registry/routes.ts, docs/registry-api.md) and its MCP tools
 * (registry/mcp.ts), mounted with their heavy part — a search's first page, an explore — run in a
 * fair pool of their own (`server.registry.maxSearches`, `maxSearchesPerClient`).
 *
 * @module
 */
import { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { describeRefusal, FairPool } from '../fair-pool.js';
import type { HeavyWork, RegistryApiOptions } from '../../registry/routes.js';
import { mountRegistry } from '../../registry/routes.js';
import { mountMcp } from '../../registry/mcp.js';
import { VERSION } from '../../version.js';

/** The heavy work of the registry, in its pool; the pool is closed by the app's shutdown signal. */
function heavyWork(ctx: AppContext, registry: Omit<RegistryApiOptions, 'route'>): HeavyWork {
  const { limits } = ctx;
  const searching = new FairPool(() => ({ capacity: registry.settings.maxSearches, perClient: registry.settings.maxSearchesPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
  ctx.o.shutdownSignal?.addEventListener('abort', () => searching.close(), { once: true });
  return async (c, _kind, work) => {
    const slot = await searching.acquire(ctx.shareOf(c), c.req.raw.signal);
    if (!slot.ok) {
      if (slot.reason === 'aborted') return c.json({ errorCode: 'INTERNAL_ERROR', message: 'the request ended while it waited for a slot' }, 503);
      const s = registry.settings;
      // The ARD error shape, with the pools' one wording.
      const r = describeRefusal(slot.reason, { what: 'search or explore', capacity: s.maxSearches, perClient: s.maxSearchesPerClient, capacityKey: 'server.registry.maxSearches', perClientKey: 'server.registry.maxSearchesPerClient', waitMs: limits.queueWaitMs });
      ctx.refuse(r.perClient ? 'registry_searches_per_client' : 'registry_searches');
      c.header('Retry-After', '1');
      return c.json({ errorCode: 'RATE_LIMIT_EXCEEDED', message: `${r.message} (${r.limit})`, limit: r.limit, retryAfterS: 1 }, 429);
    }
    try {
      return await work();
    } finally {
      slot.release();
    }
  };
}

/** The registry's routes and, unless `server.registry.mcp` is false, its MCP endpoint (answered through `whole`, the app's own routes). */
export function registryRoutes(ctx: AppContext, registry: Omit<RegistryApiOptions, 'route'>, whole: Hono): Hono {
  const app = new Hono();
  mountRegistry(app, { onRefusal: ctx.refuse, heavy: heavyWork(ctx, registry), route: ctx.route, ...registry });
  if (registry.settings.mcp !== false) mountMcp(app, { app: whole, route: ctx.route, version: VERSION, maxBodyBytes: registry.settings.maxBodyBytes, onRefusal: ctx.refuse });
  return app;
}
