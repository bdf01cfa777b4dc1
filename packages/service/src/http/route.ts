/**
 * How a route is declared (docs/service.md "Roles"): with the role it needs and its OpenAPI
 * description, together, so that neither can be forgotten.
 *
 * ```ts
 * app.get('/api/snapshot', ...route('viewer', { summary: 'The current snapshot', responses: { 200: json(SnapshotSchema) } }), handler);
 * ```
 *
 * - The role is checked by the route's first middleware, after the request guard (auth/request-guard.ts)
 *   has said who the caller is: `public` (no check), `any` (any verified caller, even one without a
 *   role), `viewer`, `operator`, `admin` (that role or a higher one). Without a token or people
 *   configured (a loopback service) every route is open, as before; another replica passes (the guard
 *   admitted it to the leader's lists only); `open(path)` opens a route to everyone
 *   (`server.registry.anonymous`).
 * - **Fail closed.** {@link assertRolesDeclared} refuses to start an app with a route under `/api/` or
 *   `/metrics` whose role is not declared, and an unknown path under `/api/` needs `viewer` before
 *   its 404.
 * - The OpenAPI description is hono-openapi's `describeRoute`, with the role as `x-role` and the
 *   bearer security requirement of any role but `public`: the document served at `/openapi.json`
 *   is generated from these declarations, never written by hand.
 *
 * @module
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { describeRoute, resolver } from 'hono-openapi';
import type { DescribeRouteOptions } from 'hono-openapi';
import type { ZodType } from 'zod';
import { DiscoveryError } from 'a2a-discovery';
import { ROLES } from '../auth/people-auth.js';
import type { Role } from '../auth/people-auth.js';
import { actorOf, roleOf } from '../auth/request-guard.js';
import type { OnRefusal } from './limits.js';
import { ProblemSchema } from './schemas.js';
import { problem, PROBLEM_MEDIA_TYPE } from './problem.js';

/** Who may call a route. */
type RouteRole = 'public' | 'any' | Role;

/** A route's declaration: its role's check, then its description. Spread into `app.get(path, ...route(…), handler)`. */
type RouteDeclaration = [MiddlewareHandler, MiddlewareHandler];

/** The role checks {@link RouteToolkit.route} made: {@link assertRolesDeclared} finds routes without one. */
const GATES = new WeakSet<MiddlewareHandler>();

export interface RouteToolkitOptions {
  /** A token or people are configured: roles apply. Otherwise every route is open. */
  readonly guarded: boolean;
  /** Routes open to everyone whatever their role (`server.registry.anonymous`). */
  readonly open?: ((path: string) => boolean) | undefined;
  readonly onRefusal?: OnRefusal;
}

export interface RouteToolkit {
  /** The declaration of a route needing `role`, described by `spec`. */
  route(role: RouteRole, spec: DescribeRouteOptions): RouteDeclaration;
  /** The role check alone (a route family described elsewhere, such as the A2A endpoint's JSON-RPC). */
  gate(role: RouteRole): MiddlewareHandler;
}

/** The toolkit of one app. */
export function routeToolkit(o: RouteToolkitOptions): RouteToolkit {
  const refuse: OnRefusal = o.onRefusal ?? (() => undefined);
  const gate = (needed: RouteRole): MiddlewareHandler => {
    const check: MiddlewareHandler = async (c, next) => {
      if (!o.guarded || needed === 'public' || o.open?.(c.req.path) === true) return next();
      const actor = actorOf(c);
      const role = roleOf(actor);
      // Another replica: the guard admitted it to the leader's lists only (request-guard.ts).
      if (actor.kind === 'replica') return next();
      if (needed === 'any' && actor.kind !== 'anonymous') return next();
      if (role !== undefined && needed !== 'any' && ROLES.indexOf(role) >= ROLES.indexOf(needed)) return next();
      return forbidden(c, needed, role, refuse);
    };
    GATES.add(check);
    return check;
  };
  return {
    gate,
    route: (role, spec) => [
      gate(role),
      describeRoute({
        ...spec,
        ...(role !== 'public' && {
          security: [{ bearer: [] }],
          // The guard's and the role's refusals, on every route that needs a caller.
          responses: { ...spec.responses, 401: problemJson('no bearer token, or one that is not valid (when a token or people are configured)'), ...(role !== 'any' && { 403: problemJson(`the caller has no ${role} role`) }) },
        }),
        'x-role': role,
      } as DescribeRouteOptions),
    ],
  };
}

/** The 403 of a caller without the role a route needs, as the API has always answered it. */
function forbidden(c: Context, needed: Exclude<RouteRole, 'public'>, role: Role | undefined, refuse: OnRefusal): Response {
  refuse('role');
  const actor = actorOf(c);
  const who = actor.kind === 'person' ? actor.person.sub : 'this caller';
  const message =
    actor.kind === 'person' && role === undefined
      ? `the token of ${who} carries no role this service knows (${actor.person.claimed.length > 0 ? `it has ${actor.person.claimed.join(', ')}` : 'its roles claim is empty or missing'}); server.oidc.roles maps the provider's values to viewer, operator or admin`
      : `${c.req.method} ${c.req.path} needs the ${needed} role; ${who} is ${role ?? 'without a role'}`;
  c.header('WWW-Authenticate', `Bearer realm="a2a-discovery", error="insufficient_scope", scope="${needed}"`);
  return problem(c, 403, 'forbidden', message, { needed, role: role ?? null });
}

/** Whether `path` is one whose role must be declared. */
function guardedPath(path: string): boolean {
  return path.startsWith('/api/') || path === '/metrics';
}

/**
 * Refuses an app with a route under `/api/` or `/metrics` whose handlers carry no role check
 * (a {@link RouteToolkit} gate): such a route would answer whoever reaches it.
 */
export function assertRolesDeclared(app: Hono): void {
  const declared = new Set<string>();
  const routes = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL' && r.path.endsWith('*')) continue; // middleware
    const key = `${r.method} ${r.path}`;
    if (guardedPath(r.path)) routes.add(key);
    if (GATES.has(r.handler as MiddlewareHandler)) declared.add(key);
  }
  const missing = [...routes].filter((k) => !declared.has(k));
  if (missing.length > 0) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `routes without a declared role (http/route.ts): ${missing.join(', ')}; declare each with route(role, spec)`);
  }
}

/** A JSON response of `schema`, for a declaration's `responses`. */
export function json(description: string, schema: ZodType): { description: string; content: { 'application/json': { schema: ReturnType<typeof resolver> } } } {
  return { description, content: { 'application/json': { schema: resolver(schema) } } };
}

/** An error response (problem.ts), for a declaration's `responses`. */
export function problemJson(description: string): { description: string; content: { [PROBLEM_MEDIA_TYPE]: { schema: ReturnType<typeof resolver> } } } {
  return { description, content: { [PROBLEM_MEDIA_TYPE]: { schema: resolver(ProblemSchema) } } };
}
