/**
 * The answer of `POST /api/chat` for a finished turn (kept apart from the route, so any route that
 * runs a chat turn answers alike): 200 with the turn, or 502 `agent-failed` when the agent the turn
 * called failed — naming that agent and its error, and still carrying the session (its id, the
 * secret of a new session, the digest it stays pinned to) so the client can continue it.
 */
import type { TurnResult } from 'a2a-discovery/adk';
import { contentText } from 'a2a-discovery/adk';

/** What the route knows beside the turn: the session's secret when this turn created it, the pinned snapshot's version, the trace. */
export interface ChatTurnContext {
  readonly sessionSecret?: string | undefined;
  readonly version: number | null;
  readonly traceId: string | null;
}

/** The HTTP status and JSON body of a finished (not aborted) turn. */
export function chatTurnReply(turn: TurnResult, context: ChatTurnContext): { status: 200 | 502; body: Record<string, unknown> } {
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
