/**
 * The service: the discovery loop, the tree factory and the session runner in one process,
 * behind the HTTP API. `startService` composes every part from plain options (the YAML config
 * maps onto them), one build step each, and returns a handle whose `close()` stops everything
 * within a bound.
 */
import type { AddressInfo } from 'node:net';
import { setLogger as setAdkLogger } from '@google/adk';
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CardCache, DiscoveryLoop, Snapshot } from 'a2a-discovery';
import type { Federation } from '../registry/federation.js';
import { systemClock, DiscoveryError, EventStream, HostPolicy } from 'a2a-discovery';
import { isLoopbackHost } from 'a2a-discovery/internal';
import type { StateStore, ReplicaStatus } from '@a2a-discovery/store';
import { EventBuffer } from '../http/event-buffer.js';
import { JournalReader } from '../telemetry/journal.js';
import type { Logger } from '../telemetry/logger.js';
import { createLogger, logEvents } from '../telemetry/logger.js';
import { restoreFromStore } from './persistence.js';
import { buildCache, buildFetchers } from './service-fetchers.js';
import { buildHttp, checkCatalogOptions, listen } from './service-http.js';
import { buildLoop, buildSnapshots, buildTrees, RoutingSettings, selectOptions } from './service-loop.js';
import type { ServiceOptions } from './service-options.js';
import { buildReplication } from '../replica/service-replica.js';
import { LeaderUrls } from '../auth/replica-auth.js';
import { ServiceSources } from './service-sources.js';
import { openStores } from './service-store.js';
import { SnapshotArchive } from './snapshot-archive.js';
import { ListenAddress } from './listen-address.js';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';
import { Drain } from '../http/drain.js';
import { DRAIN_DEFAULTS } from 'a2a-discovery/config';

export type { ServiceOptions } from './service-options.js';

/** The configuration keys a source's settings are read from (a change of one rebuilds the sources it concerns). */
const SOURCE_KEYS = ['static', 'sources', 'signatures'];

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
  /** The ARD search's federation: the registries it knows, referred to or asked (docs/registry-api.md "Federation"). */
  readonly federation: Federation;
  /**
   * Applies the live settings of `next` whose configuration keys are in `changed` (a reload,
   * reload.ts): the allowlist in place, the select options, the routing settings, the sources
   * whose settings changed (service-sources.ts), the signature settings (cached cards judged
   * again), the credentials' verdicts, the request and stream limits. Sessions, pins, the cache
   * and the event streams stay. Returns the snapshot current
   * after the first cycle with them (none on a follower, whose leader publishes).
   */
  reconfigure(next: ServiceOptions, changed: readonly string[]): Promise<Snapshot | undefined>;
  /**
   * Drains, then stops: `/readyz` unready, new sessions and turns refused (503, `Retry-After`), event
   * streams told to reconnect elsewhere, a leading replica steps down, turns in flight finish (up to
   * `drainTimeoutMs`, then are aborted); then stops the loop, flushes the store and closes every server
   * and connection, within `timeoutMs` more (docs/operations.md "Graceful drain").
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts the service. Throws `ERR_CONFIG_INVALID` for unsafe settings (no token on a public bind). */
// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export async function startService(o: ServiceOptions): Promise<RunningService> {
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? 7340;
  if (!isLoopbackHost(host) && (o.token === undefined || o.token === '') && o.oidc === undefined) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `binding to ${host} (not loopback) requires a bearer token (server.tokenEnv or server.tokenFile)`, { path: 'server.host' });
  }
  if (o.catalog?.enabled === true) await checkCatalogOptions(o.catalog);
  const clock = o.clock ?? systemClock;
  const log = o.logger ?? createLogger();
  const { store, ownStore, startSeq, sessionStore } = await openStores(o, clock);
  const events = new EventStream({ wallNow: () => clock.wallNow(), startSeq });
  const offLog = logEvents(events, log);
  routeAdkLogs(log);

  const fetchers = buildFetchers(o);
  const { policy } = fetchers;
  const { cache, artifacts } = buildCache(o, fetchers, { store, clock, events });
  const sourceSet = new ServiceSources(o, { fetchers, artifacts, store, events, clock });
  const { sources } = sourceSet;
  // Dependency order: the snapshots, the trees over them, the loop that publishes into them.
  const snapshots = buildSnapshots(o);
  const routing = new RoutingSettings();
  const { trees, sessions, owners, offOwners } = buildTrees(o, { snapshots, policy, policyFetch: fetchers.policyFetch, store, ownStore, sessionService: sessionStore.service, clock, events, routing });
  // Warm-up: a snapshot whose tree does not build and pass the checks is never published.
  const loop = await buildLoop(o, { sources, policy, cache, snapshots, clock, events, routing, beforePublish: (next) => void trees.prepare(next) });
  const buffer = new EventBuffer(events, 1_000);
  const archive = new SnapshotArchive(loop);
  const restored = await restoreFromStore({ store, loop, trees, sessions, owners, archive, buffer, bufferEvents: 1_000, startSeq });
  const storeLog = log.child({ component: 'store' });
  const replication = await buildReplication(o, { store, ownStore, loop, trees, sessions, owners, events, clock, log, catalogPrefixes: () => sourceSet.catalogPrefixes() });
  const { follow, coordinator } = replication;
  // After the writer (replication's), whose unwritten events it reads; no event is emitted before (restoring emits none).
  const journal = new JournalReader({ store, events, wallNow: () => clock.wallNow(), pending: () => follow.writer.pending(), maxEndpoints: o.limits?.activityEndpoints ?? DEFAULT_SERVER_LIMITS.activityEndpoints });
  // Registries the AI Catalogs announce, read at each search; this service's URL once it listens.
  const announced = () => sourceSet.catalogSources().flatMap((s) => s.registries());
  const listening = new ListenAddress();
  const drain = new Drain();
  const http = buildHttp(o, { host, fetchers, loop, cache, trees, sessions, owners, buffer, archive, journal, store, events, replication, announced, self: () => listening.url(), drain, log });
  const { metrics, inspector, shutdown, federation, streams } = http;

  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(http, host, port);
  } catch (err) {
    await replication.abandon();
    await Promise.allSettled([fetchers.close(), sessionStore.close(), inspector.close(), federation.close()]);
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
  listening.bind(url);
  log.info({ url, policy: policy.describe() }, 'a2a-discovery service listening');
  storeLog.info({ kind: store.kind, location: store.status().location, ...restored }, restored.version > 0 ? 'state restored from the store' : 'state store opened');
  // A start (on a durable store, a restart) is journaled, before the first cycle's events.
  const { version, pins, alerts, previousReplica } = restored;
  events.emit({ type: 'service.started', replica: store.replica, ...(previousReplica !== undefined && { previousReplica }), restored: { version, pins, alerts } });
  await replication.start(url);

  /** The graceful drain, each step logged (docs/operations.md "Graceful drain"). */
  const drainLog = log.child({ component: 'drain' });
  const drainTimeoutMs = o.drainTimeoutMs ?? DRAIN_DEFAULTS.drainTimeoutMs;
  const drainFirst = async (): Promise<void> => {
    const streaming = streams.size;
    drain.begin();
    drainLog.info({ turns: drain.inFlight, drainTimeoutMs }, 'draining: /readyz reports unready; new sessions and turns are refused (503, Retry-After)');
    drainLog.info({ streams: streaming }, 'draining: event streams told to reconnect elsewhere');
    try {
      if (await replication.stepDown()) drainLog.info({ replica: store.replica }, 'draining: stepped down as leader; another replica takes over now');
    } catch (err) {
      drainLog.warn({ err: (err as Error).message }, 'draining: stepping down as leader failed; the lock is released when the service stops');
    }
    if (drain.inFlight > 0) drainLog.info({ turns: drain.inFlight, drainTimeoutMs }, 'draining: waiting for the chat turns in flight');
    const aborted = await drain.settle(drainTimeoutMs);
    if (aborted > 0) drainLog.warn({ turns: aborted, drainTimeoutMs }, 'draining: chat turns did not finish within server.drainTimeoutMs and were aborted');
    else drainLog.info('draining: no chat turn left in flight');
  };

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
    federation,
    async reconfigure(next, changed) {
      const touched = (...keys: string[]) => changed.some((c) => keys.some((k) => c === k || c.startsWith(`${k}.`)));
      // Validated first: a policy that does not build changes nothing.
      const nextPolicy = touched('allow', 'allowCidrs') ? HostPolicy.from({ ...next.policy, allowLoopback: o.policy.allowLoopback ?? false }) : undefined;
      const nextRouting = touched('vocabulary', 'routing') ? await routing.prepare(next) : undefined;
      const nextLeaderUrls = touched('replica.leaderUrls') ? new LeaderUrls(next.replica?.leaderUrls) : undefined;
      if (nextRouting !== undefined && nextRouting.evaluates !== routing.cases.length > 0) {
        throw new DiscoveryError('ERR_CONFIG_INVALID', `routing evaluation cannot be turned ${nextRouting.evaluates ? 'on' : 'off'} without a restart (labelled cases: the vocabulary's examples, routing.cases)`, { path: 'routing.cases' });
      }
      nextRouting?.commit();
      if (nextPolicy !== undefined) policy.update(nextPolicy);
      // New trust keys (or mode, algorithms): every later card, and every cached one now, is judged with them.
      if (touched('signatures')) {
        fetchers.check.signatures = next.signatures;
        const r = await cache.recheck({ ...fetchers.check, ...fetchers.cardSize.check });
        log.info(r, 'cached cards judged again with the reloaded signature settings');
      }
      // The replica key rotates (the one before stays accepted for replica.keyGraceMs); the leader URLs apply to the next request.
      if (touched('replica.key', 'replica.keyEnv', 'replica.keyFile')) http.replicaAuth?.rotate(next.replica?.key);
      if (nextLeaderUrls !== undefined && http.followerProxy) http.followerProxy.leaderUrls = nextLeaderUrls;
      // The limits the app and the event streams read at each request, updated in place (reload.ts lists the live ones).
      if (touched('server.limits')) Object.assign(http.limits, { ...DEFAULT_SERVER_LIMITS, ...next.limits });
      // Sources whose settings changed are built again (and started by the loop); the others stay as they run.
      const sourcesNow = touched(...SOURCE_KEYS) ? sourceSet.next(next) : undefined;
      try {
        return await loop.reconfigure({
          ...(touched('needs', 'vocabulary', 'policies') && { select: selectOptions(next) }),
          ...(sourcesNow !== undefined && { sources: sourcesNow }),
          ...(nextPolicy !== undefined && { admission: true }),
          // The credentials are replaced in place (serve's ReloadableCredentials): what each card requires is judged again.
          ...(touched('credentials') && { credentials: true }),
        });
      } finally {
        await sourceSet.released();
      }
    },
    close(timeoutMs = 5_000) {
      closing ??= (async () => {
        await drainFirst();
        shutdown.abort();
        const work = (async () => {
          await loop.stop();
          await new Promise<void>((r) => server.close(() => r()));
        })();
        const bound = new Promise<void>((r) => setTimeout(r, timeoutMs).unref());
        server.closeIdleConnections();
        await Promise.race([work, bound]);
        server.closeAllConnections();
        await replication.close();
        trees.close();
        offOwners();
        await sessions.close();
        await sessionStore.close().catch(() => undefined);
        metrics.close();
        archive.close();
        journal.close();
        buffer.close();
        await cache.close();
        await Promise.allSettled([fetchers.close(), inspector.close(), federation.close()]);
        if (ownStore) await store.close().catch((err: unknown) => storeLog.error({ err: (err as Error).message }, 'closing the state store failed'));
        drainLog.info('the store is flushed and closed');
        offLog();
        events.close();
        log.info('a2a-discovery service stopped');
      })();
      return closing;
    },
  };
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
