/**
 * The AI Catalog source: hosts that serve many agents list them in an AI Catalog
 * (`/.well-known/ai-catalog.json`, `application/ai-catalog+json`, specVersion 1.x). This source
 * reads catalogs through the safe fetcher with the card cache's HTTP caching (ETag / 304,
 * max-age, stale-on-error with backoff, single-flight), follows nested catalogs (depth, entry
 * and document bounds, cycle detection) and proposes one endpoint per A2A agent card entry:
 *
 * - an entry with `url`: that card URL (a catalog never widens the allowlist: the resolver judges it);
 * - an entry with inline `data`: a card carried by the catalog, served to the card cache through
 *   {@link CatalogArtifacts} and validated there exactly as a fetched card;
 * - several versions of one identifier: the newest (semantic version, else `updatedAt`), or the
 *   version the configuration pins;
 * - a signed Trust Manifest naming the entry pins the card's SHA-256: other bytes are refused.
 *
 * Entry text (`displayName`, `description`, `tags`) is third-party data, kept in the record's
 * metadata for display only. See docs/sources.md ("AI Catalog").
 *
 * @module
 */
import { CardCache, MemoryCardStore, prefixedStore } from '../cache/index.js';
import type { AcceptedContent, CacheContent, CardStore, EntryError } from '../cache/index.js';
import type { SignatureOptions } from '../card/index.js';
import { canonicalJson, sha256Hex, verifyDetachedSignature } from '../card/index.js';
import type { AiCatalogEntry, CachedAiCatalog, CatalogLimits, ManifestVerdict } from '../catalog/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE, AI_CATALOG_WELL_KNOWN_PATH, DEFAULT_CATALOG_LIMITS, judgeTrustManifest, readAiCatalog, readAiCatalogValue, selectVersions } from '../catalog/index.js';
import type { Clock, Random } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError, type Problem } from '../errors.js';
import type { CatalogEvent, EventStream } from '../events/index.js';
import type { CardFetcher, HostPolicy } from '../fetch/index.js';
import { catalogCardUrl, inlineCardKey } from '../fetch/index.js';
import type { CardPin, InlineCard } from './catalog-artifacts.js';
import { CatalogArtifacts } from './catalog-artifacts.js';
import type { CatalogEntry } from './catalog-documents.js';
import { OptionProblems, SourceCore, describe, impossibleUrl } from './source-core.js';
import type { EndpointRecord, Source, SourceListener, SourceState } from './types.js';
import { normalizeDomain } from './well-known-source.js';

/** Inputs of {@link aiCatalogSource}. Durations are milliseconds. */
export interface AiCatalogSourceOptions {
  /** Source id, e.g. `'catalogs'`. */
  id: string;
  /** Catalog URLs, read as given (any path; the well-known one is `https://<host>/.well-known/ai-catalog.json`). */
  catalogs?: readonly string[];
  /**
   * Hosts (`host[:port]`, as the well-known source takes them): for each, the catalog at
   * `https://<host>/.well-known/ai-catalog.json` is read first; a host without a usable catalog
   * is proposed as `https://<host>/` (its `agent-card.json`), as the well-known source would.
   */
  domains?: readonly string[];
  /** The safe fetcher for catalogs (its `maxBodyBytes` bounds one catalog document). Not closed by the source. */
  fetcher: CardFetcher;
  /** The allowlist: a catalog on a host it does not name is never read. */
  hostPolicy: HostPolicy;
  /** Shared with the card cache (inline cards, pinned digests). Default: the source's own (then give `source.artifacts` to the cache). */
  artifacts?: CatalogArtifacts;
  /** Catalog signatures and Trust Manifests: the trust store and mode, as for cards. Default `if-present` with no keys. */
  signatures?: SignatureOptions;
  /** identifier → version: propose that version of the entry instead of the newest. */
  versions?: Readonly<Record<string, string>>;
  /** Nesting depth followed (the root catalog is depth 1). Default 4, as the specification recommends. */
  maxDepth?: number;
  /**
   * The largest catalog document accepted, in bytes (a larger one is refused at `parse` with
   * `ERR_CARD_TOO_LARGE`). Default: whatever the fetcher's `maxBodyBytes` lets through. Give both
   * (the service does): this one is among the rules a stored copy was accepted under.
   */
  maxBytes?: number;
  /** Entries read over every catalog of one refresh. Default 5,000. */
  maxEntries?: number;
  /** Catalog documents read in one refresh (roots and nested). Default 50. */
  maxCatalogs?: number;
  /** Suggested poll interval. Default 300,000. */
  pollIntervalMs?: number;
  /**
   * Where the catalog documents are cached (default: this source's memory). Given a shared,
   * durable store (`StateStore.catalogs`), the source keeps its entries under
   * {@link AiCatalogSource.storePrefix}: a restart revalidates each catalog (a 304, not a 200)
   * and a catalog down at start-up is served from its last good copy.
   */
  store?: CardStore<CatalogEntry>;
  /** Catalog cache timings (lifetimes, staleness, backoff), as the card cache takes them. */
  cache?: { defaultTtlMs?: number; minTtlMs?: number; maxTtlMs?: number; maxStaleMs?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  events?: EventStream;
  clock?: Clock;
  random?: Random;
}

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
}

/** The AI Catalog source, with its catalog report. */
export interface AiCatalogSource extends Source {
  /** The table the card cache must share (inline cards, pins). */
  readonly artifacts: CatalogArtifacts;
  /** Every catalog document of the last refresh. */
  catalogs(): readonly CatalogReport[];
  /**
   * The prefix of this source's keys in a shared `store`: `<id> <digest of what decides whether a
   * document is accepted (signature mode, trust store, algorithms, jku list, document size and entry bounds)> `. A
   * configuration that accepts differently finds none of the entries an earlier one accepted.
   */
  readonly storePrefix: string;
}

const DEFAULT_POLL_MS = 300_000;
/** Problems kept per refresh (each new one is an alert): a catalog with thousands of bad entries is summarized. */
const MAX_PROBLEMS = 100;
const DEFAULT_MAX_DEPTH = 4;
const DEFAULT_MAX_CATALOGS = 50;

/**
 * Creates an AI Catalog source. Pure: validates the options and does no I/O.
 *
 * Records: `name` = the trailing segment of the entry's identifier (after its last `:`, `/` or
 * `#`, the specification's display-name fallback), `baseUrl` = the card's URL (`#card` appended when
 * its path does not end in `.json`, so it is fetched exactly there) or, for inline `data`,
 * `<catalog URL>#card=<identifier>`; `metadata` = `{ catalog, entry, identifier, version?,
 * displayName?, description?, tags?, pinnedSha256? }` (third-party text, display only).
 * A host without a usable catalog: `{ name: <host>, baseUrl: https://<host>/, metadata: { domain } }`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const artifacts = new CatalogArtifacts();
 * const source = aiCatalogSource({ id: 'catalogs', catalogs: ['https://agents.example.com/.well-known/ai-catalog.json'], fetcher, hostPolicy: policy, artifacts });
 * const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy: policy });
 */
export function aiCatalogSource(options: AiCatalogSourceOptions): AiCatalogSource {
  const check = new OptionProblems('AI Catalog source');
  const opts = (options ?? {}) as Partial<AiCatalogSourceOptions>;
  const id = check.id(opts.id);
  const roots: Root[] = [];
  const seen = new Set<string>();
  const catalogs = opts.catalogs ?? [];
  const domains = opts.domains ?? [];
  if (!Array.isArray(catalogs)) check.add('catalogs', `must be an array of catalog URLs, got ${describe(catalogs)}`);
  else catalogs.forEach((raw: unknown, i) => {
    const why = typeof raw === 'string' ? impossibleUrl(raw) : `must be a URL string, got ${describe(raw)}`;
    if (why !== undefined) return check.add(`catalogs[${i}]`, why);
    const url = new URL(raw as string);
    url.hash = '';
    if (seen.has(url.href)) return check.add(`catalogs[${i}]`, `duplicate catalog ${url.href}`);
    seen.add(url.href);
    roots.push({ url: url.href });
  });
  if (!Array.isArray(domains)) check.add('domains', `must be an array of host names, got ${describe(domains)}`);
  else domains.forEach((raw: unknown, i) => {
    const host = normalizeDomain(raw);
    if (typeof host !== 'string') return check.add(`domains[${i}]`, host.problem);
    const url = `https://${host}${AI_CATALOG_WELL_KNOWN_PATH}`;
    if (seen.has(url)) return check.add(`domains[${i}]`, `duplicate host ${host}`);
    seen.add(url);
    roots.push({ url, domain: host });
  });
  if (roots.length === 0 && check.problems.length === 0) check.add('catalogs', 'give at least one catalog URL or one domain');
  if (typeof (opts.fetcher as Partial<CardFetcher> | undefined)?.fetch !== 'function') check.add('fetcher', 'a CardFetcher is required (createCardFetcher({ policy }))');
  if (typeof (opts.hostPolicy as Partial<HostPolicy> | undefined)?.normalizeEndpoint !== 'function') check.add('hostPolicy', 'the HostPolicy (allowlist) is required');
  const versions: Record<string, string> = {};
  if (opts.versions !== undefined) {
    if (typeof opts.versions !== 'object' || opts.versions === null || Array.isArray(opts.versions)) check.add('versions', `must be an object of identifier: version, got ${describe(opts.versions)}`);
    else for (const [k, v] of Object.entries(opts.versions)) {
      if (typeof v !== 'string' || v === '') check.add(`versions[${JSON.stringify(k)}]`, `must be a version string, got ${describe(v)}`);
      else versions[k] = v;
    }
  }
  const settings: Settings = {
    id,
    roots,
    fetcher: opts.fetcher as CardFetcher,
    hostPolicy: opts.hostPolicy as HostPolicy,
    artifacts: opts.artifacts ?? new CatalogArtifacts(),
    signatures: opts.signatures ?? {},
    versions,
    maxDepth: check.positiveInt(opts.maxDepth, 'maxDepth') ?? DEFAULT_MAX_DEPTH,
    maxEntries: check.positiveInt(opts.maxEntries, 'maxEntries') ?? DEFAULT_CATALOG_LIMITS.maxEntries,
    maxBytes: check.positiveInt(opts.maxBytes, 'maxBytes'),
    maxCatalogs: check.positiveInt(opts.maxCatalogs, 'maxCatalogs') ?? DEFAULT_MAX_CATALOGS,
    pollIntervalMs: check.positiveInt(opts.pollIntervalMs, 'pollIntervalMs') ?? DEFAULT_POLL_MS,
    cache: opts.cache ?? {},
    store: opts.store,
    events: opts.events,
    clock: opts.clock ?? systemClock,
    random: opts.random,
  };
  check.throwIfAny();
  return new CatalogSource(settings);
}

interface Root {
  /** The catalog URL as configured (fragment dropped). */
  url: string;
  /** For a host probed at its well-known catalog: the host, proposed by itself when it has none. */
  domain?: string;
}

interface Settings {
  id: string;
  roots: Root[];
  fetcher: CardFetcher;
  hostPolicy: HostPolicy;
  artifacts: CatalogArtifacts;
  signatures: SignatureOptions;
  versions: Record<string, string>;
  maxDepth: number;
  maxEntries: number;
  maxBytes: number | undefined;
  maxCatalogs: number;
  pollIntervalMs: number;
  cache: NonNullable<AiCatalogSourceOptions['cache']>;
  store: CardStore<CatalogEntry> | undefined;
  events: EventStream | undefined;
  clock: Clock;
  random: Random | undefined;
}

/** An A2A card entry found in the walk, before versions are chosen. */
interface Candidate {
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
interface Walk {
  candidates: Candidate[];
  problems: Problem[];
  reports: CatalogReport[];
  /** Documents read (every key), for freshness checks of inline cards. */
  documents: Set<string>;
  /** The configured catalogs that were due, requested together before the walk (by URL as configured). */
  prefetched: Map<string, Promise<CatalogEntry>>;
  entries: number;
  truncated: boolean;
}

class CatalogSource implements AiCatalogSource {
  readonly kind = 'ai-catalog' as const;
  readonly id: string;
  readonly pollIntervalMs: number;
  readonly artifacts: CatalogArtifacts;
  readonly storePrefix: string;
  readonly #s: Settings;
  readonly #core: SourceCore;
  readonly #cache: CardCache<CachedAiCatalog, string>;
  #reports: readonly CatalogReport[] = Object.freeze([]);
  /** Every catalog key this source has read (or tried to): what a walk no longer reaches is forgotten. */
  readonly #attempted = new Set<string>();
  /** The catalog cache's store: this source's view of a shared one, or its own memory. */
  readonly #store: CardStore<CatalogEntry>;
  /** The inline cards of the last refresh, by key (each knows the catalog that carries it). */
  #inline: ReadonlyMap<string, InlineCard> = new Map();
  /**
   * Per entry object of a cached catalog (the same objects while the catalog does not change):
   * its Trust Manifest verdict (without an `expiresAt`) and its inline card, so an unchanged
   * catalog costs no signature check and no canonicalization.
   */
  readonly #verdicts = new WeakMap<AiCatalogEntry, ManifestVerdict>();
  readonly #inlineCards = new WeakMap<AiCatalogEntry, InlineCard>();
  /** Per document URL, what its last `catalog.read` event stood for (bounded: the oldest go first). */
  readonly #announced = new Map<string, unknown>();
  #inFlight: Promise<SourceState> | undefined;
  #closed = false;

  constructor(settings: Settings) {
    this.#s = settings;
    this.id = settings.id;
    this.pollIntervalMs = settings.pollIntervalMs;
    this.artifacts = settings.artifacts;
    this.#core = new SourceCore(settings.id, 'ai-catalog', { events: settings.events, clock: settings.clock });
    this.storePrefix = `${settings.id} ${acceptanceDigest(settings)} `;
    this.#store = settings.store !== undefined ? prefixedStore(settings.store, this.storePrefix) : new MemoryCardStore<CatalogEntry>();
    this.#cache = new CardCache<CachedAiCatalog, string>({
      store: this.#store,
      fetcher: settings.fetcher,
      hostPolicy: settings.hostPolicy,
      clock: settings.clock,
      ...(settings.random !== undefined && { random: settings.random }),
      ...settings.cache,
      exactUrls: true,
      legacyCardPath: false,
      requestHeaders: { accept: `${AI_CATALOG_MEDIA_TYPE}, application/json;q=0.9` },
      content: catalogContent(settings.signatures, readerLimits(settings)),
    });
  }

  refresh(): Promise<SourceState> {
    if (this.#closed) return Promise.resolve(this.#core.state);
    // Never rejects for what a catalog holds: an unexpected failure keeps the last good list.
    this.#inFlight ??= this.#refresh().catch((err: unknown) => this.#core.fail(toDiscoveryError(err, 'ERR_INTERNAL', { stage: 'source' }))).finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  current(): SourceState {
    return this.#core.state;
  }

  catalogs(): readonly CatalogReport[] {
    return this.#reports;
  }

  subscribe(listener: SourceListener): () => void {
    return this.#core.subscribe(listener);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#core.clearListeners();
    await this.#inFlight?.catch(() => undefined);
    await this.#cache.close();
    this.artifacts.withdraw(this.id);
  }

  async #refresh(): Promise<SourceState> {
    const walk: Walk = { candidates: [], problems: [], reports: [], documents: new Set(), prefetched: new Map(), entries: 0, truncated: false };
    // The configured catalogs that are due are requested together (many hosts under `domains`);
    // the walk then reads them in order, so the result does not depend on which answered first.
    for (const root of this.#s.roots) {
      let due: boolean;
      try {
        due = this.#cache.fresh(root.url) === undefined;
      } catch {
        continue; // refused by the allowlist: reported by the walk
      }
      if (due) {
        const p = this.#cache.get(root.url);
        p.catch(() => undefined);
        walk.prefetched.set(root.url, p);
      }
    }
    const records: EndpointRecord[] = [];
    let readable = 0;
    let firstError: DiscoveryError | undefined;
    for (const root of this.#s.roots) {
      try {
        // A configured catalog another one nests was read with it: once is enough.
        if (this.#alreadyRead(root.url, walk)) {
          readable++;
          continue;
        }
        await this.#read(root.url, 1, 'root', [], walk);
        readable++;
      } catch (err) {
        const error = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: root.url, stage: 'source' });
        if (root.domain !== undefined) {
          // A host without a usable catalog is read as the well-known source reads it.
          records.push({ name: root.domain, baseUrl: `https://${root.domain}/`, source: this.id, metadata: { domain: root.domain } });
          readable++;
          if (!(error.code === 'ERR_FETCH_STATUS' && (error.status === 404 || error.status === 410))) {
            walk.problems.push({ path: root.url, message: `no usable AI Catalog (${error.message}); the host's agent card is read instead` });
          }
        } else {
          firstError ??= error;
          walk.problems.push({ path: root.url, message: `the catalog could not be read: ${error.message}` });
        }
      }
    }
    if (this.#closed) return this.#core.state;
    if (readable === 0 && firstError !== undefined) {
      this.#reports = Object.freeze(walk.reports);
      return this.#core.fail(firstError);
    }
    const { chosen, problems } = selectVersions(walk.candidates, this.#s.versions);
    walk.problems.push(...problems);
    // One identifier from catalogs on two hosts: both are proposed (neither supersedes the other),
    // and the operator is told — one of them may be claiming the other's name.
    const firstBy = new Map<string, Candidate>();
    for (const c of chosen) {
      const first = firstBy.get(c.identifier);
      if (first === undefined) firstBy.set(c.identifier, c);
      else walk.problems.push({ path: c.where, message: `lists ${c.identifier}, which ${first.where} lists too, on another origin; both are proposed, neither supersedes the other` });
    }
    const inline = new Map<string, InlineCard>();
    const pins = new Map<string, CardPin>();
    const now = this.#s.clock.wallNow();
    for (const c of chosen) {
      try {
        const record = await this.#recordOf(c, inline, pins, walk.problems, now);
        if (record !== undefined) records.push(record);
      } catch (err) {
        // Whatever an entry holds, it costs that entry only.
        walk.problems.push({ path: c.where, message: `the entry ${c.identifier} could not be read (${err instanceof Error ? err.message : String(err)}); skipped` });
      }
    }
    if (this.#closed) return this.#core.state;
    // A catalog no longer reached (its parent dropped it, or the allowlist no longer names its
    // host) is forgotten, its failures too: the cache holds what one walk reads — including what
    // a durable store kept from an earlier process, or from another replica that led meanwhile.
    const known = new Set([...this.#attempted, ...(await this.#store.keys())]);
    for (const key of known) {
      if (walk.documents.has(key)) continue;
      this.#attempted.delete(key);
      await this.#cache.forgetKey(key);
    }
    for (const key of walk.documents) this.#attempted.add(key);
    this.#reports = Object.freeze(walk.reports.map((r) => Object.freeze(r)));
    this.#inline = inline;
    this.artifacts.publish(this.id, { inline, pins, freshen: (key) => this.#freshen(key) });
    return this.#core.succeed(records, bounded(walk.problems));
  }

  #alreadyRead(url: string, walk: Walk): boolean {
    try {
      return walk.documents.has(this.#cache.key(url));
    } catch {
      return false; // refused: #read reports it
    }
  }

  /** Reads one catalog document (cached) and walks its entries; throws when it has no usable copy. */
  async #read(url: string, depth: number, via: string, path: readonly string[], walk: Walk): Promise<void> {
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
    if (walk.documents.size >= this.#s.maxCatalogs) {
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
    for (const w of entry.warnings) walk.problems.push({ path: `${key} ${w.path}`, message: w.message });
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
      source: this.id,
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
      const where = `${url} ${e.path}`;
      if (walk.entries >= this.#s.maxEntries) {
        if (!walk.truncated) walk.problems.push({ path: where, message: `the catalogs list more than maxEntries=${this.#s.maxEntries} entries in all; the rest are not read` });
        walk.truncated = true;
        break;
      }
      walk.entries++;
      if (e.type === A2A_CARD_MEDIA_TYPE) {
        cards++;
        walk.candidates.push({ identifier: e.identifier, group: `${new URL(url).origin} ${e.identifier}`, version: e.version, updatedAtMs: e.updatedAtMs, where, entry: e, catalogUrl: url });
      } else if (e.type === AI_CATALOG_MEDIA_TYPE) {
        nested++;
        await this.#nested(e, url, depth, where, path, walk);
      } else ignored++;
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
      const read = readAiCatalogValue(e.data);
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
      await this.#read(target, depth + 1, where, path, walk);
    } catch (err) {
      walk.problems.push({ path: `${where}.url`, message: `the nested catalog ${target} could not be read: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  /** The record of a chosen card entry (and its inline card and pin), or undefined with a problem. */
  async #recordOf(c: Candidate, inline: Map<string, InlineCard>, pins: Map<string, CardPin>, problems: Problem[], now: number): Promise<EndpointRecord | undefined> {
    const { entry: e } = c;
    let verdict = this.#verdicts.get(e);
    if (verdict === undefined) {
      verdict = await judgeTrustManifest(e, { signatures: this.#s.signatures, now, catalogUrl: c.catalogUrl });
      if (e.trustManifest?.['expiresAt'] === undefined) this.#verdicts.set(e, verdict);
    }
    if (verdict.kind === 'refused') {
      problems.push({ path: `${c.catalogUrl} ${verdict.problem.path}`, message: `${verdict.problem.message}; the entry ${e.identifier} is refused` });
      return undefined;
    }
    if (verdict.kind !== 'pinned' && verdict.note !== undefined) problems.push({ path: `${c.catalogUrl} ${verdict.note.path}`, message: verdict.note.message });
    let baseUrl: string;
    if (e.data !== undefined) {
      if (typeof e.data !== 'object' || e.data === null || Array.isArray(e.data)) {
        problems.push({ path: `${c.where}.data`, message: `an inline A2A card must be a JSON object, got ${describe(e.data)}; skipped` });
        return undefined;
      }
      let card = this.#inlineCards.get(e);
      if (card === undefined) {
        const bytes = Buffer.from(canonicalJson(e.data), 'utf8');
        card = { bytes, sha256: sha256Hex(bytes), catalog: c.catalogUrl.split('#')[0]! };
        this.#inlineCards.set(e, card);
      }
      baseUrl = inlineCardKey(c.catalogUrl.split('#')[0]!, e.identifier);
      const key = this.#s.hostPolicy.normalizeEndpoint(baseUrl);
      if (inline.has(key)) {
        // Two identifiers that one key cannot tell apart (`a b` and `a%20b`): neither is trusted to be the other.
        problems.push({ path: c.where, message: `the inline card of ${e.identifier} has the same key as another entry's (${key}); skipped` });
        return undefined;
      }
      inline.set(key, card);
    } else {
      let resolved: string;
      try {
        resolved = new URL(e.url!, c.catalogUrl).href;
      } catch {
        problems.push({ path: `${c.where}.url`, message: `${describe(e.url)} is not a URL, even relative to ${c.catalogUrl}; skipped` });
        return undefined;
      }
      const why = impossibleUrl(resolved);
      if (why !== undefined) {
        problems.push({ path: `${c.where}.url`, message: `${why}; skipped` });
        return undefined;
      }
      baseUrl = catalogCardUrl(resolved);
    }
    if (verdict.kind === 'pinned') {
      try {
        pins.set(this.#s.hostPolicy.normalizeEndpoint(baseUrl), { sha256: verdict.pin.sha256, from: verdict.pin.from });
      } catch {
        // Not allowlisted: the resolver refuses the record, so there is nothing to pin.
      }
    }
    const metadata: Record<string, string> = { catalog: c.catalogUrl, entry: e.path, identifier: e.identifier };
    if (e.version !== undefined) metadata['version'] = e.version;
    if (e.displayName !== undefined) metadata['displayName'] = e.displayName;
    if (e.description !== undefined) metadata['description'] = e.description;
    if (e.tags !== undefined && e.tags.length > 0) metadata['tags'] = e.tags.join(',');
    if (verdict.kind === 'pinned') metadata['pinnedSha256'] = verdict.pin.sha256;
    return { name: trailingSegment(e.identifier), baseUrl, source: this.id, metadata };
  }

  /**
   * Before an inline card is answered: its catalog is revalidated when it is due (through a
   * refresh, single-flight), then judged: good when its last read succeeded, fresh for as long
   * as it is.
   */
  async #freshen(key: string): Promise<{ ok: boolean; freshMs: number }> {
    const doc = this.#inline.get(key)?.catalog;
    if (doc === undefined) return { ok: false, freshMs: 0 };
    if (this.#cache.fresh(doc) === undefined && !this.#closed && (await this.#due(doc))) await this.refresh();
    const entry = await this.#cache.peek(doc);
    if (entry === undefined || entry.stale || !entry.usable) return { ok: false, freshMs: 0 };
    return { ok: true, freshMs: Math.max(0, entry.expiresAt - this.#s.clock.now()) };
  }

  /** Whether reading a catalog now would make a request (it is not backing off after a failure). */
  async #due(doc: string): Promise<boolean> {
    const now = this.#s.clock.now();
    const failed = this.#cache.lastFailure(doc);
    if (failed !== undefined) return failed.nextAttemptAt <= now;
    const entry = await this.#cache.peek(doc);
    return entry?.nextAttemptAt === undefined || entry.nextAttemptAt <= now;
  }
}

/**
 * Deletes from a shared catalog store (`StateStore.catalogs`) the entries under none of
 * `prefixes` (the {@link AiCatalogSource.storePrefix} of the sources configured now): those of a
 * source removed from the configuration, or written under acceptance rules no longer in force.
 * Returns how many were deleted.
 *
 * @example
 * await pruneCatalogStore(state.catalogs, [source.storePrefix]);
 */
export async function pruneCatalogStore(store: CardStore<CatalogEntry>, prefixes: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const key of [...(await store.keys())]) {
    if (prefixes.some((p) => key.startsWith(p))) continue;
    await store.delete(key);
    deleted++;
  }
  return deleted;
}

/** What decides whether a catalog document is accepted, as a short digest (see {@link AiCatalogSource.storePrefix}). */
function acceptanceDigest(s: Settings): string {
  const { mode = 'if-present', keys = [], algorithms = null, allowedJku = [] } = s.signatures;
  const trust = keys.map((k) => ({ kid: k.kid, jwk: canonicalJson(k.jwk), origins: k.origins ?? null }));
  const { maxBytes = null, maxEntries } = readerLimits(s);
  return sha256Hex(JSON.stringify({ mode, trust, algorithms, allowedJku, maxBytes, maxEntries })).slice(0, 16);
}

/** The bounds one catalog document is read under. It may list more than a walk reads (the walk stops at maxEntries with a problem). */
function readerLimits(s: Settings): { maxBytes?: number; maxEntries: number } {
  return { ...(s.maxBytes !== undefined && { maxBytes: s.maxBytes }), maxEntries: Math.max(s.maxEntries, DEFAULT_CATALOG_LIMITS.maxEntries) };
}

/** The catalog cache's content: a catalog document, its signature checked. */
function catalogContent(signatures: SignatureOptions, limits: { maxBytes?: number; maxEntries: number }): CacheContent<CachedAiCatalog, string> {
  return {
    async check(body, url): Promise<AcceptedContent<CachedAiCatalog, string> | { ok: false; error: DiscoveryError }> {
      // The fetcher already bounded the bytes (its maxBodyBytes); the source's own bound, when it has one, applies too.
      const read = readAiCatalog(body, { maxBytes: limits.maxBytes ?? body.byteLength, maxEntries: limits.maxEntries } satisfies CatalogLimits);
      if (!read.ok) return { ok: false, error: documentError(read.code, url, read.problems, 'is not a usable AI Catalog') };
      const signature = await verifyDetachedSignature(read.catalog.raw, { ...signatures, origin: url });
      if (!signature.ok) {
        const problems = signature.problems.length > 0 ? signature.problems : [{ path: 'signature', message: 'the catalog is not signed, and signatures are required for it' }];
        return { ok: false, error: documentError(signature.status === 'unsigned' ? 'ERR_SIGNATURE_MISSING' : 'ERR_SIGNATURE_INVALID', url, problems, 'is refused by its signature check', 'signature') };
      }
      let canonical: string;
      try {
        canonical = canonicalJson(read.catalog.raw);
      } catch (err) {
        // A number JSON cannot hold (1e400) or another value RFC 8785 cannot write.
        return { ok: false, error: documentError('ERR_CARD_MALFORMED', url, [{ path: '$', message: `has no RFC 8785 form: ${err instanceof Error ? err.message : String(err)}` }], 'is not a usable AI Catalog') };
      }
      // Kept without its raw object (the cache holds the bytes): a third less to hold and to store.
      const { raw: _raw, ...document } = read.catalog;
      return {
        ok: true,
        card: Object.freeze(document),
        protocolVersion: read.catalog.specVersion,
        canonicalSha256: sha256Hex(canonical),
        text: read.text,
        warnings: [...read.warnings, ...signature.problems],
        signature: signature.status,
      };
    },
  };
}

function documentError(code: DiscoveryError['code'], url: string, problems: readonly Problem[], what: string, stage: 'source' | 'signature' = 'source'): DiscoveryError {
  const shown = problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return new DiscoveryError(code, `catalog ${url} ${what}: ${shown}${more}`, { url, stage, path: problems[0]?.path ?? '$', problems });
}

/**
 * The trailing segment of an identifier, after its last `:`, `/` or `#` (the specification's
 * display-name fallback, extended to fragments: `https://c.example/.well-known/ai-catalog.json#billing`
 * → `billing`).
 */
function trailingSegment(identifier: string): string {
  const trimmed = identifier.replace(/[:/#]+$/, '');
  const i = Math.max(trimmed.lastIndexOf(':'), trimmed.lastIndexOf('/'), trimmed.lastIndexOf('#'));
  const tail = trimmed.slice(i + 1);
  return tail === '' ? identifier : tail;
}

function isEntryError(value: unknown): value is EntryError {
  return typeof value === 'object' && value !== null && typeof (value as Partial<EntryError>).code === 'string' && typeof (value as Partial<EntryError>).message === 'string';
}

/** At most {@link MAX_PROBLEMS} problems, the last one saying how many more there were. */
function bounded(problems: Problem[]): Problem[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const more = problems.length - (MAX_PROBLEMS - 1);
  return [...problems.slice(0, MAX_PROBLEMS - 1), { path: problems[MAX_PROBLEMS - 1]!.path, message: `and ${more} more problems (only the first ${MAX_PROBLEMS - 1} are listed)` }];
}
