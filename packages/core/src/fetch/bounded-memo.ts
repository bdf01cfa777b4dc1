/**
 * A bounded memo: the fetcher's judged URLs and the host policy's normalized URLs are kept here,
 * so endpoints that came and went under churn are forgotten instead of held until a
 * 100,000-entry map is cleared (issue 24: ~0.9 KB retained per evicted endpoint).
 *
 * At most `max` entries. While there is room every key is kept; once full, a new key takes the
 * place of one chosen at random. So a key no longer used is gone after enough newcomers, and a
 * workload of more keys than `max` still finds about `max` of every N keys it asks for (issue 43).
 * The previous design, two generations of `max / 2` dropped whole, found none of them: a fleet
 * that cycles through 10,001 URLs in the same order asked for each one just after it was dropped,
 * and every refresh parsed and judged its URL again. Every operation is O(1).
 *
 * @module
 */

/**
 * Entries of each URL memo (the fetcher's, the policy's). Past this many URLs in use the memos
 * recompute what they miss (a URL parse each): correctness never depends on them.
 */
export const URL_MEMO_ENTRIES = 10_000;

export class BoundedMemo<V> {
  readonly #max: number;
  /** Key → its slot in {@link #keys} and {@link #values}. */
  readonly #slots = new Map<string, number>();
  readonly #keys: string[] = [];
  readonly #values: V[] = [];
  /**
   * The state of the generator that picks the entry a newcomer replaces (xorshift32, fixed seed:
   * the choice needs no quality beyond spreading, and a run is reproducible).
   */
  #state = 0x9e3779b9;

  /** `max`: entries held at most (at least 1). */
  constructor(max: number) {
    this.#max = Math.max(1, Math.floor(max));
  }

  get(key: string): V | undefined {
    const slot = this.#slots.get(key);
    return slot === undefined ? undefined : this.#values[slot];
  }

  set(key: string, value: V): void {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      if (this.#keys.length < this.#max) {
        slot = this.#keys.length;
        this.#keys.push(key);
      } else {
        slot = this.#random() % this.#max;
        this.#slots.delete(this.#keys[slot]!);
        this.#keys[slot] = key;
      }
      this.#slots.set(key, slot);
    }
    this.#values[slot] = value;
  }

  /** Entries held now. */
  get size(): number {
    return this.#slots.size;
  }

  #random(): number {
    let x = this.#state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#state = x >>> 0;
    return this.#state;
  }
}
