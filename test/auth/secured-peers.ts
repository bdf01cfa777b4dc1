/**
 * Real parts for the peer-credential tests, all on loopback:
 * - {@link startIdp}: `oauth2-mock-server` as the identity provider (client-credentials grant,
 *   JWKS, OpenID discovery), which here also checks the client's secret (basic or post) and puts
 *   the requested `audience` into the token's `aud`; every HTTP request it gets is logged.
 * - {@link startSecured1x}: an @a2a-js/sdk 1.3 peer (JSON-RPC, `SendMessage`) and
 *   {@link startSecured0314}: an @a2a-js/sdk 0.3.14 peer (the protocol ADK JS speaks), each behind
 *   a bearer check that verifies the JWT with `jose` against the IdP's JWKS (issuer, audience =
 *   the peer's origin) and answers 401 otherwise. `rotate()` makes every token accepted so far
 *   unacceptable (a peer rotating its accepted tokens). Every request is logged with its
 *   `authorization` header.
 * - {@link startPlainServer}: an unsecured server on another origin with a request log.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Message, Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { AgentCard as AgentCard0314 } from 'a2a-sdk-0314';
import * as sdk0314 from 'a2a-sdk-0314/server';
import type { ExecutionEventBus as Bus0314, RequestContext as Ctx0314 } from 'a2a-sdk-0314/server';
import * as sdk0314Express from 'a2a-sdk-0314/server/express';

export const CLIENT_ID = 'discovery-bot';
/** The client secret: tests grep every log line and error for it. */
export const CLIENT_SECRET = 'cs-7f3a9e1b-never-log-this';

export interface LoggedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body?: unknown;
}

export interface RunningIdp {
  /** The issuer (`http://127.0.0.1:<port>`). */
  issuer: string;
  tokenUrl: string;
  jwksUrl: string;
  /** Token endpoint requests answered so far (200 or not). */
  readonly tokenRequests: number;
  /** Access tokens issued, in order (secrets the tests look for in logs). */
  readonly issued: readonly string[];
  /** Every HTTP request received. */
  readonly log: readonly LoggedRequest[];
  /** The `expires_in` of the next tokens, in seconds. Default 3600. */
  expiresIn: number;
  close(): Promise<void>;
}

export async function startIdp(): Promise<RunningIdp> {
  const oauth = new OAuth2Server();
  await oauth.issuer.keys.generate('RS256');
  const log: LoggedRequest[] = [];
  const issued: string[] = [];
  let tokenRequests = 0;
  const state = { expiresIn: 3600 };
  oauth.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: { body?: Record<string, string> }) => {
    if (req.body?.['audience'] !== undefined) token.payload['aud'] = req.body['audience'];
    token.payload['sub'] = CLIENT_ID;
    // Two tokens in one second must differ (a rotation test tells them apart).
    token.payload['jti'] = randomUUID();
  });
  oauth.service.on('beforeResponse', (response: { body: Record<string, unknown>; statusCode: number }, req: { headers: http.IncomingHttpHeaders; body?: Record<string, string> }) => {
    tokenRequests++;
    const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString() : undefined;
    const viaPost = req.body?.['client_id'] === CLIENT_ID && req.body?.['client_secret'] === CLIENT_SECRET;
    // RFC 6749 §2.3.1: both parts form-urlencoded before the base64.
    const [id, secret] = (basic ?? '').split(':').map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
    const viaBasic = id === CLIENT_ID && secret === CLIENT_SECRET;
    if (!viaPost && !viaBasic) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client' };
      return;
    }
    response.body['expires_in'] = state.expiresIn;
    issued.push(String(response.body['access_token']));
  });
  const handler = oauth.service.requestHandler;
  const server = http.createServer((req, res) => {
    log.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  oauth.issuer.url = issuer;
  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    jwksUrl: `${issuer}/jwks`,
    get tokenRequests() {
      return tokenRequests;
    },
    issued,
    log,
    get expiresIn() {
      return state.expiresIn;
    },
    set expiresIn(value: number) {
      state.expiresIn = value;
    },
    close: closer(server),
  };
}

export interface SecuredPeer {
  baseUrl: string;
  origin: string;
  cardUrl: string;
  port: number;
  /** Every HTTP request received (card fetches included), with its authorization header. */
  readonly log: readonly LoggedRequest[];
  /** Requests refused with 401. */
  readonly refused: number;
  /** JSON-RPC bodies that passed the bearer check, in order. */
  readonly accepted: readonly unknown[];
  /** Every token accepted so far is refused from now on. */
  rotate(): void;
  /** Refuse every request (401), whatever it carries. */
  refuseAll: boolean;
  close(): Promise<void>;
}

/** The bearer check: a JWT of the IdP, for this peer's origin, not rotated out. */
function bearerCheck(idp: RunningIdp, origin: () => string, revoked: Set<string>, seen: Set<string>, counters: { refused: number; refuseAll: boolean }, protectCard: boolean): express.RequestHandler {
  const jwks = createRemoteJWKSet(new URL(idp.jwksUrl));
  return (req, res, next) => {
    if (!protectCard && req.method === 'GET' && req.path.startsWith('/.well-known/')) return next();
    const header = req.headers.authorization;
    const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    const refuse = (): void => {
      counters.refused++;
      res.status(401).set('www-authenticate', 'Bearer error="invalid_token"').json({ error: 'unauthorized' });
    };
    if (token === undefined || revoked.has(token) || counters.refuseAll) return refuse();
    jwtVerify(token, jwks, { issuer: idp.issuer, audience: origin() }).then(
      () => {
        seen.add(token);
        next();
      },
      () => refuse(),
    );
  };
}

function securedBase(idp: RunningIdp, protectCard: boolean): { app: express.Application; peer: Omit<SecuredPeer, 'baseUrl' | 'origin' | 'cardUrl' | 'port' | 'close'>; setOrigin(o: string): void } {
  const app = express();
  const log: LoggedRequest[] = [];
  const accepted: unknown[] = [];
  const revoked = new Set<string>();
  const seen = new Set<string>();
  const counters = { refused: 0, refuseAll: false };
  let origin = '';
  app.use(express.json(), (req, _res, next) => {
    log.push({ method: req.method, path: req.path, authorization: req.headers.authorization, body: req.body });
    next();
  });
  app.use(bearerCheck(idp, () => origin, revoked, seen, counters, protectCard));
  app.use((req, _res, next) => {
    if (req.method === 'POST') accepted.push(req.body);
    next();
  });
  return {
    app,
    setOrigin: (o) => {
      origin = o;
    },
    peer: {
      log,
      get refused() {
        return counters.refused;
      },
      accepted,
      rotate() {
        for (const token of seen) revoked.add(token);
      },
      get refuseAll() {
        return counters.refuseAll;
      },
      set refuseAll(value: boolean) {
        counters.refuseAll = value;
      },
    },
  };
}

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

class EchoExecutor implements AgentExecutor {
  constructor(private readonly prefix: string) {}
  cancelTask = async (): Promise<void> => undefined;
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const input = ctx.userMessage.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join(' ');
    const message: Message = { messageId: randomUUID(), contextId: ctx.contextId, taskId: '', role: Role.ROLE_AGENT, parts: [text(`${this.prefix}: ${input}`)], metadata: undefined, extensions: [], referenceTaskIds: [] };
    bus.publish(AgentEvent.message(message));
    bus.finished();
  }
}

/** An @a2a-js/sdk 1.3 peer (A2A 1.0, JSON-RPC) that demands the IdP's tokens. */
export async function startSecured1x(idp: RunningIdp, options: { prefix?: string; protectCard?: boolean } = {}): Promise<SecuredPeer> {
  const { app, peer, setOrigin } = securedBase(idp, options.protectCard ?? false);
  const { server, port } = await listen(app);
  const baseUrl = `http://127.0.0.1:${port}/`;
  setOrigin(`http://127.0.0.1:${port}`);
  const rpcUrl = `${baseUrl}a2a/jsonrpc`;
  const card = AgentCard.toJSON(
    AgentCard.fromJSON({
      name: 'Billing Agent',
      description: 'Answers billing questions.',
      version: '1.0.0',
      supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'billing', name: 'Billing', description: 'Billing questions.', tags: ['billing'] }],
    }),
  ) as Record<string, unknown>;
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), new EchoExecutor(options.prefix ?? 'billing'));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card as unknown as AgentCard }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return Object.defineProperties(peer, Object.getOwnPropertyDescriptors({ baseUrl, origin: `http://127.0.0.1:${port}`, cardUrl: `${baseUrl}.well-known/agent-card.json`, port, close: closer(server) })) as SecuredPeer;
}

/** An @a2a-js/sdk 0.3.14 peer (A2A 0.3, what ADK's RemoteA2AAgent calls) that demands the IdP's tokens. */
export async function startSecured0314(idp: RunningIdp, options: { prefix?: string } = {}): Promise<SecuredPeer> {
  const { app, peer, setOrigin } = securedBase(idp, false);
  const { server, port } = await listen(app);
  const baseUrl = `http://127.0.0.1:${port}/`;
  setOrigin(`http://127.0.0.1:${port}`);
  const prefix = options.prefix ?? 'warranty';
  const card: AgentCard0314 = {
    name: 'Warranty Agent',
    description: 'Answers warranty questions.',
    url: baseUrl,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { idp: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: idp.tokenUrl, scopes: {} } } } },
    security: [{ idp: [] }],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'warranty', name: 'Warranty', description: 'Warranty questions.', tags: ['warranty'] }],
  };
  const executor = {
    cancelTask: async (): Promise<void> => undefined,
    async execute(ctx: Ctx0314, bus: Bus0314): Promise<void> {
      const input = ctx.userMessage.parts.flatMap((p) => (p.kind === 'text' ? [p.text] : [])).join(' ');
      bus.publish({ kind: 'message', role: 'agent', messageId: randomUUID(), parts: [{ kind: 'text', text: `${prefix}: ${input}` }], contextId: ctx.contextId });
      bus.finished();
    },
  };
  const requestHandler = new sdk0314.DefaultRequestHandler(card, new sdk0314.InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', sdk0314Express.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(sdk0314Express.jsonRpcHandler({ requestHandler, userBuilder: sdk0314Express.UserBuilder.noAuthentication }));
  return Object.defineProperties(peer, Object.getOwnPropertyDescriptors({ baseUrl, origin: `http://127.0.0.1:${port}`, cardUrl: `${baseUrl}.well-known/agent-card.json`, port, close: closer(server) })) as SecuredPeer;
}

export interface PlainServer {
  baseUrl: string;
  origin: string;
  readonly log: readonly LoggedRequest[];
  close(): Promise<void>;
}

/** A server on another origin that answers everything 200 and logs what it got. */
export async function startPlainServer(): Promise<PlainServer> {
  const log: LoggedRequest[] = [];
  const server = http.createServer((req, res) => {
    log.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end('{"name":"plain"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl: `${origin}/`, origin, log, close: closer(server) };
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
