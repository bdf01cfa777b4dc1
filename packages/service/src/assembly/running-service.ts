/**
 * The started service's handle ({@link RunningService}): what it serves, the live settings a
 * reload applies in place, and the graceful drain before everything stops within a bound. The
 * parts come built and listening from `startService` (service.ts); nothing here builds one.
 */
import type { Server } from 'node:http';
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CardCache, DiscoveryLoop, EventStream, Snapshot } from 'a2a-discovery';
import { DiscoveryError, HostPolicy } from 'a2a-discovery';
import { DRAIN_DEFAULTS } from 'a2a-discovery/config';
import type { StateStore, ReplicaStatus } from '@a2a-discovery/store';
import type { AdkSessions } from '@a2a-discovery/store/adk-sessions';
import type { Federation } from '../registry/federation.js';
import type { EventBuffer } from '../http/event-buffer.js';
import type { Drain } from '../http/drain.js';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';
import type { JournalReader } from '../telemetry/journal.js';
import type { Logger } from '../telemetry/logger.js';
import { LeaderUrls } from '../auth/replica-auth.js';
import type { Replication } from '../replica/service-replica.js';
import type { ServiceFetchers } from './service-fetchers.js';
import type { ServiceHttp } from './service-http.js';
import type { RoutingSettings } from './service-loop.js';
import { selectOptions } from './service-loop.js';
import type { ServiceOptions } from './service-options.js';
import type { ServiceSources } from './service-sources.js';
import type { SnapshotArchive } from './snapshot-archive.js';

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

/** Every part of a started service the handle reads, reconfigures or closes. */
export interface ServiceParts {
  /** Where the service listens, and its server. */
  readonly url: string;
  readonly server: Server;
  readonly log: Logger;
  /** The store's log (`component: store`). */
  readonly storeLog: Logger;
  /** Stops writing the events to the log. */
  readonly offLog: () => void;
  readonly events: EventStream;
  readonly store: StateStore;
  /** True when the service opened the store, and closes it. */
  readonly ownStore: boolean;
  readonly sessionStore: AdkSessions;
  readonly fetchers: ServiceFetchers;
  readonly cache: CardCache;
  readonly sourceSet: ServiceSources;
  readonly routing: RoutingSettings;
  readonly trees: TreeFactory;
  readonly sessions: SessionRunner;
  /** Stops releasing owners when trees release sessions. */
  readonly offOwners: () => void;
  readonly loop: DiscoveryLoop;
  /** The active check (`health.activeCheck`). */
  readonly activeCheck: { close(): Promise<void> };
  readonly buffer: EventBuffer;
  readonly archive: SnapshotArchive;
  readonly journal: JournalReader;
  readonly replication: Replication;
  readonly http: ServiceHttp;
  readonly drain: Drain;
}

/** The handle over the parts of a service that listens: `close()` runs once, later calls share its promise. */
export function runningService(o: ServiceOptions, p: ServiceParts): RunningService {
  const drainLog = p.log.child({ component: 'drain' });
  let closing: Promise<void> | undefined;
  return {
    url: p.url,
    loop: p.loop,
    cache: p.cache,
    trees: p.trees,
    sessions: p.sessions,
    events: p.events,
    policy: p.fetchers.policy,
    store: p.store,
    flushStore: () => p.replication.follow.writer.flush(),
    replica: () => p.replication.coordinator?.status(),
    federation: p.http.federation,
    reconfigure: (next, changed) => reconfigure(o, p, next, changed),
    close(timeoutMs = 5_000) {
      closing ??= stop(o, p, drainLog, timeoutMs);
      return closing;
    },
  };
}

/** {@link RunningService.reconfigure}: every new setting validated first, then each applied where it lives. */
async function reconfigure(o: ServiceOptions, p: ServiceParts, next: ServiceOptions, changed: readonly string[]): Promise<Snapshot | undefined> {
  const { fetchers, routing, http, sourceSet } = p;
  const touched = (...keys: string[]) => changed.some((c) => keys.some((k) => c === k || c.startsWith(`${k}.`)));
  // Validated first: a policy that does not build changes nothing.
  const nextPolicy = touched('allow', 'allowCidrs') ? HostPolicy.from({ ...next.policy, allowLoopback: o.policy.allowLoopback ?? false }) : undefined;
  const nextRouting = touched('vocabulary', 'routing') ? await routing.prepare(next) : undefined;
  const nextLeaderUrls = touched('replica.leaderUrls') ? new LeaderUrls(next.replica?.leaderUrls) : undefined;
  if (nextRouting !== undefined && nextRouting.evaluates !== routing.cases.length > 0) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `routing evaluation cannot be turned ${nextRouting.evaluates ? 'on' : 'off'} without a restart (labelled cases: the vocabulary's examples, routing.cases)`, { path: 'routing.cases' });
  }
  nextRouting?.commit();
  if (nextPolicy !== undefined) fetchers.policy.update(nextPolicy);
  // New trust keys (or mode, algorithms): every later card, and every cached one now, is judged with them.
  if (touched('signatures')) {
    fetchers.check.signatures = next.signatures;
    const r = await p.cache.recheck({ ...fetchers.check, ...fetchers.cardSize.check });
    p.log.info(r, 'cached cards judged again with the reloaded signature settings');
  }
  // The replica key rotates (the one before stays accepted for replica.keyGraceMs); the leader URLs apply to the next request.
  if (touched('replica.key', 'replica.keyEnv', 'replica.keyFile')) http.replicaAuth?.rotate(next.replica?.key);
  if (nextLeaderUrls !== undefined && http.followerProxy) http.followerProxy.leaderUrls = nextLeaderUrls;
  // The limits the app and the event streams read at each request, updated in place (reload.ts lists the live ones).
  if (touched('server.limits')) Object.assign(http.limits, { ...DEFAULT_SERVER_LIMITS, ...next.limits });
  // Sources whose settings changed are built again (and started by the loop); the others stay as they run.
  const sourcesNow = touched(...SOURCE_KEYS) ? sourceSet.next(next) : undefined;
  try {
    return await p.loop.reconfigure({
      ...(touched('needs', 'vocabulary', 'policies') && { select: selectOptions(next) }),
      ...(sourcesNow !== undefined && { sources: sourcesNow }),
      ...(nextPolicy !== undefined && { admission: true }),
      // The credentials are replaced in place (serve's ReloadableCredentials): what each card requires is judged again.
      ...(touched('credentials') && { credentials: true }),
    });
  } finally {
    await sourceSet.released();
  }
}

/** {@link RunningService.close}: the drain, then the server within `timeoutMs`, then every part in turn. */
async function stop(o: ServiceOptions, p: ServiceParts, drainLog: Logger, timeoutMs: number): Promise<void> {
  const { server, log, http } = p;
  await drainFirst(o, p, drainLog);
  http.shutdown.abort();
  const work = (async () => {
    await p.loop.stop();
    await new Promise<void>((r) => server.close(() => r()));
  })();
  const bound = new Promise<void>((r) => setTimeout(r, timeoutMs).unref());
  server.closeIdleConnections();
  await Promise.race([work, bound]);
  server.closeAllConnections();
  await p.replication.close();
  p.trees.close();
  p.offOwners();
  await p.sessions.close();
  await p.sessionStore.close().catch(() => undefined);
  http.metrics.close();
  p.archive.close();
  p.journal.close();
  p.buffer.close();
  await p.cache.close();
  await p.activeCheck.close();
  await Promise.allSettled([p.fetchers.close(), http.inspector.close(), http.federation.close()]);
  if (p.ownStore) await p.store.close().catch((err: unknown) => p.storeLog.error({ err: (err as Error).message }, 'closing the state store failed'));
  drainLog.info('the store is flushed and closed');
  p.offLog();
  p.events.close();
  log.info('a2a-discovery service stopped');
}

/** The graceful drain, each step logged (docs/operations.md "Graceful drain"). */
async function drainFirst(o: ServiceOptions, p: ServiceParts, drainLog: Logger): Promise<void> {
  const { drain, replication } = p;
  const drainTimeoutMs = o.drainTimeoutMs ?? DRAIN_DEFAULTS.drainTimeoutMs;
  const streaming = p.http.streams.size;
  drain.begin();
  drainLog.info({ turns: drain.inFlight, drainTimeoutMs }, 'draining: /readyz reports unready; new sessions and turns are refused (503, Retry-After)');
  drainLog.info({ streams: streaming }, 'draining: event streams told to reconnect elsewhere');
  try {
    if (await replication.stepDown()) drainLog.info({ replica: p.store.replica }, 'draining: stepped down as leader; another replica takes over now');
  } catch (err) {
    drainLog.warn({ err: (err as Error).message }, 'draining: stepping down as leader failed; the lock is released when the service stops');
  }
  if (drain.inFlight > 0) drainLog.info({ turns: drain.inFlight, drainTimeoutMs }, 'draining: waiting for the chat turns in flight');
  const aborted = await drain.settle(drainTimeoutMs);
  if (aborted > 0) drainLog.warn({ turns: aborted, drainTimeoutMs }, 'draining: chat turns did not finish within server.drainTimeoutMs and were aborted');
  else drainLog.info('draining: no chat turn left in flight');
}
