/**
 * Who the caller is and what they may do, for the dashboard's "signed in as": never the token.
 *
 * @module
 */
import { Hono } from 'hono';
import { actorOf, roleOf } from '../../auth/request-guard.js';
import type { Role } from '../../auth/people-auth.js';
import { ROLES } from '../../auth/people-auth.js';
import type { AppContext } from '../context.js';
import { json } from '../route.js';
import { WhoamiSchema } from '../schemas.js';

/** The people routes. */
export function peopleRoutes(ctx: AppContext): Hono {
  const { o, route, guarded } = ctx;
  const app = new Hono();
  app.get('/api/whoami', ...route('any', { tags: ['people'], summary: 'Who the caller is and what they may do (never the token)', responses: { 200: json('the caller', WhoamiSchema) } }), (c) => {
    const actor = actorOf(c);
    const role = roleOf(actor);
    // On an open service (loopback, no tokens) anyone may do everything but drive others' sessions.
    const may = (r: Role): boolean => (!guarded ? r !== 'admin' : role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(r));
    return c.json({
      kind: actor.kind,
      ...(actor.kind === 'person' && { sub: actor.person.sub, name: actor.person.name ?? null }),
      role: role ?? null,
      can: { read: !guarded || role !== undefined, refresh: may('operator'), inspect: may('operator'), chat: may('operator'), trace: may('viewer'), confirm: !guarded || may('admin'), othersSessions: may('admin') },
      // Where the dashboard links a trace id, when configured (not told to who may read nothing).
      ...((!guarded || role !== undefined) && o.traceUrl !== undefined && { traceUrl: o.traceUrl }),
    });
  });
  return app;
}
