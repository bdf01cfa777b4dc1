/**
 * The service's HTTP side: the app with its limits, event streams, metrics, inspector and AI
 * Catalog route, and the listening server with Node's own timeouts.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CardCache, EventStream, DiscoveryLoop } from 'a2a-discovery';
import type { AnnouncedRegistry } from 'a2a-discovery/internal';
import { signDetached, DiscoveryError, systemClock } from 'a2a-discovery';
import { isLoopbackHost } from 'a2a-discovery/internal';
import type { StateStore } from '@a2a-discovery/store';
import { DEFAULT_A2A_SETTINGS, DEFAULT_REGISTRY_SETTINGS } from 'a2a-discovery/config';
import { VERSION } from '../version.js';
import { RegistryIndex } from '../registry/registry-index.js';
import { AiCatalogRoute } from '../http/ai-catalog-route.js';
import { createApp } from '../http/app.js';
import type { EventBuffer } from '../http/event-buffer.js';
import { EventStreamHub } from '../http/event-stream-route.js';
import type { Drain } from '../http/drain.js';
import { FollowerProxy } from '../replica/follower-proxy.js';
import type { Logger } from '../telemetry/logger.js';
import { LeaderUrls, ReplicaAuth } from '../auth/replica-auth.js';
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

/** Builds the app and what it serves from; nothing listens yet (see {@link listen}). */
// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function buildHttp(
  o: ServiceOptions,
  p: {
    host: string;
    fetchers: ServiceFetchers;
    loop: DiscoveryLoop;
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
  },
): ServiceHttp {
  const { loop, store, buffer, fetchers } = p;
  const coordinator = p.replication.coordinator;
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const refusal: OnRefusal = (reason) => metrics.refusal(reason);
  const streams = new EventStreamHub({
    buffer,
    limits,
    onRefusal: refusal,
    version: () => loop.current()?.version ?? 0,
    replica: store.replica,
  });
  // Federation asks peer registries under discovery's policy and credentials, never waiting for the upstream budget (a search is interactive).
  const federation = createFederation({
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
  // The registry's index of every admitted card, kept current from the loop's events (docs/registry-api.md).
  const { federate, ...registrySettings } = o.registry ?? {};
  const registry = { ...DEFAULT_REGISTRY_SETTINGS, ...registrySettings, federation: { ...DEFAULT_REGISTRY_SETTINGS.federation, ...registrySettings.federation } };
  const registryIndex = registry.enabled
    ? new RegistryIndex({ loop, cache: p.cache, maxEntries: registry.maxEntries, maxTombstones: registry.maxTombstones, tombstoneTtlMs: registry.tombstoneTtlMs })
    : undefined;
  registryIndex?.follow(p.events, loop);
  const metrics = createMetrics({ events: p.events, federation: () => federation.stats(), cache: p.cache, loop, trees: p.trees, openStreams: () => streams.size, store: () => store.status(), journalDropped: () => p.replication.follow.writer.dropped, activity: () => p.journal.activityStats, upstreamBudget: () => fetchers.budget.stats, ...(o.peerTokenRequests && { peerTokenRequests: o.peerTokenRequests }), ...(coordinator && { replica: () => coordinator.status() }), ...(registryIndex && { registryIndex: () => registryIndex.stats }), drain: () => p.drain });
  const shutdown = new AbortController();
  if (registryIndex) shutdown.signal.addEventListener('abort', () => registryIndex.close(), { once: true });
  // Replicas authenticate each other with their shared key, never the admin token (replica-auth.ts).
  const replicaLog = p.log.child({ component: 'replica' });
  const replicaAuth =
    coordinator &&
    new ReplicaAuth({
      key: o.replica?.key,
      clock: o.clock ?? systemClock,
      ...(o.replica?.authWindowMs !== undefined && { authWindowMs: o.replica.authWindowMs }),
      ...(o.replica?.maxNonces !== undefined && { maxNonces: o.replica.maxNonces }),
      ...(o.replica?.keyGraceMs !== undefined && { keyGraceMs: o.replica.keyGraceMs }),
    });
  if (replicaAuth && !replicaAuth.configured) replicaLog.warn('no replica key (replica.keyEnv or replica.keyFile): as a follower, this replica cannot show the leader’s endpoints, sources and activity (503), and as the leader it admits no follower');
  // A follower answers the leader's lists (follower-proxy.ts); requests in flight end with the service.
  const followerProxy =
    coordinator &&
    new FollowerProxy({
      status: () => coordinator.status(),
      timeoutMs: limits.leaderTimeoutMs,
      maxBytes: limits.leaderMaxBytes,
      ...(o.policy.allowCidrs !== undefined && { allowCidrs: o.policy.allowCidrs }),
      ...(replicaAuth && { auth: replicaAuth }),
      leaderUrls: new LeaderUrls(o.replica?.leaderUrls),
      onRefusal: () => refusal('leader_url'),
      // A leader URL in the store this replica does not send to: someone wrote the row, or replica.leaderUrls misses a replica.
      onLeaderUrlRefused: (url, why) => {
        replicaLog.warn({ url, reason: why }, 'refused the leader URL read from the store: nothing is sent there');
        p.events.emit({ type: 'alert', kind: 'replica-leader-url-refused', message: `the leader URL ${url} read from the store was refused, nothing was sent there: ${why}`, detail: { url, reason: why } });
      },
    });
  if (followerProxy) shutdown.signal.addEventListener('abort', () => followerProxy.close(), { once: true });
  // People's tokens on the API (people-auth.ts); the provider's connections end with the service.
  const people = o.oidc && new PeopleAuth({ ...o.oidc, onFetchRefused: () => refusal('oidc_keys') });
  if (people) shutdown.signal.addEventListener('abort', () => void people.close(), { once: true });
  // The inspector fetches under discovery's policy, bounds and card size, with fetchers of its own that hold no credentials.
  const { policy, ...bounds } = fetchers.bounds;
  const inspector = new Inspector({
    policy,
    check: fetchers.check,
    cardSize: fetchers.cardSize,
    fetch: bounds,
    maxConcurrent: limits.maxInspections,
    timeoutMs: limits.inspectTimeoutMs,
    onRefusal: refusal,
    bounds: limits,
    // Only to judge a card's security requirements: never given to its fetchers.
    ...(o.credentials !== undefined && { credentials: o.credentials }),
    // A card that looks like an agent discovery admitted from another origin is flagged.
    lookalikeOf: (origin, names) => loop.lookalikeOf(origin, names),
  });
  // The service as an A2A agent (a2a/): on unless server.a2a.enabled is false.
  const { enabled: a2aEnabled, ...a2a } = { ...DEFAULT_A2A_SETTINGS, ...o.a2a };
  const app = createApp({
    bindHost: p.host,
    ...(a2aEnabled && { a2a: { settings: a2a, vocabulary: o.vocabulary, version: VERSION } }),
    ...(o.allowedHosts && { allowedHosts: o.allowedHosts }),
    ...(o.allowedOrigins && { allowedOrigins: o.allowedOrigins }),
    ...(o.clients && { clients: o.clients }),
    ...(o.traceUrl !== undefined && { traceUrl: o.traceUrl }),
    limits,
    streams,
    onRefusal: refusal,
    loop,
    cache: p.cache,
    trees: p.trees,
    sessions: p.sessions,
    owners: p.owners,
    buffer,
    archive: p.archive,
    metrics: metrics.registry,
    ...(o.token !== undefined && o.token !== '' && { token: o.token }),
    ...(people && { people }),
    events: p.events,
    staticFiles: staticFileServer(o.webRoot),
    shutdownSignal: shutdown.signal,
    drain: p.drain,
    storeStatus: () => store.status(),
    journal: p.journal,
    inspector,
    ...(o.reload && { reload: o.reload }),
    ...(registryIndex && { registry: { index: registryIndex, settings: registry, anonymous: registry.anonymous, federate: federate ?? federation.federate } }),
    ...(o.catalog?.enabled === true && {
      aiCatalog: new AiCatalogRoute({
        loop,
        ...(o.catalog.hostName !== undefined && { hostName: o.catalog.hostName }),
        ...(o.catalog.registryUrl !== undefined && { registryUrl: o.catalog.registryUrl }),
        ...(o.catalog.cacheControl !== undefined && { cacheControl: o.catalog.cacheControl }),
        ...(o.catalog.signing && { signing: o.catalog.signing }),
        // The orchestrator itself, one more entry pointing at its own card.
        ...(a2aEnabled && a2a.listInCatalog && { agent: { name: a2a.name, description: a2a.description } }),
        // Where the service is reached, when configured: the publisher of its own entries' identifiers.
        ...(a2a.publicUrl !== undefined && { publicUrl: a2a.publicUrl }),
      }),
    }),
    ...(coordinator && {
      replicaStatus: () => coordinator.status(),
      followerProxy,
      replicaAuth,
      adoptSession: (sessionId: string) => adoptSessionFromStore({ store, loop, trees: p.trees, sessions: p.sessions, owners: p.owners, archive: p.archive }, sessionId),
    }),
  });
  return { app, limits, refusal, metrics, inspector, shutdown, streams, federation, replicaAuth, followerProxy };
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
