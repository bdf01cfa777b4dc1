/**
 * Bounded concurrency (P10): at most `max` tasks at once overall and at most `perKey` per key
 * (the origin), so a slow peer never holds more than its share and never sees parallel
 * requests from us. Waiting tasks run in arrival order.
 */
export class Limiter {
  readonly #max: number;
  readonly #perKey: number;
  #running = 0;
  readonly #runningByKey = new Map<string, number>();
  readonly #queue: Array<{ key: string; start: () => void }> = [];
  #peak = 0;

  constructor(options: { max: number; perKey: number }) {
    this.#max = Math.max(1, options.max);
    this.#perKey = Math.max(1, options.perKey);
  }

  /** Runs `task` when a slot for `key` is free. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      this.#queue.push({ key, start });
      this.#drain();
    });
    try {
      return await task();
    } finally {
      this.#running--;
      const n = (this.#runningByKey.get(key) ?? 1) - 1;
      if (n === 0) this.#runningByKey.delete(key);
      else this.#runningByKey.set(key, n);
      this.#drain();
    }
  }

  /** Tasks running now, and the most that ever ran at once. */
  get running(): number {
    return this.#running;
  }

  get peak(): number {
    return this.#peak;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  #drain(): void {
    for (let i = 0; i < this.#queue.length && this.#running < this.#max; ) {
      const item = this.#queue[i]!;
      const busy = this.#runningByKey.get(item.key) ?? 0;
      if (busy >= this.#perKey) {
        i++;
        continue;
      }
      this.#queue.splice(i, 1);
      this.#running++;
      this.#peak = Math.max(this.#peak, this.#running);
      this.#runningByKey.set(item.key, busy + 1);
      item.start();
    }
  }
}
