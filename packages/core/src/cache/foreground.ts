/**
 * Work a user waits on (a conversation turn), counted while it runs, so background work can give
 * way to it: while any turn is in flight, the card cache starts at most
 * `maxConcurrentFetchesDuringTurns` refreshes at once (`CardCacheOptions.foreground`). A wave of
 * revalidations then never has more than that many answers waiting in one turn of the event loop,
 * ahead of the turn's own callbacks. And the service's write-behind to its store waits for a moment
 * with no turn in flight ({@link Foreground.whenIdle}), so its statements and their file lock are
 * not taken in the middle of a turn.
 *
 * @module
 */
import { systemClock, type Clock, type TimerHandle } from '../clock/index.js';

/** Work waiting in {@link Foreground.whenIdle}, with the timer that bounds its wait. */
interface Waiter {
  readonly work: () => void;
  readonly timer: TimerHandle;
}

/**
 * Counts foreground work in flight. `enter()` returns the function that ends it (once; later
 * calls do nothing).
 *
 * @example
 * const foreground = new Foreground();
 * const cache = new CardCache({ fetcher, hostPolicy, foreground });
 * const sessions = new SessionRunner({ trees, foreground }); // each turn enters it while it runs
 */
export class Foreground {
  #inFlight = 0;
  /** Work waiting for a moment with nothing in flight, each with the timer that bounds its wait. */
  readonly #waiting = new Set<Waiter>();
  readonly #clock: Pick<Clock, 'setTimer'>;
  #wake: NodeJS.Immediate | undefined;

  /** `clock`: the timers that bound {@link whenIdle}'s waits (default the system clock). */
  constructor(options: { clock?: Pick<Clock, 'setTimer'> } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  /** Whether any foreground work is in flight. */
  get busy(): boolean {
    return this.#inFlight > 0;
  }

  /** Foreground work in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Work waiting for {@link whenIdle} now. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Marks one piece of work in flight; the returned function ends it. */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#inFlight === 0 && this.#waiting.size > 0) this.#wakeSoon();
    };
  }

  /**
   * Runs `work` at a moment with no foreground work in flight: at once when there is none, else
   * once the last piece ends (a turn of the event loop later, after its answer is written, and only
   * if no other has started meanwhile), and after `maxWaitMs` at most, so back-to-back turns
   * never starve it. Each call runs its `work` once.
   */
  whenIdle(work: () => void, maxWaitMs: number): void {
    if (this.#inFlight === 0) {
      work();
      return;
    }
    const waiter: Waiter = { work, timer: this.#clock.setTimer(() => this.#run(waiter), maxWaitMs) };
    this.#waiting.add(waiter);
  }

  #wakeSoon(): void {
    if (this.#wake !== undefined) return;
    this.#wake = setImmediate(() => {
      this.#wake = undefined;
      if (this.#inFlight > 0) return;
      for (const waiter of [...this.#waiting]) this.#run(waiter);
    });
  }

  #run(waiter: Waiter): void {
    if (!this.#waiting.delete(waiter)) return;
    waiter.timer.cancel();
    waiter.work();
  }
}
