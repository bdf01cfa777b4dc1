/**
 * One timer for many deadlines of the same length. Every fetch of a fetcher has the same total
 * deadline, so deadlines fall due in the order they were added: a `Set` (insertion-ordered,
 * O(1) delete) is the queue, and one timer, armed for the oldest member, serves them all. A
 * fetch costs a `Set.add` and a `Set.delete` instead of a timer of its own.
 */

/** Something with a deadline (a `performance.now()` instant) that can be told it passed. */
export interface Expiring {
  readonly deadline: number;
  expire(): void;
}

export class DeadlineQueue<T extends Expiring> {
  readonly #members = new Set<T>();
  #timer: NodeJS.Timeout | undefined;

  /** Adds a member; its deadline must not be earlier than any member's already added. */
  add(member: T): void {
    this.#members.add(member);
    if (this.#timer === undefined) this.#arm(member.deadline);
  }

  /** Removes a member (settled before its deadline). The last removal stops the timer. */
  delete(member: T): void {
    this.#members.delete(member);
    if (this.#members.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** The members, oldest first. */
  values(): IterableIterator<T> {
    return this.#members.values();
  }

  get size(): number {
    return this.#members.size;
  }

  #arm(deadline: number): void {
    // +1: setTimeout may fire a fraction of a millisecond early against performance.now().
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, deadline - performance.now()) + 1);
  }

  #fire(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const m of this.#members) {
      if (m.deadline > now) {
        this.#arm(m.deadline);
        return;
      }
      this.#members.delete(m);
      m.expire();
    }
  }
}
