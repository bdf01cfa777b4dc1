/**
 * The service's HTTP side: the app with its limits, event streams, metrics, inspector and AI
 * Catalog route, and the listening server with Node's own timeouts.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CallHealth, CardCache, EventStream, DiscoveryLoop } from 'a2a-discovery';
import type { AnnouncedRegistry } from 'a2a-discovery/internal';
import { signDetached, DiscoveryError } from 'a2a-discovery';
import { isLoopbackHost } from 'a2a-discovery/internal';
import type { StateStore } from '@a2a-discovery/store';
import { DEFAULT_A2A_SETTINGS, DEFAULT_REGISTRY_SETTINGS } from 'a2a-discovery/config';
import { VERSION } from '../version.js';
import { RegistryIndex } from '../registry/registry-index.js';
import { AiCatalogRoute } from '../http/routes/ai-catalog-route.js';
import { createApp, type AppOptions } from '../http/app.js';
import type { EventBuffer } from '../http/event-buffer.js';
import { EventStreamHub } from '../http/routes/event-stream-route.js';
import type { Drain } from '../http/drain.js';
import type { FollowerProxy } from '../replica/follower-proxy.js';
import { buildReplicaHttp } from '../replica/replica-http.js';
import type { Logger } from '../telemetry/logger.js';
import type { ReplicaAuth } from '../auth/replica-auth.js';
import { Inspector } from '../http/inspector.js';
import { PeopleAuth } from '../auth/people-auth.js';
import type { JournalReader } from '../telemetry/journal.js';
import type { OnRefusal, ServerLimits } from '../http/limits.js';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';
import { createMetrics } from '../telemetry/metrics.js';
import { createFederation, type Federation } from '../registry/federation.js';
import { adoptSessionFromStore } from './persistence.js';
import type { ServiceFetchers } from './service-fetchers.js';
import type { ServiceOptions } from './service-options.js';
import type { Replication } from '../replica/service-replica.js';
import type { SessionOwners } from '../auth/session-owners.js';
import type { SnapshotArchive } from './snapshot-archive.js';
import { staticFileServer } from '../http/static-files.js';

export interface ServiceHttp {
  readonly app: ReturnType<typeof createApp>;
  readonly limits: ServerLimits;
  readonly refusal: OnRefusal;
  readonly metrics: ReturnType<typeof createMetrics>;
  readonly inspector: Inspector;
  /** Aborted when the service stops: closes the event streams. */
  readonly shutdown: AbortController;
  /** The open event streams. */
  readonly streams: EventStreamHub;
  /** The search route's federation hook (`federate`), with its own guarded fetcher. */
  readonly federation: Federation;
  /** Several replicas: the replica key (a reload rotates it) and the follower's proxy (a reload sets its leader URLs). */
  readonly replicaAuth: ReplicaAuth | undefined;
  readonly followerProxy: FollowerProxy | undefined;
}

/** What the HTTP side serves from: the service's parts, built before it. */
interface HttpParts {
  host: string;
  fetchers: ServiceFetchers;
  loop: DiscoveryLoop;
  calls: CallHealth;
  cache: CardCache;
  trees: TreeFactory;
  sessions: SessionRunner;
  owners: SessionOwners;
  buffer: EventBuffer;
  archive: SnapshotArchive;
  journal: JournalReader;
  store: StateStore;
  events: EventStream;
  replication: Replication;
  /** The registries the AI Catalog sources announce now. */
  announced: () => readonly AnnouncedRegistry[];
  /** This service's URL once it listens (a registry there is never asked). */
  self: () => string | undefined;
  /** The graceful drain (drain.ts). */
  drain: Drain;
  log: Logger;
}

/** Builds the app and what it serves from; nothing listens yet (see {@link listen}). */
export function buildHttp(o: ServiceOptions, p: HttpParts): ServiceHttp {
  const { loop, store, fetchers } = p;
  const coordinator = p.replication.coordinator;
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const refusal: OnRefusal = (reason) => metrics.refusal(reason);
  const streams = new EventStreamHub({
    buffer: p.buffer,
    limits,
    onRefusal: refusal,
    version: () => loop.current()?.version ?? 0,
    replica: store.replica,
  });
  const federation = buildFederation(o, p);
  const registry = buildRegistry(o, p);
  const { index } = registry;
  const metrics = createMetrics({ events: p.events, federation: () => federation.stats(), cache: p.cache, loop, trees: p.trees, openStreams: () => streams.size, store: () => store.status(), journalDropped: () => p.replication.follow.writer.dropped, activity: () => p.journal.activityStats, upstreamBudget: () => fetchers.budget.stats, ...(o.peerTokenRequests && { peerTokenRequests: o.peerTokenRequests }), ...(coordinator && { replica: () => coordinator.status() }), ...(index && { registryIndex: () => index.stats }), drain: () => p.drain, calls: () => p.calls.views() });
  const shutdown = new AbortController();
  if (index) shutdown.signal.addEventListener('abort', () => index.close(), { once: true });
  const { replicaAuth, followerProxy } = buildReplicaHttp(o, { coordinator, limits, refusal, events: p.events, log: p.log, shutdown: shutdown.signal });
  // People's tokens on the API (people-auth.ts); the provider's connections end with the service.
  const people = o.oidc && new PeopleAuth({ ...o.oidc, onFetchRefused: () => refusal('oidc_keys') });
  if (people) shutdown.signal.addEventListener('abort', () => void people.close(), { once: true });
  const inspector = buildInspector(o, { fetchers, limits, refusal, loop });
  const app = createApp(appOptions(o, p, { limits, streams, refusal, metrics, people, shutdown, inspector, registry, federation, replicaAuth, followerProxy }));
  return { app, limits, refusal, metrics, inspector, shutdown, streams, federation, replicaAuth, followerProxy };
}

/** Federation asks peer registries under discovery's policy and credentials, never waiting for the upstream budget (a search is interactive). */
function buildFederation(o: ServiceOptions, p: Pick<HttpParts, 'fetchers' | 'announced' | 'self'>): Federation {
  const { fetchers } = p;
  return createFederation({
    policy: fetchers.policy,
    peers: o.registry?.peers ?? [],
    announced: p.announced,
    isSelf: (url) => sameService(url, p.self()),
    ...o.registry?.federation,
    fetcher: {
      ...(o.credentials !== undefined && { credentials: o.credentials }),
      ...(fetchers.bounds.originBudget !== undefined && { originBudget: { budget: fetchers.bounds.originBudget.budget, maxWaitMs: 0, caller: 'federation' } }),
    },
  });
}

/**
 * The registry's settings (`server.registry` over the defaults), its federation hook when one is
 * given, and its index of every admitted card, kept current from the loop's events
 * (docs/registry-api.md); no index when the registry is off.
 */
function buildRegistry(o: ServiceOptions, p: Pick<HttpParts, 'loop' | 'cache' | 'events'>) {
  const { federate, ...registrySettings } = o.registry ?? {};
  const settings = { ...DEFAULT_REGISTRY_SETTINGS, ...registrySettings, federation: { ...DEFAULT_REGISTRY_SETTINGS.federation, ...registrySettings.federation } };
  const index = settings.enabled
    ? new RegistryIndex({ loop: p.loop, cache: p.cache, maxEntries: settings.maxEntries, maxTombstones: settings.maxTombstones, tombstoneTtlMs: settings.tombstoneTtlMs })
    : undefined;
  index?.follow(p.events, p.loop);
  return { settings, index, federate };
}

/** The inspector fetches under discovery's policy, bounds and card size, with fetchers of its own that hold no credentials. */
function buildInspector(o: ServiceOptions, p: { fetchers: ServiceFetchers; limits: ServerLimits; refusal: OnRefusal; loop: DiscoveryLoop }): Inspector {
  const { fetchers, limits, loop } = p;
  const { policy, ...bounds } = fetchers.bounds;
  return new Inspector({
    policy,
    check: fetchers.check,
    cardSize: fetchers.cardSize,
    fetch: bounds,
    maxConcurrent: limits.maxInspections,
    timeoutMs: limits.inspectTimeoutMs,
    onRefusal: p.refusal,
    bounds: limits,
    // Only to judge a card's security requirements: never given to its fetchers.
    ...(o.credentials !== undefined && { credentials: o.credentials }),
    // A card that looks like an agent discovery admitted from another origin is flagged.
    lookalikeOf: (origin, names) => loop.lookalikeOf(origin, names),
  });
}

/** The app's options: the service's parts, and what {@link buildHttp} built around them. */
function appOptions(
  o: ServiceOptions,
  p: HttpParts,
  h: Omit<ServiceHttp, 'app'> & { people: PeopleAuth | undefined; registry: ReturnType<typeof buildRegistry> },
): AppOptions {
  const { loop, store } = p;
  const coordinator = p.replication.coordinator;
  const { registry, federation } = h;
  // The service as an A2A agent (a2a/): on unless server.a2a.enabled is false.
  const { enabled: a2aEnabled, ...a2a } = { ...DEFAULT_A2A_SETTINGS, ...o.a2a };
  return {
    bindHost: p.host,
    ...(a2aEnabled && { a2a: { settings: a2a, vocabulary: o.vocabulary, version: VERSION } }),
    ...(o.allowedHosts && { allowedHosts: o.allowedHosts }),
    ...(o.allowedOrigins && { allowedOrigins: o.allowedOrigins }),
    ...(o.clients && { clients: o.clients }),
    ...(o.traceUrl !== undefined && { traceUrl: o.traceUrl }),
    limits: h.limits,
    streams: h.streams,
    onRefusal: h.refusal,
    loop,
    calls: p.calls,
    cache: p.cache,
    trees: p.trees,
    sessions: p.sessions,
    owners: p.owners,
    buffer: p.buffer,
    archive: p.archive,
    metrics: h.metrics.registry,
    ...(o.token !== undefined && o.token !== '' && { token: o.token }),
    ...(h.people && { people: h.people }),
    events: p.events,
    staticFiles: staticFileServer(o.webRoot),
    shutdownSignal: h.shutdown.signal,
    drain: p.drain,
    storeStatus: () => store.status(),
    journal: p.journal,
    inspector: h.inspector,
    ...(o.reload && { reload: o.reload }),
    ...(registry.index && { registry: { index: registry.index, settings: registry.settings, anonymous: registry.settings.anonymous, federate: registry.federate ?? federation.federate } }),
    ...(o.catalog?.enabled === true && { aiCatalog: aiCatalogRoute(o.catalog, loop, a2aEnabled, a2a) }),
    ...(coordinator && {
      replicaStatus: () => coordinator.status(),
      followerProxy: h.followerProxy,
      replicaAuth: h.replicaAuth,
      adoptSession: (sessionId: string) => adoptSessionFromStore({ store, loop, trees: p.trees, sessions: p.sessions, owners: p.owners, archive: p.archive }, sessionId),
    }),
  };
}

/** The AI Catalog route (`server.catalog`): the snapshot's agents, and the orchestrator's own entry when it is listed. */
function aiCatalogRoute(
  catalog: NonNullable<ServiceOptions['catalog']>,
  loop: DiscoveryLoop,
  a2aEnabled: boolean,
  a2a: Omit<typeof DEFAULT_A2A_SETTINGS, 'enabled'>,
): AiCatalogRoute {
  return new AiCatalogRoute({
    loop,
    ...(catalog.hostName !== undefined && { hostName: catalog.hostName }),
    ...(catalog.registryUrl !== undefined && { registryUrl: catalog.registryUrl }),
    ...(catalog.cacheControl !== undefined && { cacheControl: catalog.cacheControl }),
    ...(catalog.signing && { signing: catalog.signing }),
    // The orchestrator itself, one more entry pointing at its own card.
    ...(a2aEnabled && a2a.listInCatalog && { agent: { name: a2a.name, description: a2a.description } }),
    // Where the service is reached, when configured: the publisher of its own entries' identifiers.
    ...(a2a.publicUrl !== undefined && { publicUrl: a2a.publicUrl }),
  });
}

/** Whether a registry's API base is on this service's origin (loopback names count as one). */
function sameService(url: string, self: string | undefined): boolean {
  if (self === undefined) return false;
  try {
    const a = new URL(url);
    const b = new URL(self);
    if (a.origin === b.origin) return true;
    return a.protocol === b.protocol && a.port === b.port && isLoopbackHost(a.hostname) && isLoopbackHost(b.hostname);
  } catch {
    return false;
  }
}

/** Listens on `host:port` with the limits' socket timeouts; rejects with the server's error. */
export function listen(http: Pick<ServiceHttp, 'app' | 'limits' | 'refusal'>, host: string, port: number): Promise<Server> {
  const { limits, refusal } = http;
  return new Promise<Server>((resolve, reject) => {
    const s = serve(
      {
        fetch: http.app.fetch,
        port,
        hostname: host,
        serverOptions: {
          headersTimeout: limits.headersTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          keepAliveTimeout: limits.keepAliveTimeoutMs,
          // How often Node checks the two timeouts above (its default, 30 s, would let them run long).
          connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
        },
      },
      () => resolve(s as Server),
    ) as Server;
    s.once('error', reject);
    s.on('clientError', (err: NodeJS.ErrnoException, socket) => onClientError(err, socket, refusal));
  });
}

/** The catalog's settings as the route will use them: a header value, a key that signs. */
export async function checkCatalogOptions(catalog: NonNullable<ServiceOptions['catalog']>): Promise<void> {
  // eslint-disable-next-line no-control-regex
  if (catalog.cacheControl !== undefined && (catalog.cacheControl.trim() === '' || /[\u0000-\u001f\u007f]/.test(catalog.cacheControl))) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', 'server.catalog.cacheControl must be a Cache-Control header value such as "max-age=60"', { path: 'server.catalog.cacheControl' });
  }
  const signing = catalog.signing;
  if (signing === undefined) return;
  try {
    await signDetached({ probe: true }, signing.key, { alg: signing.alg ?? 'ES256', kid: signing.kid });
  } catch (err) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `server.catalog.signing: the key cannot sign the catalog (${(err as Error).message})`, { cause: err, path: 'server.catalog.signing' });
  }
}

/**
 * Node's own answer to a client error (408 for a request or headers timeout, 400 for a malformed
 * request), plus the count; installing a listener replaces Node's default handling.
 */
function onClientError(err: NodeJS.ErrnoException, socket: Duplex, refusal: (reason: 'request_timeout') => void): void {
  const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (timeout) refusal('request_timeout');
  if (socket.writable && err.code !== 'ECONNRESET') {
    socket.end(timeout ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  }
  setTimeout(() => socket.destroy(), 1_000).unref();
}
