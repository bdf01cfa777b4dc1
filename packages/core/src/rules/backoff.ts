/**
 * The one backoff: capped exponential delay with jitter, on an injected random source. The card
 * cache's retries, the token cache's, the Kubernetes watch's re-list and the DNS resolver's retries
 * all ask here, so a failing peer is never hammered in step by many callers or replicas.
 *
 * @module
 */
import type { Random } from '../clock/index.js';

/** Inputs of {@link backoffDelay}. Milliseconds. */
export interface BackoffOptions {
  /** The delay after the first failure (before jitter). */
  baseMs: number;
  /** The cap: no delay is longer, whatever the count of failures. */
  maxMs: number;
  /**
   * The fraction of the delay that jitter may take away, in [0, 1]: the delay is uniformly
   * shortened by up to `jitter · delay` (0: none; 0.5: between half and all of it).
   */
  jitter: number;
  /** Uniform numbers in [0, 1): the clock module's random source (seeded in tests). */
  random: Random;
}

/**
 * The delay before the next attempt after `failures` consecutive failures (1 for the first):
 * `min(maxMs, baseMs · 2^(failures − 1))`, shortened at random by up to `jitter` of itself. Zero
 * and negative counts give the base delay; the exponent stops growing at 30 (no overflow).
 *
 * @example backoffDelay(3, { baseMs: 1000, maxMs: 60_000, jitter: 0, random: Math.random }) // 4000
 * @example backoffDelay(10, { baseMs: 1000, maxMs: 60_000, jitter: 0.5, random: () => 0.5 }) // 45000
 */
export function backoffDelay(failures: number, o: BackoffOptions): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const delay = Math.min(o.maxMs, o.baseMs * 2 ** exponent);
  const jitter = Math.min(1, Math.max(0, o.jitter));
  return delay * (1 - jitter * o.random());
}
