/**
 * The two helper processes of the service benchmark (bench/service.ts), forked with
 * `--import tsx`; the role comes as argv[2], its layout as argv[3] (JSON), the answers go back over
 * IPC. Both listen on 127.0.0.1 only and exit when the parent goes away.
 *
 * - `cards`: the fleet. `origins` fault servers (test/helpers/fault-server.ts), one port each,
 *   serving `perOrigin` bench cards each (~1.3 KB, `Cache-Control` from the layout), and a
 *   registry in the simple catalog format (docs/sources.md "Registry catalog") listing every one
 *   of them, `pageSize` entries a page, linked by `next`: how a deployment of thousands of agents
 *   hands them to discovery. Every agent has its own name, in the registry and on its card: three
 *   words (`amber-billing-desk`, `Amber Billing Desk`) or, with `names: 'numbered'`, a numbered
 *   series (`fleet-agent-e123`, `Agent e123`).
 * - `peer`: a real A2A 1.0 agent built from @a2a-js/sdk 1.x's server parts (DefaultRequestHandler,
 *   the Express JSON-RPC and card handlers), answering one Message per turn. It times every
 *   JSON-RPC request itself, from its first byte to the end of its response, and files the time
 *   under the turn id the message carries (`T<n>`), so the parent can subtract the peer's own time
 *   from each turn.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Message } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { FaultServer } from '../../test/helpers/fault-server.js';
import { startFaultServer } from '../../test/helpers/fault-server.js';
import { benchCard } from './card.js';
import { shuffled } from './stats.js';

export interface CardsLayout {
  origins: number;
  perOrigin: number;
  cacheControl: string;
  pageSize: number;
  /** `words`: names of three words (`amber-billing-desk`), shuffled; `numbered`: `fleet-agent-e123`. */
  names: 'words' | 'numbered';
}

const WORDS = [
  'amber,azure,bold,brisk,calm,cedar,clever,coral,crisp,dawn,eager,ember,fair,fern,frost,gentle,golden,grand,hazel,ivory,jade,keen,lively,lunar,maple,misty,noble,ocean,olive,pearl,quiet,rapid,royal,ruby,sage,silver,solar,steady,swift,tidal,topaz,urban,vivid,warm,wild,willow,young,zesty',
  'billing,refunds,invoices,payments,orders,returns,shipping,loyalty,repairs,claims,accounts,profiles,catalog,pricing,inventory,support,tickets,chat,search,alerts,reports,audit,compliance,identity,tokens,keys,storage,backups,metrics,logs,traces,builds,deploys,releases,tests,docs,translate,summaries,forecasts,planning',
  'agent,assistant,helper,desk,bot,service,worker,advisor,guide,planner,keeper,scout',
].map((w) => w.split(','));

/** `n` distinct fleet names: three words each, in a seeded order (a number appended past the 23,040 combinations). */
function wordNames(n: number): string[] {
  const [a, b, c] = WORDS as [string[], string[], string[]];
  const all: string[] = [];
  for (const x of a) for (const y of b) for (const z of c) all.push(`${x}-${y}-${z}`);
  const order = shuffled(all, 29);
  return Array.from({ length: n }, (_, i) => (i < order.length ? order[i]! : `${order[i % order.length]!}-${Math.floor(i / order.length)}`));
}

export interface CardsReady {
  type: 'ready';
  origins: string[];
  /** The registry's first page. */
  registryUrl: string;
  endpoints: number;
  cardBytes: number;
  pid: number;
}

export interface PeerReady {
  type: 'ready';
  baseUrl: string;
  rpcUrl: string;
  /** The card as served (JSON form). */
  card: Record<string, unknown>;
  pid: number;
}

/** The peer's own time per turn id (ms, summed over the JSON-RPC requests that carried it). */
export interface PeerTimes {
  type: 'times';
  times: Record<string, number>;
  /** JSON-RPC requests that carried no turn id. */
  unlabelled: number;
  requests: number;
}

export interface CardsStats {
  type: 'stats';
  hits: number;
  cpuUs: number;
}

export type ToChild = { type: 'times' } | { type: 'stats' } | { type: 'close' };

/** The turn id a message carries (`… T123 …`); the last one when a body carries several. */
const TURN_ID = /\bT\d+\b/g;

const send = (m: unknown): void => {
  process.send?.(m);
};

async function cards(layout: CardsLayout): Promise<{ ready: Omit<CardsReady, 'pid' | 'type'>; stats(): CardsStats; close(): Promise<void> }> {
  const servers: FaultServer[] = [];
  const entries: Array<{ name: string; url: string }> = [];
  const words = layout.names === 'words' ? wordNames(layout.origins * layout.perOrigin) : [];
  for (let k = 0; k < layout.origins; k++) {
    const fs = await startFaultServer({ maxRecordedRequests: 0 });
    for (let j = 0; j < layout.perOrigin; j++) {
      const n = k * layout.perOrigin + j;
      const id = `e${n}`;
      const name = words[n] ?? `fleet-agent-${id}`;
      // The card's own name follows the registry's: `Amber Billing Desk`, `Agent e123`.
      const cardName = words[n] === undefined ? `Agent ${id}` : name.split('-').map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ');
      fs.endpoint(id, { card: { ...benchCard(fs.origin, id), name: cardName }, cacheControl: layout.cacheControl });
      entries.push({ name, url: `${fs.origin}/${id}/` });
    }
    servers.push(fs);
  }
  // The registry: pages of the simple catalog format, `next` relative to the page.
  const pages: string[] = [];
  for (let p = 0; p * layout.pageSize < entries.length; p++) {
    const agents = entries.slice(p * layout.pageSize, (p + 1) * layout.pageSize);
    const next = (p + 1) * layout.pageSize < entries.length ? `/agents?page=${p + 1}` : null;
    pages.push(JSON.stringify({ agents, next }));
  }
  let registryHits = 0;
  const registry = http.createServer((req, res) => {
    registryHits++;
    const m = /^\/agents\?page=(\d+)$/.exec(req.url ?? '');
    const body = m ? pages[Number(m[1])] : undefined;
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  const registryOrigin = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
  return {
    ready: {
      origins: servers.map((s) => s.origin).concat(registryOrigin),
      registryUrl: `${registryOrigin}/agents?page=0`,
      endpoints: entries.length,
      cardBytes: servers[0]?.get('e0')?.body.length ?? 0,
    },
    stats() {
      const cpu = process.cpuUsage();
      return { type: 'stats', hits: servers.reduce((n, s) => n + s.hits, 0) + registryHits, cpuUs: cpu.user + cpu.system };
    },
    async close() {
      registry.closeAllConnections();
      await Promise.all([...servers.map((s) => s.close()), new Promise<void>((resolve) => registry.close(() => resolve()))]);
    },
  };
}

/** Answers every message with one agent Message: `warranty: <the user's text>`. */
class EchoExecutor implements AgentExecutor {
  cancelTask = async (): Promise<void> => undefined;

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const input = ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
    const reply: Message = {
      messageId: randomUUID(),
      contextId: ctx.contextId,
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text', value: `warranty: ${input}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(AgentEvent.message(reply));
    bus.finished();
  }
}

async function peer(): Promise<{ ready: Omit<PeerReady, 'pid' | 'type'>; times(): PeerTimes; close(): Promise<void> }> {
  let times: Record<string, number> = {};
  let unlabelled = 0;
  let requests = 0;
  const app = express();
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}/`;
  const rpcUrl = `${baseUrl}a2a/jsonrpc`;
  const card = AgentCard.toJSON(
    AgentCard.fromJSON({
      name: 'Warranty Agent',
      description: 'Answers warranty questions for hardware orders.',
      version: '2.1.0',
      supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty status of a serial number.', tags: ['warranty'] }],
    }),
  ) as Record<string, unknown>;
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), new EchoExecutor());
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard, cache: { maxAge: 300 } }));
  app.use(
    '/a2a/jsonrpc',
    (req, res, next) => {
      // The clock starts before the body is read and stops when the response is handed to the socket.
      const t0 = performance.now();
      let id: string | undefined;
      res.on('finish', () => {
        requests++;
        const ms = performance.now() - t0;
        if (id === undefined) unlabelled++;
        else times[id] = (times[id] ?? 0) + ms;
      });
      express.json()(req, res, (err?: unknown) => {
        if (err === undefined) id = JSON.stringify(req.body ?? {}).match(TURN_ID)?.at(-1);
        next(err);
      });
    },
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  return {
    ready: { baseUrl, rpcUrl, card },
    times() {
      const out: PeerTimes = { type: 'times', times, unlabelled, requests };
      times = {};
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const role = process.argv[2];
if (role === 'cards') {
  const c = await cards(JSON.parse(process.argv[3] ?? '{}') as CardsLayout);
  const close = async () => {
    await c.close();
    process.exit(0);
  };
  process.on('message', (m: ToChild) => {
    if (m.type === 'stats') send(c.stats());
    else if (m.type === 'close') void close();
  });
  process.on('disconnect', () => void close());
  send({ type: 'ready', ...c.ready, pid: process.pid } satisfies CardsReady);
} else if (role === 'peer') {
  const p = await peer();
  const close = async () => {
    await p.close();
    process.exit(0);
  };
  process.on('message', (m: ToChild) => {
    if (m.type === 'times') send(p.times());
    else if (m.type === 'close') void close();
  });
  process.on('disconnect', () => void close());
  send({ type: 'ready', ...p.ready, pid: process.pid } satisfies PeerReady);
} else {
  process.stderr.write(`service-child: unknown role ${String(role)}\n`);
  process.exit(2);
}
