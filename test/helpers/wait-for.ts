/**
 * Polling with a bound, for tests of processes and servers that change state by themselves (a
 * replica taking over, a reload applied): a bound, never a timing assertion.
 */

/**
 * Calls `fn` every `intervalMs` until it returns a value other than `undefined`, and returns that.
 * A call that throws counts as "not yet" (a restarting service refuses connections); after
 * `boundMs` it fails naming `what` and the last error.
 */
export async function waitFor<T>(fn: () => Promise<T | undefined>, what: string, boundMs = 30_000, intervalMs = 50): Promise<T> {
  const end = Date.now() + boundMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`gave up waiting for ${what} after ${boundMs} ms${last === undefined ? '' : ` (last error: ${(last as Error).message ?? String(last)})`}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
