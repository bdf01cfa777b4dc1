/**
 * The service: the discovery loop, the tree factory and the session runner in one process,
 * behind the HTTP API. `startService` composes every part from plain options (the YAML config
 * maps onto them) and returns a handle whose `close()` stops everything within a bound.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import type { BaseLlm } from '@google/adk';
import { setLogger as setAdkLogger } from '@google/adk';
import type { RouteHints } from '../adk/index.js';
import { createPolicyFetch, SessionRunner, snapshotTreeBuilder, TreeFactory } from '../adk/index.js';
import { SessionOwners } from './session-owners.js';
import type { CardCacheOptions } from '../cache/index.js';
import { CardCache } from '../cache/index.js';
import type { SignatureMode, SignatureOptions } from '../card/index.js';
import { signDetached } from '../card/index.js';
import { DEFAULT_CATALOG_LIMITS } from '../catalog/index.js';
import type { Clock } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { DiscoveryError } from '../errors.js';
import type { DiscoveryEvent } from '../events/index.js';
import { EventStream } from '../events/index.js';
import type { CardFetcher, HostPolicyOptions } from '../fetch/index.js';
import { createCardFetcher, HostPolicy, isLoopbackHost } from '../fetch/index.js';
import type { HealthOptions } from '../health/index.js';
import type { DiscoveryLoopOptions } from '../loop/index.js';
import { DiscoveryLoop } from '../loop/index.js';
import type { Need, RoutingDomain, TenantPolicy, VocabularyEntry } from '../match/index.js';
import type { RoutingCase } from '../routing/index.js';
import { casesFromVocabulary, evaluateRouting, loadCases } from '../routing/index.js';
import { TagVocabulary } from '../match/index.js';
import type { KubernetesSourceOptions, Source, StaticAgentConfig } from '../sources/index.js';
import { aiCatalogSource, CatalogArtifacts, pruneCatalogStore, kubernetesSource, registrySource, staticSource, wellKnownSource } from '../sources/index.js';
import { SnapshotStore } from '../snapshot/index.js';
import type { OpenStateStoreOptions, StateStore } from '../store/index.js';
import { openStateStore, parseStoreSpec, storeLocation } from '../store/index.js';
import type { ReplicaCoordinator, ReplicaStatus } from '../store/replica-coordinator.js';
import { cardSizeLimit } from '../rules/limits.js';
import type { SqlStateStore } from '../store/sql-state-store.js';
import type { SessionStoreTarget } from './persistence.js';
import { adoptSessionFromStore, followIntoStore, restoreFromStore, sessionServiceFor, usedElsewhere } from './persistence.js';
import type { CatalogSigning } from './ai-catalog-route.js';
import { AiCatalogRoute } from './ai-catalog-route.js';
import { createApp } from './app.js';
import { EventBuffer } from './event-buffer.js';
import { EventStreamHub } from './event-stream-route.js';
import { Inspector } from './inspector.js';
import { JournalReader } from './journal.js';
import type { ServerLimits } from './limits.js';
import { DEFAULT_SERVER_LIMITS } from './limits.js';
import type { Logger } from './logger.js';
import { createLogger, logEvents } from './logger.js';
import { createMetrics } from './metrics.js';
import { SnapshotArchive } from './snapshot-archive.js';
import { staticFileServer } from './static-files.js';

export interface ServiceOptions {
  host?: string;
  port?: number;
  /** Required when `host` is not loopback. */
  token?: string;
  /** Host names clients may use besides the bind address and loopback names (a reverse proxy's). */
  allowedHosts?: readonly string[];
  /** Origins allowed to make non-GET calls besides the service's own. */
  allowedOrigins?: readonly string[];
  /** Request, stream and socket limits (docs/security.md); defaults {@link DEFAULT_SERVER_LIMITS}. */
  limits?: Partial<ServerLimits>;
  /**
   * `GET /.well-known/ai-catalog.json`, the current snapshot as an AI Catalog (docs/service.md):
   * served when `enabled` (404 otherwise). `cacheControl` default `max-age=60`, `hostName`
   * (`host.displayName`) default `a2a-discovery`; with `signing`, the document carries a detached
   * JWS signature (the key is tried once at start: a key that cannot sign is `ERR_CONFIG_INVALID`).
   */
  catalog?: { enabled: boolean; cacheControl?: string; hostName?: string; signing?: CatalogSigning };
  policy: HostPolicyOptions;
  credentials?: (origin: string) => Record<string, string> | undefined;
  signatures?: SignatureOptions;
  vocabulary: ReadonlyArray<VocabularyEntry & Omit<RouteHints, 'tag'>>;
  needs: readonly Need[];
  requireStreaming?: boolean;
  tenant?: TenantPolicy;
  maxAgents?: number;
  /** Routing domains (two-level trees); `maxAgents` default to the tree's. */
  domains?: ReadonlyArray<Omit<RoutingDomain, 'maxAgents'> & { maxAgents?: number }>;
  /**
   * Routing evaluation before each publication that changes routing (docs/routing.md): the
   * vocabulary's examples plus `cases` (or the cases of `casesFile`), alert below `minAccuracy`,
   * hold with `gate`. Unset: routing is evaluated with the vocabulary's examples only, never gated.
   */
  routing?: { minAccuracy?: number; gate?: boolean; cases?: readonly RoutingCase[]; casesFile?: string };
  static?: readonly StaticAgentConfig[];
  /** `catalogFirst`: read each domain's `/.well-known/ai-catalog.json` first (an AI Catalog source over the domains). */
  wellKnown?: { id: string; domains: readonly string[]; pollIntervalMs?: number; catalogFirst?: boolean };
  /** AI Catalog sources (docs/sources.md): catalogs and hosts; signatures checked against `signatures.keys`. */
  aiCatalogs?: ReadonlyArray<{
    id: string;
    catalogs?: readonly string[];
    domains?: readonly string[];
    pollIntervalMs?: number;
    versions?: Readonly<Record<string, string>>;
    maxDepth?: number;
    maxEntries?: number;
    maxCatalogs?: number;
    /** Bytes of one catalog document. Default 1,048,576. */
    maxBytes?: number;
    signatures?: SignatureMode;
  }>;
  registries?: ReadonlyArray<{ id: string; url: string; pollIntervalMs?: number; maxPages?: number }>;
  kubernetes?: Omit<KubernetesSourceOptions, 'events' | 'clock'>;
  health?: HealthOptions & { staticEnterAfter?: number };
  cache?: Omit<CardCacheOptions, 'fetcher' | 'hostPolicy' | 'store' | 'clock' | 'random' | 'events' | 'check'> & { maxBodyBytes?: number; totalTimeoutMs?: number };
  loop?: Pick<DiscoveryLoopOptions, 'cycleIntervalMs' | 'resyncIntervalMs' | 'startupTimeoutMs' | 'maxRemovalShare' | 'minPublishIntervalMs'>;
  root?: { name?: string } & ({ kind: 'routed'; fallback?: string } | { kind: 'model'; model: string | BaseLlm });
  /**
   * `history`: where conversations live — `store` (default: ADK's `DatabaseSessionService` on the
   * database of a SQLite or PostgreSQL store given by description) or `memory`.
   */
  sessions?: { idleTimeoutMs?: number; maxSessions?: number; allowAdkMetadata?: boolean; history?: 'store' | 'memory' };
  clock?: Clock;
  logger?: Logger;
  /** Folder of the dashboard's files. Default: the package's `web/`. */
  webRoot?: string;
  /** Extra sources (the demo's, tests'). */
  extraSources?: readonly Source[];
  /**
   * The state store: a description (`memory`, `sqlite:<path>`, `postgres://user@host:5432/db`)
   * that the service opens and closes, or an open store the caller owns. Default `memory`.
   * `a2a-discovery serve` defaults to a SQLite file under the data directory.
   */
  store?: string | StateStore;
  /** For a store given by description: the data directory (relative SQLite paths), the PostgreSQL password, retention. */
  storeOptions?: Pick<OpenStateStoreOptions, 'dataDir' | 'password' | 'retention' | 'schema'>;
  /**
   * Several replicas on one PostgreSQL store (given by description): the leader election's
   * timings (docs/deployment.md). Every replica on PostgreSQL takes part; alone, it leads.
   */
  replica?: { leaderRetryMs?: number; pollMs?: number; leaseMs?: number; id?: string };
}

export interface RunningService {
  readonly url: string;
  readonly loop: DiscoveryLoop;
  readonly cache: CardCache;
  readonly trees: TreeFactory;
  readonly sessions: SessionRunner;
  readonly events: EventStream;
  readonly policy: HostPolicy;
  /** The state store (memory unless configured). */
  readonly store: StateStore;
  /** Writes everything the store has not received yet (publications, pins, journal). */
  flushStore(): Promise<void>;
  /** On a PostgreSQL store: this replica's role, epoch and lag. */
  replica(): ReplicaStatus | undefined;
  /** Stops the loop, finishes in-flight work and closes every server and connection, within `timeoutMs`. */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts the service. Throws `ERR_CONFIG_INVALID` for unsafe settings (no token on a public bind). */
export async function startService(o: ServiceOptions): Promise<RunningService> {
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? 7340;
  if (!isLoopbackHost(host) && (o.token === undefined || o.token === '')) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `binding to ${host} (not loopback) requires a bearer token (server.tokenEnv or server.tokenFile)`, { path: 'server.host' });
  }
  if (o.catalog?.enabled === true) await checkCatalogOptions(o.catalog);
  const clock = o.clock ?? systemClock;
  const log = o.logger ?? createLogger();
  const ownStore = typeof o.store !== 'object';
  const store = typeof o.store === 'object' ? o.store : await openStateStore(o.store ?? 'memory', { clock, ...o.storeOptions, ...(o.replica?.id !== undefined && { replica: o.replica.id }) });
  let startSeq: number;
  let sessionStore: Awaited<ReturnType<typeof sessionServiceFor>>;
  try {
    startSeq = await store.lastSeq();
    sessionStore = await sessionServiceFor(o.sessions?.history === 'memory' || !ownStore ? { kind: 'memory' } : sessionTarget(o.store as string | undefined, o.storeOptions), store.exclusive && ((work) => store.exclusive!(work)));
  } catch (err) {
    if (ownStore) await store.close().catch(() => undefined);
    throw err;
  }
  const events = new EventStream({ wallNow: () => clock.wallNow(), startSeq });
  const offLog = logEvents(events, log);
  routeAdkLogs(log);
  const policy = HostPolicy.from(o.policy);
  // cache.maxBodyBytes: the card fetcher's body cap, inline cards' and the content checks' byte limit alike.
  const cardSize = cardSizeLimit(o.cache?.maxBodyBytes);
  const check = { allowLoopback: o.policy.allowLoopback ?? false, ...(o.signatures && { signatures: o.signatures }) };
  const fetcher = createCardFetcher({
    policy,
    ...(o.credentials && { credentials: o.credentials }),
    ...cardSize.fetcher,
    ...(o.cache?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.cache.totalTimeoutMs }),
    ...(o.cache?.maxFetchesPerOrigin !== undefined && { maxConnectionsPerOrigin: o.cache.maxFetchesPerOrigin }),
  });
  const { maxBodyBytes: _m, totalTimeoutMs: _t, ...cacheOptions } = o.cache ?? {};
  // Cards carried inline in AI Catalogs reach the cache through this table, as do publishers' digest pins.
  const artifacts = new CatalogArtifacts();
  const cache = new CardCache({
    fetcher: artifacts.fetcher(fetcher, cardSize.fetcher),
    pins: artifacts,
    hostPolicy: policy,
    store: store.cards,
    clock,
    events,
    // Hits are counted per endpoint and published once per burst: a loop cycle over thousands of
    // fresh endpoints costs counters, not thousands of events.
    hitEvents: 'counted',
    ...cacheOptions,
    check: { ...check, ...cardSize.check },
  });

  const sources: Source[] = [];
  if (o.static && o.static.length > 0) sources.push(staticSource({ agents: o.static }));
  // AI Catalog documents are larger than cards: their own fetchers, bounded by each source's maxBytes.
  const catalogFetchers: CardFetcher[] = [];
  const catalogPrefixes: string[] = [];
  const catalogSource = (c: NonNullable<ServiceOptions['aiCatalogs']>[number]): Source => {
    const catalogFetcher = createCardFetcher({
      policy,
      ...(o.credentials && { credentials: o.credentials }),
      maxBodyBytes: c.maxBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes,
      ...(o.cache?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.cache.totalTimeoutMs }),
    });
    catalogFetchers.push(catalogFetcher);
    const { signatures: mode, ...rest } = c;
    const source = aiCatalogSource({
      ...rest,
      maxBytes: c.maxBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes,
      fetcher: catalogFetcher,
      hostPolicy: policy,
      artifacts,
      signatures: { ...o.signatures, mode: mode ?? 'if-present' },
      // Catalog documents survive a restart in the state store (each source under its own prefix).
      store: store.catalogs,
      cache: { ...pick(o.cache, ['defaultTtlMs', 'minTtlMs', 'maxTtlMs', 'maxStaleMs', 'backoffBaseMs', 'backoffMaxMs']) },
      events,
      clock,
    });
    catalogPrefixes.push(source.storePrefix);
    return source;
  };
  if (o.wellKnown?.catalogFirst === true) sources.push(catalogSource({ id: o.wellKnown.id, domains: o.wellKnown.domains, ...(o.wellKnown.pollIntervalMs !== undefined && { pollIntervalMs: o.wellKnown.pollIntervalMs }) }));
  else if (o.wellKnown) sources.push(wellKnownSource(o.wellKnown));
  for (const c of o.aiCatalogs ?? []) sources.push(catalogSource(c));
  for (const r of o.registries ?? []) sources.push(registrySource({ ...r, fetcher, events, clock }));
  if (o.kubernetes) sources.push(kubernetesSource({ ...o.kubernetes, events, clock }));
  sources.push(...(o.extraSources ?? []));

  const policyFetch = createPolicyFetch({ policy, ...(o.credentials && { credentials: o.credentials }) });
  const hints: RouteHints[] = o.vocabulary.map((v) => ({ tag: v.tag, ...(v.keywords && { keywords: v.keywords }), ...(v.examples && { examples: v.examples }) }));
  const rootSpec = o.root ?? { kind: 'routed' as const };
  const treesRef: { trees?: TreeFactory } = {};
  const maxAgents = o.maxAgents ?? 16;
  const domains: RoutingDomain[] = (o.domains ?? []).map((d) => ({ ...d, maxAgents: d.maxAgents ?? maxAgents }));
  const routingCases: RoutingCase[] = [
    ...casesFromVocabulary(o.vocabulary),
    ...(o.routing?.cases ?? []),
    ...(o.routing?.casesFile !== undefined ? await loadCases(o.routing.casesFile) : []),
  ];
  const evaluationRoot =
    rootSpec.kind === 'model'
      ? { kind: 'model' as const, model: rootSpec.model, ...(rootSpec.name !== undefined && { rootName: rootSpec.name }) }
      : { kind: 'routed' as const, hints, ...(rootSpec.fallback !== undefined && { fallback: rootSpec.fallback }) };
  const loop = new DiscoveryLoop({
    sources,
    hostPolicy: policy,
    cache,
    snapshots: new SnapshotStore({ ...(o.storeOptions?.retention?.history !== undefined && { historyLimit: o.storeOptions.retention.history }) }),
    clock,
    events,
    select: {
      needs: o.needs,
      vocabulary: new TagVocabulary(o.vocabulary.map((v) => ({ tag: v.tag, description: v.description }))),
      ...(o.requireStreaming && { required: { streaming: true } }),
      ...(o.tenant && { tenant: o.tenant }),
      ...(o.maxAgents !== undefined && { maxAgents: o.maxAgents }),
      ...(domains.length > 0 && { domains }),
    },
    // Routing accuracy on the labelled cases before each publication that changes routing.
    ...(routingCases.length > 0 && {
      routing: {
        gate: o.routing?.gate ?? false,
        evaluate: async (candidate) => {
          const report = await evaluateRouting(candidate, {
            root: evaluationRoot,
            cases: routingCases,
            tags: o.vocabulary.map((v) => v.tag),
            ...(o.routing?.minAccuracy !== undefined && { minAccuracy: o.routing.minAccuracy }),
          });
          const worst = report.perLabel.filter((l) => l.accuracy < 1).sort((a, b) => a.accuracy - b.accuracy).slice(0, 3);
          return {
            accuracy: report.accuracy,
            minAccuracy: report.minAccuracy,
            passed: report.passed,
            evaluated: report.evaluated,
            ...(worst.length > 0 && { summary: `worst: ${worst.map((l) => `${l.label} ${l.correct}/${l.cases}`).join(', ')}` }),
          };
        },
      },
    }),
    ...(o.health && { health: o.health }),
    ...(o.health?.staticEnterAfter !== undefined && { staticEnterAfter: o.health.staticEnterAfter }),
    ...o.loop,
    // Warm-up: a snapshot whose tree does not build and pass the checks is never published.
    beforePublish: (next) => void treesRef.trees?.prepare(next),
  });
  const trees = new TreeFactory({
    snapshots: loop.snapshots,
    clock,
    events,
    ...(o.sessions?.idleTimeoutMs !== undefined && { idleTimeoutMs: o.sessions.idleTimeoutMs }),
    ...(o.sessions?.maxSessions !== undefined && { maxSessions: o.sessions.maxSessions }),
    // Replicas: a session idle here but served on another replica since keeps its history.
    ...(ownStore && store.kind === 'postgres' && { usedElsewhere: usedElsewhere(store) }),
    buildRoot: snapshotTreeBuilder({
      ...(rootSpec.name !== undefined && { rootName: rootSpec.name }),
      root: rootSpec.kind === 'model' ? { kind: 'model', model: rootSpec.model } : { kind: 'routed', hints, ...(rootSpec.fallback !== undefined && { fallback: rootSpec.fallback }) },
      policy,
      fetchImpl: policyFetch,
      ...(o.sessions?.allowAdkMetadata !== undefined && { allowAdkMetadata: o.sessions.allowAdkMetadata }),
    }),
  });
  treesRef.trees = trees;
  const sessions = new SessionRunner({ trees, events, sessionService: sessionStore.service });
  const owners = new SessionOwners();
  const offOwners = trees.onRelease((sessionId) => owners.release(sessionId));
  const buffer = new EventBuffer(events, 1_000);
  const archive = new SnapshotArchive(loop);
  // The writer is made below; the journal asks it for what it has not written yet.
  const writerRef: { pending?: () => readonly DiscoveryEvent[] } = {};
  const journal = new JournalReader({ store, events, wallNow: () => clock.wallNow(), pending: () => writerRef.pending?.() ?? [] });
  const restored = await restoreFromStore({ store, loop, trees, sessions, owners, archive, buffer, bufferEvents: 1_000, startSeq });
  const storeLog = log.child({ component: 'store' });
  // Several replicas on one PostgreSQL: one leader refreshes, followers adopt its publications.
  let coordinator: ReplicaCoordinator | undefined;
  if (ownStore && store.kind === 'postgres') {
    const { ReplicaCoordinator } = await import('../store/replica-coordinator.js');
    const replicaLog = log.child({ component: 'replica' });
    coordinator = new ReplicaCoordinator({
      store: store as SqlStateStore,
      // The name it journals under too.
      id: store.replica,
      ...(o.replica?.leaderRetryMs !== undefined && { leaderRetryMs: o.replica.leaderRetryMs }),
      ...(o.replica?.pollMs !== undefined && { pollMs: o.replica.pollMs }),
      ...(o.replica?.leaseMs !== undefined && { leaseMs: o.replica.leaseMs }),
      target: {
        current: () => loop.current(),
        adopt: (snapshot) => loop.adopt(snapshot),
        lead: () => startLoop(),
        follow: () => loop.pause(),
      },
      log: (level, message, detail) => replicaLog[level](detail ?? {}, message),
    });
  }
  // The loop starts here (a leader's too): catalog documents kept for a source no longer
  // configured, or under acceptance rules no longer in force, are dropped first.
  const startLoop = async (): Promise<void> => {
    try {
      const dropped = await pruneCatalogStore(store.catalogs, catalogPrefixes);
      if (dropped > 0) storeLog.info({ dropped }, 'dropped stored AI Catalog documents no configured source reads');
    } catch (err) {
      storeLog.warn({ err: (err as Error).message }, 'could not drop stored AI Catalog documents');
    }
    await loop.start();
  };
  const replicaRef = { coordinator };
  let storeFailing = false;
  const follow = followIntoStore({
    store,
    events,
    loop,
    trees,
    sessions,
    owners,
    clock,
    onError: (err) => {
      // Once per failing streak: the store's status says the rest.
      if (!storeFailing) storeLog.error({ err: (err as Error).message }, 'the state store failed a write; serving continues from memory');
      storeFailing = true;
    },
    publishes: () => replicaRef.coordinator === undefined || replicaRef.coordinator.role === 'leader',
  });
  writerRef.pending = () => follow.writer.pending();
  const offStoreOk = events.subscribe(() => {
    if (storeFailing && store.status().ok) {
      storeFailing = false;
      storeLog.info('the state store is writing again');
    }
  });
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...o.limits };
  const refusal = (reason: Parameters<typeof metrics.refusal>[0]) => metrics.refusal(reason);
  const streams = new EventStreamHub({
    buffer,
    limits,
    onRefusal: refusal,
    hello: () => ({ version: loop.current()?.version ?? 0, lastSeq: buffer.since(0).at(-1)?.seq ?? 0 }),
  });
  const metrics = createMetrics({ events, cache, loop, trees, openStreams: () => streams.size, store: () => store.status(), journalDropped: () => follow.writer.dropped, ...(coordinator && { replica: () => coordinator.status() }) });
  const shutdown = new AbortController();
  // The inspector fetches under discovery's policy, bounds and card size, with a fetcher of its own that holds no credentials.
  const inspector = new Inspector({
    policy,
    check,
    cardSize,
    fetch: {
      ...(o.cache?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.cache.totalTimeoutMs }),
      ...(o.cache?.maxFetchesPerOrigin !== undefined && { maxConnectionsPerOrigin: o.cache.maxFetchesPerOrigin }),
    },
    maxConcurrent: limits.maxInspections,
    timeoutMs: limits.inspectTimeoutMs,
    onRefusal: refusal,
  });
  const app = createApp({
    bindHost: host,
    ...(o.allowedHosts && { allowedHosts: o.allowedHosts }),
    ...(o.allowedOrigins && { allowedOrigins: o.allowedOrigins }),
    limits,
    streams,
    onRefusal: refusal,
    loop,
    cache,
    trees,
    sessions,
    owners,
    buffer,
    archive,
    metrics: metrics.registry,
    ...(o.token !== undefined && o.token !== '' && { token: o.token }),
    staticFiles: staticFileServer(o.webRoot),
    shutdownSignal: shutdown.signal,
    storeStatus: () => store.status(),
    journal,
    inspector,
    ...(o.catalog?.enabled === true && {
      aiCatalog: new AiCatalogRoute({
        loop,
        ...(o.catalog.hostName !== undefined && { hostName: o.catalog.hostName }),
        ...(o.catalog.cacheControl !== undefined && { cacheControl: o.catalog.cacheControl }),
        ...(o.catalog.signing && { signing: o.catalog.signing }),
      }),
    }),
    ...(coordinator && {
      replicaStatus: () => coordinator.status(),
      adoptSession: (sessionId: string) => adoptSessionFromStore({ store, loop, trees, sessions, owners, archive }, sessionId),
    }),
  });

  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = serve(
        {
          fetch: app.fetch,
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
  } catch (err) {
    await follow.close();
    offStoreOk();
    await Promise.allSettled([fetcher.close(), ...catalogFetchers.map((f) => f.close()), policyFetch.close(), sessionStore.close(), inspector.close()]);
    if (ownStore) await store.close().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    throw new DiscoveryError(
      'ERR_CONFIG_INVALID',
      code === 'EADDRINUSE' ? `${host}:${port} is already in use; choose another port (--port, or 0 for a free one)` : `cannot listen on ${host}:${port}: ${(err as Error).message}`,
      { cause: err, path: 'server.port' },
    );
  }
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  log.info({ url, policy: policy.describe() }, 'a2a-discovery service listening');
  storeLog.info({ kind: store.kind, location: store.status().location, ...restored }, restored.version > 0 ? 'state restored from the store' : 'state store opened');
  if (coordinator) {
    // A follower until the lock is ours: no cycle runs, not even one asked for by /api/refresh.
    await loop.pause();
    await coordinator.start();
    // A follower serves the stored current snapshot (restored above) at once.
    const current = loop.current();
    if (coordinator.role === 'follower' && current) await loop.adopt(current);
  } else await startLoop();

  let closing: Promise<void> | undefined;
  return {
    url,
    loop,
    cache,
    trees,
    sessions,
    events,
    policy,
    store,
    flushStore: () => follow.writer.flush(),
    replica: () => coordinator?.status(),
    close(timeoutMs = 5_000) {
      closing ??= (async () => {
        shutdown.abort();
        const work = (async () => {
          await loop.stop();
          await new Promise<void>((r) => server.close(() => r()));
        })();
        const bound = new Promise<void>((r) => setTimeout(r, timeoutMs).unref());
        server.closeIdleConnections();
        await Promise.race([work, bound]);
        server.closeAllConnections();
        await follow.close();
        // Releases the leader lock: another replica takes over at its next try.
        await coordinator?.close();
        offStoreOk();
        trees.close();
        offOwners();
        await sessions.close();
        await sessionStore.close().catch(() => undefined);
        metrics.close();
        archive.close();
        journal.close();
        buffer.close();
        await cache.close();
        await Promise.allSettled([fetcher.close(), ...catalogFetchers.map((f) => f.close()), policyFetch.close(), inspector.close()]);
        if (ownStore) await store.close().catch((err: unknown) => storeLog.error({ err: (err as Error).message }, 'closing the state store failed'));
        offLog();
        events.close();
        log.info('a2a-discovery service stopped');
      })();
      return closing;
    },
  };
}

/** The catalog's settings as the route will use them: a header value, a key that signs. */
async function checkCatalogOptions(catalog: NonNullable<ServiceOptions['catalog']>): Promise<void> {
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

/** Where ADK's DatabaseSessionService connects, for a store given by description. */
function sessionTarget(spec: string | undefined, options: ServiceOptions['storeOptions']): SessionStoreTarget {
  const parsed = parseStoreSpec(spec ?? 'memory');
  if ('problem' in parsed || parsed.kind === 'memory') return { kind: 'memory' };
  if (parsed.kind === 'sqlite') return { kind: 'sqlite', sqliteFile: parsed.file === ':memory:' ? ':memory:' : storeLocation(parsed, options?.dataDir) };
  const url = new URL(parsed.url);
  return {
    kind: 'postgres',
    postgres: {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? 5432 : Number(url.port),
      user: decodeURIComponent(url.username),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username),
      ...(options?.password !== undefined && { password: options.password }),
    },
  };
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

/** ADK JS logs through its own global logger; in the service its lines go to ours. */
function routeAdkLogs(log: Logger): void {
  const adk = log.child({ component: 'adk' });
  const text = (args: unknown[]) => args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(' ');
  setAdkLogger({
    log: (_level, ...args) => adk.debug(text(args)),
    debug: (...args) => adk.debug(text(args)),
    info: (...args) => adk.debug(text(args)),
    warn: (...args) => adk.warn(text(args)),
    error: (...args) => adk.error(text(args)),
    setLogLevel: () => undefined,
  });
}

/** The named fields of an optional object that are set. */
function pick<T extends object, K extends keyof T>(from: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  if (from !== undefined) for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}
