/**
 * Real A2A peers on loopback, for tests that must see the cards real servers publish:
 * - {@link startAdkPeer}: an ADK JS agent served by ADK's own `toA2a` (protocol 0.3, modes
 *   `text`, the main URL repeated in `additionalInterfaces`, Express weak ETags, no
 *   Cache-Control). Its model is {@link ScriptedLlm}, a fake: no model API can run here.
 * - {@link startV1CardServer}: an agent card served by @a2a-js/sdk 1.x's `agentCardHandler`
 *   (protocol 1.0, `Cache-Control: max-age`, a weak ETag over the body, 304s).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { BaseLlm, LlmAgent, toA2a } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { AgentCard } from '@a2a-js/sdk';
import { agentCardHandler } from '@a2a-js/sdk/server/express';

/** A fake model that always answers with a fixed text. Named as a fake on purpose. */
export class ScriptedLlm extends BaseLlm {
  readonly #reply: (request: LlmRequest) => string;

  constructor(reply: string | ((request: LlmRequest) => string), model = 'fake-scripted') {
    super({ model });
    this.#reply = typeof reply === 'string' ? () => reply : reply;
  }

  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    yield { content: { role: 'model', parts: [{ text: this.#reply(request) }] }, turnComplete: true };
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('ScriptedLlm has no live mode'));
  }
}

export interface RunningPeer {
  baseUrl: string;
  cardUrl: string;
  port: number;
  close(): Promise<void>;
}

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

/** Serves an ADK `LlmAgent` with `toA2a` on 127.0.0.1 and an ephemeral port. */
export async function startAdkPeer(options: {
  name: string;
  description: string;
  instruction?: string;
  reply?: string;
  /** A 0.3 card to serve instead of ADK's generated one; the returned `card` can be mutated to "redeploy". */
  card?: (port: number) => Record<string, unknown>;
}): Promise<RunningPeer & { card?: Record<string, unknown> }> {
  const agent = new LlmAgent({
    name: options.name,
    description: options.description,
    instruction: options.instruction ?? 'Answer briefly.',
    model: new ScriptedLlm(options.reply ?? `${options.name} here`),
  });
  const app = express();
  app.use(express.json());
  const { server, port } = await listen(app);
  const card = options.card?.(port);
  // toA2a serves the card object it is given by reference: mutating `card` changes what is served.
  await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true, ...(card && { agentCard: card as never }) });
  const baseUrl = `http://127.0.0.1:${port}/`;
  return { baseUrl, cardUrl: `${baseUrl}.well-known/agent-card.json`, port, close: closer(server), ...(card && { card }) };
}

/** Serves a 1.0 card (JSON form, built from the port) with the 1.x SDK's card handler. */
export async function startV1CardServer(options: {
  card: (port: number) => Record<string, unknown>;
  maxAgeSeconds?: number;
}): Promise<RunningPeer & { setCard(card: (port: number) => Record<string, unknown>): void; setHang(hang: boolean): void }> {
  let make = options.card;
  let hang = false;
  const app = express();
  let port = 0;
  // A peer that stops answering (the request is accepted, no response ever comes).
  app.use((_req, _res, next) => {
    if (!hang) next();
  });
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({
      // The provider must return the JSON form (a decoded card would leak `$case` onto the wire).
      agentCardProvider: async () => make(port) as unknown as AgentCard,
      cache: { maxAge: options.maxAgeSeconds ?? 300 },
    }),
  );
  const listening = await listen(app);
  port = listening.port;
  const baseUrl = `http://127.0.0.1:${port}/`;
  return {
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    port,
    close: closer(listening.server),
    setCard(card) {
      make = card;
    },
    setHang(value) {
      hang = value;
    },
  };
}

/** A realistic 1.0 card with security schemes, as a 1.x publisher would write it. */
export function v1Card(port: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const card = {
    name: 'Warranty Agent',
    description: 'Answers warranty questions for hardware orders.',
    version: '2.1.0',
    supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'Example Hardware', url: 'https://hardware.example.com' },
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'JWT' } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'warranty-status',
        name: 'Warranty status',
        description: 'Looks up the warranty status of a serial number.',
        tags: ['warranty'],
        examples: ['Is serial 123 still under warranty?'],
      },
    ],
    ...overrides,
  };
  // Round-trip through the SDK's own JSON mapping so the fixture is exactly what it would serve.
  return AgentCard.toJSON(AgentCard.fromJSON(card)) as Record<string, unknown>;
}
