/**
 * What the API's routes are given: the service's parts ({@link AppOptions}) and, built once from
 * them by {@link createAppContext}, the checks and answers several resources share — the limits in
 * force, the role declarations, who the caller is and its fair share, the 429 of a limit, the 503
 * of a drain, a follower's answer from its leader, and who-did-what for the journal. Each
 * resource's sub-app (routes/) takes the context; `createApp` (app.ts) composes them.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Registry } from 'prom-client';
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CallHealth, CardCache, DiscoveryLoop, EventStream } from 'a2a-discovery';
import type { ActionActor, ActionEvent, EventInput } from 'a2a-discovery/internal';
import type { ServerA2aConfig } from 'a2a-discovery/config';
import type { StoreStatus, ReplicaStatus } from '@a2a-discovery/store';
import type { AiCatalogRoute } from './routes/ai-catalog-route.js';
import type { EventBuffer } from './event-buffer.js';
import type { FollowerProxy, LeaderPath } from '../replica/follower-proxy.js';
import type { ReplicaAuth } from '../auth/replica-auth.js';
import type { Inspector } from './inspector.js';
import type { JournalReader } from '../telemetry/journal.js';
import { EventStreamHub } from './routes/event-stream-route.js';
import type { Drain } from './drain.js';
import { DRAIN_RETRY_AFTER_S } from './drain.js';
import type { OnRefusal, RefusalReason, ServerLimits } from './limits.js';
import { DEFAULT_SERVER_LIMITS } from './limits.js';
import type { ClientIdentityOptions } from './client-identity.js';
import { clientIdentity } from './client-identity.js';
import type { PoolNames, PoolRefusal } from './fair-pool.js';
import { describeRefusal } from './fair-pool.js';
import type { Actor } from '../auth/request-guard.js';
import { actorOf, roleOf } from '../auth/request-guard.js';
import type { PeopleAuth } from '../auth/people-auth.js';
import type { SnapshotArchive } from '../assembly/snapshot-archive.js';
import type { ReloadResult } from '../assembly/reload-result.js';
import type { RegistryApiOptions } from '../registry/routes.js';
import { REGISTRY_BASE } from '../registry/routes.js';
import type { RouteToolkit } from './route.js';
import { routeToolkit } from './route.js';
import type { Caller, SessionOwners } from '../auth/session-owners.js';
import { CLIENT_COOKIE, newToken, personKey, SESSION_SECRET_HEADER } from '../auth/session-owners.js';
import { problem } from './problem.js';
import type { BodyLimit } from './validate.js';

/** The service's parts the API answers from. */
export interface AppOptions {
  loop: DiscoveryLoop;
  /** Health from real calls (`GET /api/calls`). */
  calls?: CallHealth;
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
  a2a?: { settings: Omit<ServerA2aConfig, 'enabled'>; vocabulary: ReadonlyArray<{ readonly tag: string; readonly keywords?: readonly string[]; readonly examples?: readonly string[] }>; version: string };
}


/** The body caps of the routes (`server.limits`). */
type BodyCap = 'maxBodyBytes' | 'maxTraceBodyBytes' | 'maxInspectBodyBytes';

/** A pool's names for its refusals (fair-pool.ts), with the refusal counters and `Retry-After`. */
type PoolDescription = PoolNames & { reason: RefusalReason; perClientReason: RefusalReason; retryAfterS: number };

/** What every resource's routes share; built once per app by {@link createAppContext}. */
export interface AppContext {
  readonly o: AppOptions;
  /** The limits in force: the service's own object, which a reload updates in place. */
  readonly limits: ServerLimits;
  /** Counts a refusal (the metrics' counter). */
  readonly refuse: OnRefusal;
  /** Whether a token or people are configured: roles are then checked (route.ts). */
  readonly guarded: boolean;
  /** The registry paths open to everyone (`server.registry.anonymous`), else undefined. */
  readonly openPath: ((path: string) => boolean) | undefined;
  /** The route declarations (role, OpenAPI description) and the role gate (route.ts). */
  readonly route: RouteToolkit['route'];
  readonly gate: RouteToolkit['gate'];
  /** The admin token's bytes, when one is configured. */
  readonly tokenBytes: Buffer | undefined;
  /** The SSE hub: the count of open streams, told to reconnect when draining. */
  readonly streams: EventStreamHub;
  /** The cap of a body (validate.ts's `jsonBody`). */
  bodyLimit(key: BodyCap): BodyLimit;
  /** Journals who did what (`api.action`). */
  acted(c: Context, action: ActionEvent['action'], extra?: Omit<EventInput<ActionEvent>, 'type' | 'action' | 'actor'>): void;
  /** Who drives sessions: the person, else the client cookie (issued when `issue`), with a session secret. */
  callerOf(c: Context, issue?: boolean): Caller;
  /** The fair-share key of a request (client-identity.ts). */
  shareOf(c: Context): string;
  /** The 429 of a limit: counted, with `Retry-After` (seconds) and the limit's name in the body. */
  tooMany(c: Context, reason: RefusalReason, limit: string, retryAfterS: number, message: string, error?: string): Response;
  /** The answer to a pool's refusal: the 429 naming the limit that bit, or 503 when the caller went away while it waited. */
  poolRefused(c: Context, why: PoolRefusal, pool: PoolDescription): Response;
  /** Draining: the 503 refusing a new session or turn (the ones in flight finish; drain.ts), else undefined. */
  drainingRefusal(c: Context): Response | undefined;
  /**
   * On a follower, the leader's answer (or the 503 saying it cannot be had); undefined where this
   * replica answers itself: it leads, or runs alone.
   */
  fromLeader(c: Context, path: LeaderPath): Promise<Response | undefined>;
  /** `{ servedBy: <replica id> }` on a replica, else `{}`. */
  servedBy(): { servedBy?: string };
  /** How the journal and a rollout's decisions name the caller: a person's name or subject, `admin-token`, or `anonymous`. */
  actorName(c: Context): string;
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

/** The admin token, or a person with the admin role, may drive others' sessions (nobody, without either configured). */
function callerOf(c: Context, issue = false): Caller {
  const actor = actorOf(c);
  const admin = roleOf(actor) === 'admin';
  const secret = c.req.header(SESSION_SECRET_HEADER);
  if (actor.kind === 'person') return { admin, person: personKey(actor.person.issuer, actor.person.sub), ...(secret !== undefined && { secret }) };
  let clientId = getCookie(c, CLIENT_COOKIE);
  if (clientId !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(clientId)) clientId = undefined;
  if (clientId === undefined && issue) {
    clientId = newToken();
    setCookie(c, CLIENT_COOKIE, clientId, { httpOnly: true, sameSite: 'Strict', path: '/api' });
  }
  return { admin, ...(clientId !== undefined && { clientId }), ...(secret !== undefined && { secret }) };
}

/**
 * The fair-share key of a request (client-identity.ts; docs/security.md, "Fair pools"): the person
 * or the admin token (its client cookie telling its browsers apart), else the remote network
 * (`server.clients`): an anonymous caller can mint as many cookies as it likes, not addresses.
 */
function shareKey(clientOf: ReturnType<typeof clientIdentity>): (c: Context) => string {
  return (c) => {
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
}

/** The 429 of a limit (see {@link AppContext.tooMany}). */
function tooManyOf(refuse: OnRefusal): AppContext['tooMany'] {
  return (c, reason, limit, retryAfterS, message, error = 'too-many-requests') => {
    refuse(reason);
    c.header('Retry-After', String(retryAfterS));
    return problem(c, 429, error, `${message} (${limit})`, { limit, retryAfterS });
  };
}

/** A pool's refusal (see {@link AppContext.poolRefused}). */
function poolRefusedOf(tooMany: AppContext['tooMany']): AppContext['poolRefused'] {
  return (c, why, pool) => {
    if (why === 'aborted') return problem(c, 503, 'aborted', 'the request ended while it waited for a slot');
    const r = describeRefusal(why, pool);
    return tooMany(c, r.perClient ? pool.perClientReason : pool.reason, r.limit, pool.retryAfterS, r.message);
  };
}

/**
 * A follower's answer from its leader (see {@link AppContext.fromLeader}). A follower's own
 * request is answered by the leader itself, and refused by a replica that no longer leads (its
 * lists would be empty).
 */
function leaderAnswer(o: AppOptions, refuse: OnRefusal): AppContext['fromLeader'] {
  return async (c, path) => {
    const r = o.replicaStatus?.();
    if (r === undefined) return undefined;
    if (actorOf(c).kind === 'replica') {
      return r.role === 'leader' ? undefined : problem(c, 503, 'not-leader', `replica ${r.id} does not lead (epoch ${r.epoch})`);
    }
    const answer = await o.followerProxy?.answer(path, new URL(c.req.url).search);
    if (answer === undefined) return undefined;
    if (answer.status < 400) return c.json(answer.body, answer.status);
    if (answer.status === 503) {
      refuse('leader_unreachable');
      c.header('Retry-After', '2');
    }
    // The leader's refusal (or the proxy's 503), in the API's one error shape.
    const said = answer.body as Record<string, unknown>;
    return problem(c, answer.status, String(said['error'] ?? 'leader-error'), String(said['message'] ?? ''), said);
  };
}

/** Draining's 503 (see {@link AppContext.drainingRefusal}). */
function drainingOf(o: AppOptions, refuse: OnRefusal): AppContext['drainingRefusal'] {
  return (c) => {
    if (o.drain?.draining !== true) return undefined;
    refuse('draining');
    c.header('Retry-After', String(DRAIN_RETRY_AFTER_S));
    c.header('Connection', 'close');
    return problem(c, 503, 'draining', 'the service is shutting down and takes no new session or turn; send it again (another replica will answer)', { retryAfterS: DRAIN_RETRY_AFTER_S });
  };
}

/** The streams hub, closed on shutdown and told to send its clients elsewhere when draining. */
function streamsOf(o: AppOptions, limits: ServerLimits, refuse: OnRefusal): EventStreamHub {
  const streams = o.streams ?? new EventStreamHub({ buffer: o.buffer, limits, onRefusal: refuse, version: () => o.loop.current()?.version ?? 0 });
  o.shutdownSignal?.addEventListener('abort', () => streams.closeAll(), { once: true });
  o.drain?.started.addEventListener('abort', () => streams.drain(), { once: true });
  return streams;
}

/** The context of an app over `o`: no I/O; the streams hub is closed by `o.shutdownSignal`. */
export function createAppContext(o: AppOptions): AppContext {
  const limits: ServerLimits = isComplete(o.limits) ? o.limits : { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const refuse: OnRefusal = o.onRefusal ?? (() => undefined);
  // server.registry.anonymous: the registry API answers without a token.
  const openPath = o.registry?.anonymous === true ? (path: string) => path.startsWith(`${REGISTRY_BASE}/`) : undefined;
  // Roles: with a token or people configured, every /api/ route and /metrics needs the role it
  // declares (route.ts); without either (a loopback service), everything stays open.
  const guarded = (o.token !== undefined && o.token !== '') || o.people !== undefined;
  const { route, gate } = routeToolkit({ guarded, open: openPath, onRefusal: refuse });
  const tooMany = tooManyOf(refuse);
  return {
    o,
    limits,
    refuse,
    guarded,
    openPath,
    route,
    gate,
    tokenBytes: o.token !== undefined && o.token !== '' ? Buffer.from(o.token) : undefined,
    streams: streamsOf(o, limits, refuse),
    bodyLimit: (key) => ({ maxBytes: () => limits[key], key: `server.limits.${key}`, onTooLarge: () => refuse('body_bytes') }),
    actorName: (c) => {
      const a = actionActor(actorOf(c));
      return a.kind === 'person' ? (a.name ?? a.sub ?? 'person') : a.kind;
    },
    acted: (c, action, extra = {}) => o.events?.emit({ type: 'api.action', action, actor: actionActor(actorOf(c)), ...extra }),
    callerOf,
    shareOf: shareKey(clientIdentity(o.clients)),
    tooMany,
    poolRefused: poolRefusedOf(tooMany),
    drainingRefusal: drainingOf(o, refuse),
    fromLeader: leaderAnswer(o, refuse),
    servedBy: () => {
      const id = o.replicaStatus?.().id;
      return id === undefined ? {} : { servedBy: id };
    },
  };
}
