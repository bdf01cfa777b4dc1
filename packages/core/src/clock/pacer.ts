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

/** Elements sorted or merged between two yields of {@link sortSteps}. */
const SORTED_PER_STEP = 4096;

/**
 * `items` sorted by `compare` as a new array, stable as `Array.prototype.sort`, yielding between
 * slices (for {@link runPaced}): runs of {@link SORTED_PER_STEP} sorted natively, then merged
 * pairwise, a yield every {@link SORTED_PER_STEP} elements merged. One native sort of 100,000
 * agents or URLs held the event loop 50–100 ms. Two runs already in order are joined without
 * comparing their elements, so sorted input costs one comparison per run and a copy per pass.
 */
export function* sortSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Generator<void, T[]> {
  const n = items.length;
  if (n <= SORTED_PER_STEP) return items.slice().sort(compare);
  let from = new Array<T>(n);
  for (let lo = 0; lo < n; lo += SORTED_PER_STEP) {
    const run = items.slice(lo, lo + SORTED_PER_STEP).sort(compare);
    for (let k = 0; k < run.length; k++) from[lo + k] = run[k]!;
    yield;
  }
  let to = new Array<T>(n);
  let merged = 0;
  for (let width = SORTED_PER_STEP; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      // Already in order (or no right run): copied as is.
      if (j < hi && compare(from[j]!, from[j - 1]!) < 0) {
        while (i < mid && j < hi) {
          // The left element first unless the right one is strictly less: stable.
          to[k++] = compare(from[j]!, from[i]!) < 0 ? from[j++]! : from[i++]!;
          if (++merged % SORTED_PER_STEP === 0) yield;
        }
      }
      while (i < mid) to[k++] = from[i++]!;
      while (j < hi) to[k++] = from[j++]!;
    }
    [from, to] = [to, from];
    yield;
  }
  return from;
}
