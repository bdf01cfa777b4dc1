/**
 * The last published snapshots, kept for the API's history and diffs after the snapshot store
 * has evicted them (bounded; snapshots share their card objects with the cache, so an archived
 * snapshot costs little more than its agent list).
 */
import type { DiscoveryLoop, Snapshot } from 'a2a-discovery';

export class SnapshotArchive {
  readonly #loop: DiscoveryLoop;
  readonly #limit: number;
  readonly #byDigest = new Map<string, Snapshot>();
  readonly #unsubscribe: () => void;

  constructor(loop: DiscoveryLoop, limit = 50) {
    this.#loop = loop;
    this.#limit = limit;
    const current = loop.current();
    if (current) this.#add(current);
    this.#unsubscribe = loop.subscribe((s) => this.#add(s));
  }

  /** A retained or archived snapshot. */
  get(digest: string): Snapshot | undefined {
    return this.#loop.snapshots.get(digest) ?? this.#byDigest.get(digest);
  }

  /** Adds a snapshot loaded from a durable store (oldest first keeps the newest when over the limit). */
  add(snapshot: Snapshot): void {
    this.#add(snapshot);
  }

  close(): void {
    this.#unsubscribe();
    this.#byDigest.clear();
  }

  #add(s: Snapshot): void {
    this.#byDigest.delete(s.digest);
    this.#byDigest.set(s.digest, s);
    while (this.#byDigest.size > this.#limit) this.#byDigest.delete(this.#byDigest.keys().next().value!);
  }
}
