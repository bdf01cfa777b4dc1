/**
 * The registry source: an HTTP catalog of agents, read page by page through the safe
 * {@link CardFetcher} (so the allowlist, SSRF guard, timeouts and byte caps apply to the
 * catalog too) and parsed by a {@link RegistryAdapter}.
 *
 * Each refresh is all-or-nothing: every page is read before the list is replaced, so a
 * half-read catalog never shrinks the set. Registry text (names, tags) is data only; the
 * resolver's allowlist and the reviewed configuration decide what is admitted and how it is
 * described.
 *
 * @module
 */
import type { Clock } from '../clock/index.js';
import { canonicalJson, sha256Hex } from '../card/index.js';
import { z } from 'zod';
import { DiscoveryError, isDiscoveryError, type Problem } from '../errors.js';
import type { EventStream } from '../events/index.js';
import { inlineCardKey, type CardFetcher } from '../fetch/index.js';
import type { CatalogArtifacts, InlineCard } from './catalog-artifacts.js';
import { simpleCatalogAdapter, type RegistryAdapter, type RegistryClientAdapter, type RegistryEntry, type RegistryRead } from './registry-adapter.js';
import { SOURCE_DEFAULTS } from '../rules/defaults.js';
import { originOf } from '../rules/origins.js';
import { impossibleBaseUrl, impossibleCardUrl, impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import { PeriodicSource, type Listing } from './periodic-source.js';
import { optional, positiveInt, readOptions, rule, sourceId, stringRecord, withMethod } from './source-options.js';
import { readTransportOptions } from './transport-options.js';
import type { EndpointRecord, Source } from './types.js';

/** Inputs of {@link registrySource}. Durations are milliseconds. */
export interface RegistrySourceOptions {
  /** Source id, e.g. `'catalog'`. */
  id: string;
  /** The catalog URL (the adapter derives the first page from it). Its origin bounds paging. */
  url: string;
  /** The safe fetcher; the catalog's origin must be on its allowlist. Not closed by the source. */
  fetcher: CardFetcher;
  /**
   * The catalog format: a page-URL adapter (default {@link simpleCatalogAdapter}) or a client
   * adapter for an API paged by token (e.g. `googleAgentRegistryAdapter`).
   */
  adapter?: RegistryAdapter | RegistryClientAdapter;
  /** Suggested poll interval. Default 300000 (5 minutes). */
  pollIntervalMs?: number;
  /** Pages read per refresh at most; a catalog with more fails the refresh. Default 20. */
  maxPages?: number;
  /** Entries read per refresh at most; a catalog with more fails the refresh (`ERR_CARD_TOO_LARGE`). Default 5000. */
  maxEntries?: number;
  /**
   * Shared with the card cache: the cards the registry stores (entries with `card`) are served
   * to it inline under `<registry URL>#card=<name>` keys. Without it, such entries use their URL.
   */
  artifacts?: CatalogArtifacts;
  /** Where `source-error` and `source-problem` alerts go. */
  events?: EventStream;
  /** For `updatedAt`. Default the system clock. */
  clock?: Clock;
  /** Extra request headers for every page (e.g. an API key for the registry). */
  headers?: Record<string, string>;
}

/**
 * Creates a registry source. Pure: validates the options and does no I/O.
 *
 * Records: `name` = the entry's name, `baseUrl` = its `url` (or `cardUrl`, the card's own URL,
 * fetched exactly there) as given, `metadata` = `{ registry: <adapter name>, tags?: <comma-joined> }`.
 * An entry whose url is not an absolute http(s) URL (a `cardUrl` also needs a path ending in
 * `.json`; a `url` must not have one) is dropped and reported (state `problems`, a
 * `source-problem` alert) at path `pages[p].records[i].url` / `.cardUrl` (0-based).
 *
 * A refresh fails, keeping the last good list, setting `error` and emitting a `source-error`
 * alert, when: a fetch fails (the fetcher's codes, e.g. `ERR_HOST_NOT_ALLOWED`,
 * `ERR_FETCH_TIMEOUT`); a page answers other than 200 (`ERR_FETCH_STATUS`); a page is not JSON
 * (`ERR_CARD_MALFORMED`) or not the adapter's shape (`ERR_CARD_INVALID`, every problem listed);
 * `next` leaves the catalog's origin (`ERR_HOST_NOT_ALLOWED`) or loops (`ERR_CARD_INVALID`); or
 * more than `maxPages` pages are linked (`ERR_CARD_TOO_LARGE`). All with stage `source` unless
 * the fetcher set its own.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const source = registrySource({ id: 'catalog', url: 'https://registry.example.com/agents', fetcher });
 * const state = await source.refresh(); // never throws for remote failures
 */
export function registrySource(options: RegistrySourceOptions): Source {
  const o = readOptions('registry source', REGISTRY_OPTIONS, options);
  return new RegistrySource({
    id: o.id,
    url: o.url,
    fetcher: o.fetcher,
    adapter: o.adapter ?? simpleCatalogAdapter,
    pollIntervalMs: o.pollIntervalMs ?? SOURCE_DEFAULTS.pollIntervalMs,
    maxPages: o.maxPages ?? SOURCE_DEFAULTS.maxPages,
    maxEntries: o.maxEntries ?? SOURCE_DEFAULTS.maxEntries,
    headers: { ...o.headers },
    artifacts: o.artifacts,
    events: o.events,
    clock: o.clock,
  });
}

/** The options of {@link registrySource}, each with its sentence. */
const REGISTRY_OPTIONS = {
  id: sourceId,
  url: rule<string>((v) => (typeof v !== 'string' ? `must be the catalog URL string, got ${describe(v)}` : impossibleUrl(v))),
  fetcher: withMethod<CardFetcher>('fetch', 'a CardFetcher is required (createCardFetcher({ policy }))'),
  adapter: optional<RegistryAdapter | RegistryClientAdapter>((v) => {
    const a = v as Partial<RegistryAdapter & RegistryClientAdapter>;
    const usable = typeof a.name === 'string' && a.name !== '' && (typeof a.readPage === 'function' || (typeof a.firstPage === 'function' && typeof a.parse === 'function'));
    return usable ? undefined : 'must be a RegistryAdapter { name, firstPage(url), parse(body, pageUrl) } or a RegistryClientAdapter { name, readPage(token, read) }';
  }),
  pollIntervalMs: positiveInt,
  maxPages: positiveInt,
  maxEntries: positiveInt,
  headers: stringRecord('must be an object of header strings', (v) => (typeof v === 'string' ? undefined : `must be a string, got ${describe(v)}`)),
  artifacts: z.custom<CatalogArtifacts | undefined>(),
  events: z.custom<EventStream | undefined>(),
  clock: z.custom<Clock | undefined>(),
};

interface Settings {
  id: string;
  url: string;
  fetcher: CardFetcher;
  adapter: RegistryAdapter | RegistryClientAdapter;
  pollIntervalMs: number;
  maxPages: number;
  maxEntries: number;
  headers: Record<string, string>;
  artifacts: CatalogArtifacts | undefined;
  events: EventStream | undefined;
  clock: Clock | undefined;
}

class RegistrySource extends PeriodicSource {
  override readonly kind = 'registry' as const;
  readonly #s: Settings;
  readonly #origin: string;

  constructor(settings: Settings) {
    super({
      id: settings.id,
      kind: 'registry',
      pollIntervalMs: settings.pollIntervalMs,
      closedReason: 'the registry source was closed',
      failure: { code: 'ERR_FETCH_NETWORK', url: settings.url },
      events: settings.events,
      clock: settings.clock,
    });
    this.#s = settings;
    this.#origin = originOf(settings.url) ?? settings.url;
  }

  protected override released(): void {
    this.#s.artifacts?.withdraw(this.id);
  }

  /** Reads the whole catalog. */
  protected async read(signal: AbortSignal): Promise<Listing> {
    const { adapter } = this.#s;
    const inline = new Map<string, InlineCard>();
    const { records, problems } = 'readPage' in adapter ? await this.#readByToken(adapter, inline, signal) : await this.#readCatalog(adapter, signal);
    return { records, problems, commit: () => this.#publish(inline) };
  }

  /** The stored cards of the last good listing, for the card cache; as fresh as that listing. */
  #publish(inline: Map<string, InlineCard>): void {
    const { artifacts, pollIntervalMs } = this.#s;
    if (artifacts === undefined) return;
    artifacts.publish(this.id, {
      inline,
      pins: new Map(),
      // Like an AI Catalog's inline card: good while the registry's last read is; the cache then
      // serves its last good copy under its staleness rules when the registry is down.
      freshen: async () => ({ ok: this.core.state.ok, freshMs: pollIntervalMs }),
    });
  }

  /** Reads an API paged by token through a client adapter: every request on the registry's origin, through the fetcher. */
  async #readByToken(adapter: RegistryClientAdapter, inline: Map<string, InlineCard>, signal: AbortSignal): Promise<{ records: EndpointRecord[]; problems: Problem[] }> {
    const { fetcher, maxPages, maxEntries, id, url } = this.#s;
    const read: RegistryRead = {
      url,
      signal,
      get: async (pageUrl, headers) => {
        const target = this.#sameOrigin(pageUrl, url, 'request');
        const res = await fetcher.fetch(target, { headers: { ...this.#s.headers, ...headers }, signal });
        if (res.status !== 200) {
          throw new DiscoveryError('ERR_FETCH_STATUS', `registry ${adapter.name} request ${target} answered ${res.status}; expected 200`, { url: target, stage: 'source', status: res.status });
        }
        return res.body;
      },
    };
    const records: EndpointRecord[] = [];
    const problems: Problem[] = [];
    const tokens = new Set<string>();
    let entries = 0;
    let token: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= maxPages) {
        throw new DiscoveryError('ERR_CARD_TOO_LARGE', `registry ${url} has more than maxPages=${maxPages} pages; the refresh is abandoned and the last good list kept`, { url, stage: 'source' });
      }
      const parsed = await callAdapterAsync(() => adapter.readPage(token, read), url, 'readPage');
      if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.records)) {
        throw new DiscoveryError('ERR_CARD_INVALID', `registry adapter ${adapter.name} returned no records array for ${url}`, { url, stage: 'source' });
      }
      entries += parsed.records.length;
      if (entries > maxEntries) {
        throw new DiscoveryError('ERR_CARD_TOO_LARGE', `registry ${url} lists more than maxEntries=${maxEntries} entries; the refresh is abandoned and the last good list kept`, { url, stage: 'source' });
      }
      parsed.records.forEach((entry, i) => {
        const read = this.#recordOf(entry, { at: `pages[${page}].records[${i}]`, pageUrl: url, source: id, adapter: adapter.name }, inline);
        if ('record' in read) records.push(read.record);
        else problems.push(read.problem);
      });
      const next = parsed.nextPageToken;
      if (next === undefined || next === '') break;
      if (typeof next !== 'string' || tokens.has(next)) {
        throw new DiscoveryError('ERR_CARD_INVALID', `registry ${url}: next page token ${describe(next)} was already read or is not a string (a paging loop)`, { url, stage: 'source', path: 'nextPageToken' });
      }
      tokens.add(next);
      token = next;
    }
    return { records, problems };
  }

  /** An entry with a stored card (and a table to serve it from) → a record under its inline key; otherwise {@link recordFromEntry}. */
  #recordOf(entry: RegistryEntry, ctx: CatalogEntryContext, inline: Map<string, InlineCard>): { record: EndpointRecord } | { problem: Problem } {
    const { card, ...rest } = (entry ?? {}) as RegistryEntry;
    if (card === undefined || this.#s.artifacts === undefined) return recordFromEntry(rest, ctx);
    if (typeof card !== 'object' || card === null || Array.isArray(card)) return { problem: { path: `${ctx.at}.card`, message: `a stored card must be a JSON object, got ${describe(card)}; skipped` } };
    if (typeof rest.name !== 'string' || rest.name === '') return { problem: { path: ctx.at, message: `entry on ${ctx.pageUrl} has no name string; skipped` } };
    const key = inlineCardKey(this.#s.url, rest.name);
    if (inline.has(key)) return { problem: { path: ctx.at, message: `the stored card of ${describe(rest.name)} has the same key as another entry's (${key}); skipped` } };
    // Validate the rest of the entry (metadata, transport) by the same rule, against the key.
    const read = recordFromEntry({ ...rest, url: this.#s.url, cardUrl: undefined }, ctx);
    if ('problem' in read) return read;
    const bytes = Buffer.from(canonicalJson(card), 'utf8');
    inline.set(key, { bytes, sha256: sha256Hex(bytes), catalog: this.#s.url });
    return { record: { ...read.record, baseUrl: key } };
  }

  async #readCatalog(adapter: RegistryAdapter, signal: AbortSignal): Promise<{ records: EndpointRecord[]; problems: Problem[] }> {
    const { fetcher, maxPages, maxEntries, id } = this.#s;
    let entries = 0;
    const records: EndpointRecord[] = [];
    const problems: Problem[] = [];
    const visited = new Set<string>();
    let pageUrl = this.#sameOrigin(callAdapter(() => adapter.firstPage(this.#s.url), this.#s.url, 'firstPage'), this.#s.url, 'first page');
    for (let page = 0; ; page++) {
      if (page >= maxPages) {
        throw new DiscoveryError('ERR_CARD_TOO_LARGE', `registry ${this.#s.url} links more than maxPages=${maxPages} pages (next: ${pageUrl}); the refresh is abandoned and the last good list kept`, {
          url: pageUrl,
          stage: 'source',
        });
      }
      visited.add(pageUrl);
      const res = await fetcher.fetch(pageUrl, { headers: this.#s.headers, signal });
      if (res.status !== 200) {
        throw new DiscoveryError('ERR_FETCH_STATUS', `registry page ${pageUrl} answered ${res.status}; expected 200`, { url: pageUrl, stage: 'source', status: res.status });
      }
      const parsed = callAdapter(() => adapter.parse(res.body, pageUrl), pageUrl, 'parse');
      if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.records)) {
        throw new DiscoveryError('ERR_CARD_INVALID', `registry adapter ${adapter.name} returned no records array for ${pageUrl}`, { url: pageUrl, stage: 'source' });
      }
      entries += parsed.records.length;
      if (entries > maxEntries) {
        throw new DiscoveryError('ERR_CARD_TOO_LARGE', `registry ${this.#s.url} lists more than maxEntries=${maxEntries} entries; the refresh is abandoned and the last good list kept`, { url: pageUrl, stage: 'source' });
      }
      parsed.records.forEach((entry, i) => {
        const read = recordFromEntry(entry, { at: `pages[${page}].records[${i}]`, pageUrl, source: id, adapter: adapter.name });
        if ('record' in read) records.push(read.record);
        else problems.push(read.problem);
      });
      if (parsed.next === undefined) break;
      const next = this.#sameOrigin(parsed.next, pageUrl, 'next page');
      if (visited.has(next)) {
        throw new DiscoveryError('ERR_CARD_INVALID', `registry page ${pageUrl}: next page ${next} was already read (a paging loop)`, { url: pageUrl, stage: 'source', path: 'next' });
      }
      pageUrl = next;
    }
    return { records, problems };
  }

  /** Resolves a page URL and refuses one outside the catalog's origin. */
  #sameOrigin(candidate: unknown, base: string, what: string): string {
    let url: URL;
    try {
      url = new URL(String(candidate), base);
    } catch {
      throw new DiscoveryError('ERR_CARD_INVALID', `registry ${base}: ${what} ${describe(candidate)} is not a URL`, { url: base, stage: 'source', path: 'next' });
    }
    if (originOf(url) !== this.#origin) {
      throw new DiscoveryError(
        'ERR_HOST_NOT_ALLOWED',
        `registry page ${base}: refused ${what} ${url.href} on another origin; only ${this.#origin} is followed`,
        { url: base, stage: 'source', path: 'next' },
      );
    }
    return url.href;
  }
}

/** Where a catalog entry is read: its JSON path (`at`), its page, the source id and the adapter's name. */
export interface CatalogEntryContext {
  at: string;
  pageUrl: string;
  source: string;
  adapter: string;
}

/**
 * One catalog entry as an endpoint record (`baseUrl` = its `url`, or its `cardUrl`, as given;
 * `metadata` = `{ registry, tags? }`), or the problem that drops it: no name or URL string (at
 * `at`), or a URL that cannot be one of its kind (at `at.url` / `at.cardUrl`). The allowlist is
 * not applied here: the resolver does that.
 *
 * @example recordFromEntry({ name: 'billing', url: 'https://billing.example.com/' }, { at: 'agents[0]', pageUrl, source: 'catalog', adapter: 'simple' })
 */
export function recordFromEntry(entry: unknown, ctx: CatalogEntryContext): { record: EndpointRecord } | { problem: Problem } {
  const { name, url, cardUrl, tags, metadata: extra } = (entry ?? {}) as Partial<{ name: unknown; url: unknown; cardUrl: unknown; tags: unknown; metadata: unknown }>;
  const field = cardUrl !== undefined && url === undefined ? 'cardUrl' : 'url';
  const given = field === 'cardUrl' ? cardUrl : url;
  if (typeof name !== 'string' || name === '' || typeof given !== 'string') {
    return { problem: { path: ctx.at, message: `entry on ${ctx.pageUrl} has no name or url (or cardUrl) string; skipped` } };
  }
  const why = field === 'cardUrl' ? impossibleCardUrl(given) : impossibleBaseUrl(given);
  if (why !== undefined) return { problem: { path: `${ctx.at}.${field}`, message: `entry ${describe(name)} on ${ctx.pageUrl}: ${why}; skipped` } };
  const metadata: Record<string, string> = { registry: ctx.adapter };
  if (Array.isArray(tags) && tags.length > 0) metadata['tags'] = tags.map(String).join(',');
  // An adapter's provenance strings (a registry resource name, its project), never over `registry`.
  if (typeof extra === 'object' && extra !== null) {
    for (const [k, v] of Object.entries(extra)) if (typeof v === 'string' && !(k in metadata)) metadata[k] = v;
  }
  // Transport options an adapter passes on are judged by the same rule as a static entry's.
  const bad: Problem[] = [];
  const transport = readTransportOptions(entry as Record<string, unknown>, (f, message) => bad.push({ path: `${ctx.at}.${f}`, message: `entry ${describe(name)} on ${ctx.pageUrl}: ${message}; skipped` }));
  if (bad.length > 0) return { problem: bad[0] as Problem };
  return { record: { name, baseUrl: given, source: ctx.source, metadata, ...(transport !== undefined && { transport }) } };
}

/** {@link callAdapter} for an adapter's asynchronous step. */
async function callAdapterAsync<T>(fn: () => Promise<T>, url: string, step: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isDiscoveryError(err)) throw err;
    throw new DiscoveryError('ERR_CARD_INVALID', `registry adapter ${step} failed for ${url}: ${err instanceof Error ? err.message : String(err)}`, {
      url,
      stage: 'source',
      cause: err,
    });
  }
}

/** Runs adapter code; a non-DiscoveryError it throws becomes `ERR_CARD_INVALID` with the cause kept. */
function callAdapter<T>(fn: () => T, url: string, step: string): T {
  try {
    return fn();
  } catch (err) {
    if (isDiscoveryError(err)) throw err;
    throw new DiscoveryError('ERR_CARD_INVALID', `registry adapter ${step} failed for ${url}: ${err instanceof Error ? err.message : String(err)}`, {
      url,
      stage: 'source',
      cause: err,
    });
  }
}
