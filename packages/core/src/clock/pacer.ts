/**
 * Long synchronous work in slices: a {@link Pacer} lets the event loop run between slices (one turn
 * through `setImmediate` at most every few milliseconds of work), so `/healthz` and every other
 * request are served while a large catalog is read, or a fleet of 100,000 agents is evaluated and
 * published. The one rule for yielding inside long work: catalog reading, the discovery loop's
 * evaluation and publication all tick a pacer.
 *
 * Work written once as a generator that yields between its steps runs whole with {@link runSteps}
 * or in slices with {@link runPaced}: the same code and result either way.
 *
 * @module
 */

/** Milliseconds of work between two turns of the event loop (issue 24's bound is 100 ms of delay). */
const SLICE_MS = 8;

/**
 * Lets the event loop run between slices of a long synchronous loop (thousands of entries): at
 * most every `sliceMs` of work, one turn through `setImmediate`, so `/healthz` and other requests
 * are served while a large catalog is read or a large fleet judged. Real time (`performance.now`),
 * not a {@link Clock}'s: a slice is CPU the loop holds, which a virtual clock does not measure.
 */
export class Pacer {
  readonly #sliceMs: number;
  #since = performance.now();
  constructor(sliceMs = SLICE_MS) {
    this.#sliceMs = sliceMs;
  }
  /** Whether the current slice is spent (the next {@link tick} yields): a loop checks this without awaiting. */
  get due(): boolean {
    return performance.now() - this.#since >= this.#sliceMs;
  }
  /** Resolves at once within a slice, after one event-loop turn past it. */
  async tick(): Promise<void> {
    if (!this.due) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}

/** Runs work written in steps to its end at once. */
export function runSteps<T>(steps: Generator<void, T>): T {
  let step = steps.next();
  while (step.done !== true) step = steps.next();
  return step.value;
}

/** Runs work written in steps to its end, with a `pacer` tick between steps. */
export async function runPaced<T>(steps: Generator<void, T>, pacer: Pacer): Promise<T> {
  let step = steps.next();
  while (step.done !== true) {
    if (pacer.due) await pacer.tick();
    step = steps.next();
  }
  return step.value;
}
