/**
 * Write-behind from the running service to its state store. The request path never waits on
 * the store: events, publications, the staged rollout's state and pin changes are noted
 * synchronously and written in the background, in order (publications, then the rollout, then
 * pins, then the journal and counters). Bounded: at most `maxPendingEvents` journal events wait
 * (the oldest are dropped and counted when the store cannot keep up), pins are coalesced per
 * session, publications per digest, the rollout's states to the latest.
 */
import { type DiscoveryEvent, type EventStream } from 'a2a-discovery';
import { occurrences } from 'a2a-discovery/internal';
import type { RolloutState, Snapshot } from 'a2a-discovery';
import { journalOrCounter } from './journal.js';
import { rolloutRuns } from './rollout-record.js';
import { whenNoTurn, type PinRecord, type StateStore, type TurnsInFlight } from './state-store.js';

export interface StoreWriterOptions {
  store: StateStore;
  events: EventStream;
  /** The snapshot a `snapshot.published` event names (looked up when the event arrives), or a rollout's candidate (when it is written). */
  snapshot: (digest: string) => Snapshot | undefined;
  /**
   * Whether this process's publications are written (default always). A follower replica adopts
   * snapshots the leader stored, and writes none of them back — nor journals them: the leader's
   * `snapshot.published` row is the journal's one record of each publication. Nor does it write
   * the rollout's state: the leader's is the one.
   */
  publishes?: () => boolean;
  /** A session's pin as it stands now, or undefined once it has none. */
  pin: (sessionId: string) => PinRecord | undefined;
  /** Journal events waiting to be written, at most. Default 10,000. */
  maxPendingEvents?: number;
  /** Called with each failed write (the store's status records it too). */
  onError?: (err: unknown) => void;
  /**
   * The service's conversation turns (the `Foreground` its session runner enters, from
   * `a2a-discovery/adk`): a write waits for a moment with no turn in flight,
   * {@link StoreWriterOptions.maxDeferMs} at most, so the store's statements (and, on SQLite, the
   * file's write lock the turn's own history needs) are not taken in the middle of a turn. Without
   * it, a write starts at the next turn of the event loop.
   */
  turns?: TurnsInFlight;
  /** How long a write waits for a moment with no turn in flight, at most (ms). Default 1,000. */
  maxDeferMs?: number;
}

export class StoreWriter {
  readonly #o: StoreWriterOptions;
  readonly #max: number;
  readonly #snapshots: Snapshot[] = [];
  readonly #pins = new Set<string>();
  /** The rollout's latest state not written yet. */
  #rollout: RolloutState | undefined;
  /** Journal events noted and not taken by a write yet: those from `#head` on. */
  #events: DiscoveryEvent[] = [];
  /**
   * Events before it were dropped at the bound: the front is cut off in bulk, an eighth of the bound
   * at a time, where cutting it per event moved the whole list each time (10,000 alerts raised at
   * once past a full bound held the event loop 340 ms).
   */
  #head = 0;
  /** Journal events being written now (taken from `#events` by the write in progress). */
  #writing: readonly DiscoveryEvent[] = [];
  #counters = new Map<string, number>();
  #lastSeq = 0;
  #flushedSeq = 0;
  #dropped = 0;
  #tail: Promise<void> = Promise.resolve();
  #scheduled = false;
  #closed = false;
  readonly #unsubscribe: () => void;

  constructor(o: StoreWriterOptions) {
    this.#o = o;
    this.#max = o.maxPendingEvents ?? 10_000;
    this.#unsubscribe = o.events.subscribe((e) => this.#onEvent(e));
  }

  /** Notes that a session's pin changed (created, used, moved or released). */
  pinChanged(sessionId: string): void {
    this.#pins.add(sessionId);
    this.#schedule();
  }

  /**
   * Notes the staged rollout's new state (`Rollouts.onChange`): written with its candidate snapshot
   * while it runs, after the publications noted before (a promotion's publication comes first).
   */
  rolloutChanged(state: RolloutState): void {
    if (!(this.#o.publishes?.() ?? true)) return;
    this.#rollout = state;
    this.#schedule();
  }

  /** Journal events noted but not written yet (queued or being written), oldest first. */
  pending(): DiscoveryEvent[] {
    return [...this.#writing, ...this.#events.slice(this.#head)];
  }

  /** Journal events dropped because the store could not keep up. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Writes everything noted so far; resolves when it is written (or failed and was recorded). */
  flush(): Promise<void> {
    this.#tail = this.#tail.then(() => this.#drain());
    return this.#tail;
  }

  /** Stops listening and writes what is pending. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await this.flush();
  }

  #onEvent(e: DiscoveryEvent): void {
    this.#lastSeq = Math.max(this.#lastSeq, e.seq);
    if (e.type === 'snapshot.published') {
      if (!(this.#o.publishes?.() ?? true)) {
        // Adopted from the store: the leader journaled it.
        this.#schedule();
        return;
      }
      const s = this.#o.snapshot(e.digest);
      if (s) this.#snapshots.push(s);
    }
    const where = journalOrCounter(e);
    if (where === 'journal') {
      this.#events.push(e);
      if (this.#events.length - this.#head > this.#max) {
        this.#head++;
        this.#dropped++;
        this.#count('journal.dropped', 1);
        if (this.#head >= Math.max(1, this.#max >> 3)) this.#events = this.#taken();
      }
    } else this.#count(where, occurrences(e));
    this.#schedule();
  }

  /** Takes the events held (the dropped front cut off), leaving none. */
  #taken(): DiscoveryEvent[] {
    const taken = this.#head === 0 ? this.#events : this.#events.slice(this.#head);
    this.#events = [];
    this.#head = 0;
    return taken;
  }

  #count(name: string, n: number): void {
    this.#counters.set(name, (this.#counters.get(name) ?? 0) + n);
  }

  #schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    const write = (): void => {
      this.#scheduled = false;
      void this.flush();
    };
    setImmediate(() => whenNoTurn(this.#o.turns, write, this.#o.maxDeferMs));
  }

  async #drain(): Promise<void> {
    const { store } = this.#o;
    const attempt = async (op: () => Promise<unknown>): Promise<boolean> => {
      try {
        await op();
        return true;
      } catch (err) {
        this.#o.onError?.(err);
        return false;
      }
    };
    let published = false;
    for (const s of this.#snapshots.splice(0)) published = (await attempt(() => store.publishSnapshot(s))) || published;
    const rollout = this.#rollout;
    if (rollout !== undefined && (this.#o.publishes?.() ?? true)) {
      this.#rollout = undefined;
      const candidate = rolloutRuns(rollout) ? this.#o.snapshot(rollout.candidate) : undefined;
      // Failed: written at the next flush, unless a newer state is noted meanwhile.
      if (!(await attempt(() => store.putRollout(rollout, candidate)))) this.#rollout ??= rollout;
    } else this.#rollout = undefined;
    let released = false;
    for (const id of [...this.#pins]) {
      this.#pins.delete(id);
      const pin = this.#o.pin(id);
      if (pin) await attempt(() => store.putPin(pin));
      else released = (await attempt(() => store.deletePin(id))) || released;
    }
    if (published || released) await attempt(() => store.pruneSnapshots());
    const events = this.#taken();
    this.#writing = events;
    const written = events.length === 0 || (await attempt(() => store.appendEvents(events)));
    this.#writing = [];
    // Kept for the next flush, within the bound.
    if (!written) this.#events = [...events, ...this.#taken()].slice(-this.#max);
    const counters = Object.fromEntries(this.#counters);
    this.#counters = new Map();
    if (Object.keys(counters).length > 0 && !(await attempt(() => store.addCounters(counters)))) {
      for (const [k, v] of Object.entries(counters)) this.#count(k, v);
    }
    const seq = this.#lastSeq;
    if (seq > this.#flushedSeq && (await attempt(() => store.setLastSeq(seq)))) this.#flushedSeq = seq;
  }
}
