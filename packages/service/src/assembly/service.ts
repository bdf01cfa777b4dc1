/**
 * The service: the discovery loop, the tree factory and the session runner in one process,
 * behind the HTTP API. `startService` composes every part from plain options (the YAML config
 * maps onto them), one phase after another (the stores, discovery, the state kept, the HTTP side,
 * then listening), and returns a handle (running-service.ts) whose `close()` stops everything
 * within a bound.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { setLogger as setAdkLogger } from '@google/adk';
import type { CardCache, Clock, DiscoveryLoop } from 'a2a-discovery';
import { systemClock, DiscoveryError, EventStream, CallHealth } from 'a2a-discovery';
import { Foreground } from 'a2a-discovery/adk';
import { isLoopbackHost } from 'a2a-discovery/internal';
import { EventBuffer } from '../http/event-buffer.js';
import { JournalReader } from '../telemetry/journal.js';
import type { Logger } from '../telemetry/logger.js';
import { createLogger, logEvents } from '../telemetry/logger.js';
import { restoreFromStore } from './persistence.js';
import { buildCache, buildFetchers } from './service-fetchers.js';
import type { ServiceFetchers } from './service-fetchers.js';
import type { ServiceHttp } from './service-http.js';
import { buildHttp, checkCatalogOptions, listen } from './service-http.js';
import type { ServiceTrees } from './service-loop.js';
import { buildActiveCheck, buildLoop, buildSnapshots, buildTrees, RoutingSettings } from './service-loop.js';
import type { ServiceOptions } from './service-options.js';
import type { Replication } from '../replica/service-replica.js';
import { buildReplication } from '../replica/service-replica.js';
import { ServiceSources } from './service-sources.js';
import type { ServiceStores } from './service-store.js';
import { openStores } from './service-store.js';
import { SnapshotArchive } from './snapshot-archive.js';
import { ListenAddress } from './listen-address.js';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';
import { Drain } from '../http/drain.js';
import type { RunningService } from './running-service.js';
import { runningService } from './running-service.js';

export type { ServiceOptions } from './service-options.js';
export type { RunningService } from './running-service.js';

/** Starts the service. Throws `ERR_CONFIG_INVALID` for unsafe settings (no token on a public bind). */
export async function startService(o: ServiceOptions): Promise<RunningService> {
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? 7340;
  await checkStartOptions(o, host);
  const base = await openBase(o);
  const discovery = await buildDiscovery(o, base);
  const kept = await keepState(o, base, discovery);
  const web = buildWeb(o, host, base, discovery, kept);
  const server = await listenOrRelease(web.http, host, port, { ...base, ...discovery, ...kept });
  const url = announceStart(server, { ...base, ...discovery, ...kept, ...web });
  await kept.replication.start(url);
  return runningService(o, { ...base, ...discovery, ...kept, ...web, server, url });
}

/** The settings refused before anything opens: a public bind without a token, a catalog that cannot be served. */
async function checkStartOptions(o: ServiceOptions, host: string): Promise<void> {
  if (!isLoopbackHost(host) && (o.token === undefined || o.token === '') && o.oidc === undefined) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `binding to ${host} (not loopback) requires a bearer token (server.tokenEnv or server.tokenFile)`, { path: 'server.host' });
  }
  if (o.catalog?.enabled === true) await checkCatalogOptions(o.catalog);
}

/** The first phase: the clock, the log, the stores, and the event stream written to the log. */
interface ServiceBase extends ServiceStores {
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventStream;
  /** Stops writing the events to the log. */
  readonly offLog: () => void;
  /**
   * The conversation turns in flight: the card cache starts fewer refreshes meanwhile
   * (cache.maxConcurrentFetchesDuringTurns), and the store's background writes wait for a moment with none.
   */
  readonly foreground: Foreground;
}

/** Opens the stores and the event stream (numbered after the journal's last event); ADK's log goes to ours. */
async function openBase(o: ServiceOptions): Promise<ServiceBase> {
  const clock = o.clock ?? systemClock;
  const log = o.logger ?? createLogger();
  const foreground = new Foreground({ clock });
  const stores = await openStores(o, clock, foreground);
  const events = new EventStream({ wallNow: () => clock.wallNow(), startSeq: stores.startSeq });
  const offLog = logEvents(events, log);
  routeAdkLogs(log);
  return { ...stores, clock, log, events, offLog, foreground };
}

/** The second phase: what discovers and publishes, and the trees and sessions over its snapshots. */
interface ServiceDiscovery extends ServiceTrees {
  readonly fetchers: ServiceFetchers;
  readonly cache: CardCache;
  readonly sourceSet: ServiceSources;
  readonly routing: RoutingSettings;
  readonly loop: DiscoveryLoop;
  readonly calls: CallHealth;
  /** The active check (`health.activeCheck`); closed before the fetchers it calls through. */
  readonly activeCheck: { close(): Promise<void> };
}

/** Builds the fetchers, the card cache, the sources, then the snapshots, the trees over them and the loop (not started). */
async function buildDiscovery(o: ServiceOptions, b: ServiceBase): Promise<ServiceDiscovery> {
  const { store, clock, events, foreground } = b;
  const fetchers = buildFetchers(o);
  const { policy } = fetchers;
  const { cache, artifacts } = buildCache(o, fetchers, { store, clock, events, foreground });
  const sourceSet = new ServiceSources(o, { fetchers, artifacts, store, events, clock });
  const { sources } = sourceSet;
  // Dependency order: the snapshots, the trees over them, the loop that publishes into them.
  const snapshots = buildSnapshots(o);
  const routing = new RoutingSettings();
  // Health from real calls: the sessions' turns record, the loop's health and rollouts read.
  const calls = new CallHealth(clock);
  // A new session lands on a staged rollout's candidate by its share (the loop is built next).
  const late: { loop?: DiscoveryLoop } = {};
  const assign = (sessionId: string) => late.loop?.rollouts?.assign(sessionId);
  const built = buildTrees(o, { snapshots, policy, policyFetch: fetchers.policyFetch, store, ownStore: b.ownStore, sessionService: b.sessionStore.service, clock, events, routing, calls, assign, foreground });
  const { trees } = built;
  // Warm-up: a snapshot whose tree does not build and pass the checks is never published.
  const loop = (late.loop = await buildLoop(o, { sources, policy, cache, snapshots, clock, events, routing, calls, beforePublish: (next) => void trees.prepare(next) }));
  const activeCheck = buildActiveCheck(o, { loop, calls, policy, policyFetch: fetchers.policyFetch, budget: fetchers.budget, clock, events });
  activeCheck.check.start();
  return { ...built, fetchers, cache, sourceSet, routing, loop, calls, activeCheck };
}

/** The third phase: the state kept and restored, its writer into the store, and the journal over both. */
interface ServiceKept {
  readonly buffer: EventBuffer;
  readonly archive: SnapshotArchive;
  /** What the store gave back at start. */
  readonly restored: Awaited<ReturnType<typeof restoreFromStore>>;
  readonly storeLog: Logger;
  readonly replication: Replication;
  readonly journal: JournalReader;
}

/** Restores the store's snapshots, pins and events, then builds the store's writer (and the replicas' election) and the journal. */
async function keepState(o: ServiceOptions, b: ServiceBase, d: ServiceDiscovery): Promise<ServiceKept> {
  const { store, events, clock, log } = b;
  const { loop, trees, sessions, owners, sourceSet } = d;
  const buffer = new EventBuffer(events, 1_000);
  const archive = new SnapshotArchive(loop);
  const restored = await restoreFromStore({ store, loop, trees, sessions, owners, archive, buffer, bufferEvents: 1_000, startSeq: b.startSeq });
  const storeLog = log.child({ component: 'store' });
  const replication = await buildReplication(o, { store, ownStore: b.ownStore, loop, trees, sessions, owners, events, clock, log, calls: d.calls, catalogPrefixes: () => sourceSet.catalogPrefixes(), turns: b.foreground });
  const { follow } = replication;
  // After the writer (replication's), whose unwritten events it reads; no event is emitted before (restoring emits none).
  const journal = new JournalReader({ store, events, wallNow: () => clock.wallNow(), pending: () => follow.writer.pending(), maxEndpoints: o.limits?.activityEndpoints ?? DEFAULT_SERVER_LIMITS.activityEndpoints });
  return { buffer, archive, restored, storeLog, replication, journal };
}

/** The fourth phase: the HTTP side, the address it will listen on, and the graceful drain it honours. */
interface ServiceWeb {
  readonly http: ServiceHttp;
  readonly listening: ListenAddress;
  readonly drain: Drain;
}

/** Builds the app over every part; nothing listens yet. */
function buildWeb(o: ServiceOptions, host: string, b: ServiceBase, d: ServiceDiscovery, k: ServiceKept): ServiceWeb {
  const { sourceSet } = d;
  // Registries the AI Catalogs announce, read at each search; this service's URL once it listens.
  const announced = () => sourceSet.catalogSources().flatMap((s) => s.registries());
  const listening = new ListenAddress();
  const drain = new Drain();
  const { fetchers, loop, cache, trees, sessions, owners, calls } = d;
  const { buffer, archive, journal, replication } = k;
  const http = buildHttp(o, { host, fetchers, loop, calls, cache, trees, sessions, owners, buffer, archive, journal, store: b.store, events: b.events, replication, announced, self: () => listening.url(), drain, log: b.log });
  return { http, listening, drain };
}

/** Listens; when it cannot, releases what was opened (nothing started yet) and says why (`ERR_CONFIG_INVALID`). */
async function listenOrRelease(http: ServiceHttp, host: string, port: number, p: ServiceBase & ServiceDiscovery & ServiceKept): Promise<Server> {
  try {
    return await listen(http, host, port);
  } catch (err) {
    await p.replication.abandon();
    await p.activeCheck.close();
    await Promise.allSettled([p.fetchers.close(), p.sessionStore.close(), http.inspector.close(), http.federation.close()]);
    if (p.ownStore) await p.store.close().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    throw new DiscoveryError(
      'ERR_CONFIG_INVALID',
      code === 'EADDRINUSE' ? `${host}:${port} is already in use; choose another port (--port, or 0 for a free one)` : `cannot listen on ${host}:${port}: ${(err as Error).message}`,
      { cause: err, path: 'server.port' },
    );
  }
}

/** Binds the service's URL, logs the start and journals it (before the first cycle's events); returns the URL. */
function announceStart(server: Server, p: ServiceBase & ServiceDiscovery & ServiceKept & ServiceWeb): string {
  const { log, store, restored } = p;
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  p.listening.bind(url);
  log.info({ url, policy: p.fetchers.policy.describe() }, 'a2a-discovery service listening');
  p.storeLog.info({ kind: store.kind, location: store.status().location, ...restored }, restored.version > 0 ? 'state restored from the store' : 'state store opened');
  // A start (on a durable store, a restart) is journaled, before the first cycle's events.
  const { version, pins, alerts, previousReplica } = restored;
  p.events.emit({ type: 'service.started', replica: store.replica, ...(previousReplica !== undefined && { previousReplica }), restored: { version, pins, alerts } });
  return url;
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
