/**
 * Work a user waits on (a conversation turn), counted while it runs, so background work can give
 * way to it: while any turn is in flight, the card cache starts at most
 * `maxConcurrentFetchesDuringTurns` refreshes at once (`CardCacheOptions.foreground`). A wave of
 * revalidations then never has more than that many answers waiting in one turn of the event loop,
 * ahead of the turn's own callbacks.
 *
 * @module
 */

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

  /** Whether any foreground work is in flight. */
  get busy(): boolean {
    return this.#inFlight > 0;
  }

  /** Foreground work in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Marks one piece of work in flight; the returned function ends it. */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight--;
    };
  }
}
