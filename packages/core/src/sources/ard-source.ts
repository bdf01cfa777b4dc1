/**
 * The ARD source: another registry's entries (Agentic Resource Discovery, `spec/ard.md` §7) as
 * endpoint records, read through the safe {@link CardFetcher} (allowlist, address guard, no
 * redirects, byte cap, deadlines, the per-origin request budget of the fetcher it is given).
 *
 * Two ways to read:
 * - **follow** (no `query`): a full read of `GET <base>/agents` (paged by `pageToken`), then only
 *   the changes, `GET <base>/agents?updated_since=<cursor>` (`ArdChangesResponse`: entries changed
 *   since, removals as `status: "deleted"` tombstones, the next `cursor` on the last page). The
 *   first cursor is the `cursor` the list's last page carries if any, else the upstream's own
 *   `Date` of the full read's first page less one second (a change in that second is read twice,
 *   never missed; without either, every refresh is a full read). A registry without the feed (a last page
 *   without `cursor`, or a 400/404/501 to `updated_since`) is read in full on every refresh; a
 *   410 (`CURSOR_EXPIRED`) reads everything again once.
 * - **search** (`query`, optional `filter`): `POST <base>/search` with `federation: "none"`, every
 *   page, on every refresh (a search has no change feed).
 *
 * Each refresh is all-or-nothing: every page is read before the list changes, so a half-read
 * registry never shrinks the set. Bounded by `maxPages` (per refresh), `maxEntries` (kept), the
 * fetcher's body cap (per page) and `timeoutMs` (per refresh).
 *
 * Records: `name` = the trailing segment of the entry's `identifier` (as the AI Catalog source
 * names them), `baseUrl` = the entry's `url`, the card's URL (`#card` appended when its path does
 * not end in `.json`, so it is fetched exactly there), `metadata` = `{ registry: <API base>,
 * identifier, displayName?, description?, tags?, version?, updatedAt? }` (third-party text,
 * display only). An entry with inline `data` and no `url` is skipped with a problem: a card the
 * registry carries inline has no URL the allowlist can judge or the cache can revalidate.
 *
 * @module
 */
import type { Clock } from '../clock/index.js';
import { z } from 'zod';
import { DiscoveryError, type Problem } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { CardFetcher } from '../fetch/index.js';
import { catalogCardUrl } from '../fetch/index.js';
import type { ArdChangesResponse, ArdSearchRequest, ArdSearchResult } from '../ard/wire.js';
import { canonicalIdentifier, relativeIdentifierProblem } from '../catalog/identifiers.js';
import { ARD_SOURCE_DEFAULTS, SOURCE_DEFAULTS } from '../rules/defaults.js';
import { impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import { trailingSegment } from './catalog-records.js';
import { PeriodicSource, type Listing } from './periodic-source.js';
import { positiveIntProblem } from './source-core.js';
import { optional, positiveInt, readOptions, rule, sourceId, withMethod } from './source-options.js';
import type { EndpointRecord, Source } from './types.js';

/** Inputs of {@link ardSource}. Durations are milliseconds. */
export interface ArdSourceOptions {
  /** Source id, e.g. `'partner-registry'`. */
  id: string;
  /** The registry's API base (`POST <url>/search`, `GET <url>/agents`), as an AI Catalog's `application/ai-registry+json` entry gives it. */
  url: string;
  /** The safe fetcher; the registry's origin must be on its allowlist. Its `maxBodyBytes` bounds one page. Not closed by the source. */
  fetcher: CardFetcher;
  /** Read the results of this search (`query.text`) instead of following the whole list. */
  query?: string;
  /** The search's `query.filter` (ARD §7.1); only with `query`. */
  filter?: Readonly<Record<string, unknown>>;
  /** Suggested poll interval. Default 300,000. */
  pollIntervalMs?: number;
  /** Entries asked per page, 1–100. Default 100. */
  pageSize?: number;
  /** Pages read in one refresh. Default 50. */
  maxPages?: number;
  /** Entries kept. Default 5,000. */
  maxEntries?: number;
  /** One refresh, every page together. Default 30,000. */
  timeoutMs?: number;
  events?: EventStream;
  clock?: Clock;
}

/** The ARD source, with where its follower stands. */
export interface ArdSource extends Source {
  /** `full` before the first read and without a change feed, `changes` once a cursor is held; the cursor itself. */
  feed(): { readonly mode: 'full' | 'changes' | 'search'; readonly cursor?: string };
}

/**
 * Creates an ARD source. Pure: validates the options and does no I/O.
 *
 * A refresh fails, keeping the last good list, setting `error` and emitting a `source-error`
 * alert, when: a request fails (the fetcher's codes); a page answers other than 200
 * (`ERR_FETCH_STATUS`, after the feed fallbacks above); a page is not JSON (`ERR_CARD_MALFORMED`)
 * or has no `results` array (`ERR_CARD_INVALID`); a `pageToken` repeats (`ERR_CARD_INVALID`);
 * more than `maxPages` pages or `maxEntries` entries (`ERR_CARD_TOO_LARGE`); `timeoutMs` passes
 * (`ERR_FETCH_TIMEOUT`). Stage `source` unless the fetcher set its own.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const source = ardSource({ id: 'partners', url: 'https://registry.partner.example/ard', fetcher });
 * await source.refresh(); // a full read; the next refresh reads only the changes
 */
export function ardSource(options: ArdSourceOptions): ArdSource {
  const o = readOptions('ARD source', ARD_OPTIONS, options, (raw, add) => {
    if (isObject(raw['filter']) && raw['query'] === undefined) add('filter', 'applies to a search: give query too');
  });
  return new ArdRegistrySource({
    id: o.id,
    base: o.url.replace(/\/+$/, ''),
    fetcher: o.fetcher,
    ...(o.query !== undefined && { query: { text: o.query, ...(o.filter !== undefined && { filter: o.filter }) } }),
    pollIntervalMs: o.pollIntervalMs ?? SOURCE_DEFAULTS.pollIntervalMs,
    pageSize: o.pageSize ?? ARD_SOURCE_DEFAULTS.pageSize,
    maxPages: o.maxPages ?? ARD_SOURCE_DEFAULTS.maxPages,
    maxEntries: o.maxEntries ?? ARD_SOURCE_DEFAULTS.maxEntries,
    timeoutMs: o.timeoutMs ?? ARD_SOURCE_DEFAULTS.timeoutMs,
    events: o.events,
    clock: o.clock,
  });
}

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The options of {@link ardSource}, each with its sentence. */
const ARD_OPTIONS = {
  id: sourceId,
  url: rule<string>((v) => (typeof v !== 'string' ? `must be the registry's API base URL, got ${describe(v)}` : impossibleUrl(v))),
  fetcher: withMethod<CardFetcher>('fetch', 'a CardFetcher is required (createCardFetcher({ policy }))'),
  query: optional<string>((v) => (typeof v !== 'string' || v.trim() === '' ? `must be a non-empty search text, got ${describe(v)}` : undefined)),
  filter: optional<Readonly<Record<string, unknown>>>((v) => (isObject(v) ? undefined : `must be an object of field path: value(s), got ${describe(v)}`)),
  pollIntervalMs: positiveInt,
  pageSize: optional<number>((v) => positiveIntProblem(v) ?? ((v as number) > 100 ? `must be at most 100 (ARD §7.2), got ${v as number}` : undefined)),
  maxPages: positiveInt,
  maxEntries: positiveInt,
  timeoutMs: positiveInt,
  events: z.custom<EventStream | undefined>(),
  clock: z.custom<Clock | undefined>(),
};

interface Settings {
  id: string;
  /** The API base without a trailing slash. */
  base: string;
  fetcher: CardFetcher;
  query?: { text: string; filter?: Readonly<Record<string, unknown>> };
  pollIntervalMs: number;
  pageSize: number;
  maxPages: number;
  maxEntries: number;
  timeoutMs: number;
  events: EventStream | undefined;
  clock: Clock | undefined;
}

/** One page as read: its entries, the next page's token, the feed's cursor and the upstream's `Date`. */
interface Page {
  results: readonly unknown[];
  pageToken?: string;
  cursor?: string;
  date?: string;
}

/** Statuses by which a registry says it has no change feed (then it is read in full). */
const NO_FEED = new Set([400, 404, 405, 501]);

class ArdRegistrySource extends PeriodicSource implements ArdSource {
  override readonly kind = 'ard' as const;
  readonly #s: Settings;
  /** The upstream's entries by identifier, as the last successful refresh left them. */
  #entries = new Map<string, ArdSearchResult>();
  #cursor: string | undefined;
  /** False once the registry showed it has no change feed. */
  #feed = true;
  /** Results of this refresh that were not entries (no identifier string). */
  #passedOver = 0;
  /** Results of this refresh refused for a relative identifier (ARD 0.91), the first few named. */
  #relative: string[] = [];
  #relativeCount = 0;

  constructor(s: Settings) {
    super({
      id: s.id,
      kind: 'ard',
      pollIntervalMs: s.pollIntervalMs,
      timeout: { ms: s.timeoutMs, error: () => new DiscoveryError('ERR_FETCH_TIMEOUT', `ARD registry ${s.base}: the refresh took longer than timeoutMs=${s.timeoutMs}`, { url: s.base, stage: 'source' }) },
      closedReason: 'the ARD source was closed',
      failure: { code: 'ERR_FETCH_NETWORK', url: s.base },
      events: s.events,
      clock: s.clock,
    });
    this.#s = s;
  }

  feed(): { mode: 'full' | 'changes' | 'search'; cursor?: string } {
    if (this.#s.query !== undefined) return { mode: 'search' };
    return this.#cursor === undefined ? { mode: 'full' } : { mode: 'changes', cursor: this.#cursor };
  }

  protected async read(signal: AbortSignal): Promise<Listing> {
    this.#passedOver = 0;
    this.#relative = [];
    this.#relativeCount = 0;
    const read = this.#s.query !== undefined ? await this.#search(signal) : await this.#follow(signal);
    const problems: Problem[] = [];
    if (this.#passedOver > 0) problems.push({ path: this.#s.base, message: `${this.#passedOver} result(s) without an identifier string were passed over` });
    if (this.#relativeCount > 0) {
      problems.push({ path: `${this.#s.base} identifier`, message: `${this.#relativeCount} result(s) refused: their identifier is a relative reference, e.g. ${this.#relative.map((id) => JSON.stringify(id)).join(', ')}; an entry identifier must be absolute (ARD 0.91)` });
    }
    const records = this.#records(read.entries, problems);
    return {
      records,
      problems,
      commit: () => {
        this.#entries = read.entries;
        this.#cursor = read.cursor;
      },
    };
  }

  /** The changes since the cursor when there is one and the feed answers; else a full read. */
  async #follow(signal: AbortSignal): Promise<{ entries: Map<string, ArdSearchResult>; cursor?: string }> {
    if (this.#cursor !== undefined && this.#feed) {
      const changes = await this.#changes(this.#cursor, signal);
      if (changes !== undefined) return changes;
    }
    return this.#full(signal);
  }

  /** `GET /agents?updated_since=`: applied to a copy, so a failed read changes nothing. Undefined: read in full instead. */
  async #changes(cursor: string, signal: AbortSignal): Promise<{ entries: Map<string, ArdSearchResult>; cursor: string } | undefined> {
    const entries = new Map(this.#entries);
    let next: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      this.#pageBound(page);
      const url = this.#url('/agents', { updated_since: cursor, pageSize: String(this.#s.pageSize), ...(next !== undefined && { pageToken: next }) });
      const res = await this.#s.fetcher.fetch(url, { headers: { accept: 'application/json' }, signal });
      if (res.status === 410) return undefined; // CURSOR_EXPIRED: everything again
      if (page === 0 && NO_FEED.has(res.status)) {
        this.#feed = false;
        return undefined;
      }
      const read = this.#page(res, url);
      for (const raw of read.results) {
        const entry = this.#entryOf(raw);
        if (entry === undefined) continue;
        if (entry.status === 'deleted') entries.delete(entry.identifier);
        else entries.set(entry.identifier, entry);
      }
      if (entries.size > this.#s.maxEntries) throw this.#tooMany();
      if (read.pageToken === undefined) {
        if (read.cursor === undefined) {
          // The registry ignored `updated_since`: what it answered may be a list, not the changes.
          this.#feed = false;
          return undefined;
        }
        return { entries, cursor: read.cursor };
      }
      next = this.#nextToken(read.pageToken, seen, url);
    }
  }

  /** `GET /agents`, every page; the first cursor is the last page's `cursor`, else the upstream's `Date` of the first page less a second. */
  async #full(signal: AbortSignal): Promise<{ entries: Map<string, ArdSearchResult>; cursor?: string }> {
    const entries = new Map<string, ArdSearchResult>();
    let next: string | undefined;
    let date: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      this.#pageBound(page);
      const url = this.#url('/agents', { pageSize: String(this.#s.pageSize), ...(next !== undefined && { pageToken: next }) });
      const res = await this.#s.fetcher.fetch(url, { headers: { accept: 'application/json' }, signal });
      const read = this.#page(res, url);
      if (page === 0) date = read.date;
      for (const raw of read.results) {
        const entry = this.#entryOf(raw);
        if (entry !== undefined && entry.status !== 'deleted') entries.set(entry.identifier, entry);
      }
      if (entries.size > this.#s.maxEntries) throw this.#tooMany();
      if (read.pageToken === undefined) {
        // A registry that ends its list with a cursor of its own gives the better starting point.
        if (read.cursor !== undefined) date = read.cursor;
        break;
      }
      next = this.#nextToken(read.pageToken, seen, url);
    }
    return this.#feed && date !== undefined ? { entries, cursor: date } : { entries };
  }

  /** `POST /search` with `federation: "none"`, every page. */
  async #search(signal: AbortSignal): Promise<{ entries: Map<string, ArdSearchResult>; cursor?: string }> {
    const entries = new Map<string, ArdSearchResult>();
    let next: string | undefined;
    const seen = new Set<string>();
    const url = `${this.#s.base}/search`;
    for (let page = 0; ; page++) {
      this.#pageBound(page);
      const body: ArdSearchRequest = { query: this.#s.query!, federation: 'none', pageSize: this.#s.pageSize, ...(next !== undefined && { pageToken: next }) };
      const res = await this.#s.fetcher.fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { accept: 'application/json' }, signal });
      const read = this.#page(res, url);
      for (const raw of read.results) {
        const entry = this.#entryOf(raw);
        if (entry !== undefined && entry.status !== 'deleted' && !entries.has(entry.identifier)) entries.set(entry.identifier, entry);
      }
      if (entries.size > this.#s.maxEntries) throw this.#tooMany();
      if (read.pageToken === undefined) break;
      next = this.#nextToken(read.pageToken, seen, url);
    }
    return { entries };
  }

  #page(res: { status: number; body: Buffer; headers: Record<string, string> }, url: string): Page {
    if (res.status !== 200) throw new DiscoveryError('ERR_FETCH_STATUS', `ARD registry ${url} answered ${res.status}; expected 200`, { url, stage: 'source', status: res.status });
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(res.body));
    } catch (err) {
      throw new DiscoveryError('ERR_CARD_MALFORMED', `ARD registry ${url}: not JSON (${err instanceof Error ? err.message : String(err)})`, { url, stage: 'source', path: '$' });
    }
    const page = (typeof doc === 'object' && doc !== null ? doc : {}) as Partial<ArdChangesResponse>;
    // A list answers `items` (ARD's ListResponse), a search `results` (SearchResponse).
    const list = Array.isArray(page.items) ? page.items : (page as { results?: unknown }).results;
    if (!Array.isArray(list)) throw new DiscoveryError('ERR_CARD_INVALID', `ARD registry ${url}: the answer has neither an items (list) nor a results (search) array`, { url, stage: 'source', path: 'items' });
    const out: Page = { results: list };
    if (typeof page.pageToken === 'string' && page.pageToken !== '') out.pageToken = page.pageToken;
    if (typeof page.cursor === 'string' && page.cursor !== '') out.cursor = page.cursor;
    const date = Date.parse(res.headers['date'] ?? '');
    if (Number.isFinite(date)) out.date = new Date(date - 1_000).toISOString();
    return out;
  }

  #records(entries: ReadonlyMap<string, ArdSearchResult>, problems: Problem[]): EndpointRecord[] {
    const records: EndpointRecord[] = [];
    for (const e of entries.values()) {
      const at = `${this.#s.base} ${e.identifier}`;
      if (typeof e.url !== 'string') {
        problems.push({ path: at, message: `the entry ${describe(e.identifier)} carries its card inline (data) without a url; skipped (an inline card has no URL to allowlist or revalidate)` });
        continue;
      }
      let url: string;
      try {
        url = new URL(e.url, `${this.#s.base}/`).href;
      } catch {
        problems.push({ path: `${at}.url`, message: `${describe(e.url)} is not a URL; skipped` });
        continue;
      }
      const why = impossibleUrl(url);
      if (why !== undefined) {
        problems.push({ path: `${at}.url`, message: `${why}; skipped` });
        continue;
      }
      const metadata: Record<string, string> = { registry: this.#s.base, identifier: e.identifier };
      if (typeof e.displayName === 'string') metadata['displayName'] = e.displayName;
      if (typeof e.description === 'string') metadata['description'] = e.description;
      if (Array.isArray(e.tags) && e.tags.length > 0) metadata['tags'] = e.tags.filter((t) => typeof t === 'string').join(',');
      if (typeof e['version'] === 'string') metadata['version'] = e['version'];
      if (typeof e.updatedAt === 'string') metadata['updatedAt'] = e.updatedAt;
      records.push({ name: trailingSegment(e.identifier), baseUrl: catalogCardUrl(url), source: this.#s.id, metadata });
    }
    return records;
  }

  /** An entry with an absolute identifier string (canonical form); anything else is counted and passed over. */
  #entryOf(raw: unknown): ArdSearchResult | undefined {
    const e = raw as Partial<ArdSearchResult> | null;
    if (typeof e === 'object' && e !== null && !Array.isArray(e) && typeof e.identifier === 'string' && e.identifier !== '') {
      if (relativeIdentifierProblem(e.identifier) !== undefined) {
        if (this.#relativeCount++ < 3) this.#relative.push(e.identifier.slice(0, 80));
        return undefined;
      }
      // `urn:ai:` and `urn:air:` are one identifier (catalog/identifiers.ts): kept in its `urn:air:` form.
      return { ...(e as ArdSearchResult), identifier: canonicalIdentifier(e.identifier) };
    }
    this.#passedOver++;
    return undefined;
  }

  #url(path: string, params: Record<string, string>): string {
    return `${this.#s.base}${path}?${new URLSearchParams(params).toString()}`;
  }

  #pageBound(page: number): void {
    if (page >= this.#s.maxPages) {
      throw new DiscoveryError('ERR_CARD_TOO_LARGE', `ARD registry ${this.#s.base} has more than maxPages=${this.#s.maxPages} pages for one refresh; the last good list is kept`, { url: this.#s.base, stage: 'source' });
    }
  }

  #tooMany(): DiscoveryError {
    return new DiscoveryError('ERR_CARD_TOO_LARGE', `ARD registry ${this.#s.base} lists more than maxEntries=${this.#s.maxEntries} entries; the last good list is kept`, { url: this.#s.base, stage: 'source' });
  }

  #nextToken(token: string, seen: Set<string>, url: string): string {
    if (seen.has(token)) throw new DiscoveryError('ERR_CARD_INVALID', `ARD registry ${url}: pageToken ${describe(token)} repeats (a paging loop)`, { url, stage: 'source', path: 'pageToken' });
    seen.add(token);
    return token;
  }
}
