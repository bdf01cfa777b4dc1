/**
 * Third-party A2A servers for the interop matrix, each built from **its own package's** server
 * classes, installed from npm as dev dependencies (npm aliases let versions coexist):
 *
 * | alias | package |
 * |---|---|
 * | `a2a-sdk-025` | `@a2a-js/sdk@0.2.5` |
 * | `a2a-sdk-0314` | `@a2a-js/sdk@0.3.14` |
 * | `a2a-sdk-101` | `@a2a-js/sdk@1.0.1` |
 * | `@a2a-js/sdk` | 1.3.0 (the project's runtime dependency) |
 * | `@mastra/core` + `@mastra/hono` + `@mastra/server` | Mastra's A2A server |
 *
 * The cards are the ones each SDK publishes in its README or sample agent at that version's git
 * tag, transcribed as data: only the host and port of their URLs are replaced
 * (`localhost:41241` → `127.0.0.1:<ephemeral port>`). Each executor is a deterministic script
 * (no model): it answers `<prefix>: <text of the user message>` through the task lifecycle the
 * SDK samples use (submitted → working → artifact → completed).
 *
 * Every peer records the JSON-RPC `method` and `A2A-Version` header of each call it receives, so a
 * test can tell which client reached it: ADK's 0.3 `RemoteA2AAgent` sends `message/stream` with no
 * version header; the project's 1.x `V1RemoteAgent` sends `SendMessage` / `SendStreamingMessage`
 * with `A2A-Version: 1.0`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import type { AgentCard as AgentCard025 } from 'a2a-sdk-025';
import * as sdk025 from 'a2a-sdk-025/server';
import type { ExecutionEventBus as Bus025, RequestContext as Ctx025 } from 'a2a-sdk-025/server';
import { AGENT_CARD_PATH as AGENT_CARD_PATH_0314 } from 'a2a-sdk-0314';
import type { AgentCard as AgentCard0314 } from 'a2a-sdk-0314';
import * as sdk0314 from 'a2a-sdk-0314/server';
import type { ExecutionEventBus as Bus0314, RequestContext as Ctx0314 } from 'a2a-sdk-0314/server';
import * as sdk0314Express from 'a2a-sdk-0314/server/express';
import * as sdk101Root from 'a2a-sdk-101';
import * as sdk101Server from 'a2a-sdk-101/server';
import * as sdk101Express from 'a2a-sdk-101/server/express';
import * as sdk101Compat from 'a2a-sdk-101/compat/v0_3';
import * as sdk130Root from '@a2a-js/sdk';
import type { AgentCard as AgentCard1x, Part as Part1x } from '@a2a-js/sdk';
import * as sdk130Server from '@a2a-js/sdk/server';
import type { AgentExecutor as AgentExecutor1x } from '@a2a-js/sdk/server';
import * as sdk130Express from '@a2a-js/sdk/server/express';
import * as sdk130Compat from '@a2a-js/sdk/compat/v0_3';

export interface RpcCall {
  method: string;
  version: string | undefined;
  path: string;
}

export interface InteropPeer {
  /** Package and exact version that serves this peer. */
  readonly label: string;
  readonly baseUrl: string;
  readonly port: number;
  /** JSON-RPC calls received, in order (card fetches are not counted). */
  readonly calls: readonly RpcCall[];
  close(): Promise<void>;
}

type Recorder = RpcCall[];

async function listen(app: express.Application): Promise<{ server: Server; port: number }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/** Parses JSON bodies first (the SDK's own parser then skips them) and records each JSON-RPC call. */
function recordRpc(calls: Recorder): express.RequestHandler[] {
  return [
    express.json({ limit: '1mb' }),
    (req, _res, next) => {
      const body = req.body as { method?: unknown } | undefined;
      if (req.method === 'POST' && typeof body?.method === 'string') {
        const version = req.headers['a2a-version'];
        calls.push({ method: body.method, version: Array.isArray(version) ? version[0] : version, path: req.path });
      }
      next();
    },
  ];
}

/** The text parts of a 0.2/0.3 message (`{ kind: 'text', text }`). */
function legacyText(message: { parts: ReadonlyArray<{ kind: string; text?: string }> }): string {
  return message.parts.flatMap((p) => (p.kind === 'text' && typeof p.text === 'string' ? [p.text] : [])).join(' ');
}

// ---------------------------------------------------------------------------------------------
// @a2a-js/sdk 0.2.5 — `A2AExpressApp`, card only at /.well-known/agent.json
// ---------------------------------------------------------------------------------------------

/**
 * The README's "Movie Agent" card of @a2a-js/sdk 0.2.5 (and of its `movie-agent` sample at tag
 * v0.2.5), served by 0.2.5's `A2AExpressApp`, which publishes it only at `/.well-known/agent.json`
 * (the A2A 0.2 path) and answers JSON-RPC at the base URL.
 */
export async function startA2aJs025Server(prefix = 'movies'): Promise<InteropPeer> {
  const sdk = sdk025;
  const calls: Recorder = [];
  const app = express();
  app.use(recordRpc(calls));
  const { server, port } = await listen(app);
  const base = `http://127.0.0.1:${port}/`;
  // README card of @a2a-js/sdk@0.2.5 ("1. Define Agent Card"), URL host/port substituted.
  const movieAgentCard: AgentCard025 = {
    name: 'Movie Agent',
    description: 'An agent that can answer questions about movies and actors using TMDB.',
    url: base,
    provider: { organization: 'A2A Agents', url: 'https://example.com/a2a-agents' },
    version: '0.0.2',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    securitySchemes: undefined,
    security: undefined,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'general_movie_chat',
        name: 'General Movie Chat',
        description: 'Answer general questions or chat about movies, actors, directors.',
        tags: ['movies', 'actors', 'directors'],
        examples: [
          'Tell me about the plot of Inception.',
          'Recommend a good sci-fi movie.',
          'Who directed The Matrix?',
          'What other movies has Scarlett Johansson been in?',
          'Find action movies starring Keanu Reeves',
          'Which came out first, Jurassic Park or Terminator 2?',
        ],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
      },
    ],
    supportsAuthenticatedExtendedCard: false,
  };
  const executor = {
    cancelTask: async (): Promise<void> => undefined,
    async execute(ctx: Ctx025, bus: Bus025): Promise<void> {
      const { taskId, contextId } = ctx;
      const reply = `${prefix}: ${legacyText(ctx.userMessage)}`;
      if (!ctx.task) {
        bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: new Date().toISOString() }, history: [ctx.userMessage], artifacts: [] });
      }
      bus.publish({ kind: 'status-update', taskId, contextId, status: { state: 'working', timestamp: new Date().toISOString() }, final: false });
      bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId: randomUUID(), name: 'answer', parts: [{ kind: 'text', text: reply }] }, append: false, lastChunk: true });
      bus.publish({ kind: 'status-update', taskId, contextId, status: { state: 'completed', timestamp: new Date().toISOString() }, final: true });
      bus.finished();
    },
  };
  const handler = new sdk.DefaultRequestHandler(movieAgentCard, new sdk.InMemoryTaskStore(), executor);
  new sdk.A2AExpressApp(handler).setupRoutes(app, '');
  return { label: '@a2a-js/sdk 0.2.5', baseUrl: base, port, calls, close: closer(server) };
}

// ---------------------------------------------------------------------------------------------
// @a2a-js/sdk 0.3.14 — the sample agent (`src/samples/agents/sample-agent` at tag v0.3.14)
// ---------------------------------------------------------------------------------------------

/**
 * The 0.3.14 sample agent's card, served the way that sample serves it: `agentCardHandler` at
 * `/.well-known/agent-card.json` and `jsonRpcHandler` at the root.
 */
export async function startA2aJs0314Server(prefix = 'sample'): Promise<InteropPeer> {
  const sdk = sdk0314;
  const sdkExpress = sdk0314Express;
  const calls: Recorder = [];
  const app = express();
  app.use(recordRpc(calls));
  const { server, port } = await listen(app);
  const base = `http://127.0.0.1:${port}/`;
  // sample-agent/index.ts at tag v0.3.14, URL host/port substituted.
  const sampleAgentCard: AgentCard0314 = {
    name: 'Sample Agent',
    description: 'A sample agent to test the stream functionality and simulate the flow of tasks statuses.',
    url: base,
    provider: { organization: 'A2A Samples', url: 'https://example.com/a2a-samples' },
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    skills: [
      {
        id: 'sample_agent',
        name: 'Sample Agent',
        description: 'Simulate the general flow of a streaming agent.',
        tags: ['sample'],
        examples: ['hi', 'hello world', 'how are you', 'goodbye'],
        inputModes: ['text'],
        outputModes: ['text', 'task-status'],
      },
    ],
    supportsAuthenticatedExtendedCard: false,
  };
  const executor = {
    cancelTask: async (): Promise<void> => undefined,
    async execute(ctx: Ctx0314, bus: Bus0314): Promise<void> {
      const { taskId, contextId } = ctx;
      const reply = `${prefix}: ${legacyText(ctx.userMessage)}`;
      if (!ctx.task) {
        bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: new Date().toISOString() }, history: [ctx.userMessage] });
      }
      bus.publish({
        kind: 'status-update',
        taskId,
        contextId,
        status: { state: 'working', message: { kind: 'message', role: 'agent', messageId: randomUUID(), parts: [{ kind: 'text', text: 'Processing your question' }], taskId, contextId }, timestamp: new Date().toISOString() },
        final: false,
      });
      bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId: randomUUID(), name: 'Result', description: 'The final result from the agent.', parts: [{ kind: 'text', text: reply }] }, lastChunk: true });
      bus.publish({ kind: 'status-update', taskId, contextId, status: { state: 'completed', timestamp: new Date().toISOString() }, final: true });
      bus.finished();
    },
  };
  const requestHandler = new sdk.DefaultRequestHandler(sampleAgentCard, new sdk.InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH_0314}`, sdkExpress.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(sdkExpress.jsonRpcHandler({ requestHandler, userBuilder: sdkExpress.UserBuilder.noAuthentication }));
  return { label: '@a2a-js/sdk 0.3.14', baseUrl: base, port, calls, close: closer(server) };
}

// ---------------------------------------------------------------------------------------------
// @a2a-js/sdk 1.x — the 1.0 sample agent, and the compat-v1-server sample (legacy mirrors)
// ---------------------------------------------------------------------------------------------

type Sdk1Root = typeof sdk130Root;
type Sdk1Server = typeof sdk130Server;
type Sdk1Express = typeof sdk130Express;
type Sdk1Compat = typeof sdk130Compat;

/** The two 1.x versions in the matrix. Their server APIs are the same; 1.3.0's types name both. */
export type Sdk1Version = '1.0.1' | '1.3.0';

function loadSdk1(version: Sdk1Version): { root: Sdk1Root; server: Sdk1Server; express: Sdk1Express; compat: Sdk1Compat } {
  if (version === '1.3.0') return { root: sdk130Root, server: sdk130Server, express: sdk130Express, compat: sdk130Compat };
  return {
    root: sdk101Root as unknown as Sdk1Root,
    server: sdk101Server as unknown as Sdk1Server,
    express: sdk101Express as unknown as Sdk1Express,
    compat: sdk101Compat as unknown as Sdk1Compat,
  };
}

function v1Executor(sdk: { root: Sdk1Root; server: Sdk1Server }, prefix: string): AgentExecutor1x {
  const { Role, TaskState } = sdk.root;
  const { AgentEvent } = sdk.server;
  const text = (value: string): Part1x => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
  const now = (): string => new Date().toISOString();
  return {
    cancelTask: async () => undefined,
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      const input = ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
      if (ctx.task === undefined) {
        bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() }, artifacts: [], history: [ctx.userMessage], metadata: undefined }));
      }
      const working = { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [text('Processing your question')], metadata: undefined, extensions: [], referenceTaskIds: [] };
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_WORKING, message: working, timestamp: now() }, metadata: undefined }));
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'Result', description: 'The final result from the agent.', parts: [text(`${prefix}: ${input}`)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() }, metadata: undefined }));
      bus.finished();
    },
  };
}

/**
 * The 1.x sample agent (`src/samples/agents/sample-agent` at tag v1.0.1): protocol 1.0 only, one
 * JSONRPC interface at the root, card by `agentCardHandler({ agentCardProvider: requestHandler })`,
 * no legacy compatibility. ADK's 0.3 client cannot reach it.
 */
export async function startA2aJs1xServer(version: Sdk1Version, prefix = 'sample'): Promise<InteropPeer> {
  const sdk = loadSdk1(version);
  const calls: Recorder = [];
  const app = express();
  app.use(recordRpc(calls));
  const { server, port } = await listen(app);
  const base = `http://127.0.0.1:${port}/`;
  const sampleAgentCard = {
    name: 'Sample Agent',
    description: 'A sample agent to test the stream functionality and simulate the flow of tasks statuses.',
    supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: sdk.root.A2A_PROTOCOL_VERSION }],
    provider: { organization: 'A2A Samples', url: 'https://example.com/a2a-samples' },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    skills: [
      {
        id: 'sample_agent',
        name: 'Sample Agent',
        description: 'Simulate the general flow of a streaming agent.',
        tags: ['sample'],
        examples: ['hi', 'hello world', 'how are you', 'goodbye'],
        inputModes: ['text'],
        outputModes: ['text', 'task-status'],
        securityRequirements: [],
      },
    ],
    documentationUrl: '',
    signatures: [],
  } as AgentCard1x;
  const requestHandler = new sdk.server.DefaultRequestHandler(sampleAgentCard, new sdk.server.InMemoryTaskStore(), v1Executor(sdk, prefix));
  app.use(`/${sdk.root.AGENT_CARD_PATH}`, sdk.express.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(sdk.express.jsonRpcHandler({ requestHandler, userBuilder: sdk.express.UserBuilder.noAuthentication }));
  return { label: `@a2a-js/sdk ${version}`, baseUrl: base, port, calls, close: closer(server) };
}

/**
 * The compat-v1-server sample (`src/samples/agents/compat-v1-server` at tag v1.0.1): every binding
 * declared at 1.0 and mirrored at 0.3 by `duplicateInterfacesForLegacy`, with
 * `legacyCompat: { enabled: true }` on the card handler, JSON-RPC and REST. The gRPC interface
 * stays in the card as published, but no gRPC server is started (nothing here calls gRPC).
 */
export async function startA2aJs1xCompatServer(version: Sdk1Version, prefix = 'sample'): Promise<InteropPeer> {
  const sdk = loadSdk1(version);
  const calls: Recorder = [];
  const app = express();
  app.use(recordRpc(calls));
  const { server, port } = await listen(app);
  const base = `http://127.0.0.1:${port}`;
  const v = sdk.root.A2A_PROTOCOL_VERSION;
  const compatServerCard = {
    name: 'Compat v1.0 Server',
    description:
      'A v1.0-native A2A server that declares each binding at both v1.0 and ' +
      'v0.3 so the same URLs accept both modern (A2A-Version: 1.0) and legacy ' +
      '(A2A-Version: 0.3 or absent) clients.',
    supportedInterfaces: sdk.compat.duplicateInterfacesForLegacy(
      [
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: v },
        { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: v },
        { url: `127.0.0.1:${port + 1}`, protocolBinding: 'GRPC', tenant: '', protocolVersion: v },
      ],
      ['JSONRPC', 'HTTP+JSON', 'GRPC'],
    ),
    provider: { organization: 'A2A Samples', url: 'https://example.com/a2a-samples' },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    skills: [
      {
        id: 'sample_agent',
        name: 'Sample Agent',
        description:
          'Reuses the SampleAgentExecutor across all transports and across ' +
          'both protocol versions. Publishes task / working / artifact / ' +
          'completed events — enough to exercise the push notification path.',
        tags: ['sample', 'compat', 'v0.3', 'push-notification'],
        examples: ['hi', 'hello', 'how are you'],
        inputModes: ['text'],
        outputModes: ['text', 'task-status'],
        securityRequirements: [],
      },
    ],
    documentationUrl: '',
    signatures: [],
  } as AgentCard1x;
  const requestHandler = new sdk.server.DefaultRequestHandler(
    compatServerCard,
    new sdk.server.InMemoryTaskStore(),
    v1Executor(sdk, prefix),
  );
  const legacyCompat = { enabled: true };
  app.use(`/${sdk.root.AGENT_CARD_PATH}`, sdk.express.agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  app.use('/a2a/jsonrpc', sdk.express.jsonRpcHandler({ requestHandler, userBuilder: sdk.express.UserBuilder.noAuthentication, legacyCompat }));
  app.use('/a2a/rest', sdk.express.restHandler({ requestHandler, userBuilder: sdk.express.UserBuilder.noAuthentication, legacyCompat }));
  return { label: `@a2a-js/sdk ${version} (compat)`, baseUrl: `${base}/`, port, calls, close: closer(server) };
}
