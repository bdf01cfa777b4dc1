/**
 * The graceful drain (docs/operations.md "Graceful drain"): once {@link Drain.begin} is called,
 * `/readyz` answers 503 with `draining: true`, new sessions and turns are refused with 503 and
 * `Retry-After`, and the event streams are told to reconnect elsewhere; chat turns already in
 * flight finish, up to the drain timeout, past which they are aborted through their signal.
 */

import { Foreground } from 'a2a-discovery/adk';

/** `Retry-After` (seconds) of a request refused while draining: another replica answers at once. */
export const DRAIN_RETRY_AFTER_S = 1;

/** What a turn aborted at drain says. */
const DRAIN_ABORT_MESSAGE = 'the service is shutting down and the turn did not finish within server.drainTimeoutMs; send it again (another replica will answer)';

export class Drain {
  readonly #started = new AbortController();
  readonly #abort = new AbortController();
  /** The turns in flight (counted as the card cache's foreground is: one rule). */
  readonly #turns = new Foreground();
  #aborted = 0;
  #idle: Array<() => void> = [];

  /** Whether the service is draining. */
  get draining(): boolean {
    return this.#started.signal.aborted;
  }

  /** Aborted when the drain begins. */
  get started(): AbortSignal {
    return this.#started.signal;
  }

  /** Aborted when the drain timeout passes: turns still running stop. */
  get abortSignal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Turns running now. */
  get inFlight(): number {
    return this.#turns.inFlight;
  }

  /** Turns aborted because the drain timeout passed. */
  get abortedTurns(): number {
    return this.#aborted;
  }

  /** A turn starts; call the returned function when it ends. */
  enter(): () => void {
    const leave = this.#turns.enter();
    return () => {
      leave();
      if (!this.#turns.busy) for (const r of this.#idle.splice(0)) r();
    };
  }

  /** Counts one turn the drain aborted. */
  abortedOne(): void {
    this.#aborted++;
  }

  /** Starts draining (once). */
  begin(): void {
    if (!this.draining) this.#started.abort();
  }

  /**
   * Waits for the turns in flight, up to `timeoutMs`; then aborts the rest and waits for them to
   * answer (at most `graceMs` more). Resolves with the number of turns still running at the timeout.
   */
  async settle(timeoutMs: number, graceMs = 2_000): Promise<number> {
    const idle = (ms: number) =>
      new Promise<boolean>((resolve) => {
        if (!this.#turns.busy) return resolve(true);
        const timer = setTimeout(() => resolve(false), ms);
        timer.unref();
        this.#idle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    if (await idle(timeoutMs)) return 0;
    const left = this.#turns.inFlight;
    this.#abort.abort(new Error(DRAIN_ABORT_MESSAGE));
    await idle(graceMs);
    return left;
  }
}
