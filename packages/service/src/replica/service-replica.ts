/**
 * The service's state in the store: every publication, pin and event is written as it happens,
 * and several replicas on one PostgreSQL elect one leader that refreshes while the followers
 * adopt its publications.
 */
import type { SessionRunner, TreeFactory } from 'a2a-discovery/adk';
import type { Clock, EventStream, DiscoveryLoop } from 'a2a-discovery';
import { pruneCatalogStore } from 'a2a-discovery/internal';
import type { StateStore, ReplicaCoordinator, SqlStateStore } from '@a2a-discovery/store';
import type { Logger } from '../telemetry/logger.js';
import { defaultAdvertiseUrl } from './follower-proxy.js';
import { followIntoStore, openAlertsIn } from '../assembly/persistence.js';
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

/** Builds the store's writer and, with replicas, the coordinator; nothing starts before {@link Replication.start}. */
// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export async function buildReplication(
  o: Pick<ServiceOptions, 'replica'>,
  p: { store: StateStore; ownStore: boolean; loop: DiscoveryLoop; trees: TreeFactory; sessions: SessionRunner; owners: SessionOwners; events: EventStream; clock: Clock; log: Logger; catalogPrefixes: () => readonly string[] },
): Promise<Replication> {
  const { store, loop, events } = p;
  const storeLog = p.log.child({ component: 'store' });
  // Several replicas on one PostgreSQL: one leader refreshes, followers adopt its publications.
  let coordinator: ReplicaCoordinator | undefined;
  let listening: string | undefined;
  if (p.ownStore && store.kind === 'postgres') {
    const { ReplicaCoordinator } = await import('@a2a-discovery/store/replicas');
    const replicaLog = p.log.child({ component: 'replica' });
    coordinator = new ReplicaCoordinator({
      store: store as SqlStateStore,
      // The name it journals under too.
      id: store.replica,
      ...(o.replica?.leaderRetryMs !== undefined && { leaderRetryMs: o.replica.leaderRetryMs }),
      ...(o.replica?.pollMs !== undefined && { pollMs: o.replica.pollMs }),
      ...(o.replica?.leaseMs !== undefined && { leaseMs: o.replica.leaseMs }),
      ...(o.replica?.acceptNewerMigrations !== undefined && { acceptNewerMigrations: o.replica.acceptNewerMigrations }),
      // Followers answer the leader's lists from this address (follower-proxy.ts).
      advertiseUrl: () => o.replica?.advertiseUrl ?? (listening === undefined ? undefined : defaultAdvertiseUrl(listening)),
      target: {
        current: () => loop.current(),
        adopt: (snapshot) => loop.adopt(snapshot),
        lead: (epoch) => lead(epoch),
        follow: () => loop.pause(),
      },
      log: (level, message, detail) => replicaLog[level](detail ?? {}, message),
    });
  }
  // The loop starts here (a leader's too): catalog documents kept for a source no longer
  // configured, or under acceptance rules no longer in force, are dropped first.
  const startLoop = async (): Promise<void> => {
    try {
      const dropped = await pruneCatalogStore(store.catalogs, p.catalogPrefixes());
      if (dropped > 0) storeLog.info({ dropped }, 'dropped stored AI Catalog documents no configured source reads');
    } catch (err) {
      storeLog.warn({ err: (err as Error).message }, 'could not drop stored AI Catalog documents');
    }
    await loop.start();
  };
  // Leading (at start or taking over): the journal's open alerts are carried, not raised again,
  // and the takeover is an event of its own.
  const lead = async (epoch: number): Promise<void> => {
    const open = await openAlertsIn(store).catch(() => undefined);
    if (open) loop.carryAlerts(open);
    const last = (await store.journal({ types: ['replica.leader'], limit: 1 }).catch(() => []))[0];
    const previousLeader = last?.event.type === 'replica.leader' && last.event.replica !== store.replica ? last.event.replica : undefined;
    events.emit({ type: 'replica.leader', replica: store.replica, epoch, ...(previousLeader !== undefined && { previousLeader }), alerts: open?.length ?? 0 });
    await startLoop();
  };
  let storeFailing = false;
  const follow = followIntoStore({
    store,
    events,
    loop,
    trees: p.trees,
    sessions: p.sessions,
    owners: p.owners,
    clock: p.clock,
    onError: (err) => {
      // Once per failing streak: the store's status says the rest.
      if (!storeFailing) storeLog.error({ err: (err as Error).message }, 'the state store failed a write; serving continues from memory');
      storeFailing = true;
    },
    publishes: () => coordinator === undefined || coordinator.role === 'leader',
  });
  const offStoreOk = events.subscribe(() => {
    if (storeFailing && store.status().ok) {
      storeFailing = false;
      storeLog.info('the state store answers again');
    }
  });
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
      offStoreOk();
    },
    async abandon() {
      await follow.close();
      offStoreOk();
    },
  };
}
