/**
 * The state store in this process's memory: the library's default and the reference the SQL
 * stores are tested against. Nothing survives the process.
 */
import { hostname } from 'node:os';
import type { CacheEntry, CardStore, DiscoveryEvent, RolloutState, Snapshot } from 'a2a-discovery';
import type { SnapshotSummary } from 'a2a-discovery/internal';
import { MemoryCardStore } from 'a2a-discovery';
import type { CatalogEntry, CounterDeltas, JournalEntry, JournalQuery, PinRecord, RolloutFiguresRecord, StateStore, StoredRollout, StoredSnapshots, StoreRetention, StoreStatus } from './state-store.js';
import { DEFAULT_RETENTION } from './state-store.js';
import { prunedCounter, retainJournal } from './journal.js';
import { rolloutRuns } from './rollout-record.js';

export interface MemoryStateStoreOptions {
  retention?: StoreRetention;
  /** Epoch ms now, for journal retention by age. Default `Date.now`. */
  wallNow?: () => number;
  /** How this process names itself in the journal. Default `<hostname>:<pid>`. */
  replica?: string;
}

export class MemoryStateStore implements StateStore {
  readonly kind = 'memory' as const;
  readonly replica: string;
  readonly cards: CardStore;
  readonly catalogs: CardStore<CatalogEntry>;
  readonly #retention: Required<StoreRetention>;
  readonly #wallNow: () => number;
  readonly #snapshots = new Map<string, Snapshot>();
  #current: string | undefined;
  readonly #history: SnapshotSummary[] = [];
  readonly #pins = new Map<string, PinRecord>();
  #rollout: RolloutState | undefined;
  /** Each replica's figures, by replica id. */
  readonly #figures = new Map<string, RolloutFiguresRecord>();
  #journal: JournalEntry[] = [];
  #nextId = 1;
  #lastSeq = 0;
  readonly #counters = new Map<string, number>();
  /** Journal rows deleted by a type's quota or the cap, by type. */
  readonly #pruned = new Map<string, number>();
  #writes = 0;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.#retention = { ...DEFAULT_RETENTION, ...options.retention };
    this.#wallNow = options.wallNow ?? Date.now;
    this.replica = options.replica ?? `${hostname()}:${process.pid}`;
    this.cards = this.#counted(new MemoryCardStore<CacheEntry>());
    this.catalogs = this.#counted(new MemoryCardStore<CatalogEntry>());
  }

  /** A memory store whose writes are counted in {@link status}; closing it keeps the entries (as the SQL stores do). */
  #counted<E>(inner: MemoryCardStore<E>): CardStore<E> {
    return {
      get: (key) => inner.get(key),
      set: (key, entry) => {
        this.#writes++;
        inner.set(key, entry);
      },
      delete: (key) => inner.delete(key),
      keys: () => inner.keys(),
      close: () => undefined,
    };
  }

  publishSnapshot(snapshot: Snapshot): Promise<void> {
    this.#snapshots.set(snapshot.digest, snapshot);
    this.#current = snapshot.digest;
    this.#history.push({ version: snapshot.version, digest: snapshot.digest, createdAt: snapshot.createdAt, agents: snapshot.agents.map((a) => a.localName) });
    this.#history.sort((a, b) => a.version - b.version);
    if (this.#history.length > this.#retention.history) this.#history.splice(0, this.#history.length - this.#retention.history);
    this.#writes++;
    return Promise.resolve();
  }

  loadSnapshots(): Promise<StoredSnapshots> {
    const snapshots = [...this.#snapshots.values()].sort((a, b) => b.version - a.version);
    return Promise.resolve({ current: this.#current === undefined ? undefined : this.#snapshots.get(this.#current), snapshots, history: [...this.#history] });
  }

  getSnapshot(digest: string): Promise<Snapshot | undefined> {
    return Promise.resolve(this.#snapshots.get(digest));
  }

  putRollout(state: RolloutState | undefined, candidate?: Snapshot): Promise<void> {
    if (state === undefined || state.id !== this.#rollout?.id || !rolloutRuns(state)) this.#figures.clear();
    if (candidate !== undefined && !this.#snapshots.has(candidate.digest)) this.#snapshots.set(candidate.digest, candidate);
    this.#rollout = state;
    this.#writes++;
    return Promise.resolve();
  }

  rollout(known?: (digest: string) => Snapshot | undefined): Promise<StoredRollout | undefined> {
    const state = this.#rollout;
    if (state === undefined) return Promise.resolve(undefined);
    const candidate = rolloutRuns(state) ? (known?.(state.candidate) ?? this.#snapshots.get(state.candidate)) : undefined;
    return Promise.resolve({ state, ...(candidate !== undefined && { candidate }) });
  }

  putRolloutFigures(figures: RolloutFiguresRecord): Promise<void> {
    this.#figures.set(figures.replica, figures);
    return Promise.resolve();
  }

  rolloutFigures(): Promise<RolloutFiguresRecord[]> {
    return Promise.resolve([...this.#figures.values()]);
  }

  putPin(pin: PinRecord): Promise<void> {
    this.#pins.set(pin.sessionId, pin);
    this.#writes++;
    return Promise.resolve();
  }

  pin(sessionId: string): Promise<PinRecord | undefined> {
    return Promise.resolve(this.#pins.get(sessionId));
  }

  deletePin(sessionId: string): Promise<void> {
    this.#pins.delete(sessionId);
    return Promise.resolve();
  }

  pins(sessionIds?: readonly string[]): Promise<PinRecord[]> {
    if (sessionIds) return Promise.resolve(sessionIds.map((id) => this.#pins.get(id)).filter((p): p is PinRecord => p !== undefined));
    return Promise.resolve([...this.#pins.values()]);
  }

  appendEvents(events: readonly DiscoveryEvent[]): Promise<void> {
    const known = new Set(this.#journal.filter((e) => e.replica === this.replica).map((e) => e.event.seq));
    for (const e of events) {
      if (known.has(e.seq)) continue;
      known.add(e.seq);
      this.#journal.push({ id: this.#nextId++, replica: this.replica, event: e });
      this.#lastSeq = Math.max(this.#lastSeq, e.seq);
      this.#writes++;
    }
    const { kept, pruned } = retainJournal(this.#journal, this.#retention, this.#wallNow());
    this.#journal = kept;
    for (const [type, n] of pruned) {
      this.#pruned.set(type, (this.#pruned.get(type) ?? 0) + n);
      this.#counters.set(prunedCounter(type), (this.#counters.get(prunedCounter(type)) ?? 0) + n);
    }
    return Promise.resolve();
  }

  journal(options: JournalQuery = {}): Promise<JournalEntry[]> {
    const after = options.after ?? 0;
    const before = options.before ?? Number.POSITIVE_INFINITY;
    const types = options.types && new Set(options.types);
    const out = this.#journal.filter((e) => e.id > after && e.id < before && (!types || types.has(e.event.type)));
    const limit = options.limit ?? out.length;
    return Promise.resolve(out.slice(Math.max(0, out.length - limit)));
  }

  async events(options: JournalQuery = {}): Promise<DiscoveryEvent[]> {
    return (await this.journal(options)).map((e) => e.event);
  }

  lastSeq(): Promise<number> {
    return Promise.resolve(this.#lastSeq);
  }

  setLastSeq(seq: number): Promise<void> {
    this.#lastSeq = Math.max(this.#lastSeq, seq);
    return Promise.resolve();
  }

  addCounters(deltas: CounterDeltas): Promise<void> {
    for (const [name, n] of Object.entries(deltas)) this.#counters.set(name, (this.#counters.get(name) ?? 0) + n);
    return Promise.resolve();
  }

  counters(): Promise<Record<string, number>> {
    return Promise.resolve(Object.fromEntries(this.#counters));
  }

  pruneSnapshots(): Promise<string[]> {
    const pinned = new Set([...this.#pins.values()].map((p) => p.digest));
    if (rolloutRuns(this.#rollout)) pinned.add(this.#rollout!.candidate);
    const newest = new Set([...this.#snapshots.values()].sort((a, b) => b.version - a.version).slice(0, this.#retention.snapshots).map((s) => s.digest));
    const deleted: string[] = [];
    for (const digest of [...this.#snapshots.keys()]) {
      if (digest === this.#current || pinned.has(digest) || newest.has(digest)) continue;
      this.#snapshots.delete(digest);
      deleted.push(digest);
    }
    return Promise.resolve(deleted);
  }

  status(): StoreStatus {
    return { kind: 'memory', location: 'memory', ok: true, failedWrites: 0, writes: this.#writes, ...(this.#pruned.size > 0 && { journalPruned: Object.fromEntries(this.#pruned) }) };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
