/**
 * The events resource: the live event stream (SSE, resumable), the recent events after a
 * sequence number, the store journal's pages, and the cache's activity per endpoint.
 *
 * @module
 */
import { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { ActivityQuerySchema, ActivitySchema, EventsQuerySchema, EventsSchema, JournalPageSchema, JournalQuerySchema } from '../schemas.js';
import { parseActivityQuery, parseJournalQuery } from '../../telemetry/journal.js';
import { validQuery, validQueryOf } from '../validate.js';

/** The events' routes. */
export function eventRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();

  app.get('/api/stream', ...route('viewer', { tags: ['events'], summary: 'The live event stream (Server-Sent Events; resume with Last-Event-ID)', responses: { 200: { description: 'an event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, 503: problemJson('too many streams (server.limits.maxStreams, maxStreamsPerClient), or draining; with Retry-After') } }), (c) => ctx.streams.handle(c, ctx.shareOf(c)));

  // A number where a number belongs: `?since=abc` is a 400 naming it, not "from the start".
  app.get('/api/events', ...route('viewer', { tags: ['events'], summary: 'Recent discovery events after a sequence number', responses: { 200: json('events', EventsSchema), 400: problemJson('since is not a number') } }), validQuery(EventsQuerySchema), (c) => {
    const { since } = validQueryOf(c, EventsQuerySchema);
    return c.json({ events: o.buffer.since(since === undefined ? 0 : Number(since)) });
  });

  // The whole story, page by page back to the retention horizon (journal.ts).
  app.get('/api/journal', ...route('viewer', { tags: ['events'], summary: "A page of the store's journal, newest first", responses: { 200: json('a page', JournalPageSchema), 400: problemJson('a bad query'), 404: problemJson('no journal') } }), validQuery(JournalQuerySchema), async (c) => {
    if (!o.journal) return problem(c, 404, 'not-found', 'this service has no journal');
    const q = parseJournalQuery(validQueryOf(c, JournalQuerySchema));
    if (typeof q === 'string') return problem(c, 400, 'bad-request', q);
    // Where the event stream stands before the page is read: a page that follows the stream from
    // here misses nothing between its read and its stream (`Last-Event-ID: streamSeq`).
    const streamSeq = o.buffer.newestSeq;
    return c.json({ ...(await o.journal.page(q)), streamSeq });
  });

  // Cache chatter as counts, and with ?bucketMs=&from= as rate series per endpoint (the timeline's rate strip);
  // one page of endpoints (?limit=, ?after= the previous page's nextAfter).
  app.get('/api/activity', ...route('viewer', { tags: ['events'], summary: 'Cache activity per endpoint, as counts or rate series', responses: { 200: json('activity', ActivitySchema), 400: problemJson('a bad query'), 404: problemJson('no journal') } }), validQuery(ActivityQuerySchema), async (c) => {
    if (!o.journal) return problem(c, 404, 'not-found', 'this service has no journal');
    const q = parseActivityQuery(validQueryOf(c, ActivityQuerySchema));
    if (typeof q === 'string') return problem(c, 400, 'bad-request', q);
    const leader = await ctx.fromLeader(c, '/api/activity');
    if (leader) return leader;
    return c.json({ ...(await o.journal.activity(q)), ...ctx.servedBy() });
  });
  return app;
}
