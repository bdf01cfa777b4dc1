/**
 * The upstream request budget per origin (issue 24, item 4): one token bucket per origin
 * (`https://host[:port]`), refilled at `requestsPerSecond` up to `burst`, shared by every fetcher
 * given the same {@link OriginBudget} — in the service, discovery's card fetcher, the AI Catalog
 * sources' fetchers and the inspector's. The per-origin connection bound of the fetcher is
 * politeness in concurrency; this is politeness in rate, across all callers.
 *
 * A request takes one token. A caller that may wait (discovery) reserves a token ahead: the
 * bucket goes below zero and the caller sleeps once, for exactly the time the refill needs, so
 * waiting callers are served in order and never spin. A caller that may not (the inspector,
 * `maxWaitMs` 0) is refused when no token is there, and nothing is taken. Over any run, the
 * requests an origin receives are at most `burst + requestsPerSecond × elapsed seconds`.
 *
 * The buckets are bounded: a bucket back at `burst` is the same as none and is freed; past
 * `maxOrigins` buckets the least recently used one is dropped (counted in
 * {@link OriginBudgetStats.originsDropped}: that origin starts again from a full burst).
 *
 * @module
 */
import type { Clock } from '../clock/index.js';
import { DiscoveryError, type Problem } from '../errors.js';

/** Inputs of {@link OriginBudget}. */
export interface OriginBudgetOptions {
  /** Tokens added per second, per origin. */
  requestsPerSecond: number;
  /** Tokens an idle origin holds: requests sent at once before the rate applies. */
  burst: number;
  /** Monotonic time (`now`) and the waits (`sleep`). */
  clock: Pick<Clock, 'now' | 'sleep'>;
  /** Buckets held at most (origins recently asked for). Default 1,024. */
  maxOrigins?: number;
}

/** Counters of an {@link OriginBudget}. */
export interface OriginBudgetStats {
  /** Buckets held now. */
  origins: number;
  /** Requests refused because the budget was spent (or the wait was longer than allowed), by caller. */
  exhausted: Record<string, number>;
  /** Requests that waited for their turn, by caller. */
  waited: Record<string, number>;
  /** Buckets dropped at `maxOrigins` while not full. */
  originsDropped: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * The budget. No timers of its own: a bucket is refilled when it is asked for.
 *
 * @example
 * const budget = new OriginBudget({ requestsPerSecond: 20, burst: 40, clock: systemClock });
 * const fetcher = createCardFetcher({ policy, originBudget: { budget, maxWaitMs: 5_000, caller: 'discovery' } });
 */
export class OriginBudget {
  readonly requestsPerSecond: number;
  readonly burst: number;
  readonly #clock: Pick<Clock, 'now' | 'sleep'>;
  readonly #maxOrigins: number;
  /** Least recently used first. */
  readonly #buckets = new Map<string, Bucket>();
  readonly #exhausted: Record<string, number> = {};
  readonly #waited: Record<string, number> = {};
  #dropped = 0;
  #calls = 0;

  constructor(o: OriginBudgetOptions) {
    const problems: Problem[] = [];
    if (!(Number.isFinite(o.requestsPerSecond) && o.requestsPerSecond > 0)) problems.push({ path: 'requestsPerSecond', message: 'must be a positive number' });
    if (!(Number.isFinite(o.burst) && o.burst >= 1)) problems.push({ path: 'burst', message: 'must be at least 1' });
    if (o.maxOrigins !== undefined && !(Number.isInteger(o.maxOrigins) && o.maxOrigins >= 1)) problems.push({ path: 'maxOrigins', message: 'must be a positive integer' });
    if (problems.length > 0) throw new DiscoveryError('ERR_CONFIG_INVALID', `origin budget: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, { stage: 'config', problems });
    this.requestsPerSecond = o.requestsPerSecond;
    this.burst = o.burst;
    this.#clock = o.clock;
    this.#maxOrigins = o.maxOrigins ?? 1_024;
  }

  /**
   * Takes one token for `origin`: 0 when one is there; otherwise the milliseconds to wait for it
   * when that is at most `maxWaitMs` (the token is then reserved: sleep that long, then send);
   * otherwise undefined — refused, nothing taken, counted for `caller`.
   */
  reserve(origin: string, maxWaitMs: number, caller: string): number | undefined {
    const now = this.#clock.now();
    // Now and then, idle origins are freed (a pass over at most maxOrigins buckets per 1,024 requests).
    if (++this.#calls % 1_024 === 0) this.#freeIdle(now);
    const bucket = this.#bucket(origin, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    const waitMs = Math.ceil(((1 - bucket.tokens) * 1000) / this.requestsPerSecond);
    if (waitMs > maxWaitMs) {
      this.#exhausted[caller] = (this.#exhausted[caller] ?? 0) + 1;
      return undefined;
    }
    bucket.tokens -= 1;
    this.#waited[caller] = (this.#waited[caller] ?? 0) + 1;
    return waitMs;
  }

  /** Gives back a token reserved and not used (the wait was aborted). */
  refund(origin: string): void {
    const bucket = this.#buckets.get(origin);
    if (bucket !== undefined) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  /** Milliseconds until `origin` has a token again (0 when it has one). */
  retryAfterMs(origin: string): number {
    const bucket = this.#buckets.get(origin);
    if (bucket === undefined) return 0;
    const tokens = this.#refilled(bucket, this.#clock.now());
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / this.requestsPerSecond);
  }

  /** Sleeps `ms` on the budget's clock (rejects with the signal's reason when it aborts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#clock.sleep(ms, signal);
  }

  /** The counters (a copy). */
  get stats(): OriginBudgetStats {
    return { origins: this.#buckets.size, exhausted: { ...this.#exhausted }, waited: { ...this.#waited }, originsDropped: this.#dropped };
  }

  #refilled(bucket: Bucket, now: number): number {
    return Math.min(this.burst, bucket.tokens + (Math.max(0, now - bucket.at) * this.requestsPerSecond) / 1000);
  }

  #bucket(origin: string, now: number): Bucket {
    let bucket = this.#buckets.get(origin);
    if (bucket !== undefined) {
      bucket.tokens = this.#refilled(bucket, now);
      bucket.at = now;
      // Most recently used last.
      this.#buckets.delete(origin);
      this.#buckets.set(origin, bucket);
      return bucket;
    }
    if (this.#buckets.size >= this.#maxOrigins) this.#evict(now);
    bucket = { tokens: this.burst, at: now };
    this.#buckets.set(origin, bucket);
    return bucket;
  }

  /** Frees every full bucket: an idle origin's is the same as none. */
  #freeIdle(now: number): void {
    for (const [origin, bucket] of this.#buckets) if (this.#refilled(bucket, now) >= this.burst) this.#buckets.delete(origin);
  }

  /** Frees the idle buckets; if none is, drops the least recently used one. */
  #evict(now: number): void {
    this.#freeIdle(now);
    if (this.#buckets.size < this.#maxOrigins) return;
    const oldest = this.#buckets.keys().next().value;
    if (oldest !== undefined) this.#buckets.delete(oldest);
    this.#dropped++;
  }
}
