/**
 * The demo's A2A peers: real servers on loopback with real caching headers, answering with
 * deterministic scripts (a demo model, so the demo needs no model key).
 *
 * - {@link startAdkDemoAgent}: an ADK JS `LlmAgent` served by ADK's own `toA2a` (A2A 0.3).
 * - {@link startV1DemoAgent}: an @a2a-js/sdk 1.x server speaking only A2A 1.0.
 * - {@link startDemoCatalog}: a registry catalog (`{ agents: [{ name, url, tags }] }`).
 *
 * Each peer can be told to stop answering (`setHang(true)`) to show stale-on-error. An ADK agent
 * may also carry its next version, deployed blue/green beside the first ({@link DemoRelease}).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { DiscoveryError } from 'a2a-discovery';
import { BaseLlm, LlmAgent, toA2a } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Message } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

/**
 * The question a demo agent answers: the last text part that is the user's own. ADK's remote agent
 * sends what other agents said earlier as context parts ("For context:", "[billing_agent] said: …");
 * a reply about those would repeat the whole conversation.
 */
function questionOf(parts: readonly string[]): string {
  const own = parts.map((t) => t.trim()).filter((t) => t !== '' && t !== 'For context:' && !/^\[[^\]]+\] (said: |called tool |(\S+ )?tool )/.test(t));
  return own.at(-1) ?? '';
}

/** A deterministic "model" for the demo agents: it answers with a script, never a network call. */
class DemoModel extends BaseLlm {
  readonly #reply: (text: string) => string;

  constructor(model: string, reply: (text: string) => string) {
    super({ model });
    this.#reply = reply;
  }

  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const last = [...(request.contents ?? [])].reverse().find((c) => c.role === 'user');
    const text = questionOf((last?.parts ?? []).map((p) => p.text ?? ''));
    yield { content: { role: 'model', parts: [{ text: this.#reply(text) }] }, turnComplete: true };
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('the demo model has no live mode'));
  }
}

export interface DemoPeer {
  readonly name: string;
  readonly baseUrl: string;
  readonly port: number;
  /** Stop answering (requests are accepted, no response comes), or resume. */
  setHang(hang: boolean): void;
  close(): Promise<void>;
}

async function listen(app: express.Application): Promise<{ server: Server; port: number; baseUrl: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return { server, port, baseUrl: `http://127.0.0.1:${port}/` };
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

function hangSwitch(app: express.Application): (hang: boolean) => void {
  let hang = false;
  app.use((_req, _res, next) => {
    if (!hang) next();
  });
  return (h) => {
    hang = h;
  };
}

/** A skill as a demo agent's card lists it. */
export interface DemoSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

/**
 * An ADK demo agent's next version, deployed blue/green as teams ship one: a second `toA2a`
 * deployment on the same origin under `/v2` (its own agent and task store), answering beside the
 * first until {@link ReleasablePeer.release} switches the card to it. The old deployment keeps
 * answering the sessions still pinned to it.
 */
export interface DemoRelease {
  /** The skills the card lists once released. */
  skills: DemoSkill[];
  reply: (text: string) => string;
  /** Fail every n-th call to the new deployment with HTTP 500 (2: half of them), as a broken release does. Default: never. */
  failEvery?: number;
}

/** An ADK demo agent with its next version deployed beside it. */
export interface ReleasablePeer {
  /** Serves the next version's card from now on: its interface URLs under `/v2`, its skills, version 2.0.0. */
  release(): void;
  /** Calls the new deployment received, and how many it failed. */
  readonly released: { readonly received: number; readonly failed: number };
}

/**
 * An ADK JS agent served with `toA2a` (A2A 0.3); its card carries `skills` and a max-age. With
 * `release`, its next version is deployed beside it ({@link DemoRelease}).
 */
export async function startAdkDemoAgent(options: {
  name: string;
  cardName: string;
  skills: DemoSkill[];
  reply: (text: string) => string;
  maxAgeSeconds: number;
  release?: DemoRelease;
}): Promise<DemoPeer & ReleasablePeer & { card: Record<string, unknown> }> {
  const app = express();
  const setHang = hangSwitch(app);
  app.use((req, res, next) => {
    if (req.path.endsWith('/agent-card.json')) res.setHeader('Cache-Control', `public, max-age=${options.maxAgeSeconds}`);
    next();
  });
  app.use(express.json());
  const { server, port, baseUrl } = await listen(app);
  const card: Record<string, unknown> = {
    name: options.cardName,
    description: `${options.cardName}, an ADK JS agent (card text is shown, never given to a model).`,
    url: `${baseUrl}jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: `${baseUrl}jsonrpc`, transport: 'JSONRPC' },
      { url: `${baseUrl}rest`, transport: 'HTTP+JSON' },
    ],
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false, extensions: [] },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: options.skills,
  };
  const agent = new LlmAgent({ name: options.name, description: options.cardName, instruction: 'Answer briefly.', model: new DemoModel(`demo-${options.name}`, options.reply) });
  const next = options.release === undefined ? undefined : await deployNextVersion(app, { ...options, release: options.release, port, baseUrl, card });
  // toA2a serves this object by reference: changing `card` "redeploys" the card.
  await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true, agentCard: card as never });
  const released = next?.released ?? { received: 0, failed: 0 };
  const release = (): void => {
    if (next === undefined) throw new DiscoveryError('ERR_USAGE', `the demo agent ${options.name} has no next version deployed (start it with \`release\`)`);
    Object.assign(card, next.card);
  };
  return { name: options.name, baseUrl, port, card, setHang, release, released, close: closer(server) };
}

/**
 * Deploys `release` under `/v2` on `app` (before the first version's routes): a gate that fails
 * every n-th call, then its own `toA2a`. Returns what its card changes and its call counts.
 */
async function deployNextVersion(
  app: express.Application,
  o: { name: string; cardName: string; release: DemoRelease; port: number; baseUrl: string; card: Record<string, unknown> },
): Promise<{ card: Record<string, unknown>; released: { received: number; failed: number } }> {
  const { release } = o;
  const released = { received: 0, failed: 0 };
  app.use('/v2', (req, res, next) => {
    if (req.method !== 'POST' || req.path.endsWith('/agent-card.json')) return next();
    released.received++;
    if (release.failEvery !== undefined && released.received % release.failEvery === 0) {
      released.failed++;
      res.status(500).json({ error: 'the new release crashed' });
      return;
    }
    next();
  });
  const v2 = `${o.baseUrl}v2/`;
  const card: Record<string, unknown> = {
    ...o.card,
    description: `${o.cardName} 2.0, an ADK JS agent (card text is shown, never given to a model).`,
    url: `${v2}jsonrpc`,
    version: '2.0.0',
    additionalInterfaces: [
      { url: `${v2}jsonrpc`, transport: 'JSONRPC' },
      { url: `${v2}rest`, transport: 'HTTP+JSON' },
    ],
    skills: [...release.skills],
  };
  const agent = new LlmAgent({ name: o.name, description: `${o.cardName} 2.0`, instruction: 'Answer briefly.', model: new DemoModel(`demo-${o.name}-v2`, release.reply) });
  await toA2a(agent, { app, host: '127.0.0.1', port: o.port, basePath: '/v2', allowUnauthenticated: true, agentCard: { ...card } as never });
  return { card, released };
}

class ScriptExecutor implements AgentExecutor {
  constructor(private readonly reply: (text: string) => string) {}

  cancelTask = async (): Promise<void> => undefined;

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const input = questionOf(ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])));
    const message: Message = {
      messageId: randomUUID(),
      contextId: ctx.contextId,
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text', value: this.reply(input) }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(AgentEvent.message(message));
    bus.finished();
  }
}

/** An agent speaking only A2A 1.0, from @a2a-js/sdk 1.x's own server parts. */
export async function startV1DemoAgent(options: {
  name: string;
  cardName: string;
  skills: Array<{ id: string; name: string; description: string; tags: string[] }>;
  reply: (text: string) => string;
  maxAgeSeconds: number;
}): Promise<DemoPeer> {
  const app = express();
  const setHang = hangSwitch(app);
  const { server, port, baseUrl } = await listen(app);
  const rpcUrl = `${baseUrl}a2a/jsonrpc`;
  const card = AgentCard.toJSON(
    AgentCard.fromJSON({
      name: options.cardName,
      description: `${options.cardName}, an A2A 1.0 agent.`,
      version: '1.0.0',
      supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: options.skills,
    }),
  ) as Record<string, unknown>;
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), new ScriptExecutor(options.reply));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard, cache: { maxAge: options.maxAgeSeconds } }));
  app.use('/a2a/jsonrpc', express.json(), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { name: options.name, baseUrl, port, setHang, close: closer(server) };
}

/** A registry catalog in the documented `{ agents: [{ name, url, tags }] }` format. */
export async function startDemoCatalog(): Promise<{ url: string; origin: string; set(agents: Array<{ name: string; url: string; tags?: string[] }>): void; close(): Promise<void> }> {
  let agents: Array<{ name: string; url: string; tags?: string[] }> = [];
  const app = express();
  app.get('/agents.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.json({ agents });
  });
  const { server, baseUrl } = await listen(app);
  return {
    url: `${baseUrl}agents.json`,
    origin: baseUrl.slice(0, -1),
    set(next) {
      agents = next;
    },
    close: closer(server),
  };
}
