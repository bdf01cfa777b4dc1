/**
 * The service as an A2A agent: its card at `/.well-known/agent-card.json` (and the 0.2 path
 * `/.well-known/agent.json`), public like any agent card, and its JSON-RPC endpoint at
 * {@link A2A_RPC_PATH}, under `/api/` so the request guard (bearer token, OIDC) and the role
 * table (`operator`, as `POST /api/chat`) apply to it.
 *
 * The endpoint is the SDK's: `JsonRpcTransportHandler` for A2A 1.0 (`A2A-Version: 1.0`) and
 * `LegacyJsonRpcTransportHandler` for 0.3 (the header absent, or 0.3), over one
 * {@link TurnRequestHandler}; this module is the Hono glue the SDK's express adapter would be:
 * the body under `server.limits.maxBodyBytes`, the version check, JSON or an event stream out.
 */
import { createHash } from 'node:crypto';
import type { Context, Hono } from 'hono';
import type { RouteToolkit } from '../route.js';
import { AgentCard } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { User } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { canonicalJson } from 'a2a-discovery/internal';
import type { DiscoveryLoop, Snapshot } from 'a2a-discovery';
import type { ServerA2aConfig } from 'a2a-discovery/config';
import { ifNoneMatch } from '../routes/ai-catalog-route.js';
import type { Caller } from '../../auth/session-owners.js';
import type { AgentCardOptions, AgentCards } from './agent-card.js';
import { A2A_RPC_PATH, AGENT_CARD_PATHS, MASTRA_CARD_PATH, MASTRA_RPC_PATH, buildAgentCards } from './agent-card.js';
import { BoundedTaskStore } from './task-store.js';
import type { ChatTurn } from '../routes/chat-turn.js';
import { A2A_REFUSAL_CODES, HONO_CONTEXT_KEY, TurnRequestHandler } from './turn-handler.js';

/** The A2A endpoint's settings (`server.a2a`; docs/service.md), `enabled` aside. */
export type A2aSettings = Omit<ServerA2aConfig, 'enabled'>;

/** What the routes need of the app (http/app.ts). */
export interface A2aRouteOptions {
  readonly settings: A2aSettings;
  readonly loop: Pick<DiscoveryLoop, 'current'>;
  readonly card: Omit<AgentCardOptions, 'baseUrl' | 'name' | 'description'>;
  readonly chatTurn: ChatTurn;
  readonly callerOf: (c: Context) => Caller;
  /** The caller's identity for its tasks (`tasks/get` sees one's own only). */
  readonly ownerOf: (c: Context) => string;
  /** The 503 of a draining service, else undefined. */
  readonly draining: (c: Context) => Response | undefined;
  /** The JSON object body under `server.limits.maxBodyBytes`, or the 400/413 to send. */
  readonly readBody: (c: Context) => Promise<Record<string, unknown> | Response>;
  /** The route declarations of the app (http/route.ts). */
  readonly route: RouteToolkit['route'];
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** Mounts the card routes and the JSON-RPC endpoint on `app`. */
export function mountA2a(app: Hono, o: A2aRouteOptions): void {
  const cards = new CardMemo(o);
  const cardSpec = { tags: ['a2a'], summary: "The service's own A2A agent card (the routed agents as skills)", responses: { 200: { description: 'the agent card', content: { 'application/json': { schema: { type: 'object' as const } } } } } };
  for (const path of AGENT_CARD_PATHS) app.get(path, ...o.route('public', cardSpec), (c) => cards.handle(c));

  // The SDK's handler keeps the card it was built with for the version check and capabilities;
  // the published card (skills, URL) is built per snapshot and request above.
  const base = AgentCard.fromJSON(buildAgentCards(undefined, { ...o.card, name: o.settings.name, description: o.settings.description, baseUrl: '' }).v1);
  const handler = new TurnRequestHandler({ card: base, tasks: new BoundedTaskStore(o.settings.maxTasks), chatTurn: o.chatTurn, callerOf: o.callerOf });
  const v1 = new JsonRpcTransportHandler(handler);
  const v03 = new LegacyJsonRpcTransportHandler(handler);

  const rpc = async (c: Context): Promise<Response> => {
    const header = c.req.header('a2a-version')?.trim() ?? '';
    // As the SDK's express handler: no header is 0.3 (A2A 1.0 §3.6 makes 1.0 clients send it).
    const legacy = header === '' || /^0\.3(\.\d+)?$/.test(header);
    const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
    const read = await o.readBody(c);
    if (read instanceof Response) {
      if (read.status !== 400) return read;
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'the body must be a JSON-RPC request object' } });
    }
    const id = typeof read.id === 'string' || typeof read.id === 'number' ? read.id : null;
    // Draining: no new turn (the chat route's 503, as a JSON-RPC error; its Retry-After kept).
    const draining = o.draining(c);
    if (draining) {
      const { message } = (await draining.json()) as { message: string };
      return c.json({ jsonrpc: '2.0', id, error: { code: A2A_REFUSAL_CODES.unavailable, message } }, 503);
    }
    const owner = o.ownerOf(c);
    const user: User = { isAuthenticated: owner !== '', userName: owner };
    const context = new ServerCallContext({ user, requestedVersion: legacy ? '0.3' : header, state: new Map<string, unknown>([[HONO_CONTEXT_KEY, c]]) });
    let result: Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;
    try {
      validateVersion(context.requestedVersion, base, 'JSONRPC');
      result = await (legacy ? v03 : v1).handle(read, context);
    } catch (err) {
      return c.json({ jsonrpc: '2.0', id, error: mapError(err) });
    }
    if (!isAsyncIterable(result)) return c.json(result);
    // A stream: its first event decides between a JSON error (a refused turn) and the event stream.
    const events = result[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await events.next();
    } catch (err) {
      return c.json({ jsonrpc: '2.0', id, error: mapError(err) });
    }
    const encoder = new TextEncoder();
    const frame = (event: unknown, name?: string) => encoder.encode(`${name !== undefined ? `event: ${name}\n` : ''}data: ${JSON.stringify(event)}\n\n`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first.done === true) controller.close();
        else controller.enqueue(frame(first.value));
      },
      async pull(controller) {
        try {
          const next = await events.next();
          if (next.done === true) controller.close();
          else controller.enqueue(frame(next.value));
        } catch (err) {
          controller.enqueue(frame({ jsonrpc: '2.0', id, error: mapError(err) }, 'error'));
          controller.close();
        }
      },
      async cancel() {
        // The client went away: the request's signal aborts the turn (routes/chat-turn.ts).
        await events.return?.(undefined);
      },
    });
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  };
  const rpcSpec = {
    tags: ['a2a'],
    summary: 'The A2A JSON-RPC endpoint (1.0 and 0.3 methods): each contextId a chat session',
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' as const, required: ['jsonrpc', 'method'] } } } },
    responses: {
      200: { description: 'a JSON-RPC response, or an event stream for a streaming method', content: { 'application/json': { schema: { type: 'object' as const } }, 'text/event-stream': { schema: { type: 'string' as const } } } },
    },
  };
  app.post(A2A_RPC_PATH, ...o.route('operator', rpcSpec), rpc);

  // Aliases for Mastra's A2A client (`@mastra/client-js`), which builds both URLs from its base
  // URL, its `apiPrefix` (default `/api`) and an agent id, and never reads a card's `url`:
  // `GET /api/.well-known/<id>/agent-card.json` and `POST /api/a2a/<id>`, with the card's name as
  // the id. The same card and the same endpoint, not a second implementation (docs/interop.md).
  const named = (c: Context): boolean => c.req.param('agentId') === o.settings.name;
  app.get(MASTRA_CARD_PATH, ...o.route('viewer', { ...cardSpec, summary: "The agent card at Mastra's client's URL (agentId: the card's name)" }), (c) => (named(c) ? cards.handle(c) : c.notFound()));
  app.post(MASTRA_RPC_PATH, ...o.route('operator', { ...rpcSpec, summary: "The A2A endpoint at Mastra's client's URL (agentId: the card's name)" }), (c) => (named(c) ? rpc(c) : c.notFound()));
}

function isAsyncIterable(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The card, built once per snapshot, base URL and form. Its ETag is the SHA-256 of its canonical
 * JSON (RFC 8785), so it changes when the snapshot's skills do; `Vary: A2A-Version` since the
 * header chooses the form.
 */
class CardMemo {
  readonly #o: A2aRouteOptions;
  #memo: { snapshot: Snapshot | undefined; baseUrl: string; cards: AgentCards; etags: { v1: string; v03: string } } | undefined;

  constructor(o: A2aRouteOptions) {
    this.#o = o;
  }

  handle(c: Context): Response {
    const { settings } = this.#o;
    const snapshot = this.#o.loop.current();
    const baseUrl = (settings.publicUrl ?? new URL(c.req.url).origin).replace(/\/$/, '');
    let memo = this.#memo;
    if (memo === undefined || memo.snapshot !== snapshot || memo.baseUrl !== baseUrl) {
      const cards = buildAgentCards(snapshot, { ...this.#o.card, name: settings.name, description: settings.description, baseUrl });
      const etag = (card: Record<string, unknown>) => `"${createHash('sha256').update(canonicalJson(card)).digest('hex').slice(0, 32)}"`;
      memo = { snapshot, baseUrl, cards, etags: { v1: etag(cards.v1), v03: etag(cards.v03) } };
      this.#memo = memo;
    }
    const version = c.req.header('a2a-version')?.trim() ?? '';
    const form = /^([1-9]\d*)(\.\d+)*$/.test(version) ? 'v1' : 'v03';
    const etag = memo.etags[form];
    const headers = { etag, 'cache-control': settings.cacheControl, vary: 'A2A-Version' };
    if (ifNoneMatch(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers);
    return c.body(JSON.stringify(memo.cards[form]), 200, { ...headers, 'content-type': 'application/json' });
  }
}
