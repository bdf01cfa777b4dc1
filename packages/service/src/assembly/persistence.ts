/**
 * The service on a durable state store: what is restored at start (the current snapshot, the
 * version history, recently published snapshots, pins with their owners and ADK user ids, the
 * staged rollout at the step it reached, the journal's tail, the open alerts), how the running service follows into the store (a {@link StoreWriter}), and how
 * replicas share sessions through it. The conversations' own service (ADK's session service on
 * the store's database) is opened by `@a2a-discovery/store/adk-sessions`.
 */
import type { SessionRunner, TreeFactory, TreeFactoryOptions } from 'a2a-discovery/adk';
import type { Clock, DiscoveryEvent, EventStream, DiscoveryLoop } from 'a2a-discovery';
import type { OpenAlert } from 'a2a-discovery/internal';
import type { PinRecord, StateStore, TurnsInFlight } from '@a2a-discovery/store';
import { StoreWriter } from '@a2a-discovery/store';
import type { EventBuffer } from '../http/event-buffer.js';
import type { SessionOwners } from '../auth/session-owners.js';
import type { SnapshotArchive } from './snapshot-archive.js';

export interface RestoreTargets {
  store: StateStore;
  loop: DiscoveryLoop;
  trees: TreeFactory;
  sessions: SessionRunner;
  owners: SessionOwners;
  archive: SnapshotArchive;
  buffer: EventBuffer;
  /** Journal events put back into the recent-event buffer. */
  bufferEvents: number;
  /**
   * The sequence number this process's events follow: only journal events at or below it, one
   * per `seq`, are put back (with several replicas, the journal holds every replica's events,
   * numbered by each; this buffer is numbered by this process).
   */
  startSeq?: number;
}

/**
 * Restores what the store holds into a service that has not started yet, the journal's open
 * alerts carried into the loop. Returns counts for the log and the `service.started` event, and
 * the process that wrote the newest journal entry (the one restarted).
 */
export async function restoreFromStore(
  t: RestoreTargets,
): Promise<{ version: number; snapshots: number; pins: number; events: number; alerts: number; previousReplica?: string }> {
  const loaded = await t.store.loadSnapshots();
  t.loop.restore({ current: loaded.current, history: loaded.history });
  // An unreadable journal carries nothing: its alerts are raised again, as before.
  const open = await openAlertsIn(t.store).catch(() => []);
  t.loop.carryAlerts(open);
  const newest = (await t.store.journal({ limit: 1 }).catch(() => []))[0]?.replica;
  for (const s of [...loaded.snapshots].reverse()) t.archive.add(s);
  const byDigest = new Map(loaded.snapshots.map((s) => [s.digest, s]));
  let pins = 0;
  for (const pin of await t.store.pins()) {
    const snapshot = byDigest.get(pin.digest);
    if (snapshot === undefined) {
      // Its snapshot is gone (retention cannot delete a pinned one; a damaged store could).
      await t.store.deletePin(pin.sessionId).catch(() => undefined);
      continue;
    }
    t.trees.restorePin(pin.sessionId, snapshot, pin.lastUsedAtWall);
    if (pin.ownerSecret !== undefined) t.owners.restore(pin.sessionId, { ownerClient: pin.ownerClient, ownerSecret: pin.ownerSecret });
    t.sessions.restoreUser(pin.sessionId, pin.userId);
    pins++;
  }
  // The staged rollout carries on at its step (its sessions' pins are restored above); unreadable, it starts again when its change is seen.
  const rollout = t.loop.rollouts === undefined ? undefined : await t.store.rollout((d) => byDigest.get(d)).catch(() => undefined);
  if (rollout !== undefined) t.loop.rollouts?.follow(rollout.state, rollout.candidate);
  const bySeq = new Map<number, DiscoveryEvent>();
  for (const e of await t.store.events({ limit: t.bufferEvents })) if (e.seq <= (t.startSeq ?? Number.POSITIVE_INFINITY)) bySeq.set(e.seq, e);
  const events = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  t.buffer.seed(events);
  return {
    version: loaded.current?.version ?? 0,
    snapshots: loaded.snapshots.length,
    pins,
    events: events.length,
    alerts: open.length,
    ...(newest !== undefined && newest !== t.store.replica && { previousReplica: newest }),
  };
}

/** How many of the journal's newest alert rows are read for the open alerts (retention bounds them anyway). */
const OPEN_ALERT_ROWS = 20_000;

/**
 * The lasting alerts the journal holds open: the newest `alert` per key with no later
 * `alert.resolved` of that key (every replica's, in journal order). A restart and a takeover
 * carry them (`DiscoveryLoop.carryAlerts`) instead of raising them again.
 */
export async function openAlertsIn(store: Pick<StateStore, 'journal'>): Promise<OpenAlert[]> {
  const open = new Map<string, OpenAlert>();
  for (const { event: e } of await store.journal({ types: ['alert', 'alert.resolved'], limit: OPEN_ALERT_ROWS })) {
    if (e.type === 'alert.resolved') open.delete(e.key);
    else if (e.type === 'alert' && e.key !== undefined) {
      open.delete(e.key);
      open.set(e.key, {
        key: e.key,
        kind: e.kind,
        message: e.message,
        ...(e.endpoint !== undefined && { endpoint: e.endpoint }),
        ...(e.detail !== undefined && { detail: e.detail }),
        raisedAt: e.at,
      });
    }
  }
  return [...open.values()];
}

/** The writer that follows the running service into the store. */
export function followIntoStore(o: {
  store: StateStore;
  events: EventStream;
  loop: DiscoveryLoop;
  trees: TreeFactory;
  sessions: SessionRunner;
  owners: SessionOwners;
  clock: Clock;
  onError: (err: unknown) => void;
  /** Whether this process's publications are written (a follower replica writes none). */
  publishes?: () => boolean;
  /** The conversation turns in flight: the writes wait for a moment with none (StoreWriterOptions.turns). */
  turns?: TurnsInFlight;
}): { writer: StoreWriter; close(): Promise<void> } {
  const pin = (sessionId: string): PinRecord | undefined => {
    const p = o.trees.pinOf(sessionId);
    if (!p) return undefined;
    const owner = o.owners.export(sessionId);
    return {
      sessionId,
      digest: p.digest,
      lastUsedAtWall: Math.round(o.clock.wallNow() - (o.clock.now() - p.lastUsedAt)),
      userId: o.sessions.userOf(sessionId) ?? 'user',
      ...(owner?.ownerClient !== undefined && { ownerClient: owner.ownerClient }),
      ...(owner !== undefined && { ownerSecret: owner.ownerSecret }),
    };
  };
  const writer = new StoreWriter({ store: o.store, events: o.events, snapshot: (d) => o.loop.snapshots.get(d), pin, onError: o.onError, ...(o.publishes && { publishes: o.publishes }), ...(o.turns && { turns: o.turns }) });
  const offPins = o.trees.onPinChange((id) => writer.pinChanged(id));
  // The leader's rollout, at each decision (a follower's writer writes none).
  const offRollout = o.loop.rollouts?.onChange((state) => writer.rolloutChanged(state));
  return {
    writer,
    async close() {
      // Before the trees close: closing releases every pin in memory, which must not reach the store.
      offPins();
      offRollout?.();
      await writer.close();
    },
  };
}

/**
 * A session another replica started: its pin (digest, owner, ADK user id) is read from the shared
 * store and restored here, so its next turn runs on the same digest with its history. Does
 * nothing for a session this replica knows, or that no replica pinned.
 */
export async function adoptSessionFromStore(
  t: Pick<RestoreTargets, 'store' | 'loop' | 'trees' | 'sessions' | 'owners' | 'archive'>,
  sessionId: string,
): Promise<void> {
  if (t.trees.digestOf(sessionId) !== undefined || t.owners.claimed(sessionId)) return;
  const pin = await t.store.pin(sessionId).catch(() => undefined);
  if (!pin) return;
  const snapshot = t.loop.snapshots.get(pin.digest) ?? t.archive.get(pin.digest) ?? (await t.store.getSnapshot(pin.digest).catch(() => undefined));
  // Another request of this session may have adopted it meanwhile.
  if (!snapshot || t.trees.digestOf(sessionId) !== undefined || t.owners.claimed(sessionId)) return;
  t.trees.restorePin(sessionId, snapshot, pin.lastUsedAtWall);
  if (pin.ownerSecret !== undefined) t.owners.restore(sessionId, { ownerClient: pin.ownerClient, ownerSecret: pin.ownerSecret });
  t.sessions.restoreUser(sessionId, pin.userId);
}

/**
 * Several replicas: which of the pins idle on this replica were used since on another one, as
 * the shared store records them (every turn writes its pin's last use). The tree factory's
 * `usedElsewhere`: a session is expired — its history deleted — only when it is idle everywhere.
 */
export function usedElsewhere(store: Pick<StateStore, 'pins'>): NonNullable<TreeFactoryOptions['usedElsewhere']> {
  return async (candidates) => {
    const stored = await store.pins(candidates.map((c) => c.sessionId));
    const mine = new Map(candidates.map((c) => [c.sessionId, c]));
    const out = new Map<string, { digest: string; lastUsedAtWall: number }>();
    for (const p of stored) {
      const here = mine.get(p.sessionId);
      // This replica's own last use comes back rounded, and the two clocks it is computed from
      // drift apart by milliseconds: only a clearly later use is another replica's.
      if (here && p.lastUsedAtWall > here.lastUsedAtWall + OWN_USE_TOLERANCE_MS) out.set(p.sessionId, { digest: p.digest, lastUsedAtWall: p.lastUsedAtWall });
    }
    return out;
  };
}

/** How much later than this replica's own last use a stored last use must be to count as another replica's. */
const OWN_USE_TOLERANCE_MS = 1_000;
