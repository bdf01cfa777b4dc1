/**
 * The snapshots resource: the current snapshot, the version history, one retained snapshot by
 * digest, the diff of two, a discovery cycle run now, and the admin's confirmation of a removal
 * the mass-removal guard holds.
 *
 * @module
 */
import { Hono } from 'hono';
import type { RoutingVerdict, Snapshot } from 'a2a-discovery';
import { diffSnapshots } from 'a2a-discovery';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { AnyObjectSchema, ConfirmedSchema, DiffQuerySchema, DiffSchema, PublishedSchema, SnapshotSchema, SnapshotsSchema } from '../schemas.js';
import { jsonBody, validQuery, validQueryOf } from '../validate.js';

/** A snapshot for the API: agents with their reviewed fields, card summary and the card itself. */
function snapshotJson(s: Snapshot, routing?: RoutingVerdict): Record<string, unknown> {
  return {
    version: s.version,
    digest: s.digest,
    createdAt: new Date(s.createdAt).toISOString(),
    // Routing domains (two-level trees) and the routing evaluation of this snapshot, when configured.
    ...(s.domains && { domains: s.domains }),
    routing: routing ? { accuracy: routing.accuracy, minAccuracy: routing.minAccuracy, passed: routing.passed, evaluated: routing.evaluated } : null,
    agents: s.agents.map((a) => ({
      localName: a.localName,
      description: a.description,
      tags: a.tags,
      // Routed by its static entry's routingTags: the card's own skill tags, shown, not used.
      ...(a.cardTags !== undefined && { cardTags: a.cardTags }),
      // The card's unroutable interface (0.0.0.0, ::) its static entry's interfaceUrl replaced.
      ...(a.interfaceRewritten !== undefined && { interfaceRewritten: a.interfaceRewritten }),
      critical: a.critical,
      ...(a.domain !== undefined && { domain: a.domain }),
      baseUrl: a.baseUrl,
      sources: a.sources,
      protocolVersion: a.protocolVersion,
      canonicalSha256: a.canonicalSha256,
      // The public card, or the authenticated extended card of an identity (its label, never a secret).
      cardKind: a.cardKind ?? 'public',
      ...(a.identity !== undefined && { identity: a.identity }),
      degraded: a.degraded,
      stale: a.stale,
      card: a.card,
    })),
  };
}

/** The snapshots' routes. */
export function snapshotRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();
  const emptyBody = jsonBody(AnyObjectSchema, ctx.bodyLimit('maxBodyBytes'), { required: false });

  app.get('/api/snapshot', ...route('viewer', { tags: ['snapshots'], summary: 'The current snapshot: the agents selected, their reviewed fields and cards', responses: { 200: json('the current snapshot', SnapshotSchema), 404: problemJson('nothing published yet') } }), (c) => {
    const s = o.loop.current();
    return s ? c.json(snapshotJson(s, o.loop.routingOf(s.digest))) : problem(c, 404, 'not-ready', 'no snapshot has been published yet');
  });

  // Several replicas: who answers, and who leads (the dashboard's sidebar says it).
  const replicaJson = () => {
    const r = o.replicaStatus?.();
    return r ? { id: r.id, role: r.role, epoch: r.epoch, leader: r.leader } : null;
  };
  app.get('/api/snapshots', ...route('viewer', { tags: ['snapshots'], summary: 'The version history and the retained snapshots', responses: { 200: json('history', SnapshotsSchema) } }), (c) =>
    c.json({
      replica: replicaJson(),
      current: o.loop.current()?.digest ?? null,
      held: o.loop.held ?? null,
      history: o.loop.snapshots.history().map((h) => ({ ...h, createdAt: new Date(h.createdAt).toISOString() })),
      retained: o.loop.snapshots.retained(),
    }),
  );

  // Confirms the removal the mass-removal guard holds (admin): the held snapshot is published.
  app.post('/api/snapshots/confirm', ...route('admin', { tags: ['snapshots'], summary: 'Confirm the removal the mass-removal guard holds: publish the held snapshot', responses: { 200: json('published', ConfirmedSchema), 409: problemJson('nothing is held') } }), emptyBody, async (c) => {
    const held = o.loop.held;
    if (held === undefined) return problem(c, 409, 'nothing-held', 'no snapshot is held back: there is no removal to confirm');
    const s = await o.loop.confirmRemovals();
    ctx.acted(c, 'confirm', { ...(s && { digest: s.digest, version: s.version }) });
    return c.json({ confirmed: held, version: s?.version ?? 0, digest: s?.digest ?? null, held: o.loop.held ?? null });
  });

  app.get('/api/snapshots/:digest', ...route('viewer', { tags: ['snapshots'], summary: 'One retained or archived snapshot by digest', responses: { 200: json('the snapshot', SnapshotSchema), 404: problemJson('not retained') } }), (c) => {
    const s = o.archive.get(c.req.param('digest'));
    return s ? c.json(snapshotJson(s, o.loop.routingOf(s.digest))) : problem(c, 404, 'not-found', 'no such snapshot is retained or archived');
  });

  app.get('/api/diff', ...route('viewer', { tags: ['snapshots'], summary: 'What changed between two snapshots (from, to: digests; to defaults to the current)', responses: { 200: json('the diff', DiffSchema), 404: problemJson('a snapshot is not retained') } }), validQuery(DiffQuerySchema), (c) => {
    const q = validQueryOf(c, DiffQuerySchema);
    const to = q.to ?? o.loop.current()?.digest;
    const a = q.from !== undefined ? o.archive.get(q.from) : undefined;
    const b = to !== undefined ? o.archive.get(to) : undefined;
    if ((q.from !== undefined && !a) || !b) return problem(c, 404, 'not-found', 'both snapshots must be retained or archived');
    return c.json(diffSnapshots(a, b));
  });

  app.post('/api/refresh', ...route('operator', { tags: ['snapshots'], summary: 'Run a discovery cycle now', responses: { 200: json('the snapshot after it', PublishedSchema) } }), emptyBody, async (c) => {
    const s = await o.loop.refreshNow();
    ctx.acted(c, 'refresh', { ...(s && { digest: s.digest, version: s.version }) });
    return c.json({ version: s?.version ?? 0, digest: s?.digest ?? null });
  });
  return app;
}
