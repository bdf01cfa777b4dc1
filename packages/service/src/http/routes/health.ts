/**
 * The health resource: liveness, readiness (the first discovery pass, the drain, the store and,
 * with several replicas, this one's role and lag) and the Prometheus metrics.
 *
 * @module
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { presentsToken } from '../../auth/request-guard.js';
import type { AppContext } from '../context.js';
import { json } from '../route.js';
import { HealthzSchema, ReadyzSchema } from '../schemas.js';

/** What `/readyz` tells beside `ready`: the store (its location and error to the token's holder only) and the replica. */
function readinessDetails(ctx: AppContext, c: Context): Record<string, unknown> {
  const s = ctx.o.storeStatus?.();
  // A failing store degrades the service but does not stop it: it keeps serving from memory.
  // Where the store lives (a file path, a database URL) and its last error only to the token's holder.
  const details = presentsToken(c, ctx.tokenBytes);
  const store = s && { kind: s.kind, ok: s.ok, ...(details && { location: s.location, ...(s.lastError !== undefined && { lastError: s.lastError }) }) };
  const r = ctx.o.replicaStatus?.();
  const replica = r && { id: r.id, role: r.role, epoch: r.epoch, leader: r.leader, connected: r.connected, digest: r.digest ?? null, storeDigest: r.storeDigest ?? null, inSync: r.inSync, lagMs: r.lagMs, ...(r.refusesToLead !== null && { refusesToLead: r.refusesToLead }) };
  const degraded = (store !== undefined && !store.ok) || (replica !== undefined && !replica.connected);
  return { ...(store && { store }), ...(replica && { replica }), ...(degraded && { degraded: true }) };
}

/** The health routes. */
export function healthRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();
  app.get('/healthz', ...route('public', { tags: ['health'], summary: 'Liveness', responses: { 200: json('alive', HealthzSchema) } }), (c) => c.json({ ok: true }));

  // Not ready is an answer, not an error: a load balancer reads the 503, the body says why.
  app.get('/readyz', ...route('public', { tags: ['health'], summary: 'Readiness: the first discovery pass finished, not draining', responses: { 200: json('ready', ReadyzSchema), 503: json('not ready (or draining)', ReadyzSchema) } }), (c) => {
    const extra = readinessDetails(ctx, c);
    // Draining: unready first, so a load balancer stops sending before anything is refused.
    if (o.drain?.draining === true) return c.json({ ready: false, draining: true, reason: 'the service is draining (shutting down)', ...extra }, 503);
    return o.loop.ready
      ? c.json({ ready: true, version: o.loop.current()?.version ?? 0, ...extra })
      : c.json({ ready: false, reason: 'the first discovery pass has not finished', ...extra }, 503);
  });

  app.get('/metrics', ...route('viewer', { tags: ['health'], summary: 'Prometheus metrics (text exposition format)', responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: { type: 'string' } } } } } }), async (c) => {
    c.header('Content-Type', o.metrics.contentType);
    return c.body(await o.metrics.metrics());
  });
  return app;
}
