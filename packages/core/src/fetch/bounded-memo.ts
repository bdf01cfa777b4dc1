/**
 * A bounded memo (LRU-ish): the fetcher's judged URLs and the host policy's normalized URLs are
 * kept here, so endpoints that came and went under churn are forgotten instead of held until a
 * 100,000-entry map is cleared (issue 24: ~0.9 KB retained per evicted endpoint).
 *
 * Two generations of at most `max / 2` entries each: lookups read the young one, then the old
 * one (a hit there is moved to the young one); when the young one is full it becomes the old one
 * and the previous old one is dropped whole. So what is used keeps its place, what is not is
 * gone after two generations, every operation is O(1), and at most `max` entries are held.
 *
 * @module
 */

/**
 * Entries of each URL memo (the fetcher's, the policy's). Past this many URLs in use the memos
 * recompute what they drop (a URL parse each): correctness never depends on them.
 */
export const URL_MEMO_ENTRIES = 10_000;

export class BoundedMemo<V> {
  readonly #half: number;
  #young = new Map<string, V>();
  #old = new Map<string, V>();

  /** `max`: entries held at most (at least 2). */
  constructor(max: number) {
    this.#half = Math.max(1, Math.floor(max / 2));
  }

  get(key: string): V | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) {
      this.#old.delete(key);
      this.set(key, old);
    }
    return old;
  }

  set(key: string, value: V): void {
    if (!this.#young.has(key) && this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }

  /** Entries held now. */
  get size(): number {
    return this.#young.size + this.#old.size;
  }
}
