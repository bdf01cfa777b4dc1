/**
 * One timer for many deadlines. A fetch costs a `Set.add` and a `Set.delete` instead of a timer
 * of its own: the timer is armed for the earliest deadline known, and when it fires it expires
 * every member past its deadline and re-arms for the earliest one left. (A fetcher's deadlines
 * all have one length, so they mostly come in order; one that waited for its credentials may
 * not, and is still expired on time.)
 */

/** Something with a deadline (a `performance.now()` instant) that can be told it passed. */
export interface Expiring {
  readonly deadline: number;
  expire(): void;
}

export class DeadlineQueue<T extends Expiring> {
  readonly #members = new Set<T>();
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;

  add(member: T): void {
    this.#members.add(member);
    if (member.deadline < this.#armedFor) this.#arm(member.deadline);
  }

  /** Removes a member (settled before its deadline). The last removal stops the timer. */
  delete(member: T): void {
    this.#members.delete(member);
    if (this.#members.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#armedFor = Infinity;
    }
  }

  /** The members, in the order they were added. */
  values(): IterableIterator<T> {
    return this.#members.values();
  }

  get size(): number {
    return this.#members.size;
  }

  #arm(deadline: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedFor = deadline;
    // +1: setTimeout may fire a fraction of a millisecond early against performance.now().
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, deadline - performance.now()) + 1);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const m of this.#members) {
      if (m.deadline > now) next = Math.min(next, m.deadline);
      else {
        this.#members.delete(m);
        m.expire();
      }
    }
    if (next !== Infinity) this.#arm(next);
  }
}

/**
 * A deadline on one request in real time (sockets do not run on a model clock): `controller` is
 * aborted with `reason()` after `ms`, unless `cancel()` comes first. The one timer of the guarded
 * fetch and the A2A agents' headers deadline; the card fetcher shares a {@link DeadlineQueue}.
 */
export function abortAfter(controller: AbortController, ms: number, reason: () => Error): { cancel(): void } {
  const timer = setTimeout(() => controller.abort(reason()), ms);
  return { cancel: () => clearTimeout(timer) };
}
