/**
 * The HTTP API: JSON routes over the loop, the cache, the trees and the sessions; the SSE feed;
 * `/metrics`; `/healthz` and `/readyz`; and the dashboard's static files at `/`.
 *
 * With a token configured, every route except `/healthz` and `/readyz` requires
 * `Authorization: Bearer <token>` (compared in constant time). No token may travel in a URL.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Registry } from 'prom-client';
import type { SessionRunner, TreeFactory } from '../adk/index.js';
import type { CardCache } from '../cache/index.js';
import { isDiscoveryError } from '../errors.js';
import type { DiscoveryEvent } from '../events/index.js';
import type { DiscoveryLoop } from '../loop/index.js';
import type { TraceInputs } from '../explorer/index.js';
import { DEFAULT_TRACE_INPUTS, runTrace } from '../explorer/index.js';
import type { Snapshot } from '../snapshot/index.js';
import { diffSnapshots } from '../snapshot/index.js';
import type { EventBuffer } from './event-buffer.js';
import type { SnapshotArchive } from './snapshot-archive.js';

export interface AppOptions {
  loop: DiscoveryLoop;
  cache: CardCache;
  trees: TreeFactory;
  sessions: SessionRunner;
  buffer: EventBuffer;
  archive: SnapshotArchive;
  metrics: Registry;
  token?: string;
  /** Serves the dashboard: returns a Response for a path under `/`, or undefined. */
  staticFiles?: (path: string) => Promise<Response | undefined>;
  /** Closes SSE streams on shutdown. */
  shutdownSignal?: AbortSignal;
}

/** A snapshot for the API: agents with their reviewed fields, card summary and the card itself. */
export function snapshotJson(s: Snapshot): Record<string, unknown> {
  return {
    version: s.version,
    digest: s.digest,
    createdAt: new Date(s.createdAt).toISOString(),
    agents: s.agents.map((a) => ({
      localName: a.localName,
      description: a.description,
      tags: a.tags,
      critical: a.critical,
      baseUrl: a.baseUrl,
      sources: a.sources,
      protocolVersion: a.protocolVersion,
      canonicalSha256: a.canonicalSha256,
      degraded: a.degraded,
      stale: a.stale,
      card: a.card,
    })),
  };
}

export function createApp(o: AppOptions): Hono {
  const app = new Hono();
  const token = o.token !== undefined && o.token !== '' ? Buffer.from(o.token) : undefined;

  app.use('*', async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    const path = c.req.path;
    if (token === undefined || path === '/healthz' || path === '/readyz') return next();
    // The dashboard's static files carry no data; the data they fetch is protected.
    if (!path.startsWith('/api/') && path !== '/metrics') return next();
    const header = c.req.header('authorization') ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    if (given.length !== token.length || !timingSafeEqual(given, token)) {
      c.header('WWW-Authenticate', 'Bearer realm="a2a-discovery"');
      return c.json({ error: 'unauthorized', message: 'a bearer token is required (Authorization: Bearer <token>)' }, 401);
    }
    return next();
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', (c) =>
    o.loop.ready ? c.json({ ready: true, version: o.loop.current()?.version ?? 0 }) : c.json({ ready: false, reason: 'the first discovery pass has not finished' }, 503),
  );

  app.get('/metrics', async (c) => {
    c.header('Content-Type', o.metrics.contentType);
    return c.body(await o.metrics.metrics());
  });

  app.get('/api/snapshot', (c) => {
    const s = o.loop.current();
    return s ? c.json(snapshotJson(s)) : c.json({ error: 'not-ready', message: 'no snapshot has been published yet' }, 404);
  });

  app.get('/api/snapshots', (c) =>
    c.json({
      current: o.loop.current()?.digest ?? null,
      held: o.loop.held ?? null,
      history: o.loop.snapshots.history().map((h) => ({ ...h, createdAt: new Date(h.createdAt).toISOString() })),
      retained: o.loop.snapshots.retained(),
    }),
  );

  app.get('/api/snapshots/:digest', (c) => {
    const s = o.archive.get(c.req.param('digest'));
    return s ? c.json(snapshotJson(s)) : c.json({ error: 'not-found', message: 'no such snapshot is retained or archived' }, 404);
  });

  app.get('/api/diff', (c) => {
    const from = c.req.query('from');
    const to = c.req.query('to') ?? o.loop.current()?.digest;
    const a = from !== undefined ? o.archive.get(from) : undefined;
    const b = to !== undefined ? o.archive.get(to) : undefined;
    if ((from !== undefined && !a) || !b) return c.json({ error: 'not-found', message: 'both snapshots must be retained or archived' }, 404);
    return c.json(diffSnapshots(a, b));
  });

  app.get('/api/endpoints', async (c) => c.json({ endpoints: await o.loop.status() }));

  app.get('/api/endpoints/card', async (c) => {
    const url = c.req.query('url');
    if (!url) return c.json({ error: 'bad-request', message: 'query parameter url is required' }, 400);
    try {
      const entry = await o.cache.peek(url);
      if (!entry) return c.json({ error: 'not-found', message: 'no card is cached for this endpoint', lastFailure: o.cache.lastFailure(url)?.error.toJSON() ?? null }, 404);
      return c.json({ baseUrl: entry.baseUrl, cardUrl: entry.cardUrl, body: entry.body, warnings: entry.warnings, lastError: entry.lastError ?? null, card: entry.card });
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.get('/api/sessions', (c) =>
    c.json({
      sessions: o.trees.sessions(),
      builtDigests: o.trees.builtDigests,
      retained: o.loop.snapshots.retained(),
    }),
  );

  app.get('/api/events', (c) => {
    const since = Number(c.req.query('since') ?? 0);
    return c.json({ events: o.buffer.since(Number.isFinite(since) ? since : 0) });
  });

  app.post('/api/refresh', async (c) => {
    const s = await o.loop.refreshNow();
    return c.json({ version: s?.version ?? 0, digest: s?.digest ?? null });
  });

  app.post('/api/chat', async (c) => {
    const body = await readJson(c);
    if (body === undefined || typeof body.message !== 'string' || body.message.trim() === '') {
      return c.json({ error: 'bad-request', message: 'a JSON body {"message": "...", "sessionId"?: "..."} is required' }, 400);
    }
    const sessionId = typeof body.sessionId === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(body.sessionId) ? body.sessionId : `s-${crypto.randomUUID()}`;
    try {
      const turn = await o.sessions.run(sessionId, body.message.slice(0, 4_000));
      return c.json({
        sessionId,
        digest: turn.digest,
        version: o.loop.snapshots.get(turn.digest)?.version ?? null,
        author: turn.author ?? null,
        reply: turn.reply,
        error: turn.error ?? null,
        events: turn.events.map((e) => ({ author: e.author, text: (e.content?.parts ?? []).map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join(''), error: e.errorMessage ?? null })),
      });
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.post('/api/sessions/:id/upgrade', async (c) => {
    const body = (await readJson(c)) ?? {};
    try {
      return c.json(await o.sessions.upgrade(c.req.param('id'), { force: body.force === true }));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.delete('/api/sessions/:id', async (c) => {
    await o.sessions.end(c.req.param('id'));
    return c.json({ ended: true });
  });

  app.get('/api/stream', (c) => {
    const header = c.req.header('last-event-id') ?? c.req.query('lastEventId');
    const last = Number(header ?? NaN);
    return streamSSE(c, async (stream) => {
      const queue: DiscoveryEvent[] = [];
      let wake: (() => void) | undefined;
      const off = o.buffer.listen((e) => {
        queue.push(e);
        wake?.();
      });
      let closed = false;
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      const onShutdown = () => {
        closed = true;
        wake?.();
      };
      o.shutdownSignal?.addEventListener('abort', onShutdown, { once: true });
      try {
        // Resume: everything after Last-Event-ID still in the buffer; say so when some was lost.
        if (Number.isFinite(last)) {
          if (last < o.buffer.oldestSeq - 1) await stream.writeSSE({ event: 'gap', data: JSON.stringify({ from: last, oldest: o.buffer.oldestSeq }) });
          for (const e of o.buffer.since(last)) await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
        } else {
          await stream.writeSSE({ event: 'hello', data: JSON.stringify({ version: o.loop.current()?.version ?? 0, lastSeq: o.buffer.since(0).at(-1)?.seq ?? 0 }) });
        }
        const sent = new Set<number>();
        while (!closed) {
          if (queue.length === 0) {
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 15_000).unref();
            });
            wake = undefined;
            if (queue.length === 0 && !closed) await stream.writeSSE({ event: 'ping', data: '{}' });
            continue;
          }
          const e = queue.shift()!;
          if (Number.isFinite(last) && e.seq <= last) continue;
          if (sent.has(e.seq)) continue;
          sent.add(e.seq);
          if (sent.size > 10_000) sent.clear();
          await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
        }
      } finally {
        off();
        o.shutdownSignal?.removeEventListener('abort', onShutdown);
      }
    });
  });

  // The discovery-trace explorer: the seed's experiment run by the real cache, validator and
  // matcher on a virtual clock (no network). POST the inputs (any subset of TraceInputs).
  app.post('/api/trace', async (c) => {
    const body = (await readJson(c)) ?? {};
    try {
      return c.json(await runTrace(body as Partial<TraceInputs>));
    } catch (err) {
      return errorResponse(c, err);
    }
  });
  app.get('/api/trace/defaults', (c) => c.json(DEFAULT_TRACE_INPUTS));

  app.get('*', async (c) => {
    const res = await o.staticFiles?.(c.req.path);
    return res ?? c.json({ error: 'not-found' }, 404);
  });

  app.onError((err, c) => errorResponse(c, err));
  return app;
}

async function readJson(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const v: unknown = await c.req.json();
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function errorResponse(c: Context, err: unknown): Response {
  if (isDiscoveryError(err)) {
    const status = err.failure === 'state' ? 409 : err.failure === 'policy' ? 403 : err.failure === 'config' ? 400 : 500;
    return c.json({ error: err.code, message: err.message, ...(err.problems.length > 0 && { problems: err.problems }) }, status);
  }
  return c.json({ error: 'internal', message: err instanceof Error ? err.message : String(err) }, 500);
}
