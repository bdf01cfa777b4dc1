/**
 * What AI Catalog sources tell the card cache about the cards they propose: the cards carried
 * inline in a catalog (`data`), and the digests publishers pinned in signed Trust Manifests.
 *
 * An inline card is served to the card cache through {@link CatalogArtifacts.fetcher}, as if it
 * had been fetched from its catalog's origin: the cache then validates, hashes, caches, reports
 * and keeps it exactly like a fetched card (same limits, leniencies and refusals; invalid bytes
 * never stored; the last good card kept). Its bytes are the RFC 8785 form of the entry's `data`
 * (what a Trust Manifest's digest covers), its ETag their SHA-256, and its freshness the
 * remaining freshness of the catalog that carries it: reading an expired inline card first
 * revalidates that catalog (one conditional request for all the cards in it), so an inline card
 * is refreshed when its catalog is, and a catalog that did not change costs no card check.
 *
 * @module
 */
import { DiscoveryError } from '../errors.js';
import type { DigestPins } from '../cache/index.js';
import type { CardFetcher, FetchResult } from '../fetch/index.js';
import { isInlineCardKey } from '../fetch/index.js';
import { DEFAULT_MAX_CARD_BYTES } from '../rules/limits.js';

/** A card carried inline in a catalog. */
export interface InlineCard {
  /** The RFC 8785 form of the entry's `data`. */
  readonly bytes: Buffer;
  /** Lower-case hex SHA-256 of `bytes`. */
  readonly sha256: string;
  /** The catalog document that carries it (its normalized URL): the card is as fresh as that document. */
  readonly catalog: string;
}

/** A publisher's pin on an endpoint's card bytes. */
export interface CardPin {
  readonly sha256: string;
  /** Where it was declared, for messages: `<catalog URL> entries[2].trustManifest`. */
  readonly from: string;
}

/** What one source publishes into the table. */
export interface CatalogPublication {
  /** Inline cards by normalized endpoint key (`...#card=<identifier>`). */
  readonly inline: ReadonlyMap<string, InlineCard>;
  /** Pins by normalized endpoint key. */
  readonly pins: ReadonlyMap<string, CardPin>;
  /**
   * Makes sure the catalog carrying an inline card is fresh (revalidating it when it is due) and
   * says whether it is good (its last read succeeded) and how many more ms it stays fresh.
   */
  readonly freshen: (key: string) => Promise<{ readonly ok: boolean; readonly freshMs: number }>;
}

const EMPTY = Buffer.alloc(0);

/**
 * The shared table. One per card cache; every AI Catalog source of that cache publishes into it.
 *
 * @example
 * const artifacts = new CatalogArtifacts();
 * const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy });
 * const source = aiCatalogSource({ id: 'catalogs', catalogs: [url], fetcher, hostPolicy, artifacts });
 */
export class CatalogArtifacts implements DigestPins {
  readonly #by = new Map<string, CatalogPublication>();
  /** Merged views over every publication, rebuilt on each publish. */
  #pins = new Map<string, CardPin>();
  #inline = new Map<string, { card: InlineCard; owner: CatalogPublication }>();
  /** The last inline answer's turn of the event loop: each answer waits for the one before it. */
  #turns: Promise<void> = Promise.resolve();

  /** Replaces what source `sourceId` publishes. */
  publish(sourceId: string, publication: CatalogPublication): void {
    this.#by.set(sourceId, publication);
    this.#merge();
  }

  /** Removes what source `sourceId` published (it closed). */
  withdraw(sourceId: string): void {
    if (this.#by.delete(sourceId)) this.#merge();
  }

  pinFor(key: string): CardPin | undefined {
    return this.#pins.get(key);
  }

  get size(): number {
    return this.#pins.size;
  }

  /** The inline card now published under a key. */
  inline(key: string): InlineCard | undefined {
    return this.#inline.get(key)?.card;
  }

  #merge(): void {
    const pins = new Map<string, CardPin>();
    const inline = new Map<string, { card: InlineCard; owner: CatalogPublication }>();
    for (const p of this.#by.values()) {
      for (const [k, v] of p.pins) if (!pins.has(k)) pins.set(k, v);
      for (const [k, card] of p.inline) if (!inline.has(k)) inline.set(k, { card, owner: p });
    }
    this.#pins = pins;
    this.#inline = inline;
  }

  /**
   * A fetcher that answers inline-card keys from this table (never from the network) and hands
   * every other URL to `inner`. An inline key nobody publishes answers 404. `maxBodyBytes` is
   * the inner fetcher's bound, applied to inline cards too (default 65,536, the fetcher's).
   */
  fetcher(inner: CardFetcher, options: { maxBodyBytes?: number } = {}): CardFetcher {
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_CARD_BYTES;
    return {
      fetch: (url, init) => (isInlineCardKey(url) ? this.#answer(url, init?.headers ?? {}, maxBodyBytes) : inner.fetch(url, init)),
      close: () => inner.close(),
    };
  }

  async #answer(url: string, headers: Readonly<Record<string, string>>, maxBodyBytes: number): Promise<FetchResult> {
    // One inline answer per turn of the event loop, as responses from the network arrive: the
    // thousands of inline cards of one catalog are then checked one at a time between other
    // work, not all in one run of microtasks (which held the loop for 400-600 ms with 2,500 cards).
    const turn = this.#turns.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.#turns = turn;
    await turn;
    const started = performance.now();
    const first = this.#inline.get(url);
    const fresh = first === undefined ? { ok: true, freshMs: 0 } : await first.owner.freshen(url);
    const found = this.#inline.get(url);
    if (found === undefined) return { url, status: 404, headers: {}, body: EMPTY, durationMs: performance.now() - started };
    if (!fresh.ok) {
      // Like a card whose host fails: the cache serves its last good copy under its staleness rules.
      throw new DiscoveryError('ERR_FETCH_NETWORK', `${url}: the catalog that carries this card (${found.card.catalog}) could not be revalidated`, { url, stage: 'fetch' });
    }
    const freshMs = fresh.freshMs;
    const { card } = found;
    if (card.bytes.byteLength > maxBodyBytes) {
      throw new DiscoveryError('ERR_BODY_TOO_LARGE', `${url}: the inline card is ${card.bytes.byteLength} bytes, more than maxBodyBytes ${maxBodyBytes}`, { url, stage: 'fetch' });
    }
    const etag = `"${card.sha256}"`;
    const out = { etag, 'cache-control': `max-age=${Math.max(0, Math.floor(freshMs / 1000))}`, 'content-type': 'application/json' };
    const durationMs = performance.now() - started;
    if (headers['if-none-match'] === etag) return { url, status: 304, headers: out, body: EMPTY, durationMs };
    return { url, status: 200, headers: out, body: card.bytes, durationMs };
  }
}
