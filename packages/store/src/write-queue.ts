/**
 * One writer at a time on a database, in order, except for urgent work: a SQLite file has one
 * write lock, so the store's writes and the conversations' writes on the same file take turns
 * here. The store's own writes run in the order they were queued (a batch of card entries, a
 * snapshot, a pin); urgent work (a turn's history, which a user waits on) runs after the write in
 * progress, ahead of every store write still queued — it never waits behind a queue of batches
 * that only a moment without a turn would have started, nor behind a snapshot still being split
 * into rows. Urgent work runs in its own order too.
 *
 * @module
 */

interface Queued {
  run(): Promise<unknown>;
  /** Settled once its `ready` promise is (none: at once). */
  ready: boolean;
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

  /**
   * Runs `work` when its turn comes; resolves or rejects as it does. With `ready` (work done before
   * the write, off the database: a snapshot split into rows), a write that reaches its turn first
   * waits for it there, keeping its place: the writes after it wait too, urgent work does not
   * (`ready` is for the store's own writes; urgent work runs when its turn comes).
   */
  run<T>(work: () => Promise<T>, options: { urgent?: boolean; ready?: Promise<unknown> } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queued: Queued = {
        // A work that throws at once rejects like one that fails later: the queue goes on.
        run: async () => {
          try {
            resolve(await work());
          } catch (err) {
            reject(err);
          }
        },
        ready: options.ready === undefined,
      };
      (options.urgent === true ? this.#urgent : this.#normal).push(queued);
      if (options.ready !== undefined) {
        const settled = (): void => {
          queued.ready = true;
          this.#next();
        };
        options.ready.then(settled, settled);
      }
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
    // Urgent first; else the oldest write, once it is ready (the others keep their places behind it).
    const queued = this.#urgent.shift() ?? (this.#normal[0]?.ready === true ? this.#normal.shift() : undefined);
    if (queued === undefined) {
      if (this.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
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
