/**
 * The HTTP API: JSON routes over the loop, the cache, the trees and the sessions; the SSE feed;
 * `/metrics`; `/healthz` and `/readyz`; the AI Catalog at `/.well-known/ard.json` and `/.well-known/ai-catalog.json` when
 * enabled; and the dashboard's static files at `/`.
 *
 * Every request first passes the request guard (request-guard.ts: Host allowlist, Origin, JSON
 * content type, bearer token or a person's OIDC token), then the role its route needs
 * (each declared on its route, route.ts: viewer, operator, admin); bodies are read under per-route caps and the event stream is
 * bounded (event-stream-route.ts). Inspections, new sessions and chat turns are counted per client
 * beside the global caps (fair shares, `shareOf`). docs/security.md describes the model.
 */
import type { IncomingMessage } from 'node:http';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Registry } from 'prom-client';
import type { SessionRunner, TreeFactory, TurnResult } from 'a2a-discovery/adk';
import { checkSessionId, SESSION_ID_PATTERN } from 'a2a-discovery/adk';
import type { CardCache, DiscoveryLoop, EventStream, RoutingVerdict, Snapshot } from 'a2a-discovery';
import { activeTraceIds, CATALOG_WELL_KNOWN_PATHS } from 'a2a-discovery/internal';
import type { ActionActor, ActionEvent, EventInput } from 'a2a-discovery/internal';
import { isDiscoveryError, diffSnapshots } from 'a2a-discovery';
import type { TraceInputs } from 'a2a-discovery/explorer';
import { DEFAULT_TRACE_INPUTS, runTrace } from 'a2a-discovery/explorer';
import type { StoreStatus, ReplicaStatus } from '@a2a-discovery/store';
import { AI_CATALOG_LINK, type AiCatalogRoute } from './ai-catalog-route.js';
import { chatTurnReply } from './chat-turn-reply.js';
import type { EventBuffer } from './event-buffer.js';
import type { FollowerProxy, LeaderPath } from '../replica/follower-proxy.js';
import type { ReplicaAuth } from '../auth/replica-auth.js';
import type { Inspector } from './inspector.js';
import { parseInspectInput } from './inspector.js';
import type { JournalReader } from '../telemetry/journal.js';
import { parseActivityQuery, parseJournalQuery } from '../telemetry/journal.js';
import { EventStreamHub } from './event-stream-route.js';
import type { Drain } from './drain.js';
import { DRAIN_RETRY_AFTER_S } from './drain.js';
import type { OnRefusal, RefusalReason, ServerLimits } from './limits.js';
import { DEFAULT_SERVER_LIMITS, sessionsPerClient } from './limits.js';
import type { ClientIdentityOptions } from './client-identity.js';
import { clientIdentity } from './client-identity.js';
import type { PoolNames, PoolRefusal } from './fair-pool.js';
import { describeRefusal, FairPool } from './fair-pool.js';
import { readJsonBody } from './read-json-body.js';
import { sourcesJson } from './sources-json.js';
import { serverSpans } from '../telemetry/server-spans.js';
import type { Actor } from '../auth/request-guard.js';
import { actorOf, presentsToken, requestGuard, roleOf } from '../auth/request-guard.js';
import type { PeopleAuth, Role } from '../auth/people-auth.js';
import { ROLES } from '../auth/people-auth.js';
import type { SnapshotArchive } from '../assembly/snapshot-archive.js';
import type { ReloadResult } from '../assembly/reload-result.js';
import type { RegistryApiOptions } from '../registry/routes.js';
import type { HeavyWork } from '../registry/routes.js';
import { mountRegistry, REGISTRY_BASE } from '../registry/routes.js';
import { mountMcp } from '../registry/mcp.js';
import { assertRolesDeclared, json, routeToolkit } from './route.js';
import { openApiHandler, OPENAPI_PATH } from './openapi.js';
import { resolver } from 'hono-openapi';
import {
  ActivitySchema, AnyObjectSchema, CachedCardSchema, ChatReplySchema, ChatRequestSchema, ConfirmedSchema, DiffSchema, EndedSchema, EndpointsSchema, EventsSchema, HealthzSchema,
  InspectRequestSchema, InspectResultSchema, JournalPageSchema, ProblemSchema, PublishedSchema, ReadyzSchema, ReloadSchema, SessionsSchema, SessionUpgradeSchema, SnapshotSchema,
  SnapshotsSchema, SourcesSchema, TraceSchema, WhoamiSchema,
} from './schemas.js';
import { VERSION } from '../version.js';
import type { Caller, SessionOwners } from '../auth/session-owners.js';
import type { A2aSettings } from './a2a/routes.js';
import { mountA2a } from './a2a/routes.js';
import { CLIENT_COOKIE, newToken, personKey, SESSION_SECRET_HEADER } from '../auth/session-owners.js';

export interface AppOptions {
  loop: DiscoveryLoop;
  cache: CardCache;
  trees: TreeFactory;
  sessions: SessionRunner;
  /** Who owns each session started through the API. */
  owners: SessionOwners;
  buffer: EventBuffer;
  archive: SnapshotArchive;
  metrics: Registry;
  token?: string;
  /** People with OIDC tokens and roles (`server.oidc`; people-auth.ts). */
  people?: PeopleAuth;
  /** Where who-did-what is told (`api.action` events, journaled); none: not recorded. */
  events?: EventStream;
  /** The address the server listens on; with `allowedHosts`, the Host names it answers to. Default `127.0.0.1`. */
  bindHost?: string;
  /** Extra Host names (a reverse proxy's). */
  allowedHosts?: readonly string[];
  /** Extra origins allowed to make non-GET calls. */
  allowedOrigins?: readonly string[];
  /** A trace viewer's URL with `{traceId}` (`server.telemetry.traceUrl`), told to the dashboard by `/api/whoami`. */
  traceUrl?: string;
  /**
   * Body, stream and queue limits; defaults {@link DEFAULT_SERVER_LIMITS}. A complete object is
   * kept and read at each request, so a reload that updates it in place (service.ts) bites on the next one.
   */
  limits?: Partial<ServerLimits>;
  /** The event-stream hub (to share its count with metrics); built from `buffer` and `limits` when absent. */
  streams?: EventStreamHub;
  /** Counts each refusal a limit or check causes (the metrics' counter). */
  onRefusal?: OnRefusal;
  /** Who an anonymous caller is (`server.clients`: address prefixes, trusted proxies); client-identity.ts. */
  clients?: Partial<ClientIdentityOptions>;
  /** Serves the dashboard: returns a Response for a path under `/`, or undefined. */
  staticFiles?: (path: string) => Promise<Response | undefined>;
  /** Closes SSE streams on shutdown. */
  shutdownSignal?: AbortSignal;
  /** The graceful drain (drain.ts): `/readyz` unready, new turns refused, streams told to reconnect elsewhere. */
  drain?: Drain;
  /** The state store's status, reported by `/readyz`. */
  storeStatus?: () => StoreStatus;
  /** Pages of the store's journal and per-endpoint cache activity (`/api/journal`, `/api/activity`). */
  journal?: JournalReader;
  /** Several replicas: this one's role, epoch and lag, reported by `/readyz`. */
  replicaStatus?: () => ReplicaStatus;
  /** Several replicas: a follower answers the leader's endpoints, sources and activity through it (follower-proxy.ts). */
  followerProxy?: FollowerProxy;
  /** Several replicas: the replica key, verifying another replica's signed request and signing the answer (replica-auth.ts). */
  replicaAuth?: ReplicaAuth;
  /** Several replicas: restores a session another replica pinned, before it is looked up here. */
  adoptSession?: (sessionId: string) => Promise<void>;
  /** `POST /api/inspect`: what discovery would decide about a URL, card or catalog (404 without it). */
  inspector?: Inspector;
  /** `GET /.well-known/ard.json` and `/.well-known/ai-catalog.json`: the current snapshot as an AI Catalog (404 without it). */
  aiCatalog?: AiCatalogRoute;
  /**
   * The ARD registry API under `/api/registry/` (registry/routes.ts; 404 without it): viewers'
   * (declared on the routes), or everyone's with `anonymous` (`server.registry.anonymous`).
   */
  registry?: Omit<RegistryApiOptions, 'route'> & { anonymous?: boolean };
  /** `POST /api/config/reload` (admin): reads the configuration file again (reload.ts); 404 without it. */
  reload?: () => Promise<ReloadResult>;
  /**
   * The service as an A2A agent (a2a/routes.ts, `server.a2a`): its card at
   * `/.well-known/agent-card.json` and its JSON-RPC endpoint `POST /api/a2a`; 404 without it.
   */
  a2a?: { settings: A2aSettings; vocabulary: ReadonlyArray<{ readonly tag: string; readonly keywords?: readonly string[]; readonly examples?: readonly string[] }>; version: string };
}

/** One chat turn asked of {@link createApp}'s turn function (`POST /api/chat`, the A2A endpoint). */
export interface ChatTurnInput {
  readonly message: string;
  /** The session; a new `s-<uuid>` when undefined. Checked against `SESSION_ID_PATTERN`. */
  readonly sessionId?: unknown;
  /** A new session's snapshot (a retained digest). */
  readonly startOn?: string;
  /** Who drives the session; default the chat caller (person, client cookie, session secret). */
  readonly caller?: Caller;
  /** Awaited once admitted, before the turn runs: false drops it. */
  readonly admitted?: () => Promise<boolean>;
}

/** A turn that ran (it may have failed: `turn.error`). */
export interface ChatTurnDone {
  /** The new session's secret (a session this turn started). */
  readonly secret?: string;
  readonly turn: TurnResult;
}

/** A snapshot for the API: agents with their reviewed fields, card summary and the card itself. */
function snapshotJson(s: Snapshot, routing?: RoutingVerdict): Record<string, unknown> {
  return {
    version: s.version,
    digest: s.digest,
    createdAt: new Date(s.createdAt).toISOString(),
    // Routing domains (two-level trees) and the routing evaluation of this snapshot, when configured.
    ...(s.domains && { domains: s.domains }),
    routing: routing ? { accuracy: routing.accuracy, minAccuracy: routing.minAccuracy, passed: routing.passed, evaluated: routing.evaluated } : null,
    agents: s.agents.map((a) => ({
      localName: a.localName,
      description: a.description,
      tags: a.tags,
      // Routed by its static entry's routingTags: the card's own skill tags, shown, not used.
      ...(a.cardTags !== undefined && { cardTags: a.cardTags }),
      // The card's unroutable interface (0.0.0.0, ::) its static entry's interfaceUrl replaced.
      ...(a.interfaceRewritten !== undefined && { interfaceRewritten: a.interfaceRewritten }),
      critical: a.critical,
      ...(a.domain !== undefined && { domain: a.domain }),
      baseUrl: a.baseUrl,
      sources: a.sources,
      protocolVersion: a.protocolVersion,
      canonicalSha256: a.canonicalSha256,
      // The public card, or the authenticated extended card of an identity (its label, never a secret).
      cardKind: a.cardKind ?? 'public',
      ...(a.identity !== undefined && { identity: a.identity }),
      degraded: a.degraded,
      stale: a.stale,
      card: a.card,
    })),
  };
}

/** An actor as the journal names it (never a token). */
function actionActor(actor: Actor): ActionActor {
  if (actor.kind === 'person') {
    const p = actor.person;
    return { kind: 'person', sub: p.sub, ...(p.name !== undefined && { name: p.name }), ...(p.role !== undefined && { role: p.role }) };
  }
  return actor.kind === 'admin-token' ? { kind: 'admin-token', role: 'admin' } : { kind: 'anonymous' };
}

/** Whether `l` has every limit (the running service's own object, which a reload updates in place). */
function isComplete(l: Partial<ServerLimits> | undefined): l is ServerLimits {
  return l !== undefined && Object.keys(DEFAULT_SERVER_LIMITS).every((k) => l[k as keyof ServerLimits] !== undefined);
}

/** `Retry-After` of a refused new session: pins free when ended or idle, not within seconds. */
const SESSION_RETRY_S = 60;

// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function createApp(o: AppOptions): Hono {
  const app = new Hono();
  const limits: ServerLimits = isComplete(o.limits) ? o.limits : { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const refuse: OnRefusal = o.onRefusal ?? (() => undefined);
  const streams =
    o.streams ??
    new EventStreamHub({
      buffer: o.buffer,
      limits,
      onRefusal: refuse,
      version: () => o.loop.current()?.version ?? 0,
    });
  o.shutdownSignal?.addEventListener('abort', () => streams.closeAll(), { once: true });
  // Draining: every event stream is told to reconnect elsewhere, and new ones are refused.
  o.drain?.started.addEventListener('abort', () => streams.drain(), { once: true });
  // server.registry.anonymous: the registry API answers without a token.
  const openApiPath = o.registry?.anonymous === true ? (path: string) => path.startsWith(`${REGISTRY_BASE}/`) : undefined;

  /** The JSON object body of `c` under `maxBytes`, or the 400/413 response to send instead. */
  const body = async (c: Context, key: 'maxBodyBytes' | 'maxTraceBodyBytes' | 'maxInspectBodyBytes'): Promise<Record<string, unknown> | Response> => {
    const maxBytes = limits[key];
    const read = await readJsonBody(c, maxBytes);
    if (read.ok) return read.value ?? {};
    if (read.tooLarge) {
      refuse('body_bytes');
      c.header('Connection', 'close');
      return c.json({ error: 'payload-too-large', message: `the request body is larger than ${maxBytes} bytes (server.limits.${key})` }, 413);
    }
    return c.json({ error: 'bad-request', message: 'the body must be a JSON object' }, 400);
  };

  // A SERVER span per API request, first, so refusals are traced too (server-spans.ts; a no-op without an SDK).
  app.use('*', serverSpans((path) => path.startsWith('/api/') || CATALOG_WELL_KNOWN_PATHS.includes(path)));

  app.use(
    '*',
    requestGuard({
      bindHost: o.bindHost ?? '127.0.0.1',
      ...(o.allowedHosts && { allowedHosts: o.allowedHosts }),
      ...(o.allowedOrigins && { allowedOrigins: o.allowedOrigins }),
      ...(o.token !== undefined && { token: o.token }),
      ...(o.people && { people: o.people }),
      ...(o.replicaAuth && { replicas: o.replicaAuth }),
      onRefusal: refuse,
      ...(openApiPath && { openApiPath }),
    }),
  );

  // Roles: with a token or people configured, every /api/ route and /metrics needs the role it
  // declares (route.ts); without either (a loopback service), everything stays open as before.
  const guarded = (o.token !== undefined && o.token !== '') || o.people !== undefined;
  const { route, gate } = routeToolkit({ guarded, open: openApiPath, onRefusal: refuse });

  /** Journals who did what (`api.action`). */
  const acted = (c: Context, action: ActionEvent['action'], extra: Omit<EventInput<ActionEvent>, 'type' | 'action' | 'actor'> = {}): void => {
    o.events?.emit({ type: 'api.action', action, actor: actionActor(actorOf(c)), ...extra });
  };

  // Who the caller is and what they may do, for the dashboard's "signed in as": never the token.
  app.get('/api/whoami', ...route('any', { tags: ['people'], summary: 'Who the caller is and what they may do (never the token)', responses: { 200: json('the caller', WhoamiSchema) } }), (c) => {
    const actor = actorOf(c);
    const role = roleOf(actor);
    // On an open service (loopback, no tokens) anyone may do everything but drive others' sessions.
    const may = (r: Role): boolean => (!guarded ? r !== 'admin' : role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(r));
    return c.json({
      kind: actor.kind,
      ...(actor.kind === 'person' && { sub: actor.person.sub, name: actor.person.name ?? null }),
      role: role ?? null,
      can: { read: !guarded || role !== undefined, refresh: may('operator'), inspect: may('operator'), chat: may('operator'), trace: may('viewer'), confirm: !guarded || may('admin'), othersSessions: may('admin') },
      // Where the dashboard links a trace id, when configured (not told to who may read nothing).
      ...((!guarded || role !== undefined) && o.traceUrl !== undefined && { traceUrl: o.traceUrl }),
    });
  });

  // The API's description, generated from the route declarations (route.ts, docs/openapi.json).
  app.get(OPENAPI_PATH, openApiHandler(app));

  app.get('/healthz', ...route('public', { tags: ['health'], summary: 'Liveness', responses: { 200: json('alive', HealthzSchema) } }), (c) => c.json({ ok: true }));
  const tokenBytes = o.token !== undefined && o.token !== '' ? Buffer.from(o.token) : undefined;
  app.get('/readyz', ...route('public', { tags: ['health'], summary: 'Readiness: the first discovery pass finished, not draining', responses: { 200: json('ready', ReadyzSchema), 503: json('not ready (or draining)', ReadyzSchema) } }), (c) => {
    const s = o.storeStatus?.();
    // A failing store degrades the service but does not stop it: it keeps serving from memory.
    // Where the store lives (a file path, a database URL) and its last error only to the token's holder.
    const details = presentsToken(c, tokenBytes);
    const store = s && { kind: s.kind, ok: s.ok, ...(details && { location: s.location, ...(s.lastError !== undefined && { lastError: s.lastError }) }) };
    const r = o.replicaStatus?.();
    const replica = r && { id: r.id, role: r.role, epoch: r.epoch, leader: r.leader, connected: r.connected, digest: r.digest ?? null, storeDigest: r.storeDigest ?? null, inSync: r.inSync, lagMs: r.lagMs, ...(r.refusesToLead !== null && { refusesToLead: r.refusesToLead }) };
    const degraded = (store !== undefined && !store.ok) || (replica !== undefined && !replica.connected);
    const extra = { ...(store && { store }), ...(replica && { replica }), ...(degraded && { degraded: true }) };
    // Draining: unready first, so a load balancer stops sending before anything is refused.
    if (o.drain?.draining === true) return c.json({ ready: false, draining: true, reason: 'the service is draining (shutting down)', ...extra }, 503);
    return o.loop.ready
      ? c.json({ ready: true, version: o.loop.current()?.version ?? 0, ...extra })
      : c.json({ ready: false, reason: 'the first discovery pass has not finished', ...extra }, 503);
  });

  app.get('/metrics', ...route('viewer', { tags: ['health'], summary: 'Prometheus metrics (text exposition format)', responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: { type: 'string' } } } } } }), async (c) => {
    c.header('Content-Type', o.metrics.contentType);
    return c.body(await o.metrics.metrics());
  });

  app.get('/api/snapshot', ...route('viewer', { tags: ['snapshots'], summary: 'The current snapshot: the agents selected, their reviewed fields and cards', responses: { 200: json('the current snapshot', SnapshotSchema), 404: json('nothing published yet', ProblemSchema) } }), (c) => {
    const s = o.loop.current();
    return s ? c.json(snapshotJson(s, o.loop.routingOf(s.digest))) : c.json({ error: 'not-ready', message: 'no snapshot has been published yet' }, 404);
  });

  // Several replicas: who answers, and who leads (the dashboard's sidebar says it).
  const replicaJson = () => {
    const r = o.replicaStatus?.();
    return r ? { id: r.id, role: r.role, epoch: r.epoch, leader: r.leader } : null;
  };
  app.get('/api/snapshots', ...route('viewer', { tags: ['snapshots'], summary: 'The version history and the retained snapshots', responses: { 200: json('history', SnapshotsSchema) } }), (c) =>
    c.json({
      replica: replicaJson(),
      current: o.loop.current()?.digest ?? null,
      held: o.loop.held ?? null,
      history: o.loop.snapshots.history().map((h) => ({ ...h, createdAt: new Date(h.createdAt).toISOString() })),
      retained: o.loop.snapshots.retained(),
    }),
  );

  // Confirms the removal the mass-removal guard holds (admin): the held snapshot is published.
  app.post('/api/snapshots/confirm', ...route('admin', { tags: ['snapshots'], summary: 'Confirm the removal the mass-removal guard holds: publish the held snapshot', responses: { 200: json('published', ConfirmedSchema), 409: json('nothing is held', ProblemSchema) } }), async (c) => {
    const read = await body(c, 'maxBodyBytes');
    if (read instanceof Response) return read;
    const held = o.loop.held;
    if (held === undefined) return c.json({ error: 'nothing-held', message: 'no snapshot is held back: there is no removal to confirm' }, 409);
    const s = await o.loop.confirmRemovals();
    acted(c, 'confirm', { ...(s && { digest: s.digest, version: s.version }) });
    return c.json({ confirmed: held, version: s?.version ?? 0, digest: s?.digest ?? null, held: o.loop.held ?? null });
  });

  app.get('/api/snapshots/:digest', ...route('viewer', { tags: ['snapshots'], summary: 'One retained or archived snapshot by digest', responses: { 200: json('the snapshot', SnapshotSchema), 404: json('not retained', ProblemSchema) } }), (c) => {
    const s = o.archive.get(c.req.param('digest'));
    return s ? c.json(snapshotJson(s, o.loop.routingOf(s.digest))) : c.json({ error: 'not-found', message: 'no such snapshot is retained or archived' }, 404);
  });

  app.get('/api/diff', ...route('viewer', { tags: ['snapshots'], summary: 'What changed between two snapshots (from, to: digests; to defaults to the current)', parameters: [{ name: 'from', in: 'query', schema: { type: 'string' } }, { name: 'to', in: 'query', schema: { type: 'string' } }], responses: { 200: json('the diff', DiffSchema), 404: json('a snapshot is not retained', ProblemSchema) } }), (c) => {
    const from = c.req.query('from');
    const to = c.req.query('to') ?? o.loop.current()?.digest;
    const a = from !== undefined ? o.archive.get(from) : undefined;
    const b = to !== undefined ? o.archive.get(to) : undefined;
    if ((from !== undefined && !a) || !b) return c.json({ error: 'not-found', message: 'both snapshots must be retained or archived' }, 404);
    return c.json(diffSnapshots(a, b));
  });

  /**
   * On a follower, the leader's answer (or the 503 saying it cannot be had); undefined where this
   * replica answers itself: it leads, or runs alone. A follower's own request is answered by the
   * leader itself, and refused by a replica that no longer leads (its lists would be empty).
   */
  const fromLeader = async (c: Context, path: LeaderPath): Promise<Response | undefined> => {
    const r = o.replicaStatus?.();
    if (r === undefined) return undefined;
    if (actorOf(c).kind === 'replica') {
      return r.role === 'leader' ? undefined : c.json({ error: 'not-leader', message: `replica ${r.id} does not lead (epoch ${r.epoch})` }, 503);
    }
    const answer = await o.followerProxy?.answer(path, new URL(c.req.url).search);
    if (answer === undefined) return undefined;
    if (answer.status === 503) {
      refuse('leader_unreachable');
      c.header('Retry-After', '2');
    }
    return c.json(answer.body, answer.status);
  };
  const servedBy = () => {
    const id = o.replicaStatus?.().id;
    return id === undefined ? {} : { servedBy: id };
  };

  app.get('/api/endpoints', ...route('viewer', { tags: ['endpoints'], summary: 'Every endpoint discovery knows, with its verdict, cache entry, health and access', responses: { 200: json('endpoints', EndpointsSchema), 503: json('a follower cannot reach the leader', ProblemSchema) } }), async (c) => (await fromLeader(c, '/api/endpoints')) ?? c.json({ endpoints: await o.loop.status(), ...servedBy() }));

  // What each source is doing: state, error, problems by path, and an AI Catalog source's documents.
  app.get('/api/sources', ...route('viewer', { tags: ['sources'], summary: 'What each source is doing: state, error, problems by path', responses: { 200: json('sources', SourcesSchema), 503: json('a follower cannot reach the leader', ProblemSchema) } }), async (c) => (await fromLeader(c, '/api/sources')) ?? c.json({ ...sourcesJson(o.loop.sources), ...servedBy() }));

  app.get('/api/endpoints/card', ...route('viewer', { tags: ['endpoints'], summary: "An endpoint's cached card and entry", parameters: [{ name: 'url', in: 'query', required: true, schema: { type: 'string' } }], responses: { 200: json('the cached card', CachedCardSchema), 400: json('url missing', ProblemSchema), 404: json('nothing cached', ProblemSchema) } }), async (c) => {
    const url = c.req.query('url');
    if (!url) return c.json({ error: 'bad-request', message: 'query parameter url is required' }, 400);
    const leader = await fromLeader(c, '/api/endpoints/card');
    if (leader) return leader;
    try {
      const entry = await o.cache.peek(url);
      if (!entry) return c.json({ error: 'not-found', message: 'no card is cached for this endpoint', lastFailure: o.cache.lastFailure(url)?.error.toJSON() ?? null }, 404);
      return c.json({ baseUrl: entry.baseUrl, cardUrl: entry.cardUrl, body: entry.body, warnings: entry.warnings, lastError: entry.lastError ?? null, card: entry.card, ...servedBy() });
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  // The admin token, or a person with the admin role, may drive others' sessions. Without either
  // configured, nobody is an admin (sessions belong to their browser or secret).
  const callerOf = (c: Context, issue = false): Caller => {
    const actor = actorOf(c);
    const admin = roleOf(actor) === 'admin';
    if (actor.kind === 'person') {
      const secret = c.req.header(SESSION_SECRET_HEADER);
      return { admin, person: personKey(actor.person.issuer, actor.person.sub), ...(secret !== undefined && { secret }) };
    }
    let clientId = getCookie(c, CLIENT_COOKIE);
    if (clientId !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(clientId)) clientId = undefined;
    if (clientId === undefined && issue) {
      clientId = newToken();
      setCookie(c, CLIENT_COOKIE, clientId, { httpOnly: true, sameSite: 'Strict', path: '/api' });
    }
    const secret = c.req.header(SESSION_SECRET_HEADER);
    return { admin, ...(clientId !== undefined && { clientId }), ...(secret !== undefined && { secret }) };
  };
  /**
   * The 400/403/404 response when `caller` may not drive the session `id`, else undefined. With
   * `hideOwned` (upgrade, end) someone else's session answers exactly as an unknown id does, so ids
   * cannot be probed; a chat turn says 403, as it would otherwise start the id afresh.
   */
  const sessionRefusal = (c: Context, id: string, caller: Caller, hideOwned = false): Response | undefined => {
    try {
      checkSessionId(id);
    } catch (err) {
      return errorResponse(c, err);
    }
    const unknown = o.trees.digestOf(id) === undefined && !o.owners.claimed(id);
    if (!unknown && o.owners.allows(id, caller)) return undefined;
    if (!unknown) refuse('session_owner');
    if (unknown || hideOwned) return c.json({ error: 'not-found', message: `session ${id} is not pinned, or not yours (it never started, ended, idled out, or belongs to another caller)` }, 404);
    return c.json({ error: 'forbidden', message: `session ${id} belongs to another caller (present its X-Session-Secret, or an admin's token)` }, 403);
  };

  /**
   * The fair-share key of a request (client-identity.ts; docs/security.md, "Fair pools"): the person
   * or the admin token (its client cookie telling its browsers apart), else the remote network
   * (`server.clients`): an anonymous caller can mint as many cookies as it likes, not addresses.
   */
  const clientOf = clientIdentity(o.clients);
  const shareOf = (c: Context): string => {
    const actor = actorOf(c);
    if (actor.kind === 'person') return clientOf({ kind: 'person', issuer: actor.person.issuer, sub: actor.person.sub });
    if (actor.kind === 'replica') return clientOf({ kind: 'replica', id: actor.replica });
    if (actor.kind === 'admin-token') {
      const clientId = callerOf(c).clientId;
      return clientOf({ kind: 'admin-token', ...(clientId !== undefined && { clientId }) });
    }
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    return clientOf({ kind: 'anonymous', remoteAddress: incoming?.socket.remoteAddress, forwardedFor: c.req.header('x-forwarded-for') });
  };
  // Global pools shared fairly across clients (fair-pool.ts); their limits are read at each request.
  const inspecting = new FairPool(() => ({ capacity: limits.maxInspections, perClient: limits.maxInspectionsPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
  const turning = new FairPool(() => ({ capacity: limits.maxTurns, perClient: limits.maxTurnsPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
  o.shutdownSignal?.addEventListener('abort', () => (inspecting.close(), turning.close()), { once: true });
  /** The 429 of a limit: counted, with `Retry-After` (seconds) and the limit's name in the body. */
  const tooMany = (c: Context, reason: RefusalReason, limit: string, retryAfterS: number, message: string, error = 'too-many-requests'): Response => {
    refuse(reason);
    c.header('Retry-After', String(retryAfterS));
    return c.json({ error, limit, retryAfterS, message: `${message} (${limit})` }, 429);
  };
  /** The answer to a pool's refusal (fair-pool.ts): the 429 naming the limit that bit, or 503 when the caller went away while it waited. */
  const poolRefused = (c: Context, why: PoolRefusal, pool: PoolNames & { reason: RefusalReason; perClientReason: RefusalReason; retryAfterS: number }): Response => {
    if (why === 'aborted') return c.json({ error: 'aborted', message: 'the request ended while it waited for a slot' }, 503);
    const r = describeRefusal(why, pool);
    return tooMany(c, r.perClient ? pool.perClientReason : pool.reason, r.limit, pool.retryAfterS, r.message);
  };

  app.get('/api/sessions', ...route('viewer', { tags: ['sessions'], summary: 'The sessions the caller may see, with their pinned snapshots', responses: { 200: json('sessions', SessionsSchema) } }), (c) => {
    const caller = callerOf(c);
    const visible = o.trees.sessions().flatMap((s) => {
      const seen = o.owners.visibility(s.sessionId, caller);
      return seen === undefined ? [] : [{ ...s, owned: seen === 'own' }];
    });
    return c.json({
      sessions: visible,
      // Sessions other API callers own: counted, never named.
      others: o.trees.sessions().length - visible.length,
      builtDigests: o.trees.builtDigests,
      retained: o.loop.snapshots.retained(),
    });
  });

  app.get('/api/events', ...route('viewer', { tags: ['events'], summary: 'Recent discovery events after a sequence number', parameters: [{ name: 'since', in: 'query', schema: { type: 'integer', minimum: 0 } }], responses: { 200: json('events', EventsSchema), 400: json('since is not a number', ProblemSchema) } }), (c) => {
    const raw = c.req.query('since');
    // A number where a number belongs: `?since=abc` is a 400 naming it, not "from the start".
    if (raw !== undefined && !/^\d{1,15}$/.test(raw)) return c.json({ error: 'bad-request', message: `query parameter since must be a non-negative integer (an event's seq), got ${JSON.stringify(raw.slice(0, 40))}` }, 400);
    return c.json({ events: o.buffer.since(raw === undefined ? 0 : Number(raw)) });
  });

  // The whole story, page by page back to the retention horizon (journal.ts).
  app.get('/api/journal', ...route('viewer', { tags: ['events'], summary: "A page of the store's journal, newest first", parameters: [{ name: 'before', in: 'query', schema: { type: 'string' } }, { name: 'limit', in: 'query', schema: { type: 'integer' } }, { name: 'types', in: 'query', schema: { type: 'string' } }], responses: { 200: json('a page', JournalPageSchema), 400: json('a bad query', ProblemSchema), 404: json('no journal', ProblemSchema) } }), async (c) => {
    if (!o.journal) return c.json({ error: 'not-found', message: 'this service has no journal' }, 404);
    const q = parseJournalQuery({ before: c.req.query('before'), limit: c.req.query('limit'), types: c.req.query('types') });
    if (typeof q === 'string') return c.json({ error: 'bad-request', message: q }, 400);
    // Where the event stream stands before the page is read: a page that follows the stream from
    // here misses nothing between its read and its stream (`Last-Event-ID: streamSeq`).
    const streamSeq = o.buffer.newestSeq;
    return c.json({ ...(await o.journal.page(q)), streamSeq });
  });
  // Cache chatter as counts, and with ?bucketMs=&from= as rate series per endpoint (the timeline's rate strip);
  // one page of endpoints (?limit=, ?after= the previous page's nextAfter).
  app.get('/api/activity', ...route('viewer', { tags: ['events'], summary: 'Cache activity per endpoint, as counts or rate series', parameters: [{ name: 'from', in: 'query', schema: { type: 'string' } }, { name: 'bucketMs', in: 'query', schema: { type: 'integer' } }, { name: 'limit', in: 'query', schema: { type: 'integer' } }, { name: 'after', in: 'query', schema: { type: 'string' } }], responses: { 200: json('activity', ActivitySchema), 400: json('a bad query', ProblemSchema), 404: json('no journal', ProblemSchema) } }), async (c) => {
    if (!o.journal) return c.json({ error: 'not-found', message: 'this service has no journal' }, 404);
    const q = parseActivityQuery({ from: c.req.query('from'), bucketMs: c.req.query('bucketMs'), limit: c.req.query('limit'), after: c.req.query('after') });
    if (typeof q === 'string') return c.json({ error: 'bad-request', message: q }, 400);
    const leader = await fromLeader(c, '/api/activity');
    if (leader) return leader;
    return c.json({ ...(await o.journal.activity(q)), ...servedBy() });
  });

  // Reload: 200 with what changed when applied, 422 with every problem (and its line) when refused.
  app.post('/api/config/reload', ...route('admin', { tags: ['config'], summary: 'Read the configuration file again and apply it, or refuse it with every problem', responses: { 200: json('applied', ReloadSchema), 404: json('not started from a file', ProblemSchema), 422: json('refused; the running configuration keeps serving', ProblemSchema) } }), async (c) => {
    const read = await body(c, 'maxBodyBytes');
    if (read instanceof Response) return read;
    if (o.reload === undefined) return c.json({ error: 'not-found', message: 'this service was not started from a configuration file (a2a-discovery serve --config)' }, 404);
    const r = await o.reload();
    // Who asked, journaled next to the config.reloaded or config.refused event the reload made.
    acted(c, 'config.reload', { ...(r.version !== undefined && { version: r.version }) });
    if (!r.applied) return c.json({ error: 'config-refused', message: 'the configuration was refused; the running one keeps serving', sha256: r.sha256, changed: r.changed, problems: r.problems }, 422);
    return c.json({ applied: true, sha256: r.sha256, changed: r.changed, version: r.version ?? o.loop.current()?.version ?? 0 });
  });

  app.post('/api/refresh', ...route('operator', { tags: ['snapshots'], summary: 'Run a discovery cycle now', responses: { 200: json('the snapshot after it', PublishedSchema) } }), async (c) => {
    const read = await body(c, 'maxBodyBytes');
    if (read instanceof Response) return read;
    const s = await o.loop.refreshNow();
    acted(c, 'refresh', { ...(s && { digest: s.digest, version: s.version }) });
    return c.json({ version: s?.version ?? 0, digest: s?.digest ?? null });
  });

  /** Draining: the 503 refusing a new session or turn (the ones in flight finish; drain.ts), else undefined. */
  const drainingRefusal = (c: Context): Response | undefined => {
    if (o.drain?.draining !== true) return undefined;
    refuse('draining');
    c.header('Retry-After', String(DRAIN_RETRY_AFTER_S));
    c.header('Connection', 'close');
    return c.json({ error: 'draining', retryAfterS: DRAIN_RETRY_AFTER_S, message: 'the service is shutting down and takes no new session or turn; send it again (another replica will answer)' }, 503);
  };

  /**
   * One chat turn, for `POST /api/chat` and the A2A endpoint (a2a/routes.ts): a slot of the turn
   * pool (the client's fair share), the session's owner check — or its claim, within the client's
   * share of sessions — then the turn on the session's pinned snapshot, and the slot freed. A
   * refusal is the response `POST /api/chat` sends (the A2A endpoint makes it a JSON-RPC error).
   * `admitted`, when given, is awaited once the turn is admitted and before it runs: false drops
   * the turn (its new session is not kept).
   */
  const chatTurn = async (c: Context, t: ChatTurnInput): Promise<ChatTurnDone | Response> => {
    const share = shareOf(c);
    const slot = await turning.acquire(share, c.req.raw.signal);
    if (!slot.ok) return poolRefused(c, slot.reason, { what: 'chat turn', capacity: limits.maxTurns, perClient: limits.maxTurnsPerClient, capacityKey: 'server.limits.maxTurns', perClientKey: 'server.limits.maxTurnsPerClient', waitMs: limits.queueWaitMs, reason: 'turns', perClientReason: 'turns_per_client', retryAfterS: 1 });
    const caller = t.caller ?? callerOf(c, true);
    // A turn in flight when the drain begins finishes, or is aborted past server.drainTimeoutMs.
    const left = o.drain?.enter();
    const sessionId = t.sessionId === undefined ? `s-${crypto.randomUUID()}` : t.sessionId;
    const startOn = t.startOn;
    let secret: string | undefined;
    try {
      checkSessionId(sessionId);
      await o.adoptSession?.(sessionId);
      const existing = o.trees.digestOf(sessionId) !== undefined || o.owners.claimed(sessionId);
      // A client's share of sessions never reaches a lowered global cap (limits.ts).
      const perClient = sessionsPerClient(limits.maxSessionsPerClient, o.trees.maxSessions);
      if (existing) {
        const refused = sessionRefusal(c, sessionId, caller);
        if (refused) return refused;
        if (startOn !== undefined && startOn !== o.trees.digestOf(sessionId)) {
          return c.json({ error: 'ERR_SESSION_INVALID', message: 'only a new session can start on another snapshot (omit sessionId)' }, 400);
        }
      } else if (o.owners.held(share) >= perClient) {
        const lowered = perClient < limits.maxSessionsPerClient ? ` (server.limits.maxSessionsPerClient, held to half of sessions.maxSessions ${o.trees.maxSessions})` : '';
        return tooMany(c, 'sessions_per_client', 'server.limits.maxSessionsPerClient', SESSION_RETRY_S, `this client holds ${perClient} session(s)${lowered}; end one (DELETE /api/sessions/:id) or wait for an idle one to expire`);
      } else secret = o.owners.claim(sessionId, caller, share);
      if (t.admitted !== undefined && !(await t.admitted())) {
        if (secret !== undefined) o.owners.release(sessionId);
        return c.json({ error: 'aborted', message: 'the request ended before its turn ran' }, 503);
      }
      // The request's signal aborts when its client goes away: the turn's A2A requests are cut and
      // its slot is freed at once (SessionRunner.run).
      const signal = o.drain ? AbortSignal.any([c.req.raw.signal, o.drain.abortSignal]) : c.req.raw.signal;
      const turn = await o.sessions.run(sessionId, t.message.slice(0, 4_000), { signal, ...(startOn !== undefined && { startOn }) });
      if (turn.aborted === true) {
        refuse('turn_aborted');
        if (o.drain?.abortSignal.aborted === true) {
          o.drain.abortedOne();
          c.header('Retry-After', String(DRAIN_RETRY_AFTER_S));
        }
        // A session this turn started is not kept: its client never learnt its secret or cookie.
        // An existing one stays usable; its history keeps the user message, without a reply.
        if (secret !== undefined) await o.sessions.end(sessionId);
        return c.json({ error: 'aborted', message: turn.error ?? 'the client went away' }, 503);
      }
      return { ...(secret !== undefined && { secret }), turn };
    } catch (err) {
      // A session that could not start (not ready, the session cap) is not kept.
      if (secret !== undefined && typeof sessionId === 'string' && o.trees.digestOf(sessionId) === undefined) o.owners.release(sessionId);
      if (isDiscoveryError(err) && err.code === 'ERR_SESSION_LIMIT') {
        return tooMany(c, 'sessions', 'sessions.maxSessions', SESSION_RETRY_S, err.message.replace(/ \(sessions\.maxSessions\)/, ''), err.code);
      }
      return errorResponse(c, err);
    } finally {
      slot.release();
      left?.();
    }
  };

  app.post('/api/chat', ...route('operator', { tags: ['sessions'], summary: 'One chat turn on a session pinned to its snapshot', requestBody: { required: true, content: { 'application/json': { schema: resolver(ChatRequestSchema) } } }, responses: { 200: json('the reply', ChatReplySchema), 400: json('a bad body', ProblemSchema), 403: json('another caller owns the session', ProblemSchema), 413: json('the body is too large', ProblemSchema), 429: json('a limit of turns or sessions', ProblemSchema), 502: json('the agent it called failed', ProblemSchema), 503: json('draining, or the client went away', ProblemSchema) } }), async (c) => {
    // Draining: no new session or turn; the ones in flight finish (drain.ts).
    const draining = drainingRefusal(c);
    if (draining) return draining;
    const read = await body(c, 'maxBodyBytes');
    if (read instanceof Response) return read;
    if (typeof read.message !== 'string' || read.message.trim() === '') {
      return c.json({ error: 'bad-request', message: 'a JSON body {"message": "...", "sessionId"?: "..."} is required' }, 400);
    }
    // A new session may start on a retained snapshot (its digest), to compare two snapshots' answers.
    const startOn = typeof read.snapshot === 'string' && read.snapshot !== '' ? read.snapshot : undefined;
    const done = await chatTurn(c, { message: read.message, sessionId: read.sessionId, ...(startOn !== undefined && { startOn }) });
    if (done instanceof Response) return done;
    const { secret, turn } = done;
    // 502 `agent-failed` when the agent it called failed; the session is kept either way (chat-turn-reply.ts).
    const reply = chatTurnReply(turn, { sessionSecret: secret, version: o.loop.snapshots.get(turn.digest)?.version ?? null, traceId: activeTraceIds()?.traceId ?? null });
    return c.json(reply.body, reply.status);
  });

  app.post('/api/sessions/:id/upgrade', ...route('operator', { tags: ['sessions'], summary: 'Move a session to the current snapshot (force: even when its agent left)', responses: { 200: json('upgraded', SessionUpgradeSchema), 403: json('another caller owns the session', ProblemSchema), 404: json('no such session', ProblemSchema) } }), async (c) => {
    const read = await body(c, 'maxBodyBytes');
    if (read instanceof Response) return read;
    const id = c.req.param('id');
    if (SESSION_ID_PATTERN.test(id)) await o.adoptSession?.(id);
    const refused = sessionRefusal(c, id, callerOf(c), true);
    if (refused) return refused;
    try {
      const upgraded = await o.sessions.upgrade(id, { force: read.force === true });
      acted(c, 'session.upgrade', { sessionId: id, digest: o.trees.digestOf(id) ?? '' });
      return c.json(upgraded);
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.delete('/api/sessions/:id', ...route('operator', { tags: ['sessions'], summary: 'End a session (its pin is freed)', responses: { 200: json('ended', EndedSchema), 403: json('another caller owns the session', ProblemSchema) } }), async (c) => {
    const id = c.req.param('id');
    if (SESSION_ID_PATTERN.test(id)) await o.adoptSession?.(id);
    const refused = sessionRefusal(c, id, callerOf(c), true);
    if (refused) return refused;
    await o.sessions.end(id);
    acted(c, 'session.end', { sessionId: id });
    return c.json({ ended: true });
  });

  app.get('/api/stream', ...route('viewer', { tags: ['events'], summary: 'The live event stream (Server-Sent Events; resume with Last-Event-ID)', responses: { 200: { description: 'an event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, 429: json('too many streams', ProblemSchema) } }), (c) => streams.handle(c, shareOf(c)));

  // The discovery-trace explorer: the seed's experiment run by the real cache, validator and
  // matcher on a virtual clock (no network). POST the inputs (any subset of TraceInputs).
  app.post('/api/trace', ...route('viewer', { tags: ['inspect'], summary: 'The discovery-trace explorer: the real cache on a model clock (no network)', requestBody: { content: { 'application/json': { schema: resolver(AnyObjectSchema) } } }, responses: { 200: json('the trace', TraceSchema), 400: json('bad inputs', ProblemSchema), 413: json('the body is too large', ProblemSchema) } }), async (c) => {
    const read = await body(c, 'maxTraceBodyBytes');
    if (read instanceof Response) return read;
    try {
      return c.json(await runTrace(read as Partial<TraceInputs>));
    } catch (err) {
      return errorResponse(c, err);
    }
  });
  app.get('/api/trace/defaults', ...route('viewer', { tags: ['inspect'], summary: "The trace explorer's default inputs", responses: { 200: json('the defaults', TraceSchema) } }), (c) => c.json(DEFAULT_TRACE_INPUTS));

  // The inspector: what `probe` prints, under the service's allowlist and limits (inspector.ts).
  app.post('/api/inspect', ...route('operator', { tags: ['inspect'], summary: 'What discovery would decide about a URL, a card or a catalog (as probe prints it)', requestBody: { required: true, content: { 'application/json': { schema: resolver(InspectRequestSchema) } } }, responses: { 200: json('the report', InspectResultSchema), 400: json('a bad body', ProblemSchema), 413: json('the body is too large', ProblemSchema), 429: json('inspections are busy', ProblemSchema) } }), async (c) => {
    const read = await body(c, 'maxInspectBodyBytes');
    if (read instanceof Response) return read;
    if (!o.inspector) return c.json({ error: 'not-found', message: 'this service has no inspector' }, 404);
    const input = parseInspectInput(read);
    if (typeof input === 'string') return c.json({ error: 'bad-request', message: input }, 400);
    const busy = (): Response => tooMany(c, 'inspections', 'server.limits.maxInspections', 5, `${limits.maxInspections} inspection(s) are already running; try again shortly`);
    // A slot of the pool, shared fairly: the caller's own share, waiting its turn when others hold the rest.
    const slot = await inspecting.acquire(shareOf(c), c.req.raw.signal);
    if (!slot.ok) return poolRefused(c, slot.reason, { what: 'inspection', capacity: limits.maxInspections, perClient: limits.maxInspectionsPerClient, capacityKey: 'server.limits.maxInspections', perClientKey: 'server.limits.maxInspectionsPerClient', waitMs: limits.queueWaitMs, reason: 'inspections', perClientReason: 'inspections_per_client', retryAfterS: 5 });
    try {
      // The request's signal aborts when its client goes away: the inspection stops and frees its slot.
      const result = await o.inspector.inspect(input, c.req.raw.signal);
      if (result !== undefined) acted(c, 'inspect');
      return result !== undefined ? c.json(result) : busy();
    } catch (err) {
      return errorResponse(c, err);
    } finally {
      slot.release();
    }
  });

  // Public metadata, like an agent card: outside /api/, so no bearer token is asked (request-guard.ts).
  const aiCatalog = o.aiCatalog;
  if (aiCatalog) {
    // ARD 0.91's manifest location and its predecessor's: one document.
    const catalogSpec = {
      tags: ['catalog'],
      summary: 'The current snapshot as an AI Catalog: the ARD 0.91 manifest (ard.json) and its predecessor (ai-catalog.json), one document',
      responses: {
        200: { description: 'the catalog', content: { 'application/ai-catalog+json': { schema: { type: 'object' as const, required: ['specVersion', 'entries'] } } } },
        304: { description: 'not modified (If-None-Match)' },
        503: json('nothing published yet', ProblemSchema),
      },
    };
    for (const path of CATALOG_WELL_KNOWN_PATHS) app.get(path, ...route('public', catalogSpec), (c) => aiCatalog.handle(c));
    // Where the catalog is, for readers that start at the site (ARD §6.1): robots.txt's Agentmap line, and a Link header on every page.
    app.get('/robots.txt', ...route('public', { tags: ['catalog'], summary: "robots.txt with the Agentmap line naming the manifest (ARD 0.91)", responses: { 200: { description: 'robots.txt', content: { 'text/plain': { schema: { type: 'string' } } } } } }), (c) => aiCatalog.robots(c));
    app.use('*', async (c, next) => {
      await next();
      c.res.headers.append('link', AI_CATALOG_LINK);
    });
  }

  // The service as an A2A agent: each contextId a chat session, its turns through chatTurn (a2a/).
  if (o.a2a) {
    // An A2A session belongs to who started it: the person, else the client (the token's holder, or the network).
    const a2aOwner = (c: Context): string => {
      const actor = actorOf(c);
      return actor.kind === 'person' ? personKey(actor.person.issuer, actor.person.sub) : `a2a ${shareOf(c)}`;
    };
    mountA2a(app, {
      settings: o.a2a.settings,
      loop: o.loop,
      card: { version: o.a2a.version, vocabulary: o.a2a.vocabulary, auth: { token: tokenBytes !== undefined, ...(o.people && { oidcIssuer: o.people.issuer }) } },
      chatTurn,
      callerOf: (c) => {
        const actor = actorOf(c);
        const admin = roleOf(actor) === 'admin';
        return actor.kind === 'person' ? { admin, person: a2aOwner(c) } : { admin, clientId: a2aOwner(c) };
      },
      ownerOf: a2aOwner,
      draining: drainingRefusal,
      readBody: (c) => body(c, 'maxBodyBytes'),
      route,
    });
  }

  // The ARD registry API: search, explore, list and the change feed (registry/routes.ts, docs/registry-api.md).
  // Their heavy part (a search's first page, an explore) runs in a fair pool of its own.
  const registry = o.registry;
  if (registry) {
    const searching = new FairPool(() => ({ capacity: registry.settings.maxSearches, perClient: registry.settings.maxSearchesPerClient, queueLength: limits.queueLength, waitMs: limits.queueWaitMs }));
    o.shutdownSignal?.addEventListener('abort', () => searching.close(), { once: true });
    const heavy: HeavyWork = async (c, _kind, work) => {
      const slot = await searching.acquire(shareOf(c), c.req.raw.signal);
      if (!slot.ok) {
        if (slot.reason === 'aborted') return c.json({ errorCode: 'INTERNAL_ERROR', message: 'the request ended while it waited for a slot' }, 503);
        const s = registry.settings;
        // The ARD error shape, with the pools' one wording.
        const r = describeRefusal(slot.reason, { what: 'search or explore', capacity: s.maxSearches, perClient: s.maxSearchesPerClient, capacityKey: 'server.registry.maxSearches', perClientKey: 'server.registry.maxSearchesPerClient', waitMs: limits.queueWaitMs });
        refuse(r.perClient ? 'registry_searches_per_client' : 'registry_searches');
        c.header('Retry-After', '1');
        return c.json({ errorCode: 'RATE_LIMIT_EXCEEDED', message: `${r.message} (${r.limit})`, limit: r.limit, retryAfterS: 1 }, 429);
      }
      try {
        return await work();
      } finally {
        slot.release();
      }
    };
    mountRegistry(app, { onRefusal: refuse, heavy, route, ...registry });
    if (registry.settings.mcp !== false) mountMcp(app, { app, route, version: VERSION, maxBodyBytes: registry.settings.maxBodyBytes, onRefusal: refuse });
  }

  // An unknown path under /api/ is a viewer's 404 (fail closed: no role, no answer at all).
  app.all('/api/*', gate('viewer'), (c) => c.json({ error: 'not-found', message: `no route ${c.req.method} ${c.req.path}` }, 404));

  app.get('*', async (c) => {
    const res = await o.staticFiles?.(c.req.path);
    return res ?? c.json({ error: 'not-found' }, 404);
  });

  app.onError((err, c) => errorResponse(c, err));
  assertRolesDeclared(app);
  return app;
}

function errorResponse(c: Context, err: unknown): Response {
  if (isDiscoveryError(err)) {
    const status = err.code === 'ERR_SESSION_LIMIT' ? 429 : err.failure === 'state' ? 409 : err.failure === 'policy' ? 403 : err.failure === 'config' ? 400 : 500;
    return c.json({ error: err.code, message: err.message, ...(err.problems.length > 0 && { problems: err.problems }) }, status);
  }
  return c.json({ error: 'internal', message: err instanceof Error ? err.message : String(err) }, 500);
}
