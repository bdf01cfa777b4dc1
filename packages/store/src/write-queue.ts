/**
 * One writer at a time on a database, in order, except for urgent work: a SQLite file has one
 * write lock, so the store's writes and the conversations' writes on the same file take turns
 * here. The store's own writes run in the order they were queued (a batch of card entries, a
 * snapshot, a pin); urgent work (a turn's history, which a user waits on) runs after the write in
 * progress, ahead of every store write still queued — it never waits behind a queue of batches
 * that only a moment without a turn would have started. Urgent work runs in its own order too.
 *
 * @module
 */

interface Queued {
  run(): Promise<unknown>;
}

/**
 * @example
 * const queue = new WriteQueue();
 * void queue.run(() => writeBatch());                 // in order
 * await queue.run(() => appendTurn(), { urgent: true }); // after the write in progress, before the batch
 */
export class WriteQueue {
  readonly #normal: Queued[] = [];
  readonly #urgent: Queued[] = [];
  #running = false;
  #idle: Array<() => void> = [];

  /** Work queued or running now. */
  get size(): number {
    return this.#normal.length + this.#urgent.length + (this.#running ? 1 : 0);
  }

  /** Runs `work` when its turn comes; resolves or rejects as it does. */
  run<T>(work: () => Promise<T>, options: { urgent?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queued: Queued = { run: () => work().then(resolve, reject) };
      (options.urgent === true ? this.#urgent : this.#normal).push(queued);
      this.#next();
    });
  }

  /** Resolves once nothing is queued or running (work queued meanwhile included). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #next(): void {
    if (this.#running) return;
    const queued = this.#urgent.shift() ?? this.#normal.shift();
    if (queued === undefined) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#running = true;
    // `run` settles its caller's promise and never rejects.
    void queued.run().finally(() => {
      this.#running = false;
      this.#next();
    });
  }
}
