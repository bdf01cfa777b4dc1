/**
 * The ARD registry API (spec v0.9 §7; docs/registry-api.md) under {@link REGISTRY_BASE}, one
 * module per route group over one context built here:
 *
 * - `POST /api/registry/search` (registry/search-route.ts): text over every admitted card,
 *   filters, `pageToken` paging whose order is pinned when the first page is answered (a later
 *   publication neither duplicates nor skips an entry on later pages), the federation hook.
 * - `POST /api/registry/explore` (registry/explore-route.ts): facets with counts over the
 *   matched set.
 * - `GET /api/registry/agents/{identifier}` and `GET /api/registry/agents`
 *   (registry/agents-routes.ts): one entry by its URL-encoded identifier (ARD 0.91), the list by
 *   identifier (Appendix A filters), and with `updated_since` (or `filter=updatedAfter:…`) the
 *   change feed, tombstones included.
 *
 * Every limit is a `server.registry` key; a refusal answers the ARD error shape (Appendix B) and
 * is counted (`a2a_discovery_http_refusals_total{reason="registry_…"}`).
 */
import type { Hono } from 'hono';
import type { ServerRegistryConfig } from 'a2a-discovery/config';
import type { OnRefusal } from '../http/limits.js';
import { routeToolkit } from '../http/route.js';
import type { RouteToolkit } from '../http/route.js';
import { mountAgents } from './agents-routes.js';
import { mountExplore } from './explore-route.js';
import { PageTokens } from './page-token.js';
import type { RegistryIndex } from './registry-index.js';
import type { Federate, HeavyWork, RegistryRouteContext } from './route-context.js';
import { mountSearch } from './search-route.js';

export { REGISTRY_BASE } from './route-context.js';
export type { Federate, HeavyWork } from './route-context.js';

/** Inputs of {@link mountRegistry}. */
export interface RegistryApiOptions {
  readonly index: RegistryIndex;
  readonly settings: ServerRegistryConfig;
  readonly onRefusal?: OnRefusal;
  readonly federate?: Federate;
  /** Wall clock, epoch ms. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Runs the heavy part of a search's first page or of an explore (registry/search-route.ts,
   * registry/explore-route.ts: the index brought up to date, the text scored, the filter and the
   * facets read): the seam where a concurrency gate (a fair pool per client and overall) wraps them; it
   * may answer a Response of its own (a 429) instead. Default: runs it.
   */
  readonly heavy?: HeavyWork;
  /**
   * The route declarations of the app (http/route.ts): each route a viewer's, or everyone's with
   * `anonymous`. Default: an open toolkit (a bare app without people or a token, as in tests).
   */
  readonly route?: RouteToolkit['route'];
}

/** Registers the routes on `app`: search, explore, then the entries by identifier (the list and the change feed). */
export function mountRegistry(app: Hono, o: RegistryApiOptions): void {
  const now = o.now ?? Date.now;
  const ctx: RegistryRouteContext = {
    index: o.index,
    settings: o.settings,
    now,
    refuse: o.onRefusal ?? (() => undefined),
    tokens: new PageTokens(o.settings.pageTokenTtlMs, now),
    heavy: o.heavy ?? ((_c, _kind, work) => work()),
    route: o.route ?? routeToolkit({ guarded: false }).route,
    ...(o.federate !== undefined && { federate: o.federate }),
  };
  mountSearch(app, ctx);
  mountExplore(app, ctx);
  mountAgents(app, ctx);
}
