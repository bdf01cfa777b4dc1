/**
 * The service's state in the store: every publication, pin and event is written as it happens,
 * and several replicas on one PostgreSQL elect one leader that refreshes while the followers
 * adopt its publications.
 */
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { CallHealth, Clock, EventStream, DiscoveryLoop } from 'a2a-discovery';
import { REPLICA_DEFAULTS } from 'a2a-discovery/config';
import { pruneCatalogStore } from 'a2a-discovery/internal';
import type { StateStore, ReplicaCoordinator, SqlStateStore, TurnsInFlight } from '@a2a-discovery/store';
import type { Logger } from '../telemetry/logger.js';
import { defaultAdvertiseUrl } from './follower-proxy.js';
import { followIntoStore, openAlertsIn } from '../assembly/persistence.js';
import { RolloutReplication } from './rollout-replication.js';
import type { ServiceOptions } from '../assembly/service-options.js';
import type { SessionOwners } from '../auth/session-owners.js';

export interface Replication {
  /** On a PostgreSQL store the service opened: the leader election. */
  readonly coordinator: ReplicaCoordinator | undefined;
  /** What writes into the store (publications, pins, the journal). */
  readonly follow: ReturnType<typeof followIntoStore>;
  /**
   * Starts the loop, or takes part in the election (a follower serves the stored snapshot at once).
   * `url`: where this service listens, advertised as the leader's address unless `replica.advertiseUrl` says otherwise.
   */
  start(url?: string): Promise<void>;
  /** Stops writing, then releases the leader lock. */
  close(): Promise<void>;
  /**
   * Draining: a leader stops discovery, writes what it has not written yet, and steps down so another
   * replica takes over at once (ReplicaCoordinator.stepDown). True when this replica was leading.
   */
  stepDown(): Promise<boolean>;
  /** Stops writing, before {@link start} (the service could not listen). */
  abandon(): Promise<void>;
}

/** What the replication is built over: the service's parts it writes from, starts and steps down. */
interface ReplicationParts {
  store: StateStore;
  ownStore: boolean;
  loop: DiscoveryLoop;
  trees: TreeFactory;
  sessions: SessionRunner;
  owners: SessionOwners;
  events: EventStream;
  clock: Clock;
  log: Logger;
  /** The calls the sessions make: with replicas, their turns during a staged rollout are shared with the leader. */
  calls?: CallHealth;
  /** The URL prefixes of the AI Catalog documents the configured sources read. */
  catalogPrefixes: () => readonly string[];
  /** The conversation turns in flight (the session runner's): the store's writes wait for a moment with none. */
  turns?: TurnsInFlight;
}

/** Builds the store's writer and, with replicas, the coordinator; nothing starts before {@link Replication.start}. */
export async function buildReplication(o: Pick<ServiceOptions, 'replica'>, p: ReplicationParts): Promise<Replication> {
  const { store, loop, events } = p;
  const storeLog = p.log.child({ component: 'store' });
  let listening: string | undefined;
  const startLoop = (): Promise<void> => startDiscovery(p, storeLog);
  const replicated = p.ownStore && store.kind === 'postgres';
  // Staged rollouts across replicas: the leader's steps, every replica's turns (rollout-replication.ts).
  const rollouts = replicated && loop.rollouts !== undefined && p.calls !== undefined ? shareRollouts(o, { ...p, rollouts: loop.rollouts, calls: p.calls }) : undefined;
  // Several replicas on one PostgreSQL: one leader refreshes, followers adopt its publications.
  const coordinator = replicated
    ? await buildCoordinator(o, p, { lead: (epoch) => takeTheLead(epoch, p, startLoop, rollouts, storeLog), listening: () => listening, rollouts })
    : undefined;
  const failures = storeFailures(storeLog);
  const follow = followIntoStore({
    store,
    events,
    loop,
    trees: p.trees,
    sessions: p.sessions,
    owners: p.owners,
    clock: p.clock,
    onError: failures.failed,
    publishes: () => coordinator === undefined || coordinator.role === 'leader',
    ...(p.turns && { turns: p.turns }),
  });
  const offStoreOk = events.subscribe(() => failures.answered(store));
  return {
    coordinator,
    follow,
    async start(url) {
      listening = url;
      if (!coordinator) return startLoop();
      // A follower until the lock is ours: no cycle runs, not even one asked for by /api/refresh.
      await loop.pause();
      await coordinator.start();
      // A follower serves the stored current snapshot (restored before) at once.
      const current = loop.current();
      if (coordinator.role === 'follower' && current) await loop.adopt(current);
    },
    async stepDown() {
      if (!coordinator) return false;
      if (coordinator.role === 'leader') {
        // Its last publication and pins reach the store under its own epoch, before another replica leads.
        await loop.pause();
        await follow.writer.flush().catch(() => undefined);
      }
      return coordinator.stepDown('the service is draining');
    },
    async close() {
      await follow.close();
      // Releases the leader lock: another replica takes over at its next try.
      await coordinator?.close();
      rollouts?.close();
      offStoreOk();
    },
    async abandon() {
      await follow.close();
      rollouts?.close();
      offStoreOk();
    },
  };
}

/**
 * The leader election on the service's PostgreSQL store: `lead` runs when this replica leads (at
 * start or taking over); followers answer the leader's lists from the address it advertises:
 * `replica.advertiseUrl`, else one derived from the URL the service listens on (follower-proxy.ts).
 */
async function buildCoordinator(
  o: Pick<ServiceOptions, 'replica'>,
  p: Pick<ReplicationParts, 'store' | 'loop' | 'log'>,
  h: { lead: (epoch: number) => Promise<void>; listening: () => string | undefined; rollouts: RolloutReplication | undefined },
): Promise<ReplicaCoordinator> {
  const { store, loop } = p;
  const { ReplicaCoordinator } = await import('@a2a-discovery/store/replicas');
  const replicaLog = p.log.child({ component: 'replica' });
  return new ReplicaCoordinator({
    store: store as SqlStateStore,
    // The name it journals under too.
    id: store.replica,
    ...(o.replica?.leaderRetryMs !== undefined && { leaderRetryMs: o.replica.leaderRetryMs }),
    ...(o.replica?.pollMs !== undefined && { pollMs: o.replica.pollMs }),
    ...(o.replica?.leaseMs !== undefined && { leaseMs: o.replica.leaseMs }),
    ...(o.replica?.acceptNewerMigrations !== undefined && { acceptNewerMigrations: o.replica.acceptNewerMigrations }),
    // Followers answer the leader's lists from this address (follower-proxy.ts).
    advertiseUrl: () => {
      const listening = h.listening();
      return o.replica?.advertiseUrl ?? (listening === undefined ? undefined : defaultAdvertiseUrl(listening));
    },
    target: {
      current: () => loop.current(),
      adopt: (snapshot) => loop.adopt(snapshot),
      lead: (epoch) => h.lead(epoch),
      follow: () => loop.pause(),
      ...(h.rollouts !== undefined && { rollout: (role: 'leader' | 'follower') => (role === 'leader' ? h.rollouts!.gather() : h.rollouts!.follow()) }),
    },
    log: (level, message, detail) => replicaLog[level](detail ?? {}, message),
  });
}

/**
 * The staged rollout shared through the store: a call stays in what a follower writes for two
 * polls or two heartbeats, whichever is longer, so the leader reads it at least once.
 */
function shareRollouts(
  o: Pick<ServiceOptions, 'replica'>,
  p: Pick<ReplicationParts, 'store' | 'loop' | 'clock'> & { rollouts: NonNullable<DiscoveryLoop['rollouts']>; calls: CallHealth },
): RolloutReplication {
  const pollMs = o.replica?.pollMs ?? REPLICA_DEFAULTS.pollMs;
  const leaderRetryMs = o.replica?.leaderRetryMs ?? REPLICA_DEFAULTS.leaderRetryMs;
  return new RolloutReplication({ store: p.store, rollouts: p.rollouts, calls: p.calls, snapshot: (d) => p.loop.snapshots.get(d), clock: p.clock, keepMs: 2 * Math.max(pollMs, leaderRetryMs) });
}

/**
 * Starts the loop (a leader's too): catalog documents kept for a source no longer configured, or
 * under acceptance rules no longer in force, are dropped first.
 */
async function startDiscovery(p: Pick<ReplicationParts, 'store' | 'loop' | 'catalogPrefixes'>, storeLog: Logger): Promise<void> {
  try {
    const dropped = await pruneCatalogStore(p.store.catalogs, p.catalogPrefixes());
    if (dropped > 0) storeLog.info({ dropped }, 'dropped stored AI Catalog documents no configured source reads');
  } catch (err) {
    storeLog.warn({ err: (err as Error).message }, 'could not drop stored AI Catalog documents');
  }
  await p.loop.start();
}

/**
 * Leading (at start or taking over): the journal's open alerts are carried, not raised again, the
 * staged rollout carries on from the step it reached, the takeover is an event of its own, then
 * the loop starts.
 */
async function takeTheLead(epoch: number, p: Pick<ReplicationParts, 'store' | 'loop' | 'events'>, startLoop: () => Promise<void>, rollouts: RolloutReplication | undefined, storeLog: Logger): Promise<void> {
  const { store, loop } = p;
  const open = await openAlertsIn(store).catch(() => undefined);
  if (open) loop.carryAlerts(open);
  // Unreadable: the state the last sync took stands (the first cycle stages the change again if none did).
  await rollouts?.carry().catch((err: unknown) => storeLog.warn({ err: (err as Error).message }, 'could not read the staged rollout to carry it on'));
  const last = (await store.journal({ types: ['replica.leader'], limit: 1 }).catch(() => []))[0];
  const previousLeader = last?.event.type === 'replica.leader' && last.event.replica !== store.replica ? last.event.replica : undefined;
  p.events.emit({ type: 'replica.leader', replica: store.replica, epoch, ...(previousLeader !== undefined && { previousLeader }), alerts: open?.length ?? 0 });
  await startLoop();
}

/** The store's failing writes, logged once per failing streak (its status says the rest), and its recovery once. */
function storeFailures(storeLog: Logger): { failed: (err: unknown) => void; answered: (store: Pick<StateStore, 'status'>) => void } {
  let failing = false;
  return {
    failed: (err) => {
      if (!failing) storeLog.error({ err: (err as Error).message }, 'the state store failed a write; serving continues from memory');
      failing = true;
    },
    answered: (store) => {
      if (failing && store.status().ok) {
        failing = false;
        storeLog.info('the state store answers again');
      }
    },
  };
}
