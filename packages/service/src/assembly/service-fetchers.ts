/**
 * The service's guarded connections and card cache, from `policy`, `credentials`, `signatures`
 * and `cache`: discovery's card fetcher, one fetcher per AI Catalog source, the ADK peers' fetch,
 * and the one card-size setting (`cache.maxBodyBytes`) that bounds the card fetcher, inline
 * cards and the content checks of the cache and the inspector alike; and the one upstream
 * request budget per origin (`cache.originRequestsPerSecond`, `cache.originBurst`) that
 * discovery's fetchers (cards, registries, AI Catalogs, well-known documents) and the
 * inspector's all draw on: discovery waits for its turn (up to `cache.originMaxWaitMs`), the
 * inspector never waits.
 */
import type { Foreground, PolicyFetch } from 'a2a-discovery/adk';
import { createPolicyFetch } from 'a2a-discovery/adk';
import { CardCache, createCardFetcher, HostPolicy, CatalogArtifacts, systemClock } from 'a2a-discovery';
import { OriginBudget } from 'a2a-discovery/internal';
import { UPSTREAM_DEFAULTS } from 'a2a-discovery/config';
import type { CheckCardOptions, Clock, EventStream, CardFetcher } from 'a2a-discovery';
import type { CardSizeLimit } from 'a2a-discovery/config';
import { cardSizeLimit } from 'a2a-discovery/config';
import type { StateStore } from '@a2a-discovery/store';
import type { GuardBounds } from './guard-options.js';
import { guardOptions } from './guard-options.js';
import type { ServiceOptions } from './service-options.js';

;

export interface ServiceFetchers {
  readonly policy: HostPolicy;
  /** `cache.maxBodyBytes`: the card fetcher's body cap and the content checks' byte limit. */
  readonly cardSize: CardSizeLimit;
  /** The content checks discovery runs besides the card size: the loopback exemption and signatures. */
  readonly check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl' | 'maxBytes'>;
  /** The deadline and per-origin bound of `cache`, with the policy (the inspector's fetchers use them too). */
  readonly bounds: GuardBounds;
  /** The upstream request budget per origin, shared by every fetcher here and the inspector's (through `bounds`). */
  readonly budget: OriginBudget;
  /** Discovery's card fetcher (registries' pages too), with the peers' credentials. */
  readonly cards: CardFetcher;
  /** A new fetcher for one AI Catalog source, `maxBytes` per document; closed with the others. */
  catalogs(maxBytes: number): CardFetcher;
  /** Closes a fetcher {@link catalogs} made, now (its source was removed by a reload). */
  release(fetcher: CardFetcher): Promise<void>;
  /** The ADK remote agents' fetch, under the same policy and credentials. */
  readonly policyFetch: PolicyFetch;
  /** Closes every connection of them all. */
  close(): Promise<void>;
}

/** Builds the service's fetchers; no I/O until they fetch. */
export function buildFetchers(o: ServiceOptions): ServiceFetchers {
  const policy = HostPolicy.from(o.policy);
  const cardSize = cardSizeLimit(o.cache?.maxBodyBytes);
  const credentials = o.credentials ? { credentials: o.credentials } : {};
  const budget = new OriginBudget({
    requestsPerSecond: o.cache?.originRequestsPerSecond ?? UPSTREAM_DEFAULTS.originRequestsPerSecond,
    burst: o.cache?.originBurst ?? UPSTREAM_DEFAULTS.originBurst,
    maxOrigins: UPSTREAM_DEFAULTS.maxOrigins,
    clock: o.clock ?? systemClock,
  });
  const bounds: GuardBounds = {
    policy,
    originBudget: { budget, maxWaitMs: o.cache?.originMaxWaitMs ?? UPSTREAM_DEFAULTS.originMaxWaitMs },
    ...(o.cache?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.cache.totalTimeoutMs }),
  };
  // `cache.maxFetchesPerOrigin` bounds card fetches; a catalog source keeps the fetcher's default.
  const cardBounds: GuardBounds = { ...bounds, ...(o.cache?.maxFetchesPerOrigin !== undefined && { maxConnectionsPerOrigin: o.cache.maxFetchesPerOrigin }) };
  const cards = createCardFetcher(guardOptions(cardBounds, cardSize.fetcher, credentials));
  const catalogFetchers = new Set<CardFetcher>();
  const policyFetch = createPolicyFetch({ policy, ...credentials });
  return {
    policy,
    cardSize,
    check: { allowLoopback: o.policy.allowLoopback ?? false, ...(o.signatures && { signatures: o.signatures }) },
    bounds: cardBounds,
    budget,
    cards,
    catalogs(maxBytes) {
      const fetcher = createCardFetcher(guardOptions(bounds, { maxBodyBytes: maxBytes }, credentials));
      catalogFetchers.add(fetcher);
      return fetcher;
    },
    async release(fetcher) {
      if (catalogFetchers.delete(fetcher)) await fetcher.close();
    },
    policyFetch,
    async close() {
      await Promise.allSettled([cards.close(), ...[...catalogFetchers].map((f) => f.close()), policyFetch.close()]);
      // The peers' credential provider (token caches, token connections) ends with the fetchers that used it.
      if (typeof o.credentials === 'object') await o.credentials.close().catch(() => undefined);
    },
  };
}

/** The card cache: discovery's card fetcher, with the cards AI Catalogs carry inline in `artifacts`. */
export function buildCache(o: ServiceOptions, f: ServiceFetchers, p: { store: StateStore; clock: Clock; events: EventStream; foreground: Foreground }): { cache: CardCache; artifacts: CatalogArtifacts } {
  const { maxBodyBytes: _m, totalTimeoutMs: _t, originRequestsPerSecond: _r, originBurst: _b, originMaxWaitMs: _w, ...cacheOptions } = o.cache ?? {};
  // Cards carried inline in AI Catalogs reach the cache through this table, as do publishers' digest pins.
  const artifacts = new CatalogArtifacts();
  const cache = new CardCache({
    fetcher: artifacts.fetcher(f.cards, f.cardSize.fetcher),
    pins: artifacts,
    hostPolicy: f.policy,
    store: p.store.cards,
    clock: p.clock,
    events: p.events,
    // Hits are counted per endpoint and published once per burst: a loop cycle over thousands of
    // fresh endpoints costs counters, not thousands of events.
    hitEvents: 'counted',
    foreground: p.foreground,
    ...cacheOptions,
    check: { ...f.check, ...f.cardSize.check },
    // The peers' credentials also fetch the extended cards of the cards that advertise one.
    ...(o.credentials !== undefined && { extendedCards: { credentials: o.credentials } }),
  });
  return { cache, artifacts };
}
