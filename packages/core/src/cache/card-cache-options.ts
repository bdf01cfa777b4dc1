/**
 * The card cache's options and their defaults (lifetimes, backoff, staleness, concurrency, the
 * request headers and card paths, hit events).
 *
 * @module
 */
import type { AgentCardModel, CardProtocolVersion, CheckCardOptions } from '../card/index.js';
import type { Clock, Random } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import type { CardFetcher, CredentialsInput, HostPolicy } from '../fetch/index.js';
import { CACHE_DEFAULTS } from '../rules/defaults.js';
import type { CacheContent, DigestPins } from './cache-content.js';
import type { CacheEntry, CardStore } from './card-store.js';
import { MemoryCardStore } from './card-store.js';

/** Inputs of {@link CardCache}. Durations are milliseconds. An option left out, or given as `undefined`, takes its default. */
export interface CardCacheOptions<C = AgentCardModel, V extends string = CardProtocolVersion> {
  /** The only way the cache reaches the network. */
  fetcher: CardFetcher;
  /** Normalizes endpoint URLs, builds card URLs, and judges the interfaces inside cards. */
  hostPolicy: HostPolicy;
  store?: CardStore<CacheEntry<C, V>>;
  clock?: Clock;
  random?: Random;
  events?: EventStream;
  /** Lifetime when the server gives none (no max-age, Expires or Last-Modified). Default 300,000. */
  defaultTtlMs?: number;
  /** Floor for every lifetime, protecting peers from `max-age=0` hammering. Default 30,000. */
  minTtlMs?: number;
  /** Ceiling for every lifetime. Default 3,600,000. */
  maxTtlMs?: number;
  /** Expiry is shortened by up to this fraction, at random, so entries do not expire together. Default 0.1. */
  expiryJitter?: number;
  /** First retry delay after a failure; doubles per consecutive failure. Default 5,000. */
  backoffBaseMs?: number;
  /** Cap of the retry delay. Default 300,000. */
  backoffMaxMs?: number;
  /** Each retry delay is shortened by up to this fraction, at random. Default 0.5. */
  backoffJitter?: number;
  /** How long past its expiry a card may be served stale after errors (unless must-revalidate). Default 3,600,000. */
  maxStaleMs?: number;
  /** Card fetches in flight at once, over all hosts. Default 32. */
  maxConcurrentFetches?: number;
  /**
   * Work a user waits on (the conversation turns of a `SessionRunner` given the same
   * `Foreground`, from `a2a-discovery/adk`): while it is busy, at most
   * `maxConcurrentFetchesDuringTurns` refreshes start at once. Default: none (always `maxConcurrentFetches`).
   */
  foreground?: { readonly busy: boolean };
  /**
   * Card fetches in flight at once while `foreground` is busy (at most `maxConcurrentFetches`).
   * Each answer is handled on the event loop a turn shares, so this bounds how many wait ahead of
   * the turn's own callbacks during a wave of revalidations. Default 4.
   */
  maxConcurrentFetchesDuringTurns?: number;
  /**
   * Card fetches in flight at once to one origin. Default 1: a peer never sees parallel requests
   * from us. Raise it (with the fetcher's `maxConnectionsPerOrigin`) for one host serving many agents.
   */
  maxFetchesPerOrigin?: number;
  /** Content checks applied to every new body (limits, signatures, loopback exemption). */
  check?: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  /** Extra request headers. Default `{ 'a2a-version': '1.0' }` (1.x servers then return the plain 1.0 card). */
  requestHeaders?: Record<string, string>;
  /**
   * For an endpoint given by base URL, try the A2A 0.2 path `.well-known/agent.json` when
   * `.well-known/agent-card.json` answers 404 (and the other way round once an endpoint answered
   * at agent.json). Default true.
   */
  legacyCardPath?: boolean;
  /**
   * `'each'` (default): one `card.result` event per fresh hit. `'counted'`: hits are counted per
   * endpoint and published together once the current burst of calls is over (one event per
   * endpoint with `count`), so a hit costs a counter, not an event (the service's setting).
   */
  hitEvents?: 'each' | 'counted';
  /**
   * What the cached documents are and how new bytes are judged. Default: agent cards, through
   * `checkCard` with `check` (parse, schema, interface policy, signatures). A catalog source
   * caches its catalogs with the same HTTP rules by giving its own reader here.
   */
  content?: CacheContent<C, V>;
  /**
   * Keys are exact document URLs (`HostPolicy.normalizeDocumentUrl`: path and query as given),
   * never base URLs with a well-known path under them. For caches of other documents (catalogs).
   * Default false.
   */
  exactUrls?: boolean;
  /**
   * Digests publishers pinned for some endpoints (an AI Catalog's signed Trust Manifest): a body
   * whose SHA-256 differs is refused as invalid (`ERR_DIGEST_MISMATCH`, never stored), and a
   * stored entry that does not match its pin is neither served as fresh nor kept.
   */
  pins?: DigestPins;
  /**
   * Authenticated extended cards: with `credentials` (the ones the fetcher presents, either form),
   * a card that advertises an extended card (1.0 `capabilities.extendedAgentCard`, 0.3
   * `supportsAuthenticatedExtendedCard`) is asked for it on the interface a client would call,
   * when the credentials have an identity for that interface's origin; it is checked like a
   * public card and kept on the entry (`extended`) for that identity. Agent-card caches only
   * (ignored with `content`). Default: none (the public card only).
   */
  extendedCards?: { credentials: CredentialsInput };
}

export interface RefreshOptions {
  /** Send no validators (periodic resync, catching servers that answer 304 wrongly). */
  unconditional?: boolean;
}

/** The options with every default filled in (`content` is taken apart). */
export type ResolvedCacheOptions<C, V extends string> = Required<Omit<CardCacheOptions<C, V>, 'events' | 'check' | 'content' | 'pins' | 'extendedCards' | 'foreground'>> & Pick<CardCacheOptions<C, V>, 'events' | 'check' | 'pins' | 'foreground'>;

/**
 * The options with their defaults (the numbers from `CACHE_DEFAULTS`, as the configuration's). An
 * option given as `undefined` takes its default. Every field is set, in one order, whatever the
 * caller gave: the cache reads them on each call, and caches built from differently shaped
 * options would otherwise make those reads polymorphic (tens of nanoseconds of a fresh hit).
 */
export function withDefaults<C, V extends string>(o: CardCacheOptions<C, V>): ResolvedCacheOptions<C, V> {
  const d = CACHE_DEFAULTS;
  return {
    fetcher: o.fetcher,
    hostPolicy: o.hostPolicy,
    store: o.store ?? new MemoryCardStore(),
    clock: o.clock ?? systemClock,
    random: o.random ?? systemRandom,
    events: o.events,
    defaultTtlMs: o.defaultTtlMs ?? d.defaultTtlMs,
    minTtlMs: o.minTtlMs ?? d.minTtlMs,
    maxTtlMs: o.maxTtlMs ?? d.maxTtlMs,
    expiryJitter: o.expiryJitter ?? d.expiryJitter,
    backoffBaseMs: o.backoffBaseMs ?? d.backoffBaseMs,
    backoffMaxMs: o.backoffMaxMs ?? d.backoffMaxMs,
    backoffJitter: o.backoffJitter ?? d.backoffJitter,
    maxStaleMs: o.maxStaleMs ?? d.maxStaleMs,
    maxConcurrentFetches: o.maxConcurrentFetches ?? d.maxConcurrentFetches,
    foreground: o.foreground,
    maxConcurrentFetchesDuringTurns: o.maxConcurrentFetchesDuringTurns ?? d.maxConcurrentFetchesDuringTurns,
    maxFetchesPerOrigin: o.maxFetchesPerOrigin ?? d.maxFetchesPerOrigin,
    check: o.check,
    requestHeaders: o.requestHeaders ?? { ...d.requestHeaders },
    legacyCardPath: o.legacyCardPath ?? true,
    hitEvents: o.hitEvents ?? 'each',
    exactUrls: o.exactUrls ?? false,
    pins: o.pins,
  };
}
