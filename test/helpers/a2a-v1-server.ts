/**
 * A real A2A **1.0-only** peer on loopback, built from @a2a-js/sdk 1.x's own server parts:
 * `DefaultRequestHandler` + `InMemoryTaskStore` + a deterministic `AgentExecutor`, served by the
 * Express `jsonRpcHandler` (no legacy compatibility: a 0.3 request gets "method not found") and
 * `agentCardHandler` (Cache-Control, ETag). Its card lists one interface: its JSON-RPC URL with
 * protocolVersion '1.0', so ADK's 0.3 client cannot use it.
 *
 * The executor answers `<prefix>: <text of the user message>`:
 * - `mode: 'message'` (default): one agent Message;
 * - `mode: 'task'`: the task lifecycle (submitted → working with a progress message → artifact →
 *   completed), as the SDK's sample agent does;
 * - `mode: 'fail'`: a task that ends FAILED with a status message.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AgentCard, Role, TaskState } from '@a2a-js/sdk';
import type { Message, Part, Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

export interface V1ServerOptions {
  /** Reply prefix. Default 'warranty'. */
  prefix?: string;
  mode?: 'message' | 'task' | 'fail';
  /** `capabilities.streaming` in the card. Default false. */
  streaming?: boolean;
  /** Card `name`. Default 'Warranty Agent'. */
  name?: string;
  /**
   * Answer every JSON-RPC POST with this HTTP status before the SDK sees it (401 with
   * `WWW-Authenticate: Bearer`, as a server behind an authenticating proxy does). Default: none.
   */
  refuseWith?: number;
}

export interface RunningV1Server {
  baseUrl: string;
  cardUrl: string;
  /** The JSON-RPC endpoint (the card's single interface). */
  rpcUrl: string;
  port: number;
  /** The 1.0 card as served (JSON form). */
  card: Record<string, unknown>;
  /** JSON-RPC calls received so far. */
  readonly requests: number;
  /** HTTP requests of any kind received so far (card fetches included). */
  readonly httpRequests: number;
  /** `params.message.metadata` of the last JSON-RPC call, as received on the wire. */
  readonly lastMetadata: Record<string, unknown> | undefined;
  /** JSON-RPC bodies received, in order. */
  readonly bodies: readonly Record<string, unknown>[];
  /** `contextId` the executor saw for each message, in order (server-assigned when absent). */
  readonly contextIds: readonly string[];
  /** Header values of the last JSON-RPC call. */
  readonly lastHeaders: Record<string, string | string[] | undefined>;
  close(): Promise<void>;
}

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function agentMessage(value: string, contextId: string, taskId: string): Message {
  return { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [text(value)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

export class ScriptedExecutor implements AgentExecutor {
  constructor(
    private readonly prefix: string,
    private readonly mode: 'message' | 'task' | 'fail',
    private readonly seen: string[],
  ) {}

  cancelTask = async (): Promise<void> => undefined;

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const input = ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
    const reply = `${this.prefix}: ${input}`;
    const { taskId, contextId } = ctx;
    this.seen.push(contextId);
    if (this.mode === 'message') {
      bus.publish(AgentEvent.message(agentMessage(reply, contextId, '')));
      bus.finished();
      return;
    }
    if (ctx.task === undefined) {
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: agentMessage('working on it', contextId, taskId), timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    if (this.mode === 'fail') {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_FAILED, message: agentMessage('the warranty database is down', contextId, taskId), timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      bus.finished();
      return;
    }
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text(reply)], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

/** Starts the 1.0-only peer on 127.0.0.1 and an ephemeral port. */
export async function startV1Server(options: V1ServerOptions = {}): Promise<RunningV1Server> {
  const app = express();
  let requests = 0;
  let httpRequests = 0;
  let lastMetadata: Record<string, unknown> | undefined;
  let lastHeaders: Record<string, string | string[] | undefined> = {};
  const bodies: Record<string, unknown>[] = [];
  const contextIds: string[] = [];

  app.use((_req, _res, next) => {
    httpRequests++;
    next();
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}/`;
  const rpcUrl = `${baseUrl}a2a/jsonrpc`;
  const card = AgentCard.toJSON(
    AgentCard.fromJSON({
      name: options.name ?? 'Warranty Agent',
      description: 'Answers warranty questions for hardware orders.',
      version: '2.1.0',
      supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: options.streaming ?? false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty status of a serial number.', tags: ['warranty'] }],
    }),
  ) as Record<string, unknown>;

  const handler = new DefaultRequestHandler(
    AgentCard.fromJSON(card),
    new InMemoryTaskStore(),
    new ScriptedExecutor(options.prefix ?? 'warranty', options.mode ?? 'message', contextIds),
  );
  // The provider returns the JSON form (a decoded card would leak `$case` onto the wire).
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard, cache: { maxAge: 300 } }));
  app.use(
    '/a2a/jsonrpc',
    express.json(),
    (req, res, next) => {
      if (req.method === 'POST' && options.refuseWith !== undefined) {
        requests++;
        res.status(options.refuseWith).set('www-authenticate', 'Bearer').json({ error: 'unauthorized' });
        return;
      }
      if (req.method === 'POST') {
        requests++;
        const body = (req.body ?? {}) as Record<string, unknown>;
        bodies.push(body);
        const params = body['params'] as { message?: { metadata?: Record<string, unknown> } } | undefined;
        lastMetadata = params?.message?.metadata;
        lastHeaders = { ...req.headers };
      }
      next();
    },
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );

  return {
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    rpcUrl,
    port,
    card,
    get requests() {
      return requests;
    },
    get httpRequests() {
      return httpRequests;
    },
    get lastMetadata() {
      return lastMetadata;
    },
    get bodies() {
      return bodies;
    },
    get contextIds() {
      return contextIds;
    },
    get lastHeaders() {
      return lastHeaders;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
