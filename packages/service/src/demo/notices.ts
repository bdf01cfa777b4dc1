/**
 * What the demo's terminal says about failing card endpoints, rate-limited so the terminal goes
 * quiet: the first failure of an endpoint is said once; while it keeps failing, "still failing" at
 * most once per reminder interval (and at once when the error changes); its recovery once.
 */

/** What the narration knows about an endpoint's failure when it is said. */
interface FailureNote {
  endpoint: string;
  /** The error code of the last failed fetch, e.g. `ERR_FETCH_TIMEOUT`. */
  code: string;
  /** What happens meanwhile, e.g. "its card is served stale". */
  meanwhile: string;
}

interface Failing {
  code: string;
  /** Failed fetches since the first one. */
  attempts: number;
  since: number;
  saidAt: number;
}

/**
 * The rate limiter. `now` is the wall clock in milliseconds; `clock(ms)` formats an instant the
 * way the narration prints it.
 */
export function failureNotices(options: { now: () => number; reminderMs: number; clock: (ms: number) => string }): {
  /** A failed fetch: the line to print, or undefined when it is not news. */
  failed(note: FailureNote): string | undefined;
  /** A successful fetch: the recovery line when the endpoint was failing, else undefined. */
  answered(endpoint: string): string | undefined;
  /** Endpoints failing now, with their failed fetches so far. */
  failing(): Array<{ endpoint: string; code: string; attempts: number; since: number }>;
} {
  const state = new Map<string, Failing>();
  const attemptsWord = (n: number) => `${n} failed fetch${n === 1 ? '' : 'es'}`;
  return {
    failed({ endpoint, code, meanwhile }) {
      const now = options.now();
      const f = state.get(endpoint);
      if (f === undefined) {
        state.set(endpoint, { code, attempts: 1, since: now, saidAt: now });
        return `${endpoint} failed (${code}); ${meanwhile}`;
      }
      f.attempts++;
      if (f.code !== code) {
        f.code = code;
        f.saidAt = now;
        return `${endpoint} now fails with ${code} (${attemptsWord(f.attempts)} since ${options.clock(f.since)}); ${meanwhile}`;
      }
      if (now - f.saidAt < options.reminderMs) return undefined;
      f.saidAt = now;
      return `${endpoint} still failing (${code}): ${attemptsWord(f.attempts)} since ${options.clock(f.since)}; ${meanwhile}`;
    },
    answered(endpoint) {
      const f = state.get(endpoint);
      if (f === undefined) return undefined;
      state.delete(endpoint);
      return `${endpoint} answers again, after ${attemptsWord(f.attempts)} since ${options.clock(f.since)}`;
    },
    failing() {
      return [...state].map(([endpoint, f]) => ({ endpoint, code: f.code, attempts: f.attempts, since: f.since }));
    },
  };
}
