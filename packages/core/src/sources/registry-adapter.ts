/**
 * Registry adapters: how a catalog's pages are addressed and read. The registry source does the
 * fetching, paging limits, origin checks and failure handling; an adapter only names the first
 * page and turns one page's bytes into entries plus an optional next-page URL.
 *
 * The built-in {@link simpleCatalogAdapter} reads the documented format
 * `{ "agents": [{ "name", "url" | "cardUrl", "tags"? }], "next"? }`. Other registries plug in as further
 * adapters: a page-URL adapter ({@link RegistryAdapter}) for catalogs that link their pages, or a
 * client adapter ({@link RegistryClientAdapter}) for APIs paged by token, such as Google Cloud Agent
 * Registry (`google-agent-registry.ts`), whose requests still go through the source's fetcher.
 *
 * @module
 */
import { DiscoveryError, type Problem } from '../errors.js';
import { describe, hasControl } from '../text.js';
import { readTransportOptions } from './transport-options.js';

/** One catalog entry as an adapter read it. All of it is untrusted data. */
export interface RegistryEntry {
  name: string;
  /** The agent's base URL. Exactly one of `url` and `cardUrl`. */
  url?: string;
  /** The card's own URL (path ending in `.json`), fetched exactly there. */
  cardUrl?: string;
  tags?: string[];
  /** Per-agent transport options ({@link TransportOptions}), when the registry carries them. */
  streaming?: boolean;
  headers?: Record<string, string>;
  timeoutMs?: number;
  tenant?: string;
  /**
   * A card the registry stores (a JSON object), served to the card cache inline (like an AI
   * Catalog's inline card) when the source shares a `CatalogArtifacts` table with the cache;
   * otherwise `url` / `cardUrl` is used. An entry may give it with or instead of a URL.
   */
  card?: Readonly<Record<string, unknown>>;
  /** Provenance strings the adapter adds to the record's `metadata` (never over `registry`). */
  metadata?: Readonly<Record<string, string>>;
}

/** What an adapter found on one page. */
interface RegistryPage {
  /** The entries of this page, in catalog order. */
  records: RegistryEntry[];
  /** The absolute URL of the next page, if any (the source refuses one on another origin). */
  next?: string;
}

/**
 * Reads one registry's catalog format.
 *
 * Contract: `parse` is pure and synchronous, and throws a {@link DiscoveryError} for a page it
 * cannot read: `ERR_CARD_MALFORMED` (not JSON / not UTF-8) or `ERR_CARD_INVALID` (wrong shape,
 * with every problem in `problems`), stage `source`. Any other exception is wrapped the same way
 * by the source. Either fails the whole refresh (the last good list is kept).
 */
export interface RegistryAdapter {
  /** A short name, recorded in each record's `metadata.registry`. */
  readonly name: string;
  /** The URL of the first page, given the configured catalog URL. */
  firstPage(catalogUrl: string): string;
  /** One page's bytes → its entries and the absolute next-page URL (resolved against `pageUrl`). */
  parse(body: Buffer, pageUrl: string): RegistryPage;
}

/**
 * What a {@link RegistryClientAdapter} reads with: GETs through the registry source's guarded
 * fetcher (allowlist, address checks, no redirects, time and size bounds, per-origin credentials),
 * limited to the configured registry URL's origin.
 */
export interface RegistryRead {
  /** The configured registry URL (its origin bounds every request). */
  readonly url: string;
  /**
   * GETs `url` (absolute, on the registry's origin) with extra `headers` sent to that origin only.
   *
   * @returns The body of a 200 answer.
   * @throws DiscoveryError `ERR_HOST_NOT_ALLOWED` for another origin, `ERR_FETCH_STATUS` for another
   *   status, or the fetcher's codes.
   */
  get(url: string, headers?: Record<string, string>): Promise<Buffer>;
  /** Aborted when the source closes. */
  readonly signal: AbortSignal;
}

/** One page a {@link RegistryClientAdapter} read. */
export interface RegistryTokenPage {
  records: RegistryEntry[];
  /** The token of the next page; absent or empty on the last page. */
  nextPageToken?: string;
}

/**
 * Reads a registry API paged by token (`pageToken` / `nextPageToken`), through {@link RegistryRead}.
 * The source bounds pages (`maxPages`) and entries (`maxEntries`) and refuses a repeated token.
 * `readPage` throws a {@link DiscoveryError} for a page it cannot read (any other error is wrapped
 * as `ERR_CARD_INVALID`); `ERR_CONFIG_INVALID` (a missing optional dependency) rejects the refresh.
 */
export interface RegistryClientAdapter {
  /** A short name, recorded in each record's `metadata.registry`. */
  readonly name: string;
  /** Reads the page after `pageToken` (undefined: the first page). */
  readPage(pageToken: string | undefined, read: RegistryRead): Promise<RegistryTokenPage>;
}

/** Limits of the simple catalog format (per entry). */
const MAX_NAME = 200;
const MAX_URL = 2048;
const MAX_TAG = 64;
const MAX_TAGS = 64;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The simple catalog format:
 *
 * ```json
 * { "agents": [ { "name": "billing", "url": "https://billing.example.com/", "tags": ["billing"] },
 *               { "name": "finance", "cardUrl": "https://agents.example.com/.well-known/finance/agent-card.json" } ],
 *   "next": "/agents?page=2" }
 * ```
 *
 * - `agents` (required): an array of entries. `name`: a string of 1–200 characters without control
 *   characters. `url` (the base URL) or `cardUrl` (the card's own URL, path ending in `.json`),
 *   exactly one: a string of at most 2048 characters (an entry whose URL is not an absolute
 *   http(s) URL of its kind is dropped by the source with a reported problem). `tags` (optional): up to 64
 *   strings of 1–64 characters, without commas or control characters. Other members are ignored.
 * - `next` (optional, string or null): the next page, absolute or relative to this page's URL;
 *   it must stay on the catalog's origin.
 *
 * Any other shape fails the page with `ERR_CARD_INVALID` listing every problem by JSON path.
 */
export const simpleCatalogAdapter: RegistryAdapter = Object.freeze({
  name: 'simple',
  firstPage(catalogUrl: string): string {
    return catalogUrl;
  },
  parse(body: Buffer, pageUrl: string): RegistryPage {
    const value = parseJson(body, pageUrl);
    const problems: Problem[] = [];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw invalid(pageUrl, [{ path: '$', message: `must be an object with an "agents" array, got ${describe(value)}` }]);
    }
    const doc = value as Record<string, unknown>;
    const records: RegistryEntry[] = [];
    if (!Array.isArray(doc['agents'])) problems.push({ path: 'agents', message: `must be an array, got ${describe(doc['agents'])}` });
    else {
      doc['agents'].forEach((raw: unknown, i) => {
        const entry = readEntry(raw, `agents[${i}]`, problems);
        if (entry !== undefined) records.push(entry);
      });
    }
    let next: string | undefined;
    const rawNext = doc['next'];
    if (rawNext !== undefined && rawNext !== null) {
      if (typeof rawNext !== 'string' || rawNext === '' || rawNext.length > MAX_URL) {
        problems.push({ path: 'next', message: `must be a non-empty URL string (at most ${MAX_URL} characters) or null, got ${describe(rawNext)}` });
      } else {
        try {
          next = new URL(rawNext, pageUrl).href;
        } catch {
          problems.push({ path: 'next', message: `${describe(rawNext)} is not a URL, even relative to ${pageUrl}` });
        }
      }
    }
    if (problems.length > 0) throw invalid(pageUrl, problems);
    return next === undefined ? { records } : { records, next };
  },
});

function readEntry(raw: unknown, at: string, problems: Problem[]): RegistryEntry | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push({ path: at, message: `must be an object with name and url, got ${describe(raw)}` });
    return undefined;
  }
  const { name, url, cardUrl, tags } = raw as Record<string, unknown>;
  const before = problems.length;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME || hasControl(name)) {
    problems.push({ path: `${at}.name`, message: `must be a non-empty string of at most ${MAX_NAME} characters without control characters, got ${describe(name)}` });
  }
  if (url !== undefined && cardUrl !== undefined) {
    problems.push({ path: `${at}.cardUrl`, message: 'give either url (a base URL) or cardUrl (the card URL), not both' });
  } else {
    const field = cardUrl !== undefined ? 'cardUrl' : 'url';
    const value = cardUrl ?? url;
    if (typeof value !== 'string' || value === '' || value.length > MAX_URL) {
      problems.push({ path: `${at}.${field}`, message: `must be a non-empty string of at most ${MAX_URL} characters, got ${describe(value)}` });
    }
  }
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags) || tags.length > MAX_TAGS) problems.push({ path: `${at}.tags`, message: `must be an array of at most ${MAX_TAGS} strings, got ${describe(tags)}` });
    else {
      tags.forEach((tag: unknown, j) => {
        if (typeof tag !== 'string' || tag === '' || tag.length > MAX_TAG || tag.includes(',') || hasControl(tag)) {
          problems.push({ path: `${at}.tags[${j}]`, message: `must be a string of 1-${MAX_TAG} characters without commas or control characters, got ${describe(tag)}` });
        }
      });
    }
  }
  const transport = readTransportOptions(raw as Record<string, unknown>, (field, message) => problems.push({ path: `${at}.${field}`, message }));
  if (problems.length > before) return undefined;
  const entry: RegistryEntry = cardUrl !== undefined ? { name: name as string, cardUrl: cardUrl as string } : { name: name as string, url: url as string };
  if (Array.isArray(tags)) entry.tags = [...(tags as string[])];
  if (transport !== undefined) Object.assign(entry, { ...transport, ...(transport.headers !== undefined && { headers: { ...transport.headers } }) });
  return entry;
}

function parseJson(body: Buffer, pageUrl: string): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw malformed(pageUrl, 'not valid UTF-8 text');
  }
  if (text.trim() === '') throw malformed(pageUrl, 'empty body, expected a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw malformed(pageUrl, `not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function malformed(pageUrl: string, message: string): DiscoveryError {
  return new DiscoveryError('ERR_CARD_MALFORMED', `registry page ${pageUrl}: ${message}`, {
    url: pageUrl,
    stage: 'source',
    path: '$',
    problems: [{ path: '$', message }],
  });
}

function invalid(pageUrl: string, problems: Problem[]): DiscoveryError {
  const shown = problems
    .slice(0, 5)
    .map((p) => `${p.path}: ${p.message}`)
    .join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return new DiscoveryError('ERR_CARD_INVALID', `registry page ${pageUrl} is not a valid catalog page: ${shown}${more}`, {
    url: pageUrl,
    stage: 'source',
    path: problems[0]!.path,
    problems,
  });
}
