/**
 * Retention of snapshots by digest: the current snapshot is always kept; an older one is kept
 * while anything (a pinned session, a tree being built) holds a reference to it, and evicted
 * when the last reference is released. A bounded history of every published version is kept
 * for the API and the dashboard, even after eviction.
 */
import { DiscoveryError } from '../errors.js';
import { RETENTION_DEFAULTS } from '../rules/defaults.js';
import type { Snapshot } from './snapshot.js';

export interface SnapshotSummary {
  readonly version: number;
  readonly digest: string;
  readonly createdAt: number;
  readonly agents: readonly string[];
}

export interface RetainedSnapshot {
  readonly version: number;
  readonly digest: string;
  readonly references: number;
  readonly current: boolean;
}

export class SnapshotStore {
  #current: Snapshot | undefined;
  readonly #retained = new Map<string, { snapshot: Snapshot; references: number }>();
  readonly #history: SnapshotSummary[] = [];
  readonly #historyLimit: number;
  readonly #onEvict: ((snapshot: Snapshot) => void) | undefined;

  constructor(options: { historyLimit?: number; onEvict?: (snapshot: Snapshot) => void } = {}) {
    this.#historyLimit = options.historyLimit ?? RETENTION_DEFAULTS.snapshotHistory;
    this.#onEvict = options.onEvict;
  }

  /** The published snapshot readers should use now. */
  get current(): Snapshot | undefined {
    return this.#current;
  }

  /** Makes `snapshot` current; the previous one is evicted unless referenced. */
  publish(snapshot: Snapshot): void {
    const previous = this.#current;
    this.#current = snapshot;
    // The same digest can come back (A → B → A): same names and cards, a newer version. Keep
    // its references and serve the newest object under the digest.
    const slot = this.#retained.get(snapshot.digest);
    if (slot) slot.snapshot = snapshot;
    else this.#retained.set(snapshot.digest, { snapshot, references: 0 });
    this.#history.push({ version: snapshot.version, digest: snapshot.digest, createdAt: snapshot.createdAt, agents: snapshot.agents.map((a) => a.localName) });
    if (this.#history.length > this.#historyLimit) this.#history.shift();
    if (previous && previous.digest !== snapshot.digest) this.#maybeEvict(previous.digest);
  }

  /**
   * Restores state loaded from a durable store, before anything is published: `current` becomes
   * current (retained, no references yet) and the history is replaced. Other snapshots are
   * retained only once something references them ({@link retainRestored}).
   */
  restore(state: { current?: Snapshot | undefined; history?: readonly SnapshotSummary[] }): void {
    if (this.#current !== undefined) throw new DiscoveryError('ERR_INTERNAL', 'snapshots can only be restored before the first publication');
    if (state.current) {
      this.#current = state.current;
      this.#retained.set(state.current.digest, { snapshot: state.current, references: 0 });
    }
    this.#history.splice(0, this.#history.length, ...(state.history ?? []).slice(-this.#historyLimit));
  }

  /** Retains a restored snapshot (one a restored pin references) and adds one reference to it. */
  retainRestored(snapshot: Snapshot): void {
    const slot = this.#retained.get(snapshot.digest);
    if (slot) slot.references++;
    else this.#retained.set(snapshot.digest, { snapshot, references: 1 });
  }

  /**
   * Retains a snapshot that is not current, with one reference: a staged rollout's candidate,
   * which new sessions may be pinned to. The rollout releases it when it ends.
   */
  retainCandidate(snapshot: Snapshot): void {
    this.retainRestored(snapshot);
  }

  /** A retained snapshot by digest. */
  get(digest: string): Snapshot | undefined {
    return this.#retained.get(digest)?.snapshot;
  }

  /** Adds a reference; throws when the digest is not retained. */
  retain(digest: string): Snapshot {
    const slot = this.#retained.get(digest);
    if (!slot) throw new DiscoveryError('ERR_INTERNAL', `snapshot ${digest} is not retained`);
    slot.references++;
    return slot.snapshot;
  }

  /** Drops a reference; returns true when that evicted the snapshot. */
  release(digest: string): boolean {
    const slot = this.#retained.get(digest);
    if (!slot) return false;
    slot.references = Math.max(0, slot.references - 1);
    return this.#maybeEvict(digest);
  }

  references(digest: string): number {
    return this.#retained.get(digest)?.references ?? 0;
  }

  /** Every retained snapshot, newest first. */
  retained(): RetainedSnapshot[] {
    return [...this.#retained.values()]
      .map(({ snapshot, references }) => ({ version: snapshot.version, digest: snapshot.digest, references, current: snapshot.digest === this.#current?.digest }))
      .sort((a, b) => b.version - a.version);
  }

  /** Summaries of every published version (bounded), oldest first. */
  history(): readonly SnapshotSummary[] {
    return [...this.#history];
  }

  #maybeEvict(digest: string): boolean {
    const slot = this.#retained.get(digest);
    if (!slot || slot.references > 0 || this.#current?.digest === digest) return false;
    this.#retained.delete(digest);
    this.#onEvict?.(slot.snapshot);
    return true;
  }
}
