/**
 * Peers for the interface, tenant and per-agent transport tests:
 *
 * - {@link startMultiTenantPeer}: an @a2a-js/sdk 1.3.0 server serving two tenants on **one**
 *   JSON-RPC URL. Each tenant has its own card at its own card URL
 *   (`/tenants/<tenant>/agent-card.json`) whose one interface names the tenant. The SDK's
 *   server does not route by tenant, so a front handler reads the request's `tenant` (A2A 1.0
 *   §8.3.2, the JSON-RPC binding's `params.tenant`), records it, and hands the call to that
 *   tenant's own `DefaultRequestHandler`; a call with no or an unknown tenant gets a JSON-RPC
 *   error. A shared card at the base URL lists every tenant's interface and skill.
 * - {@link startBrokenStreamPeer}: a raw loopback server whose stream is broken: an A2A 0.3 card
 *   saying `capabilities.streaming: true`, `message/send` that works, and a `message/stream` whose
 *   SSE is malformed. A made-up fault for the `streaming: false` option, not a stand-in for any
 *   framework: it used to be called "VoltAgent-style", but real VoltAgent (voltagent.test.ts,
 *   recorded in recorded/) answers a kind-less Task and frames its events with U+001E, both
 *   read by leniencies now, so it is no longer a peer whose stream fails.
 *
 * Both record every call: method, `A2A-Version` header, tenant, and the headers received.
 */
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

export interface TransportCall {
  /** The JSON-RPC method, or `POST <path>` for an HTTP+JSON call. */
  method: string;
  /** The `A2A-Version` header, if any. */
  version: string | undefined;
  /** The request's tenant (`params.tenant`), if any. */
  tenant: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface TransportPeer {
  readonly baseUrl: string;
  readonly port: number;
  readonly calls: readonly TransportCall[];
  close(): Promise<void>;
}

export interface MultiTenantPeer extends TransportPeer {
  /** The tenant's own card URL. */
  cardUrl(tenant: string): string;
  /** The card at the base URL listing every tenant's interface, in the order given. */
  readonly sharedCardUrl: string;
  readonly rpcUrl: string;
  /** The HTTP+JSON base URL (a tenant's calls go to `<restUrl>/<tenant>/message:send`). */
  readonly restUrl: string;
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Answers `<tenant>: <text>` as one agent message. */
function tenantExecutor(tenant: string): AgentExecutor {
  const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
  return {
    cancelTask: async () => undefined,
    async execute(ctx, bus) {
      const input = ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
      bus.publish(
        AgentEvent.message({ messageId: randomUUID(), contextId: ctx.contextId, taskId: '', role: Role.ROLE_AGENT, parts: [text(`${tenant}: ${input}`)], metadata: undefined, extensions: [], referenceTaskIds: [] }),
      );
      bus.finished();
    },
  };
}

/**
 * Two tenants (`tenants`, each with its own reviewed tag for its card's one skill) on one URL.
 * `streaming` is each card's `capabilities.streaming` (default false).
 */
export async function startMultiTenantPeer(
  tenants: ReadonlyArray<{ tenant: string; tag: string }>,
  options: { streaming?: boolean; binding?: 'JSONRPC' | 'HTTP+JSON' } = {},
): Promise<MultiTenantPeer> {
  const calls: TransportCall[] = [];
  const app = express();
  const server = createServer(app);
  const port = await listen(server);
  const baseUrl = `http://127.0.0.1:${port}/`;
  const rpcUrl = `${baseUrl}a2a/jsonrpc`;
  const restUrl = `${baseUrl}a2a/rest`;
  const binding = options.binding ?? 'JSONRPC';
  const cardOf = (tenant: string, tag: string, interfaces: ReadonlyArray<{ tenant: string; tag: string }>): Record<string, unknown> =>
    AgentCard.toJSON(
      AgentCard.fromJSON({
        name: `Tenant ${tenant}`,
        description: `The agent of tenant ${tenant}.`,
        version: '1.0.0',
        supportedInterfaces: interfaces.map((i) => ({ url: binding === 'JSONRPC' ? rpcUrl : restUrl, protocolBinding: binding, protocolVersion: '1.0', tenant: i.tenant })),
        capabilities: { streaming: options.streaming ?? false, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: interfaces.map((i) => ({ id: `${i.tenant}-skill`, name: `${i.tenant} answers`, description: `Answers for ${i.tenant}.`, tags: [i.tag] })),
      }),
    ) as Record<string, unknown>;

  const handlers = new Map<string, express.RequestHandler>();
  const restHandlers = new Map<string, express.RequestHandler>();
  for (const { tenant, tag } of tenants) {
    const card = cardOf(tenant, tag, [{ tenant, tag }]);
    const requestHandler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), tenantExecutor(tenant));
    // The provider returns the JSON form (a decoded card would leak `$case` onto the wire).
    app.use(`/tenants/${tenant}/agent-card.json`, agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard }));
    handlers.set(tenant, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    restHandlers.set(tenant, restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  }
  const shared = cardOf(tenants[0]!.tenant, tenants[0]!.tag, tenants);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => shared as unknown as AgentCard }));
  app.use('/a2a/jsonrpc', express.json(), (req, res, next) => {
    const body = (req.body ?? {}) as { id?: unknown; method?: unknown; params?: { tenant?: unknown } };
    const tenant = typeof body.params?.tenant === 'string' ? body.params.tenant : undefined;
    calls.push({ method: String(body.method), version: header(req.headers, 'a2a-version'), tenant, headers: { ...req.headers } });
    const handler = tenant === undefined ? undefined : handlers.get(tenant);
    if (handler === undefined) {
      res.json({ jsonrpc: '2.0', id: body.id ?? null, error: { code: -32602, message: `unknown tenant ${JSON.stringify(tenant ?? '')}` } });
      return;
    }
    handler(req, res, next);
  });
  // HTTP+JSON (A2A 1.0 §11): the tenant is the first path segment; the SDK's REST router reads
  // it there (`/:tenant/message:send`), so each tenant's router gets the request unchanged.
  app.use('/a2a/rest', express.json(), (req, res, next) => {
    const tenant = /^\/([^/]+)\/message:/.exec(req.path)?.[1];
    calls.push({ method: `${req.method} ${req.path}`, version: header(req.headers, 'a2a-version'), tenant, headers: { ...req.headers } });
    const handler = tenant === undefined ? undefined : restHandlers.get(decodeURIComponent(tenant));
    if (handler === undefined) {
      res.status(404).json({ error: `unknown tenant ${JSON.stringify(tenant ?? '')}` });
      return;
    }
    handler(req, res, next);
  });
  return {
    baseUrl,
    port,
    rpcUrl,
    restUrl,
    calls,
    cardUrl: (tenant) => `${baseUrl}tenants/${tenant}/agent-card.json`,
    sharedCardUrl: `${baseUrl}.well-known/agent-card.json`,
    close: closer(server),
  };
}

/**
 * A peer whose stream is broken (a raw loopback server modelled on no framework): its A2A 0.3
 * card says `streaming: true`, `message/send` answers `<prefix>: <text>`, and `message/stream`
 * answers `200 text/event-stream` whose events are not JSON — the stream is unusable.
 * With `delayMs` every JSON-RPC call waits that long before answering (a slow peer).
 */
export async function startBrokenStreamPeer(options: { prefix?: string; tag?: string; delayMs?: number } = {}): Promise<TransportPeer & { cardUrl: string }> {
  const calls: TransportCall[] = [];
  const prefix = options.prefix ?? 'volt';
  const pending = new Set<NodeJS.Timeout>();
  let baseUrl = '';
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      const card = {
        protocolVersion: '0.3.0',
        name: 'Broken-stream support agent',
        description: 'Answers support questions.',
        url: `${baseUrl}a2a`,
        preferredTransport: 'JSONRPC',
        version: '1.0.0',
        capabilities: { streaming: true },
        defaultInputModes: ['text'],
        defaultOutputModes: ['text'],
        skills: [{ id: 'support', name: 'Support', description: 'Answers support questions.', tags: [options.tag ?? 'support'] }],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/a2a') {
      res.writeHead(404).end();
      return;
    }
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { id?: unknown; method?: string; params?: { message?: { contextId?: string; parts?: Array<{ kind?: string; text?: string }> } } };
      calls.push({ method: String(body.method), version: header(req.headers, 'a2a-version'), tenant: undefined, headers: { ...req.headers } });
      const answer = (): void => {
        if (body.method === 'message/stream') {
          // Malformed on the peer's side: an SSE event whose data is not JSON.
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          res.end('event: message\ndata: {"jsonrpc":"2.0","result":{"kind":"message",\n\n');
          return;
        }
        const input = (body.params?.message?.parts ?? []).flatMap((p) => (p.kind === 'text' && typeof p.text === 'string' ? [p.text] : [])).join(' ');
        const result = { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text: `${prefix}: ${input}` }], contextId: body.params?.message?.contextId ?? randomUUID() };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, result }));
      };
      if (options.delayMs === undefined) answer();
      else {
        const t = setTimeout(() => {
          pending.delete(t);
          if (!res.destroyed) answer();
        }, options.delayMs);
        pending.add(t);
      }
    });
  });
  const port = await listen(server);
  baseUrl = `http://127.0.0.1:${port}/`;
  const close = closer(server);
  return {
    baseUrl,
    port,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    calls,
    close: async () => {
      for (const t of pending) clearTimeout(t);
      await close();
    },
  };
}
