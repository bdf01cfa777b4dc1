/**
 * The HTTP API, composed: one Hono sub-app per resource (routes/: people, health, snapshots,
 * endpoints and sources, events, sessions, configuration, inspect, the catalog, the registry with
 * its MCP tools) and the service as an A2A agent (a2a/), over the context they share (context.ts),
 * behind the request guard, with one error shape (problem.ts), the OpenAPI document generated
 * from the routes' declarations (openapi.ts), and the dashboard's static files at `/`.
 *
 * Every request first passes the request guard (request-guard.ts: Host allowlist, Origin, JSON
 * content type, bearer token or a person's OIDC token), then the role its route declares
 * (route.ts: viewer, operator, admin; fail closed); bodies and queries are validated against the
 * schemas beside each route (validate.ts) under per-route caps; the event stream is bounded
 * (routes/event-stream-route.ts). Inspections, new sessions and chat turns are counted per client beside
 * the global caps (fair shares). docs/security.md describes the model.
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { CATALOG_WELL_KNOWN_PATHS } from 'a2a-discovery/internal';
import { serverSpans } from '../telemetry/server-spans.js';
import { actorOf, requestGuard, roleOf } from '../auth/request-guard.js';
import { personKey } from '../auth/session-owners.js';
import { mountA2a } from './a2a/routes.js';
import type { AppContext, AppOptions } from './context.js';
import { createAppContext } from './context.js';
import { openApiHandler, OPENAPI_PATH } from './openapi.js';
import { onError, problem } from './problem.js';
import { assertRolesDeclared } from './route.js';
import { readObjectBody } from './validate.js';
import { catalogRoutes } from './routes/catalog.js';
import type { ChatTurn } from './routes/chat-turn.js';
import { createChatTurn } from './routes/chat-turn.js';
import { configRoutes } from './routes/config.js';
import { endpointRoutes } from './routes/endpoints.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { inspectRoutes } from './routes/inspect.js';
import { peopleRoutes } from './routes/people.js';
import { registryRoutes } from './routes/registry.js';
import { sessionRoutes } from './routes/sessions.js';
import { snapshotRoutes } from './routes/snapshots.js';
import { rolloutRoutes } from './routes/rollout.js';

export type { AppOptions } from './context.js';

/** The middleware before every route: a SERVER span per API request (refusals traced too), then the request guard. */
function guard(app: Hono, ctx: AppContext): void {
  const { o } = ctx;
  app.use('*', serverSpans((path) => path.startsWith('/api/') || CATALOG_WELL_KNOWN_PATHS.includes(path)));
  app.use(
    '*',
    requestGuard({
      bindHost: o.bindHost ?? '127.0.0.1',
      ...(o.allowedHosts && { allowedHosts: o.allowedHosts }),
      ...(o.allowedOrigins && { allowedOrigins: o.allowedOrigins }),
      ...(o.token !== undefined && { token: o.token }),
      ...(o.people && { people: o.people }),
      ...(o.replicaAuth && { replicas: o.replicaAuth }),
      onRefusal: ctx.refuse,
      ...(ctx.openPath && { openApiPath: ctx.openPath }),
    }),
  );
}

/** The service as an A2A agent: each contextId a chat session, its turns through `chatTurn` (a2a/). */
function mountA2aAgent(app: Hono, ctx: AppContext, a2a: NonNullable<AppOptions['a2a']>, chatTurn: ChatTurn): void {
  const { o } = ctx;
  // An A2A session belongs to who started it: the person, else the client (the token's holder, or the network).
  const ownerOf = (c: Context): string => {
    const actor = actorOf(c);
    return actor.kind === 'person' ? personKey(actor.person.issuer, actor.person.sub) : `a2a ${ctx.shareOf(c)}`;
  };
  mountA2a(app, {
    settings: a2a.settings,
    loop: o.loop,
    card: { version: a2a.version, vocabulary: a2a.vocabulary, auth: { token: ctx.tokenBytes !== undefined, ...(o.people && { oidcIssuer: o.people.issuer }) } },
    chatTurn,
    callerOf: (c) => {
      const actor = actorOf(c);
      const admin = roleOf(actor) === 'admin';
      return actor.kind === 'person' ? { admin, person: ownerOf(c) } : { admin, clientId: ownerOf(c) };
    },
    ownerOf,
    draining: ctx.drainingRefusal,
    readBody: (c) => readObjectBody(c, ctx.bodyLimit('maxBodyBytes')),
    route: ctx.route,
  });
}

/** The service's HTTP API over `o` (no I/O; its pools and streams close with `o.shutdownSignal`). */
export function createApp(o: AppOptions): Hono {
  const app = new Hono();
  const ctx = createAppContext(o);
  const chatTurn = createChatTurn(ctx);
  guard(app, ctx);
  app.route('/', peopleRoutes(ctx));
  // The API's description, generated from the route declarations (route.ts, docs/openapi.json).
  app.get(OPENAPI_PATH, openApiHandler(app));
  for (const routes of [healthRoutes(ctx), snapshotRoutes(ctx), rolloutRoutes(ctx), endpointRoutes(ctx), eventRoutes(ctx), sessionRoutes(ctx, chatTurn), configRoutes(ctx), inspectRoutes(ctx)]) app.route('/', routes);
  // After the routes above, so that the catalog's Link header is added to the ones below (the dashboard's pages).
  if (o.aiCatalog) app.route('/', catalogRoutes(ctx, o.aiCatalog));
  if (o.a2a) mountA2aAgent(app, ctx, o.a2a, chatTurn);
  if (o.registry) app.route('/', registryRoutes(ctx, o.registry, app));

  // An unknown path under /api/ is a viewer's 404 (fail closed: no role, no answer at all).
  app.all('/api/*', ctx.gate('viewer'), (c) => problem(c, 404, 'not-found', `no route ${c.req.method} ${c.req.path}`));
  app.get('*', async (c) => (await o.staticFiles?.(c.req.path)) ?? problem(c, 404, 'not-found', `no page ${c.req.path}`));

  app.onError(onError);
  assertRolesDeclared(app);
  return app;
}
