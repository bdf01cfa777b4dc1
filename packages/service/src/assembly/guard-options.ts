/**
 * The one place the service spells the options of the guarded connection (packages/core/src/fetch) it builds
 * its fetchers with: discovery's, the AI Catalog sources' and the inspector's.
 */
import type { CardFetcherOptions, HostPolicy } from 'a2a-discovery';
import type { OriginBudget } from 'a2a-discovery/internal';

/** What the service's fetchers share: the host policy, and `cache`'s deadline and per-origin bound. */
export interface GuardBounds {
  policy: HostPolicy;
  /** One deadline for a whole fetch, in milliseconds (`cache.totalTimeoutMs`). */
  totalTimeoutMs?: number;
  /** Connections per origin (`cache.maxFetchesPerOrigin`). */
  maxConnectionsPerOrigin?: number;
  /** The upstream request budget per origin every fetcher shares, and how long discovery waits for a turn (`cache.originMaxWaitMs`). */
  originBudget?: { budget: OriginBudget; maxWaitMs: number };
}

/**
 * The options of one fetcher: `bounds`, one body cap (a `CardSizeLimit`'s `fetcher`, or an AI
 * Catalog source's document bound), and the peers' `credentials` only where they are given.
 */
export function guardOptions(bounds: GuardBounds, body: { readonly maxBodyBytes: number }, extra: Pick<CardFetcherOptions, 'credentials' | 'recordRemoteAddress'> & { inspector?: boolean } = {}): CardFetcherOptions {
  // Discovery waits for its origin's turn; the inspector never does (it is refused at once).
  const budget = bounds.originBudget;
  return {
    policy: bounds.policy,
    maxBodyBytes: body.maxBodyBytes,
    ...(bounds.totalTimeoutMs !== undefined && { totalTimeoutMs: bounds.totalTimeoutMs }),
    ...(bounds.maxConnectionsPerOrigin !== undefined && { maxConnectionsPerOrigin: bounds.maxConnectionsPerOrigin }),
    ...(extra.credentials && { credentials: extra.credentials }),
    ...(extra.recordRemoteAddress === true && { recordRemoteAddress: true }),
    ...(budget !== undefined && { originBudget: extra.inspector === true ? { budget: budget.budget, maxWaitMs: 0, caller: 'inspector' } : { ...budget, caller: 'discovery' } }),
  };
}
