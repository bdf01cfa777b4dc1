/**
 * Why an attempt went to the network (or did not), read from the cache entry as the previous
 * attempt left it (`CardCache.peek`) and from what the cache then did. Words only: the decision
 * itself is the library's.
 *
 * @module
 */
import type { TraceAction, TraceCacheState, TraceTrigger } from './types.js';

/** Model seconds as the page and the CLI print them: `10.1 s`. */
export const secondsText = (s: number): string => `${Math.round(s * 1000) / 1000} s`;

/**
 * The trigger of an attempt and its sentence.
 *
 * @param action what the cache did (`cache-hit`, `fetch`, `backoff`)
 * @param before the entry after the previous attempt; `undefined` for the first attempt
 * @example whyOf('fetch', undefined).why // "no card cached yet"
 */
export function whyOf(action: TraceAction, before: TraceCacheState | undefined): { trigger: TraceTrigger; why: string } {
  const card = before?.cardVersion !== undefined ? `card ${before.cardVersion}` : 'card';
  if (action === 'cache-hit') {
    return { trigger: 'fresh', why: `the cached ${card} is fresh until ${secondsText(before?.expiresAt ?? 0)}` };
  }
  if (action === 'backoff') {
    const until = before?.nextAttemptAt !== undefined ? ` until ${secondsText(before.nextAttemptAt)}` : '';
    return { trigger: 'backing-off', why: `backing off${until} after ${before?.failures ?? 0} failure(s): no request is sent` };
  }
  if (before === undefined || (!before.present && before.failures === 0)) return { trigger: 'no-card', why: 'no card cached yet' };
  // With backoff off the library's retry delay is 0, so the next attempt may ask at once.
  const backedOff = before.nextAttemptAt !== undefined && before.nextAttemptAt > before.at;
  const again = backedOff ? `the backoff ended at ${secondsText(before.nextAttemptAt ?? 0)}, so it asks again` : 'backoff is off, so it asks again';
  if (!before.present) return { trigger: 'retry', why: `no card cached yet: the last attempt failed (${before.failures} failure(s)); ${again}` };
  if (before.stale) return { trigger: 'retry', why: `the cached ${card} is stale after ${before.failures} failed refresh(es); ${again}` };
  return { trigger: 'expired', why: `the cached ${card} expired at ${secondsText(before.expiresAt ?? 0)}` };
}

/**
 * What a conditional request's validator did, from the server's answer: `If-None-Match` matched
 * the card's ETag (304, no body), or it no longer matched because the card changed (200 with the
 * whole new card and its new ETag). `undefined` for an unconditional request or an error status.
 */
export function revalidationOf(ifNoneMatch: string | undefined, response: { status: number; headers: Readonly<Record<string, string>> } | undefined): string | undefined {
  if (ifNoneMatch === undefined || response === undefined) return undefined;
  const etag = response.headers.etag;
  if (response.status === 304) return `If-None-Match ${ifNoneMatch} matched the card's ETag: the card is unchanged, so the answer is 304 Not Modified with no body`;
  if (response.status === 200) {
    return `If-None-Match ${ifNoneMatch} no longer matched: the card changed on the server${etag !== undefined ? ` (its ETag is now ${etag})` : ''}, so the answer is 200 with the whole new card instead of 304 Not Modified`;
  }
  return undefined;
}
