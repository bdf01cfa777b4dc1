/**
 * Time and randomness, injected everywhere they matter, so the same code runs on the real
 * clock in production and on a {@link VirtualClock} in tests and in the trace explorer.
 *
 * All times are milliseconds. `now()` is a monotonic count used for freshness and backoff
 * math (immune to wall-clock jumps); `wallNow()` is epoch milliseconds, for display and for
 * HTTP `Date` comparisons only.
 *
 * @module
 */

/** A cancellable timer handle. */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Monotonic milliseconds. Only differences are meaningful. */
  now(): number;
  /**
   * Optional: the latest reading of {@link now}, at most about a millisecond old while the event
   * loop turns (older only while it is blocked: work that never yields to timers sees one time),
   * never behind a reading `now()` already gave. For a decision that tolerates that lag on a path
   * where reading the clock would cost more than the decision: a fresh cache hit (a card is then
   * served at most that long past its expiry). Without it, `now()` is used. The
   * {@link systemClock} has it; a {@link VirtualClock}'s `now()` is already a field read.
   */
  recentNow?(): number;
  /** Epoch milliseconds, for display and HTTP dates. */
  wallNow(): number;
  /** Calls `fn` once after `ms`. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A source of uniformly distributed numbers in [0, 1). */
export type Random = () => number;

/** The latest reading of the system clock, until a timer clears it (undefined: read the clock). */
let recent: number | undefined;
let clearing = false;

function forgetRecent(): void {
  recent = undefined;
  clearing = false;
}

/**
 * Reads the monotonic clock and keeps the reading for {@link recentNow}. Every reading is kept,
 * so `recentNow()` is never behind a time the caller already used (an expiry computed from
 * `now()` is never judged by an earlier reading); a 1 ms timer, set only while readings are being
 * made, clears it, so an idle process sets none.
 */
function readNow(): number {
  const t = performance.now();
  recent = t;
  if (!clearing) {
    clearing = true;
    setTimeout(forgetRecent, 1).unref();
  }
  return t;
}

/**
 * The latest reading, at most about a millisecond old while the event loop turns. Reading the
 * monotonic clock costs 70–130 ns on the machines we measure (docs/benchmarks.md, "Issue 43: the
 * hot path"), as much as the rest of a fresh cache hit; nginx keeps its time per loop iteration
 * for the same reason.
 */
function recentNow(): number {
  return recent ?? readNow();
}

/** The real clock: `performance.now()` for monotonic time. */
export const systemClock: Clock = {
  now: readNow,
  recentNow,
  wallNow: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(done, Math.max(0, ms));
      function done() {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
      function onAbort() {
        clearTimeout(t);
        reject(signal?.reason);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/** `Math.random`, the default random source. */
export const systemRandom: Random = () => Math.random();

/**
 * A deterministic random source (mulberry32), for tests and the explorer.
 * @example const random = seededRandom(42); random(); // always the same sequence
 */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. Timers fire in time order during {@link advance};
 * promises awaiting {@link Clock.sleep} settle as their time is reached.
 *
 * @example
 * const clock = new VirtualClock({ wallStart: Date.UTC(2026, 10, 30, 10) });
 * const done = clock.sleep(5_000);
 * await clock.advance(5_000); // `done` is now resolved
 */
export class VirtualClock implements Clock {
  #now: number;
  #wallOffset: number;
  #seq = 0;
  #timers: PendingTimer[] = [];

  constructor(options: { start?: number; wallStart?: number } = {}) {
    this.#now = options.start ?? 0;
    this.#wallOffset = (options.wallStart ?? Date.UTC(2026, 0, 1)) - this.#now;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#now + this.#wallOffset;
  }

  /** Moves the wall clock without moving monotonic time (a clock jump or skew). */
  jumpWall(deltaMs: number): void {
    this.#wallOffset += deltaMs;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: PendingTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const handle = this.setTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      function onAbort() {
        handle.cancel();
        reject(signal?.reason);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of timers still waiting. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Time of the earliest pending timer, if any. */
  nextTimerAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.#timers) if (!t.cancelled && (next === undefined || t.at < next)) next = t.at;
    return next;
  }

  /**
   * Advances time by `ms`, firing every timer that falls due in order, and lets promise
   * continuations run between timers so chains of sleeps behave as on a real clock.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    await this.advanceTo(target);
  }

  /** Advances to an absolute monotonic time. */
  async advanceTo(target: number): Promise<void> {
    for (;;) {
      await flushMicrotasks();
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers[0];
      if (next === undefined || next.at > target) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = Math.max(this.#now, target);
    await flushMicrotasks();
  }
}

/** Lets pending promise continuations (and I/O callbacks already queued) run. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
