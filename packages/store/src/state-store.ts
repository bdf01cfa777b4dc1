/**
 * The state store: everything the service must keep across a restart, behind one interface, on
 * one engine per deployment — memory (the library's default), SQLite (the service's embedded
 * default) or PostgreSQL.
 *
 * - **cards**: the card cache's store ({@link CardStore}): each endpoint's last good card bytes,
 *   validators and failure state, so a restart revalidates with conditional requests and serves
 *   the last good card when a peer is down;
 * - **snapshots**: content-addressed by digest, with the bytes and parsed form of the selected
 *   cards; publication stores the snapshot, its history row and the current version/digest
 *   pointer in one transaction;
 * - **pins**: session → digest, last use, the caller's ADK user id and the owner's hashes;
 * - **the staged rollout** (docs/deployment.md "Rollouts across replicas"): the leader's rollout
 *   state and its candidate snapshot (stored by digest like a published one, neither current nor in
 *   the history), and each replica's recent turn figures for it, which the leader judges on;
 * - **the event journal**: the events an operator reads later (snapshots, alerts, admissions,
 *   refusals, health and session events), bounded by age, by a quota per event type and by a
 *   total count that cuts high-volume kinds first (journal.ts); cache chatter (hits, 304s,
 *   fetches, backoff) only adds to counters.
 */
import type { CardStore, DiscoveryEvent, RolloutState, Snapshot } from 'a2a-discovery';
import type { SnapshotSummary, CatalogEntry } from 'a2a-discovery/internal';
import { RETENTION_DEFAULTS } from 'a2a-discovery/config';

/** Which engine holds the state. */
export type StoreKind = 'memory' | 'sqlite' | 'postgres';

/** How much the store keeps. Every bound has a default; all are counts or milliseconds. */
export interface StoreRetention {
  /**
   * Journal rows kept in all. Past it the oldest rows go first, those of the kinds operators need
   * (`PROTECTED_JOURNAL_TYPES`: snapshots, alerts, admissions, refusals) only when nothing else is
   * left. Default 100,000.
   */
  journalMaxEvents?: number;
  /** Journal rows kept per event type (the newest), so no one kind fills the journal. Default 10,000. */
  journalMaxEventsPerType?: number;
  /** Journal rows older than this are deleted. Default 604,800,000 (7 days). */
  journalMaxAgeMs?: number;
  /** Published snapshots kept besides the current and the pinned ones (newest first). Default 50. */
  snapshots?: number;
  /** Rows of the version history kept (newest first). Default 200. */
  history?: number;
}

export const DEFAULT_RETENTION: Readonly<Required<StoreRetention>> = Object.freeze({
  journalMaxEvents: RETENTION_DEFAULTS.journalMaxEvents,
  journalMaxEventsPerType: RETENTION_DEFAULTS.journalMaxEventsPerType,
  journalMaxAgeMs: RETENTION_DEFAULTS.journalMaxAgeMs,
  snapshots: RETENTION_DEFAULTS.snapshots,
  history: RETENTION_DEFAULTS.snapshotHistory,
});

/**
 * A pinned session as stored. Times are epoch milliseconds (a pin outlives the process whose
 * monotonic clock measured its idleness).
 */
export interface PinRecord {
  readonly sessionId: string;
  readonly digest: string;
  readonly lastUsedAtWall: number;
  /** The ADK user id the session's history is stored under. */
  readonly userId: string;
  /** SHA-256 (hex) of the owner's client id and of the session's secret; absent for in-process sessions. */
  readonly ownerClient?: string;
  readonly ownerSecret?: string;
}

/** What the store holds about snapshots, as loaded at start. */
export interface StoredSnapshots {
  readonly current: Snapshot | undefined;
  /** Every stored snapshot (the current one included), newest version first. */
  readonly snapshots: readonly Snapshot[];
  /** The version history, oldest first. */
  readonly history: readonly SnapshotSummary[];
}

/** The store's health, for `/readyz`, `/metrics` and the dashboard. */
export interface StoreStatus {
  readonly kind: StoreKind;
  /** Where: a file path, `memory`, or a PostgreSQL URL without its password. */
  readonly location: string;
  /** False after a failed write or read, until the next one succeeds. */
  readonly ok: boolean;
  readonly lastError?: string;
  /** Epoch ms of the last failure. */
  readonly lastErrorAt?: number;
  /** Writes that failed since the store opened. */
  readonly failedWrites: number;
  /** Write transactions completed since the store opened (a batch of card entries is one). */
  readonly writes: number;
  /** Leader writes refused by the fencing epoch (PostgreSQL replicas), when any. */
  readonly fencedWrites?: number;
  /**
   * Journal rows this process deleted before their age, to keep a type's quota or the total cap,
   * by event type; when any. (The store's counters keep the same as `journal.pruned.<type>`.)
   */
  readonly journalPruned?: Readonly<Record<string, number>>;
}

/**
 * Which journal rows to read (see {@link StateStore.journal}). `after` and `before` are journal
 * positions ({@link JournalEntry.id}), not event sequence numbers: those are per process.
 */
export interface JournalQuery {
  after?: number;
  before?: number;
  types?: readonly string[];
  limit?: number;
}

/**
 * One journal row: the event as its process emitted it (its `seq` is that process's), the
 * replica that recorded it, and its position in the journal — assigned by the store when the row
 * is written, increasing, one order for every replica. Rows are unique by replica and `seq`.
 */
export interface JournalEntry {
  readonly id: number;
  readonly replica: string;
  readonly event: DiscoveryEvent;
}

/** The staged rollout the leader recorded (see {@link StateStore.rollout}). */
export interface StoredRollout {
  /** Its state as the leader last wrote it (an ended one stays until the next rollout). */
  readonly state: RolloutState;
  /** The candidate snapshot, while the rollout runs (or is held); absent once it ended. */
  readonly candidate?: Snapshot;
}

/**
 * One turn call a replica made during a rollout, as it writes it for the leader: the agent's
 * local name, the index of the session's digest in {@link RolloutFiguresRecord.digests}, whether
 * it succeeded (1) or failed (0), its error class, its latency in milliseconds.
 */
export type SharedTurn = readonly [agent: string, digest: number, ok: 0 | 1, errorClass: string | null, latencyMs: number];

/**
 * A replica's recent turn calls during a rollout, which the leader adds to its own figures
 * (docs/deployment.md "Rollouts across replicas"). The calls are numbered by the replica:
 * `calls[i]` is call number `next - calls.length + i`, so the leader takes each call once.
 */
export interface RolloutFiguresRecord {
  /** The rollout id the calls were made under. */
  readonly rollout: string;
  /** The replica that made them. */
  readonly replica: string;
  /** Epoch ms when the replica started numbering (a restarted replica numbers from 0 again). */
  readonly since: number;
  /** The number of the call after the last one. */
  readonly next: number;
  /** The digests the calls' sessions were pinned to. */
  readonly digests: readonly string[];
  /** The most recent calls, oldest first (bounded by the writer). */
  readonly calls: readonly SharedTurn[];
}

/** One counter increment batch: counter name → amount. */
export type CounterDeltas = Readonly<Record<string, number>>;

/** A cached AI Catalog document (see {@link StateStore.catalogs}); defined with the AI Catalog source. */
export type { CatalogEntry };

/**
 * The conversation turns in flight, as the service's `Foreground` (`a2a-discovery/adk`) counts
 * them: background writes (the store writer's, a SQL store's batches of card entries) run
 * `work` at a moment with no turn in flight, `maxWaitMs` at most after asking, so a turn never
 * waits behind the store's statements or, on SQLite, behind the file's write lock its own history
 * needs (issue 43).
 */
export interface TurnsInFlight {
  whenIdle(work: () => void, maxWaitMs: number): void;
}

/** How long a background write waits for a moment with no turn in flight, at most (ms). */
const BACKGROUND_WRITE_MAX_DEFER_MS = 1_000;

/**
 * Runs a background write's `work`: at once without `turns`, else at their next moment with no
 * turn in flight, `maxWaitMs` at most (default {@link BACKGROUND_WRITE_MAX_DEFER_MS}). The store
 * writer and a SQL store's batches of card entries both wait through it.
 */
export function whenNoTurn(turns: TurnsInFlight | undefined, work: () => void, maxWaitMs = BACKGROUND_WRITE_MAX_DEFER_MS): void {
  if (turns === undefined) work();
  else turns.whenIdle(work, maxWaitMs);
}

/**
 * One interface, three engines. Methods never throw for a failed write: they record it in
 * {@link StateStore.status} and reject, so a caller that must know (start-up, tests) can await,
 * while background writers only log.
 */
export interface StateStore {
  readonly kind: StoreKind;
  /**
   * How this process names itself in the journal rows it writes (default `<hostname>:<pid>`;
   * the replica id on PostgreSQL). Its events' `seq` are unique under this name.
   */
  readonly replica: string;
  /**
   * The card cache's store. Reads are served from memory (loaded when the store opened); each
   * `set` and `delete` is written through to the engine. A `noStore` entry is kept in memory
   * only (RFC 9111 §5.2.2.5: nothing of it is persisted).
   */
  readonly cards: CardStore;
  /**
   * The AI Catalog sources' store, kept as {@link cards} is (read from memory, written through)
   * but apart from it: each source reads and writes under its own key prefix
   * (`<source id> <settings digest> `, see `aiCatalogSource`), so a restart revalidates each
   * catalog with its validators and a catalog down at start-up is served from its last good copy.
   */
  readonly catalogs: CardStore<CatalogEntry>;

  /** Stores `snapshot` (by digest, with its cards), appends its history row and makes it current, in one transaction. */
  publishSnapshot(snapshot: Snapshot): Promise<void>;
  /** The stored snapshots, the current one and the history. */
  loadSnapshots(): Promise<StoredSnapshots>;
  /** One stored snapshot. */
  getSnapshot(digest: string): Promise<Snapshot | undefined>;

  /**
   * Records the staged rollout (the leader, at each change of its state): `state` (undefined: no
   * rollout) and, while it runs, its `candidate` snapshot, stored by digest with its cards like a
   * published one but neither made current nor added to the history. Fenced like every leader
   * write; on PostgreSQL the followers are notified. A state of another rollout, or an ended
   * one, deletes the replicas' figures of the one before ({@link putRolloutFigures}).
   */
  putRollout(state: RolloutState | undefined, candidate?: Snapshot): Promise<void>;
  /**
   * The staged rollout as stored, with its candidate snapshot while it runs. `known` returns a
   * snapshot this process already holds, so its cards are not read again.
   */
  rollout(known?: (digest: string) => Snapshot | undefined): Promise<StoredRollout | undefined>;
  /** Replaces this replica's recent turn figures for the rollout in progress (any replica writes its own; not fenced). */
  putRolloutFigures(figures: RolloutFiguresRecord): Promise<void>;
  /** Every replica's recent turn figures, as stored now. */
  rolloutFigures(): Promise<RolloutFiguresRecord[]>;

  /** Inserts or replaces a pin. */
  putPin(pin: PinRecord): Promise<void>;
  /** One pin, as stored now (another replica may have written it). */
  pin(sessionId: string): Promise<PinRecord | undefined>;
  deletePin(sessionId: string): Promise<void>;
  /** Every pin, or those of the given sessions (as stored now: other replicas write them too). */
  pins(sessionIds?: readonly string[]): Promise<PinRecord[]>;

  /**
   * Appends this process's journal events (each under {@link replica} and its `seq`; a row already
   * written is kept, so a retried batch is not doubled) and applies retention.
   */
  appendEvents(events: readonly DiscoveryEvent[]): Promise<void>;
  /**
   * Journal rows after position `after` and before position `before`, of the given `types` (all
   * when absent), oldest first, at most `limit` (the newest ones) — a page of the journal.
   */
  journal(options?: JournalQuery): Promise<JournalEntry[]>;
  /** The events of {@link journal}'s rows. */
  events(options?: JournalQuery): Promise<DiscoveryEvent[]>;
  /**
   * The highest event sequence number recorded by any replica (journaled or not), 0 for a new
   * store: a process numbers its events after it.
   */
  lastSeq(): Promise<number>;
  /** Records the highest sequence number seen, so the next process continues after it. */
  setLastSeq(seq: number): Promise<void>;

  addCounters(deltas: CounterDeltas): Promise<void>;
  counters(): Promise<Record<string, number>>;

  /**
   * Deletes snapshots that are neither current, nor pinned, nor the candidate of a rollout that
   * runs (or is held), nor among the newest
   * `retention.snapshots`, the cards no kept snapshot references, and history past its bound.
   * Returns the digests deleted.
   */
  pruneSnapshots(): Promise<string[]>;

  /**
   * Runs `work` between the store's own writes, never during one. With SQLite, another
   * connection writing the same file in this process (ADK's session service) must go through it:
   * in WAL mode a transaction that read before our write committed cannot write afterwards
   * (SQLITE_BUSY, which no busy timeout waits out). Absent for engines that need no such gate.
   */
  exclusive?<T>(work: () => Promise<T>): Promise<T>;

  status(): StoreStatus;
  /** Waits for writes in flight, then releases the engine (and the SQLite lock). */
  close(): Promise<void>;
}
