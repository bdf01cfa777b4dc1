/**
 * One refresh's walk over an AI Catalog tree: each document read through the catalog cache (a
 * fresh one without a request), its entries counted and its A2A card entries collected as
 * candidates, nested catalogs followed within the depth, document and entry bounds and never
 * around a cycle, a report per document and a `catalog.read` event per request.
 *
 * @module
 */
import type { CardCache, EntryError } from '../cache/index.js';
import type { AiCatalogEntry, CachedAiCatalog } from '../catalog/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE } from '../catalog/index.js';
import { AI_REGISTRY_MEDIA_TYPE } from '../ard/wire.js';
import { readAiCatalogValuePaced } from '../catalog/ai-catalog.js';
import type { Pacer } from '../catalog/paced.js';
import { DiscoveryError, type Problem } from '../errors.js';
import type { CatalogEvent, EventStream } from '../events/index.js';
import { originOf } from '../rules/origins.js';
import type { CatalogFoundBy } from './catalog-announcements.js';
import type { CatalogEntry } from './catalog-documents.js';
import { describe } from '../text.js';

/** What one catalog document gave in the last refresh, for the API and the dashboard. */
export interface CatalogReport {
  readonly url: string;
  /** `root`, or the JSON path of the entry that nested it in its parent (`<parent URL> entries[3]`). */
  readonly via: string;
  readonly depth: number;
  /**
   * The cache's outcome for the document in this refresh (`hit` when it was fresh, else the last
   * fetch's: `changed`, `unchanged`, `revalidated`, `stale`, ...), `inline` for a nested catalog
   * carried in its parent, `failed`, or `refused` (a URL the allowlist does not admit, never requested).
   */
  readonly outcome: string;
  readonly specVersion?: string;
  readonly etag?: string;
  readonly signature?: string;
  /** Entries in the document, A2A cards among them, nested catalogs, entries of other types (ignored). */
  readonly entries: number;
  readonly cards: number;
  readonly nested: number;
  readonly ignored: number;
  readonly error?: string;
  /**
   * For a host's catalog announced elsewhere than at its well-known URI: how it was found
   * (`link-header`, `html-link`, `robots-agentmap`) and the URL whose response announced it.
   */
  readonly foundBy?: Exclude<CatalogFoundBy, 'well-known'>;
  readonly announcedBy?: string;
}

/** An A2A card entry found in the walk, before versions are chosen. */
export interface Candidate {
  identifier: string;
  /** Versions compete within one origin: `<catalog origin> <identifier>`. */
  group: string;
  version: string | undefined;
  updatedAtMs: number | undefined;
  where: string;
  entry: AiCatalogEntry;
  /** The normalized URL of the document that lists it. */
  catalogUrl: string;
}

/** One refresh's walk over the catalog tree. */
export interface Walk {
  candidates: Candidate[];
  problems: Problem[];
  reports: CatalogReport[];
  /** Documents read (every key), for freshness checks of inline cards. */
  documents: Set<string>;
  /**
   * Of those, hosts' `ard.json` that answered absent (404/410) before their predecessor
   * `ai-catalog.json` was read: not counted against `maxCatalogs` (a host costs one document, as
   * before ARD 0.91), yet kept in `documents` so their cached 404 backs off.
   */
  absent?: Set<string>;
  /** The configured catalogs that were due, requested together before the walk (by URL as configured). */
  prefetched: Map<string, Promise<CatalogEntry>>;
  entries: number;
  truncated: boolean;
  /** Lets the event loop run between entries: a walk over thousands of them is work in slices. */
  pacer: Pacer;
  /** The registries the catalogs announce (entries of type `application/ai-registry+json` with a `url`). */
  registries: AnnouncedRegistry[];
}

/**
 * A registry an AI Catalog announces (ARD §4.1): an entry of type {@link AI_REGISTRY_MEDIA_TYPE}
 * whose `url` (resolved against its catalog) is the registry's API base. Its text is third-party
 * data; whoever asks the registry judges the URL by the allowlist first.
 */
export interface AnnouncedRegistry {
  readonly identifier: string;
  readonly displayName?: string;
  readonly description?: string;
  /** The API base, absolute. */
  readonly url: string;
  /** The catalog document that lists it. */
  readonly catalog: string;
}

/** What a walker needs of its source's settings. */
export interface WalkerSettings {
  /** The source id, in events. */
  id: string;
  maxDepth: number;
  maxEntries: number;
  maxCatalogs: number;
  events: EventStream | undefined;
}

/** Walks the catalog tree of each refresh of one source, through that source's catalog cache. */
export class CatalogWalker {
  readonly #s: WalkerSettings;
  readonly #cache: CardCache<CachedAiCatalog, string>;
  /** Per document URL, what its last `catalog.read` event stood for (bounded: the oldest go first). */
  readonly #announced = new Map<string, unknown>();

  constructor(cache: CardCache<CachedAiCatalog, string>, settings: WalkerSettings) {
    this.#cache = cache;
    this.#s = settings;
  }

  /** Whether this walk has read the catalog at `url` already (nested in one read before). */
  alreadyRead(url: string, walk: Walk): boolean {
    try {
      return walk.documents.has(this.#cache.key(url));
    } catch {
      return false; // refused: read() reports it
    }
  }

  /** Reads one catalog document (cached) and walks its entries; throws when it has no usable copy. */
  async read(url: string, depth: number, via: string, path: readonly string[], walk: Walk): Promise<void> {
    let key: string;
    try {
      key = this.#cache.key(url);
    } catch (err) {
      // Refused by the allowlist: never requested, and reported like any unreadable catalog.
      const report: CatalogReport = { url, via, depth, outcome: 'refused', entries: 0, cards: 0, nested: 0, ignored: 0, error: err instanceof Error ? err.message : String(err) };
      walk.reports.push(report);
      this.#announce(url, 'refused', report, err);
      throw err;
    }
    if (walk.documents.size - (walk.absent?.size ?? 0) >= this.#s.maxCatalogs) {
      walk.problems.push({ path: via, message: `more than maxCatalogs=${this.#s.maxCatalogs} catalog documents in one refresh; ${key} was not read` });
      return;
    }
    walk.documents.add(key);
    let entry: CatalogEntry;
    // A fresh catalog is read without a request: reported as a hit (the entry keeps its last fetch's outcome).
    const prefetched = walk.prefetched.get(url);
    const fresh = prefetched === undefined ? this.#cache.fresh(key) : undefined;
    try {
      entry = fresh ?? (await (prefetched ?? this.#cache.get(key)));
      if (!entry.usable) {
        const last = entry.lastError;
        throw new DiscoveryError(last?.code ?? 'ERR_FETCH_NETWORK', last?.message ?? `${key}: the last good copy is past its allowed staleness`, {
          url: key,
          stage: 'source',
          ...(last?.status !== undefined && { status: last.status }),
          ...(last?.problems !== undefined && { problems: last.problems }),
        });
      }
    } catch (err) {
      const report: CatalogReport = { url: key, via, depth, outcome: 'failed', entries: 0, cards: 0, nested: 0, ignored: 0, error: err instanceof Error ? err.message : String(err) };
      walk.reports.push(report);
      // Announced once per failed attempt (a catalog backing off fails again without a request).
      this.#announce(key, this.#cache.lastFailure(key)?.failures ?? entry!, report, err);
      throw err;
    }
    if (entry.stale && entry.lastError !== undefined) {
      walk.problems.push({ path: key, message: `the catalog could not be refreshed (${entry.lastError.message}); its last good copy is used` });
    }
    // What the reader let pass but dropped or read differently (a tag that is not a string, the
    // earlier member name mediaType, a signature by a key nobody trusts): shown with their paths.
    for (const w of entry.warnings) {
      walk.problems.push({ path: `${key} ${w.path}`, message: w.message });
      await walk.pacer.tick();
    }
    const report = await this.#walk(entry.card, key, depth, via, [...path, key], walk, {
      outcome: fresh !== undefined ? 'hit' : entry.lastOutcome,
      ...(entry.etag !== undefined && { etag: entry.etag }),
      ...(entry.signature !== undefined && { signature: entry.signature }),
    });
    // Every request makes a new entry; a fresh read or a stale one while backing off does not.
    if (fresh === undefined) this.#announce(key, entry, report, entry.lastError);
  }

  /**
   * A `catalog.read` event for a document, once per attempt: `mark` is what identifies the attempt
   * (the cache entry a request produced, the failure count, `refused`); the same mark as last time
   * means no request was made since.
   */
  #announce(url: string, mark: unknown, report: CatalogReport, error: unknown): void {
    const events = this.#s.events;
    if (events === undefined || this.#announced.get(url) === mark) return;
    this.#announced.set(url, mark);
    if (this.#announced.size > 4 * this.#s.maxCatalogs) this.#announced.delete(this.#announced.keys().next().value as string);
    const outcome = report.outcome === 'hit' || report.outcome === 'inline' ? undefined : (report.outcome as CatalogEvent['outcome']);
    if (outcome === undefined) return;
    const failure = error instanceof DiscoveryError ? { code: error.code, reason: error.message } : isEntryError(error) ? { code: error.code, reason: error.message } : undefined;
    events.emit({
      type: 'catalog.read',
      source: this.#s.id,
      url,
      outcome,
      depth: report.depth,
      entries: report.entries,
      cards: report.cards,
      nested: report.nested,
      ignored: report.ignored,
      ...(failure !== undefined && failure),
    });
  }

  async #walk(catalog: CachedAiCatalog, url: string, depth: number, via: string, path: readonly string[], walk: Walk, extra: Pick<CatalogReport, 'outcome' | 'etag' | 'signature'>): Promise<CatalogReport> {
    let cards = 0;
    let nested = 0;
    let ignored = 0;
    const report: CatalogReport = { url, via, depth, specVersion: catalog.specVersion, entries: catalog.entries.length, cards: 0, nested: 0, ignored: 0, ...extra };
    walk.reports.push(report);
    for (const e of catalog.entries) {
      await walk.pacer.tick();
      const where = `${url} ${e.path}`;
      if (walk.entries >= this.#s.maxEntries) {
        if (!walk.truncated) walk.problems.push({ path: where, message: `the catalogs list more than maxEntries=${this.#s.maxEntries} entries in all; the rest are not read` });
        walk.truncated = true;
        break;
      }
      walk.entries++;
      if (e.type === A2A_CARD_MEDIA_TYPE) {
        cards++;
        walk.candidates.push({ identifier: e.identifier, group: `${originOf(url) ?? url} ${e.identifier}`, version: e.version, updatedAtMs: e.updatedAtMs, where, entry: e, catalogUrl: url });
      } else if (e.type === AI_CATALOG_MEDIA_TYPE) {
        nested++;
        await this.#nested(e, url, depth, where, path, walk);
      } else {
        ignored++;
        if (e.type === AI_REGISTRY_MEDIA_TYPE) announced(e, url, walk);
      }
    }
    Object.assign(report, { cards, nested, ignored });
    return report;
  }

  /** A nested catalog entry: followed within the depth bound, never twice, never around a cycle. */
  async #nested(e: AiCatalogEntry, parent: string, depth: number, where: string, path: readonly string[], walk: Walk): Promise<void> {
    if (depth >= this.#s.maxDepth) {
      walk.problems.push({ path: where, message: `a nested catalog deeper than maxDepth=${this.#s.maxDepth}; not followed` });
      return;
    }
    if (e.data !== undefined) {
      const read = await readAiCatalogValuePaced(e.data, {}, walk.pacer);
      if (!read.ok) {
        walk.problems.push({ path: `${where}.data`, message: `the inline catalog is not usable: ${read.problems.slice(0, 3).map((p) => `${p.path}: ${p.message}`).join('; ')}` });
        return;
      }
      const inlineUrl = `${parent}#${e.path}`;
      await this.#walk(read.catalog, inlineUrl, depth + 1, where, path, walk, { outcome: 'inline' });
      return;
    }
    let target: string;
    try {
      target = this.#cache.key(new URL(e.url!, parent).href);
    } catch (err) {
      walk.problems.push({ path: `${where}.url`, message: `the nested catalog ${describe(e.url)} is not read: ${err instanceof Error ? err.message : String(err)}` });
      return;
    }
    if (path.includes(target)) {
      walk.problems.push({ path: `${where}.url`, message: `a catalog cycle: ${[...path, target].join(' → ')}; not followed again` });
      return;
    }
    if (walk.documents.has(target)) return; // listed twice (a diamond): its entries are already in
    try {
      await this.read(target, depth + 1, where, path, walk);
    } catch (err) {
      walk.problems.push({ path: `${where}.url`, message: `the nested catalog ${target} could not be read: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
}

/** Keeps a registry entry with a URL that resolves against its catalog (one with inline `data` names no API to ask). */
function announced(e: AiCatalogEntry, catalogUrl: string, walk: Walk): void {
  if (typeof e.url !== 'string') return;
  let url: string;
  try {
    url = new URL(e.url, catalogUrl).href;
  } catch {
    walk.problems.push({ path: `${catalogUrl} ${e.path}.url`, message: `the registry ${describe(e.url)} is not a URL; not announced` });
    return;
  }
  const catalog = catalogUrl.split('#')[0]!;
  walk.registries.push({ identifier: e.identifier, url, catalog, ...(e.displayName !== undefined && { displayName: e.displayName }), ...(e.description !== undefined && { description: e.description }) });
}

function isEntryError(value: unknown): value is EntryError {
  return typeof value === 'object' && value !== null && typeof (value as Partial<EntryError>).code === 'string' && typeof (value as Partial<EntryError>).message === 'string';
}
