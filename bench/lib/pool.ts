/** Bounded work: `concurrency` workers over a list, stopping early at a deadline. */

export interface PoolResult {
  /** Items started before the deadline. */
  started: number;
  errors: number;
  firstError?: unknown;
  timedOut: boolean;
}

/**
 * Runs `fn` over `items` with at most `concurrency` in flight. No item starts after `deadlineMs`
 * (performance.now() scale), so every loop is bounded in count and in time.
 */
export async function runPool<T>(items: readonly T[], concurrency: number, deadlineMs: number, fn: (item: T, index: number) => Promise<void>): Promise<PoolResult> {
  let next = 0;
  let errors = 0;
  let firstError: unknown;
  let timedOut = false;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      if (performance.now() > deadlineMs) {
        timedOut = true;
        return;
      }
      try {
        await fn(items[i]!, i);
      } catch (err) {
        errors++;
        firstError ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return { started: Math.min(next, items.length), errors, firstError, timedOut };
}
