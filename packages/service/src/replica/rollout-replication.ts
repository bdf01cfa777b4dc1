/**
 * Staged rollouts across replicas on one PostgreSQL (docs/deployment.md "Rollouts across
 * replicas"). The leader decides the steps; the store carries them:
 *
 * - a follower takes the stored rollout at each sync ({@link RolloutReplication.follow}): it
 *   assigns new sessions exactly as the leader does and holds the candidate its sessions may be
 *   pinned to;
 * - each turn a replica serves counts where it is served: a follower writes its recent turn
 *   calls (at most `MAX_SHARED_TURNS`, each kept in what it writes for `keepMs` after its first
 *   write), and the leader adds the new ones to its figures at each heartbeat
 *   ({@link RolloutReplication.gather}), so it judges on every replica's turns;
 * - a new leader carries on ({@link RolloutReplication.carry}) from the step the last one reached.
 */
import type { CallHealth, Clock, RecordedCall, Rollouts, Snapshot } from 'a2a-discovery';
import type { RolloutFiguresRecord, SharedTurn, StateStore } from '@a2a-discovery/store';
import { MAX_SHARED_TURNS } from '@a2a-discovery/store/internal';

export interface RolloutReplicationOptions {
  store: StateStore;
  rollouts: Rollouts;
  /** The calls this replica's sessions make (their turns are shared). */
  calls: CallHealth;
  /** A snapshot this process holds, so a stored candidate's cards are not read again. */
  snapshot: (digest: string) => Snapshot | undefined;
  clock: Clock;
  /** How long a call stays in what this replica writes after its first write, ms (the leader must read it once meanwhile). */
  keepMs: number;
}

interface Turn {
  readonly call: RecordedCall;
  /** Epoch ms of the first write that carried it. */
  writtenAt?: number;
}

export class RolloutReplication {
  readonly #o: RolloutReplicationOptions;
  /** Epoch ms this replica started numbering its calls. */
  readonly #since: number;
  /** This replica's recent turns during the rollout {@link #rollout}, oldest first; numbered up to {@link #next}. */
  #turns: Turn[] = [];
  #next = 0;
  #rollout: string | undefined;
  /** The digests of both sides of that rollout as it went (a rebase adds a candidate): turns on others are not its figures. */
  readonly #sides = new Set<string>();
  /** The leader's place in each follower's calls (the rollout {@link #cursorsOf}'s): the number of the next one to take. */
  readonly #cursors = new Map<string, { since: number; next: number }>();
  #cursorsOf: string | undefined;
  readonly #off: () => void;

  constructor(o: RolloutReplicationOptions) {
    this.#o = o;
    this.#since = Math.round(o.clock.wallNow());
    this.#off = o.calls.onCall((call) => this.#record(call));
  }

  /** A follower's sync: takes the stored rollout (or its end), then writes this replica's new turn figures. */
  async follow(): Promise<void> {
    const stored = await this.#o.store.rollout(this.#o.snapshot);
    this.#o.rollouts.follow(stored?.state, stored?.candidate);
    await this.#share();
  }

  /**
   * Leading (at start or taking over), before the first cycle: carries on the stored rollout at
   * the step it reached (its step's start kept, no session reassigned), and takes the followers'
   * turns from now on (those before were the last leader's to count).
   */
  async carry(): Promise<void> {
    const stored = await this.#o.store.rollout(this.#o.snapshot);
    this.#o.rollouts.follow(stored?.state, stored?.candidate);
    this.#cursors.clear();
    this.#cursorsOf = stored?.state.id;
    for (const r of await this.#o.store.rolloutFigures()) if (r.rollout === this.#cursorsOf) this.#cursors.set(r.replica, { since: r.since, next: r.next });
  }

  /** The leader's heartbeat: adds the followers' new turns of the rollout in progress to its figures. */
  async gather(): Promise<void> {
    const active = this.#o.rollouts.active;
    if (active === undefined || active.id !== this.#cursorsOf) this.#cursors.clear();
    this.#cursorsOf = active?.id;
    if (active === undefined) return;
    for (const r of await this.#o.store.rolloutFigures()) {
      if (r.rollout !== active.id || r.replica === this.#o.store.replica) continue;
      this.#take(r);
    }
  }

  /** Stops recording calls. */
  close(): void {
    this.#off();
  }

  /** Records the calls of `r` the leader has not taken yet (all of them from a replica it has no place in, or one that restarted). */
  #take(r: RolloutFiguresRecord): void {
    const cursor = this.#cursors.get(r.replica);
    const first = r.next - r.calls.length;
    const from = cursor !== undefined && cursor.since === r.since ? Math.max(cursor.next, first) : first;
    for (let n = from; n < r.next; n++) {
      const [agent, digest, ok, errorClass, latencyMs] = r.calls[n - first]!;
      // Only the rollout's figures take it (Rollouts.record): the call health stays this replica's own.
      this.#o.rollouts.record({ agent, baseUrl: '', digest: r.digests[digest]!, ok: ok === 1, ...(errorClass !== null && { errorClass }), latencyMs, source: 'turn' });
    }
    this.#cursors.set(r.replica, { since: r.since, next: r.next });
  }

  #record(call: RecordedCall): void {
    const active = this.#o.rollouts.active;
    if (active === undefined || call.source !== 'turn' || call.digest === undefined) return;
    if (active.id !== this.#rollout) {
      this.#rollout = active.id;
      this.#turns = [];
      this.#sides.clear();
    }
    this.#sides.add(active.candidate).add(active.baseline);
    if (!this.#sides.has(call.digest)) return;
    this.#turns.push({ call });
    this.#next++;
    if (this.#turns.length > MAX_SHARED_TURNS) this.#turns.shift();
  }

  /** Writes this replica's recent turns when some were never written; drops those written more than `keepMs` ago. */
  async #share(): Promise<void> {
    const active = this.#o.rollouts.active;
    if (active === undefined || active.id !== this.#rollout) return;
    const now = this.#o.clock.wallNow();
    while (this.#turns[0]?.writtenAt !== undefined && now - this.#turns[0].writtenAt > this.#o.keepMs) this.#turns.shift();
    if (this.#turns.every((t) => t.writtenAt !== undefined)) return;
    const turns = [...this.#turns];
    const digests: string[] = [];
    const index = new Map<string, number>();
    const calls = turns.map(({ call }): SharedTurn => {
      let i = index.get(call.digest!);
      if (i === undefined) index.set(call.digest!, (i = digests.push(call.digest!) - 1));
      return [call.agent, i, call.ok ? 1 : 0, call.errorClass ?? null, Math.round(call.latencyMs)];
    });
    await this.#o.store.putRolloutFigures({ rollout: active.id, replica: this.#o.store.replica, since: this.#since, next: this.#next, digests, calls });
    for (const t of turns) t.writtenAt ??= now;
  }
}
