/**
 * A2A messages as chat turns: the SDK's `DefaultRequestHandler` with its `sendMessage` and
 * `sendMessageStream` admitting each message as a chat turn first (routes/chat-turn.ts: the turn
 * pool's fair share, the session's owner, the client's share of sessions), and an executor that
 * runs the admitted turn and tells it as a Task: submitted, working, then completed with the
 * reply (or failed, naming the agent and its error).
 *
 * A refusal happens before any task exists, so the client gets a JSON-RPC error (codes in
 * {@link A2A_REFUSAL_CODES}), never a hang or a half-made task. Each `contextId` is one session
 * (`a2a-<contextId>`), pinned to the snapshot its first turn ran on, like a chat session.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { Role, TaskState } from '@a2a-js/sdk';
import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { JsonRpcRequestMalformedError, JsonRpcTransportError } from '@a2a-js/sdk/errors';
import type { Caller } from '../../auth/session-owners.js';
import type { ChatTurn, ChatTurnDone } from '../routes/chat-turn.js';

/** The session id of an A2A context: its own namespace beside chat sessions (`s-…`). */
const A2A_SESSION_PREFIX = 'a2a-';
/** A `contextId` a session id can be made of (SESSION_ID_PATTERN less the prefix's 4 characters). */
const CONTEXT_ID = /^[A-Za-z0-9_.:-]{1,124}$/;

/**
 * JSON-RPC codes of a refused turn, in the range JSON-RPC 2.0 leaves to servers (-32000 to
 * -32099; A2A uses -32001 to -32009). The message names the limit or the reason.
 */
export const A2A_REFUSAL_CODES = {
  /** A limit (429): the turn pool, the client's turns or sessions, `sessions.maxSessions`. */
  limit: -32050,
  /** The context is another caller's session (403/404). */
  notYours: -32051,
  /** Draining, or the request ended before its turn ran (503). */
  unavailable: -32052,
} as const;

/** Where the request handler finds the HTTP request of a call (the route puts it there). */
export const HONO_CONTEXT_KEY = 'a2a-discovery.hono';

/** Inputs of {@link TurnRequestHandler}. */
export interface TurnHandlerOptions {
  readonly card: AgentCard;
  readonly tasks: TaskStore;
  readonly chatTurn: ChatTurn;
  /** Who drives a session over A2A: the person, else the client (token or network). */
  readonly callerOf: (c: Context) => Caller;
}

/** One admitted turn, from the handler to its executor. */
interface Admission {
  readonly turn: Promise<ChatTurnDone | Response>;
  /** Lets the admitted turn run (true) or drops it (false); only the first call counts. */
  readonly start: (run: boolean) => void;
}

export class TurnRequestHandler extends DefaultRequestHandler {
  readonly #o: TurnHandlerOptions;
  readonly #admissions: WeakMap<ServerCallContext, Admission>;

  constructor(o: TurnHandlerOptions) {
    const admissions = new WeakMap<ServerCallContext, Admission>();
    super(o.card, o.tasks, new TurnExecutor(admissions));
    this.#o = o;
    this.#admissions = admissions;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const admission = await this.#admit(params, context);
    try {
      return await super.sendMessage(params, context);
    } finally {
      // Refused by the SDK before the executor ran (an unknown task id): the turn never runs.
      admission.start(false);
    }
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const admission = await this.#admit(params, context);
    try {
      yield* super.sendMessageStream(params, context);
    } finally {
      admission.start(false);
    }
  }

  /** Admits the message's turn, or throws the JSON-RPC error of its refusal. */
  async #admit(params: SendMessageRequest, context: ServerCallContext): Promise<Admission> {
    const c = context.state.get(HONO_CONTEXT_KEY) as Context | undefined;
    const message = params.message;
    if (c === undefined || message === undefined) throw new JsonRpcRequestMalformedError({ message: 'params.message is required' });
    // The SDK would make one up later; the session needs it now.
    if (message.contextId === '') message.contextId = randomUUID();
    if (!CONTEXT_ID.test(message.contextId)) {
      throw new JsonRpcRequestMalformedError({ message: `contextId ${JSON.stringify(message.contextId.slice(0, 40))} must be 1–124 letters, digits, "_", ".", ":" or "-" (it names the session a2a-<contextId>)` });
    }
    const text = textOf(message);
    if (text.trim() === '') throw new JsonRpcRequestMalformedError({ message: 'the message has no text part' });
    let start!: (run: boolean) => void;
    const started = new Promise<boolean>((resolve) => (start = resolve));
    let admitted!: () => void;
    const gate = new Promise<undefined>((resolve) => (admitted = () => resolve(undefined)));
    const turn = this.#o.chatTurn(c, {
      message: text,
      sessionId: `${A2A_SESSION_PREFIX}${message.contextId}`,
      caller: this.#o.callerOf(c),
      admitted: () => {
        admitted();
        return started;
      },
    });
    const first = await Promise.race([gate, turn]);
    if (first instanceof Response) throw await refusalError(first);
    const admission = { turn, start };
    this.#admissions.set(context, admission);
    return admission;
  }
}

/** The executor: the admitted turn, told as a task. */
class TurnExecutor implements AgentExecutor {
  readonly #admissions: WeakMap<ServerCallContext, Admission>;

  constructor(admissions: WeakMap<ServerCallContext, Admission>) {
    this.#admissions = admissions;
  }

  cancelTask = (): Promise<void> => Promise.resolve();

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const admission = this.#admissions.get(ctx.context);
    const status = (state: TaskState, text?: string, metadata?: Record<string, unknown>) =>
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state, timestamp: new Date().toISOString(), message: text === undefined ? undefined : agentMessage(ctx, text, metadata) },
        metadata,
      });
    bus.publish(AgentEvent.task(ctx.task ?? { id: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined }, artifacts: [], history: [ctx.userMessage], metadata: undefined }));
    if (admission === undefined) {
      bus.publish(status(TaskState.TASK_STATE_FAILED, 'the turn was not admitted'));
      return;
    }
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    admission.start(true);
    const done = await admission.turn;
    if (done instanceof Response) {
      const body = (await done.json().catch(() => ({}))) as { message?: string };
      bus.publish(status(TaskState.TASK_STATE_FAILED, body.message ?? `the turn ended with HTTP ${done.status}`));
      return;
    }
    const { turn } = done;
    const metadata = { digest: turn.digest, agents: [...turn.agents], ...(turn.author !== undefined && { author: turn.author }), ...(turn.notices.length > 0 && { notices: [...turn.notices] }) };
    if (turn.error !== undefined) {
      // The agent the turn called and what it answered (TurnResult.failure), as /api/chat's 502 says.
      const failure = turn.failure;
      const agent = failure?.agent ?? turn.author ?? turn.agents.at(-1);
      const text = failure !== undefined ? failure.message : turn.error;
      bus.publish(status(TaskState.TASK_STATE_FAILED, `${agent !== undefined ? `agent ${agent} failed: ` : ''}${text}`, { ...metadata, ...(failure !== undefined && { failedAgent: failure.agent, ...(failure.status !== undefined && { agentStatus: failure.status }) }) }));
      return;
    }
    bus.publish(status(TaskState.TASK_STATE_COMPLETED, turn.reply, metadata));
  }
}

function agentMessage(ctx: RequestContext, text: string, metadata: Record<string, unknown> | undefined): Message {
  return {
    messageId: randomUUID(),
    contextId: ctx.contextId,
    taskId: ctx.taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The text of a message: its text parts, one per line. */
function textOf(message: Message): string {
  return message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n');
}

/** The JSON-RPC error of a refused turn, from the response `POST /api/chat` would have sent. */
async function refusalError(res: Response): Promise<Error> {
  const body = (await res.json().catch(() => ({}))) as { message?: string; error?: string };
  const message = body.message ?? `refused (HTTP ${res.status})`;
  if (res.status === 400) return new JsonRpcRequestMalformedError({ message });
  const code = res.status === 429 ? A2A_REFUSAL_CODES.limit : res.status === 403 || res.status === 404 ? A2A_REFUSAL_CODES.notYours : res.status === 503 ? A2A_REFUSAL_CODES.unavailable : -32603;
  const retry = res.headers.get('retry-after');
  return new JsonRpcTransportError({ jsonrpc: '2.0', id: null, error: { code, message: retry !== null ? `${message}; retry after ${retry} s` : message } });
}
