/**
 * The inspect resource: the discovery-trace explorer (the seed's experiment run by the real
 * cache, validator and matcher on a model clock, no network) and the inspector (what `probe`
 * prints about a URL, a card or a catalog, under the service's allowlist and limits).
 *
 * @module
 */
import { Hono } from 'hono';
import type { TraceInputs } from 'a2a-discovery/explorer';
import { DEFAULT_TRACE_INPUTS, runTrace } from 'a2a-discovery/explorer';
import type { AppContext } from '../context.js';
import { FairPool } from '../fair-pool.js';
import { parseInspectInput } from '../inspector.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { AnyObjectSchema, InspectRequestSchema, InspectResultSchema, TraceSchema } from '../schemas.js';
import { jsonBody, validBody } from '../validate.js';

/** The trace explorer's and the inspector's routes; the inspections' pool is closed by the app's shutdown signal. */
export function inspectRoutes(ctx: AppContext): Hono {
  const { o, route, limits } = ctx;
  const app = new Hono();

  // POST the inputs (any subset of TraceInputs); runTrace names what is wrong with them.
  app.post('/api/trace', ...route('viewer', { tags: ['inspect'], summary: 'The discovery-trace explorer: the real cache on a model clock (no network)', responses: { 200: json('the trace', TraceSchema) } }), jsonBody(AnyObjectSchema, ctx.bodyLimit('maxTraceBodyBytes'), { required: false }), async (c) => c.json(await runTrace(validBody(c, AnyObjectSchema) as Partial<TraceInputs>)));
  app.get('/api/trace/defaults', ...route('viewer', { tags: ['inspect'], summary: "The trace explorer's default inputs", responses: { 200: json('the defaults', TraceSchema) } }), (c) => c.json(DEFAULT_TRACE_INPUTS));

  // A global pool shared fairly across clients (fair-pool.ts); its limits are read at each request.
  const inspecting = new FairPool(() => ({ capacity: limits.maxInspections, perClient: limits.maxInspectionsPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
  o.shutdownSignal?.addEventListener('abort', () => inspecting.close(), { once: true });

  app.post('/api/inspect', ...route('operator', { tags: ['inspect'], summary: 'What discovery would decide about a URL, a card or a catalog (as probe prints it)', responses: { 200: json('the report', InspectResultSchema), 429: problemJson('inspections are busy') } }), jsonBody(InspectRequestSchema, ctx.bodyLimit('maxInspectBodyBytes')), async (c) => {
    if (!o.inspector) return problem(c, 404, 'not-found', 'this service has no inspector');
    const input = parseInspectInput(validBody(c, InspectRequestSchema));
    if (typeof input === 'string') return problem(c, 400, 'bad-request', input);
    const busy = (): Response => ctx.tooMany(c, 'inspections', 'server.limits.maxInspections', 5, `${limits.maxInspections} inspection(s) are already running; try again shortly`);
    // A slot of the pool, shared fairly: the caller's own share, waiting its turn when others hold the rest.
    const slot = await inspecting.acquire(ctx.shareOf(c), c.req.raw.signal);
    if (!slot.ok) return ctx.poolRefused(c, slot.reason, { what: 'inspection', capacity: limits.maxInspections, perClient: limits.maxInspectionsPerClient, capacityKey: 'server.limits.maxInspections', perClientKey: 'server.limits.maxInspectionsPerClient', waitMs: limits.queueWaitMs, reason: 'inspections', perClientReason: 'inspections_per_client', retryAfterS: 5 });
    try {
      // The request's signal aborts when its client goes away: the inspection stops and frees its slot.
      const result = await o.inspector.inspect(input, c.req.raw.signal);
      if (result !== undefined) ctx.acted(c, 'inspect');
      return result !== undefined ? c.json(result) : busy();
    } finally {
      slot.release();
    }
  });
  return app;
}
