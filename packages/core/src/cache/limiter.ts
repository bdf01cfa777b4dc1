/**
 * Bounded concurrency (P10): at most `max` tasks at once overall and at most `perKey` per key
 * (the origin), so a slow peer never holds more than its share and never sees more parallel
 * requests from us than allowed. Tasks of one key run in arrival order; keys take turns.
 *
 * Waiting tasks are queued per key, so finishing a task costs O(keys waiting), never
 * O(tasks waiting): ten thousand queued refreshes on a few busy origins stay cheap.
 */
export class Limiter {
  /** The bound overall, read at each start (it may change: fewer while a turn is in flight). */
  readonly #max: () => number;
  readonly #perKey: number;
  #running = 0;
  #waiting = 0;
  #peak = 0;
  readonly #runningByKey = new Map<string, number>();
  /** Keys with waiting tasks, in the order they started waiting (Map keeps insertion order). */
  readonly #queues = new Map<string, Array<() => void>>();

  /** `max` may be a function, read each time a task would start: a bound lowered meanwhile lets the running tasks finish. */
  constructor(options: { max: number | (() => number); perKey: number }) {
    const max = options.max;
    this.#max = typeof max === 'number' ? () => Math.max(1, max) : () => Math.max(1, max());
    this.#perKey = Math.max(1, options.perKey);
  }

  /** Runs `task` when a slot for `key` is free. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (!this.enter(key)) await this.wait(key);
    try {
      return await task();
    } finally {
      this.leave(key);
    }
  }

  /**
   * Takes a slot for `key` if one is free now and nobody waits for one (then {@link leave} gives
   * it back): {@link run}'s path without a promise, for a caller that starts its work only once
   * admitted.
   */
  enter(key: string): boolean {
    if (this.#running >= this.#max() || (this.#runningByKey.get(key) ?? 0) >= this.#perKey || this.#queues.has(key)) return false;
    this.#begin(key);
    return true;
  }

  /** Waits for a slot for `key`, in arrival order: it is taken when the promise resolves ({@link leave} gives it back). */
  wait(key: string): Promise<void> {
    return new Promise<void>((start) => {
      const q = this.#queues.get(key);
      if (q) q.push(start);
      else this.#queues.set(key, [start]);
      this.#waiting++;
    });
  }

  /** Gives back a slot {@link enter} or {@link wait} took, and starts whoever waits for it. */
  leave(key: string): void {
    this.#running--;
    const n = (this.#runningByKey.get(key) ?? 1) - 1;
    if (n === 0) this.#runningByKey.delete(key);
    else this.#runningByKey.set(key, n);
    this.#drain();
  }

  get running(): number {
    return this.#running;
  }

  /** The most tasks that ever ran at once. */
  get peak(): number {
    return this.#peak;
  }

  get waiting(): number {
    return this.#waiting;
  }

  #begin(key: string): void {
    this.#running++;
    this.#peak = Math.max(this.#peak, this.#running);
    this.#runningByKey.set(key, (this.#runningByKey.get(key) ?? 0) + 1);
  }

  #drain(): void {
    const max = this.#max();
    for (const [key, queue] of this.#queues) {
      if (this.#running >= max) return;
      if ((this.#runningByKey.get(key) ?? 0) >= this.#perKey) continue;
      const start = queue.shift()!;
      if (queue.length === 0) this.#queues.delete(key);
      else {
        // Let other keys go first next time: move this key to the back.
        this.#queues.delete(key);
        this.#queues.set(key, queue);
      }
      this.#waiting--;
      this.#begin(key);
      start();
    }
  }
}
