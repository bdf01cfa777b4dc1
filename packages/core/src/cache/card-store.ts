/**
 * Where the card cache keeps its entries. The cache owns every rule; a store only keeps and
 * returns entries by key (the normalized base URL). This file ships the in-memory store; a
 * shared store (Redis) implements the same interface and runs the same test suite.
 */
import type { AgentCardModel, CardProtocolVersion } from '../card/index.js';
import type { DiscoveryErrorCode, Problem, Stage } from '../errors.js';
import type { CardOutcome } from '../events/index.js';

/** What went wrong last, as plain data. */
export interface EntryError {
  readonly code: DiscoveryErrorCode;
  readonly message: string;
  readonly stage?: Stage;
  readonly status?: number;
  readonly problems?: readonly Problem[];
}

/**
 * A cached card and what the cache knows about it. Immutable: every change makes a new entry.
 * Times named `...At` are on the cache clock's monotonic scale (`Clock.now()`), except
 * `fetchedAtWall` and `validatedAtWall`, which are epoch milliseconds for display.
 */
export interface CacheEntry<C = AgentCardModel, V extends string = CardProtocolVersion> {
  /**
   * The cache key: the normalized base URL, or the normalized card URL of an endpoint given by
   * its card URL.
   */
  readonly baseUrl: string;
  /**
   * Where the card was fetched: `<base>.well-known/agent-card.json`, `<base>.well-known/agent.json`
   * when only the A2A 0.2 path answered (the next refresh goes there first), or the card URL given.
   */
  readonly cardUrl: string;
  /** The accepted document: an agent card (or, in a catalog source's cache, a catalog). */
  readonly card: C;
  readonly protocolVersion: V;
  /**
   * The card exactly as received (UTF-8 JSON text). A card cache of agent cards holds it packed
   * (deflated) and unpacks it on each read, a few microseconds per kilobyte: read it once where
   * the text is needed, not on every pass over the entries.
   */
  readonly body: string;
  readonly rawSha256: string;
  readonly canonicalSha256: string;
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  /** The caching headers of the stored response (after 304 updates): what freshness is computed from. No validators for `no-store`. */
  readonly cacheHeaders: Readonly<Record<string, string>>;
  /**
   * The request headers the stored response was obtained with, kept only when it has `Vary`
   * (RFC 9111 §4.1): a later request whose nominated headers differ sends no validator.
   */
  readonly varyRequest?: Readonly<Record<string, string>> | undefined;
  /**
   * The validators the next refresh sends (`If-None-Match`, `If-Modified-Since`; empty when none
   * may be sent), as http-cache-semantics derived them from the stored response for the cache's
   * request. Absent with `Vary` (they depend on that request) and in entries stored before this
   * field existed: the stored policy is rebuilt then.
   */
  readonly conditional?: Readonly<Record<string, string>> | undefined;
  /** When the entry stops being fresh (jitter applied). */
  readonly expiresAt: number;
  /** Consecutive failed refreshes since the last success. */
  readonly failures: number;
  /** True when the card is served after a failed refresh. */
  readonly stale: boolean;
  /** False once staleness exceeds its bound (or `must-revalidate` forbids stale use): leave it out of new snapshots. */
  readonly usable: boolean;
  /** While backing off: no request before this time. */
  readonly nextAttemptAt: number | undefined;
  readonly lastOutcome: CardOutcome;
  readonly lastError: EntryError | undefined;
  /**
   * Response directives that shape later decisions. `noStore`: the card is held only for the
   * current snapshot; no validator is kept or sent and it is never served stale (a shared store
   * should not persist such an entry).
   */
  readonly noStore: boolean;
  readonly mustRevalidate: boolean;
  readonly staleIfErrorMs: number;
  /** Epoch ms of the last 200 that delivered these bytes / of the last successful contact. */
  readonly fetchedAtWall: number;
  readonly validatedAtWall: number;
  /** Non-fatal notes about the card (a repeated interface...). */
  readonly warnings: readonly Problem[];
  /** Signature verdict for this card, when verification ran. */
  readonly signature: string | undefined;
  /**
   * The authenticated extended card of this endpoint (a card advertising one, with credentials
   * for the origin of the interface called), for the identity that obtained it. Absent when the
   * card advertises none or no credentials exist for that origin. See {@link ExtendedCardState}.
   */
  readonly extended?: ExtendedCardState<C, V> | undefined;
}

/** An extended card the cache accepted: the fields of a card, checked like a public one. */
interface ExtendedCard<C = AgentCardModel, V extends string = CardProtocolVersion> {
  readonly card: C;
  readonly protocolVersion: V;
  /** The card's JSON text (the JSON-RPC `result` as received, re-serialized, or the REST body). */
  readonly body: string;
  readonly rawSha256: string;
  readonly canonicalSha256: string;
  readonly warnings: readonly Problem[];
  readonly signature: string | undefined;
  /** Epoch ms of the call that delivered it. */
  readonly fetchedAtWall: number;
}

/**
 * The extended card of one entry, for one identity: refetched with every refresh of the public
 * card (on its revalidation schedule, and whenever it changes), kept while the public card is
 * fresh. A failing call keeps the last good card (`accepted`) and records the error; with none
 * ever accepted, the public card is the one used.
 */
export interface ExtendedCardState<C = AgentCardModel, V extends string = CardProtocolVersion> {
  /** The credentials' label (`PeerCredentials.identity`), never a secret. */
  readonly identity: string;
  /** The URL the card was asked of (the interface `preferredInterface` chose, or its REST path). */
  readonly url: string;
  /** The last good extended card for this identity, if any. */
  readonly accepted: ExtendedCard<C, V> | undefined;
  /** Consecutive failed calls since the last good one. */
  readonly failures: number;
  /** Why the last call failed (its message names the URL), or undefined after a success. */
  readonly lastError: EntryError | undefined;
}

/** What the card checks give about an accepted card: the fields an entry takes from them. */
export type AcceptedCard = Pick<CacheEntry, 'card' | 'protocolVersion' | 'body' | 'rawSha256' | 'canonicalSha256' | 'warnings'>;

/**
 * The entry the card cache holds for a card it has just accepted from `baseUrl`'s well-known path
 * (no caching headers, never fetched since), with `fields` overriding: for entries that do not
 * come from the network (the routing stand-ins, tests).
 */
export function acceptedEntry(baseUrl: string, accepted: AcceptedCard, fields: Partial<CacheEntry> = {}): CacheEntry {
  return Object.freeze({
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    card: accepted.card,
    protocolVersion: accepted.protocolVersion,
    body: accepted.body,
    rawSha256: accepted.rawSha256,
    canonicalSha256: accepted.canonicalSha256,
    etag: undefined,
    lastModified: undefined,
    cacheHeaders: {},
    expiresAt: Number.POSITIVE_INFINITY,
    failures: 0,
    stale: false,
    usable: true,
    nextAttemptAt: undefined,
    lastOutcome: 'changed' as const,
    lastError: undefined,
    noStore: false,
    mustRevalidate: false,
    staleIfErrorMs: 0,
    fetchedAtWall: 0,
    validatedAtWall: 0,
    warnings: accepted.warnings,
    signature: undefined,
    ...fields,
  });
}

/** Storage for cache entries. Methods may be synchronous or return promises. */
export interface CardStore<E = CacheEntry> {
  get(key: string): E | undefined | Promise<E | undefined>;
  set(key: string, entry: E): void | Promise<void>;
  /**
   * Optional: stores `entry` in place of the one stored under `key`, from which it differs only
   * in its freshness and validators (times, caching headers, failures, outcome, error): the same
   * card, body, hashes, warnings, signature and extended card. A durable store may write only
   * those (a 304 then writes no card). The cache calls {@link set} when a store has none.
   */
  touch?(key: string, entry: E): void | Promise<void>;
  delete(key: string): void | Promise<void>;
  keys(): Iterable<string> | Promise<Iterable<string>>;
  close?(): void | Promise<void>;
}

/** The default store: a Map in this process. */
export class MemoryCardStore<E = CacheEntry> implements CardStore<E> {
  readonly #map = new Map<string, E>();

  get(key: string): E | undefined {
    return this.#map.get(key);
  }

  set(key: string, entry: E): void {
    this.#map.set(key, entry);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  keys(): Iterable<string> {
    return [...this.#map.keys()];
  }

  get size(): number {
    return this.#map.size;
  }

  close(): void {
    this.#map.clear();
  }
}

/**
 * A view of `store` holding only the keys that start with `prefix` (shown without it): several
 * caches share one store, each under its own prefix, and never see one another's entries.
 * Closing the view leaves the shared store open.
 *
 * @example
 * const mine = prefixedStore(state.catalogs, 'partners 3f2a… ');
 * const cache = new CardCache({ fetcher, hostPolicy, store: mine, exactUrls: true });
 */
export function prefixedStore<E>(store: CardStore<E>, prefix: string): CardStore<E> {
  const own = (keys: Iterable<string>): string[] => [...keys].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  const touch = store.touch?.bind(store);
  return {
    get: (key) => store.get(prefix + key),
    set: (key, entry) => store.set(prefix + key, entry),
    ...(touch !== undefined && { touch: (key: string, entry: E) => touch(prefix + key, entry) }),
    delete: (key) => store.delete(prefix + key),
    keys: () => {
      const keys = store.keys();
      return keys instanceof Promise ? keys.then(own) : own(keys);
    },
  };
}
