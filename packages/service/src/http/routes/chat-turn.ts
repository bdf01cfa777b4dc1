/**
 * One chat turn, for `POST /api/chat` and the A2A endpoint (a2a/routes.ts): a slot of the turn
 * pool (the client's fair share), the session's owner check — or its claim, within the client's
 * share of sessions — then the turn on the session's pinned snapshot, and the slot freed. A
 * refusal is the response `POST /api/chat` sends (the A2A endpoint makes it a JSON-RPC error).
 *
 * @module
 */
import type { Context } from 'hono';
import type { TurnResult } from 'a2a-discovery/adk';
import { checkSessionId } from 'a2a-discovery/adk';
import { isDiscoveryError } from 'a2a-discovery';
import type { Caller } from '../../auth/session-owners.js';
import type { AppContext } from '../context.js';
import { DRAIN_RETRY_AFTER_S } from '../drain.js';
import { FairPool } from '../fair-pool.js';
import { sessionsPerClient } from '../limits.js';
import { errorProblem, problem } from '../problem.js';

/** One chat turn asked of the turn function (`POST /api/chat`, the A2A endpoint). */
interface ChatTurnInput {
  readonly message: string;
  /** The session; a new `s-<uuid>` when undefined. Checked against `SESSION_ID_PATTERN`. */
  readonly sessionId?: unknown;
  /** A new session's snapshot (a retained digest). */
  readonly startOn?: string;
  /** Who drives the session; default the chat caller (person, client cookie, session secret). */
  readonly caller?: Caller;
  /** Awaited once admitted, before the turn runs: false drops it. */
  readonly admitted?: () => Promise<boolean>;
}

/** A turn that ran (it may have failed: `turn.error`). */
export interface ChatTurnDone {
  /** The new session's secret (a session this turn started). */
  readonly secret?: string;
  readonly turn: TurnResult;
}

/** The turn function: the turn that ran, or the refusal to send. */
export type ChatTurn = (c: Context, t: ChatTurnInput) => Promise<ChatTurnDone | Response>;

/** `Retry-After` of a refused new session: pins free when ended or idle, not within seconds. */
const SESSION_RETRY_S = 60;

/**
 * The 400/403/404 response when `caller` may not drive the session `id`, else undefined. With
 * `hideOwned` (upgrade, end) someone else's session answers exactly as an unknown id does, so ids
 * cannot be probed; a chat turn says 403, as it would otherwise start the id afresh.
 */
export function sessionRefusal(ctx: AppContext, c: Context, id: string, caller: Caller, hideOwned = false): Response | undefined {
  try {
    checkSessionId(id);
  } catch (err) {
    return errorProblem(c, err);
  }
  const unknown = ctx.o.trees.digestOf(id) === undefined && !ctx.o.owners.claimed(id);
  if (!unknown && ctx.o.owners.allows(id, caller)) return undefined;
  if (!unknown) ctx.refuse('session_owner');
  if (unknown || hideOwned) return problem(c, 404, 'not-found', `session ${id} is not pinned, or not yours (it never started, ended, idled out, or belongs to another caller)`);
  return problem(c, 403, 'forbidden', `session ${id} belongs to another caller (present its X-Session-Secret, or an admin's token)`);
}

/**
 * The session `sessionId` for `caller`: the refusal when it may not be driven, or when a new one
 * would pass the client's share of sessions; else the new session's secret (undefined for an
 * existing session).
 */
function claimSession(ctx: AppContext, c: Context, sessionId: string, caller: Caller, share: string, startOn: string | undefined): Response | { secret?: string } {
  const { o, limits } = ctx;
  const existing = o.trees.digestOf(sessionId) !== undefined || o.owners.claimed(sessionId);
  if (existing) {
    const refused = sessionRefusal(ctx, c, sessionId, caller);
    if (refused) return refused;
    if (startOn !== undefined && startOn !== o.trees.digestOf(sessionId)) return problem(c, 400, 'ERR_SESSION_INVALID', 'only a new session can start on another snapshot (omit sessionId)');
    return {};
  }
  // A client's share of sessions never reaches a lowered global cap (limits.ts).
  const perClient = sessionsPerClient(limits.maxSessionsPerClient, o.trees.maxSessions);
  if (o.owners.held(share) >= perClient) {
    const lowered = perClient < limits.maxSessionsPerClient ? ` (server.limits.maxSessionsPerClient, held to half of sessions.maxSessions ${o.trees.maxSessions})` : '';
    return ctx.tooMany(c, 'sessions_per_client', 'server.limits.maxSessionsPerClient', SESSION_RETRY_S, `this client holds ${perClient} session(s)${lowered}; end one (DELETE /api/sessions/:id) or wait for an idle one to expire`);
  }
  return { secret: o.owners.claim(sessionId, caller, share) };
}

/** The 503 of a turn whose client went away (or the drain cut): a session it started is not kept. */
async function abortedTurn(ctx: AppContext, c: Context, sessionId: string, secret: string | undefined, error: string | undefined): Promise<Response> {
  ctx.refuse('turn_aborted');
  if (ctx.o.drain?.abortSignal.aborted === true) {
    ctx.o.drain.abortedOne();
    c.header('Retry-After', String(DRAIN_RETRY_AFTER_S));
  }
  // A session this turn started is not kept: its client never learnt its secret or cookie.
  // An existing one stays usable; its history keeps the user message, without a reply.
  if (secret !== undefined) await ctx.o.sessions.end(sessionId);
  return problem(c, 503, 'aborted', error ?? 'the client went away');
}

/**
 * The turn function of an app; its pool of turns is closed by the app's shutdown signal.
 * `admitted`, when given, is awaited once the turn is admitted and before it runs: false drops
 * the turn (its new session is not kept).
 */
export function createChatTurn(ctx: AppContext): ChatTurn {
  const { o, limits } = ctx;
  // A global pool shared fairly across clients (fair-pool.ts); its limits are read at each request.
  const turning = new FairPool(() => ({ capacity: limits.maxTurns, perClient: limits.maxTurnsPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
  o.shutdownSignal?.addEventListener('abort', () => turning.close(), { once: true });
  return async (c, t) => {
    const share = ctx.shareOf(c);
    const slot = await turning.acquire(share, c.req.raw.signal);
    if (!slot.ok) return ctx.poolRefused(c, slot.reason, { what: 'chat turn', capacity: limits.maxTurns, perClient: limits.maxTurnsPerClient, capacityKey: 'server.limits.maxTurns', perClientKey: 'server.limits.maxTurnsPerClient', waitMs: limits.queueWaitMs, reason: 'turns', perClientReason: 'turns_per_client', retryAfterS: 1 });
    const caller = t.caller ?? ctx.callerOf(c, true);
    // A turn in flight when the drain begins finishes, or is aborted past server.drainTimeoutMs.
    const left = o.drain?.enter();
    const sessionId = t.sessionId === undefined ? `s-${crypto.randomUUID()}` : t.sessionId;
    let secret: string | undefined;
    try {
      checkSessionId(sessionId);
      await o.adoptSession?.(sessionId);
      const claimed = claimSession(ctx, c, sessionId, caller, share, t.startOn);
      if (claimed instanceof Response) return claimed;
      secret = claimed.secret;
      if (t.admitted !== undefined && !(await t.admitted())) {
        if (secret !== undefined) o.owners.release(sessionId);
        return problem(c, 503, 'aborted', 'the request ended before its turn ran');
      }
      // The request's signal aborts when its client goes away: the turn's A2A requests are cut and
      // its slot is freed at once (SessionRunner.run).
      const signal = o.drain ? AbortSignal.any([c.req.raw.signal, o.drain.abortSignal]) : c.req.raw.signal;
      const turn = await o.sessions.run(sessionId, t.message.slice(0, 4_000), { signal, ...(t.startOn !== undefined && { startOn: t.startOn }) });
      if (turn.aborted === true) return await abortedTurn(ctx, c, sessionId, secret, turn.error);
      return { ...(secret !== undefined && { secret }), turn };
    } catch (err) {
      // A session that could not start (not ready, the session cap) is not kept.
      if (secret !== undefined && typeof sessionId === 'string' && o.trees.digestOf(sessionId) === undefined) o.owners.release(sessionId);
      if (isDiscoveryError(err) && err.code === 'ERR_SESSION_LIMIT') {
        return ctx.tooMany(c, 'sessions', 'sessions.maxSessions', SESSION_RETRY_S, err.message.replace(/ \(sessions\.maxSessions\)/, ''), err.code);
      }
      return errorProblem(c, err);
    } finally {
      slot.release();
      left?.();
    }
  };
}
