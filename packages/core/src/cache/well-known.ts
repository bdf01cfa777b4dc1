/**
 * The A2A 0.2 card path fallback, one rule for the card cache and `probe`: a base URL's card is
 * at `.well-known/agent-card.json` (A2A 0.3 and 1.0); A2A 0.2 published it at
 * `.well-known/agent.json`. When the URL tried first answers 404, the other well-known URL is
 * tried once, without validators (they belong to the first URL), and used only if it answers 200.
 * A card URL given directly has no fallback.
 */
import type { FetchResult } from '../fetch/index.js';

/** What {@link fetchWithLegacyFallback} ended with. */
export interface WellKnownFetch {
  /** The URL whose answer is `res`. */
  cardUrl: string;
  res: FetchResult;
  /** The other URL and its answer, when the first answered 404 and the other did not answer 200. */
  fallback?: { url: string; status: number | undefined };
}

/**
 * Fetches `cardUrl`; on a 404, fetches the URL `otherUrl()` names (when given; built only then)
 * and takes its answer if it is a 200. `request(url, first)` performs one request through the caller's
 * card fetcher (`first` is false for the fallback request).
 * Errors of the first request are thrown; an error of the fallback keeps the first 404.
 *
 * @example
 * const { cardUrl, res } = await fetchWithLegacyFallback(policy.cardUrl(base), () => policy.cardUrl(base, { legacyPath: true }), (u) => fetcher.fetch(u));
 */
export function fetchWithLegacyFallback(
  cardUrl: string,
  otherUrl: (() => string) | undefined,
  request: (url: string, first: boolean) => Promise<FetchResult>,
): Promise<WellKnownFetch> {
  return request(cardUrl, true).then((res) => (res.status !== 404 || otherUrl === undefined ? { cardUrl, res } : afterNotFound(cardUrl, res, otherUrl(), request)));
}

/**
 * The rest of {@link fetchWithLegacyFallback} once `cardUrl` answered `res`, a 404: the other
 * well-known URL `alternate`, once, unconditionally (for a caller that made the first request
 * itself: the card cache, whose every refresh would otherwise pass through a layer of promises).
 */
export async function afterNotFound(cardUrl: string, res: FetchResult, alternate: string, request: (url: string, first: boolean) => Promise<FetchResult>): Promise<WellKnownFetch> {
  let other: FetchResult | undefined;
  try {
    other = await request(alternate, false);
  } catch {
    other = undefined;
  }
  if (other?.status === 200) return { cardUrl: alternate, res: other };
  return { cardUrl, res, fallback: { url: alternate, status: other?.status } };
}
