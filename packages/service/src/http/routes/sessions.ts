/**
 * The sessions resource: a chat turn on a session pinned to its snapshot, a session moved to the
 * current snapshot, a session ended, and the sessions the caller may see. Who may drive a
 * session is its owner's business (auth/session-owners.ts); the turn itself is chat-turn.ts's.
 *
 * @module
 */
import { Hono } from 'hono';
import { activeTraceIds } from 'a2a-discovery/internal';
import type { TurnResult } from 'a2a-discovery/adk';
import { contentText, SESSION_ID_PATTERN } from 'a2a-discovery/adk';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { ChatReplySchema, ChatRequestSchema, EndedSchema, SessionsSchema, SessionUpgradeSchema, UpgradeRequestSchema } from '../schemas.js';
import { jsonBody, validBody } from '../validate.js';
import type { ChatTurn } from './chat-turn.js';
import { sessionRefusal } from './chat-turn.js';

/** What the route knows beside the turn: the session's secret when this turn created it, the pinned snapshot's version, the trace. */
interface ChatTurnContext {
  readonly sessionSecret?: string | undefined;
  readonly version: number | null;
  readonly traceId: string | null;
}

/**
 * The HTTP status and JSON body of a finished (not aborted) turn: 200 with the turn, or 502
 * `agent-failed` when the agent the turn called failed — naming that agent and its error, and
 * still carrying the session (its id, the secret of a new session, the digest it stays pinned to)
 * so the client can continue it.
 */
function chatTurnReply(turn: TurnResult, context: ChatTurnContext): { status: 200 | 502; body: Record<string, unknown> } {
  const shared = {
    sessionId: turn.sessionId,
    ...(context.sessionSecret !== undefined && { sessionSecret: context.sessionSecret }),
    digest: turn.digest,
    version: context.version,
    author: turn.author ?? null,
    agents: turn.agents,
    reply: turn.reply,
    notices: turn.notices,
    events: turn.events.map((e) => ({ author: e.author, text: contentText(e.content), error: e.errorMessage ?? null })),
    // The trace this turn was recorded in (sampled), for the dashboard's link; null without one.
    traceId: context.traceId,
  };
  const failure = turn.failure;
  if (turn.error !== undefined && failure !== undefined) {
    return {
      status: 502,
      body: {
        error: 'agent-failed',
        agent: failure.agent,
        message: failure.message,
        ...(failure.status !== undefined && { agentStatus: failure.status }),
        ...shared,
      },
    };
  }
  return { status: 200, body: { ...shared, error: turn.error ?? null } };
}

/** The sessions' routes, their turns run by `chatTurn`. */
export function sessionRoutes(ctx: AppContext, chatTurn: ChatTurn): Hono {
  const { o, route } = ctx;
  const app = new Hono();

  app.post('/api/chat', ...route('operator', { tags: ['sessions'], summary: 'One chat turn on a session pinned to its snapshot', responses: { 200: json('the reply', ChatReplySchema), 403: problemJson('another caller owns the session'), 429: problemJson('a limit of turns or sessions'), 502: problemJson('the agent it called failed'), 503: problemJson('draining, or the client went away') } }), (c, next) => ctx.drainingRefusal(c) ?? next(), jsonBody(ChatRequestSchema, ctx.bodyLimit('maxBodyBytes')), async (c) => {
    const read = validBody(c, ChatRequestSchema);
    // A new session may start on a retained snapshot (its digest), to compare two snapshots' answers.
    const startOn = read.snapshot !== undefined && read.snapshot !== '' ? read.snapshot : undefined;
    const done = await chatTurn(c, { message: read.message, sessionId: read.sessionId, ...(startOn !== undefined && { startOn }) });
    if (done instanceof Response) return done;
    const { secret, turn } = done;
    // 502 `agent-failed` when the agent it called failed; the session is kept either way (chatTurnReply, above).
    const reply = chatTurnReply(turn, { sessionSecret: secret, version: o.loop.snapshots.get(turn.digest)?.version ?? null, traceId: activeTraceIds()?.traceId ?? null });
    return reply.status === 502 ? problem(c, 502, 'agent-failed', String(reply.body['message']), reply.body) : c.json(reply.body, 200);
  });

  app.post('/api/sessions/:id/upgrade', ...route('operator', { tags: ['sessions'], summary: 'Move a session to the current snapshot (force: even when its agent left)', responses: { 200: json('upgraded', SessionUpgradeSchema), 403: problemJson('another caller owns the session'), 404: problemJson('no such session') } }), jsonBody(UpgradeRequestSchema, ctx.bodyLimit('maxBodyBytes'), { required: false }), async (c) => {
    const { force } = validBody(c, UpgradeRequestSchema);
    const id = c.req.param('id');
    if (SESSION_ID_PATTERN.test(id)) await o.adoptSession?.(id);
    const refused = sessionRefusal(ctx, c, id, ctx.callerOf(c), true);
    if (refused) return refused;
    const upgraded = await o.sessions.upgrade(id, { force: force === true });
    ctx.acted(c, 'session.upgrade', { sessionId: id, digest: o.trees.digestOf(id) ?? '' });
    return c.json(upgraded);
  });

  app.delete('/api/sessions/:id', ...route('operator', { tags: ['sessions'], summary: 'End a session (its pin is freed)', responses: { 200: json('ended', EndedSchema), 403: problemJson('another caller owns the session') } }), async (c) => {
    const id = c.req.param('id');
    if (SESSION_ID_PATTERN.test(id)) await o.adoptSession?.(id);
    const refused = sessionRefusal(ctx, c, id, ctx.callerOf(c), true);
    if (refused) return refused;
    await o.sessions.end(id);
    ctx.acted(c, 'session.end', { sessionId: id });
    return c.json({ ended: true });
  });

  app.get('/api/sessions', ...route('viewer', { tags: ['sessions'], summary: 'The sessions the caller may see, with their pinned snapshots', responses: { 200: json('sessions', SessionsSchema) } }), (c) => {
    const caller = ctx.callerOf(c);
    const visible = o.trees.sessions().flatMap((s) => {
      const seen = o.owners.visibility(s.sessionId, caller);
      return seen === undefined ? [] : [{ ...s, owned: seen === 'own' }];
    });
    return c.json({
      sessions: visible,
      // Sessions other API callers own: counted, never named.
      others: o.trees.sessions().length - visible.length,
      builtDigests: o.trees.builtDigests,
      retained: o.loop.snapshots.retained(),
    });
  });
  return app;
}
