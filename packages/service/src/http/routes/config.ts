/**
 * The configuration resource: the admin's reload of the configuration file, applied with what
 * changed, or refused with every problem (and its line) while the running one keeps serving.
 *
 * @module
 */
import { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { AnyObjectSchema, ReloadSchema } from '../schemas.js';
import { jsonBody } from '../validate.js';

/** The configuration's routes. */
export function configRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();
  // Reload: 200 with what changed when applied, 422 with every problem (and its line) when refused.
  app.post('/api/config/reload', ...route('admin', { tags: ['config'], summary: 'Read the configuration file again and apply it, or refuse it with every problem', responses: { 200: json('applied', ReloadSchema), 404: problemJson('not started from a file'), 422: problemJson('refused; the running configuration keeps serving') } }), jsonBody(AnyObjectSchema, ctx.bodyLimit('maxBodyBytes'), { required: false }), async (c) => {
    if (o.reload === undefined) return problem(c, 404, 'not-found', 'this service was not started from a configuration file (a2a-discovery serve --config)');
    const r = await o.reload();
    // Who asked, journaled next to the config.reloaded or config.refused event the reload made.
    ctx.acted(c, 'config.reload', { ...(r.version !== undefined && { version: r.version }) });
    if (!r.applied) return problem(c, 422, 'config-refused', 'the configuration was refused; the running one keeps serving', { sha256: r.sha256, changed: r.changed, problems: r.problems });
    return c.json({ applied: true, sha256: r.sha256, changed: r.changed, version: r.version ?? o.loop.current()?.version ?? 0 });
  });
  return app;
}
