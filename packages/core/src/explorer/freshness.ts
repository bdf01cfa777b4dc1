/**
 * When the newer card reached the client: which attempts used v1 while v2 was already on the
 * server, and why, in words — the freshness side of the max-age trade-off.
 *
 * @module
 */
import type { TraceInputs } from './inputs.js';
import type { TraceAttempt, TraceCacheState, TraceFreshness } from './types.js';
import { secondsText } from './why.js';

/**
 * Why an attempt used v1 while v2 was on the server, or `undefined` when it did not.
 *
 * @param before the entry after the previous attempt (its expiry explains a cache hit)
 */
export function hiddenNewerOf(a: Omit<TraceAttempt, 'hiddenNewer'>, before: TraceCacheState | undefined, inputs: TraceInputs): string | undefined {
  if (a.serverVersion !== 'v2' || a.cardVersion !== 'v1' || inputs.publishV2AtSeconds === null) return undefined;
  const since = `v2 has been on the server since ${secondsText(inputs.publishV2AtSeconds)}, but the cache still serves v1`;
  if (a.action === 'cache-hit') {
    return `${since}: v1 is fresh until ${secondsText(before?.expiresAt ?? 0)} by max-age ${inputs.maxAgeSeconds} s, so no request is sent`;
  }
  if (a.action === 'backoff') return `${since}: the cache is backing off after failures and sends no request`;
  return `${since}: the refresh failed, so the card seen before is served stale`;
}

/**
 * The run's freshness facts and one sentence.
 *
 * @example freshnessOf(run.attempts, run.inputs).sentence // "v2 was published at 12 s and first used at 12 s (attempt 3)."
 */
export function freshnessOf(attempts: readonly TraceAttempt[], inputs: TraceInputs): TraceFreshness {
  const at = inputs.publishV2AtSeconds;
  if (at === null) return { v2PublishedAt: null, v2FirstUsedAt: null, v2HiddenAttempts: [], sentence: 'No v2 is published in this run: the server keeps v1 throughout.' };
  const first = attempts.find((a) => a.cardVersion === 'v2');
  const hidden = attempts.filter((a) => a.hiddenNewer !== undefined).map((a) => a.index);
  const last = attempts.at(-1);
  const list = (ns: readonly number[]): string => `${ns.length === 1 ? 'attempt' : 'attempts'} ${ns.join(', ')}`;
  let sentence: string;
  if (first !== undefined) {
    sentence = `v2 was published at ${secondsText(at)} and first used at ${secondsText(first.at)} (attempt ${first.index})`;
    sentence += hidden.length > 0 ? `; before that, ${list(hidden)} still used v1 while v2 was on the server.` : '.';
  } else if (last === undefined || at > last.at) {
    sentence = `v2 is published at ${secondsText(at)}, after the last attempt starts: no attempt could see it.`;
  } else if (hidden.length > 0) {
    sentence = `v2 was published at ${secondsText(at)} but never used: ${list(hidden)} still used v1 while v2 was on the server.`;
  } else {
    sentence = `v2 was published at ${secondsText(at)} but no attempt used it: no usable card came back.`;
  }
  return { v2PublishedAt: at, v2FirstUsedAt: first?.at ?? null, v2HiddenAttempts: hidden, sentence };
}
