/**
 * One AI Catalog source at work: each refresh requests the configured catalogs that are due
 * together, walks the catalog tree ({@link CatalogWalker}), falls back to a host's agent card when
 * it has no usable catalog, chooses one version per identifier, makes the records
 * ({@link EntryRecords}), forgets the catalogs no walk reaches any more, and publishes the inline
 * cards and pins the card cache reads ({@link CatalogArtifacts}). An inline card asked for after
 * its catalog expired first revalidates that catalog.
 *
 * @module
 */
import type { CardCacheOptions, CardStore } from '../cache/index.js';
import { CardCache, MemoryCardStore, prefixedStore } from '../cache/index.js';
import type { SignatureOptions } from '../card/index.js';
import type { CachedAiCatalog } from '../catalog/index.js';
import { AI_CATALOG_MEDIA_TYPE, selectVersions } from '../catalog/index.js';
import { Pacer } from '../catalog/paced.js';
import type { Clock, Random } from '../clock/index.js';
import { toDiscoveryError, type DiscoveryError, type Problem } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { CardFetcher, HostPolicy } from '../fetch/index.js';
import type { CardPin, CatalogArtifacts, InlineCard } from './catalog-artifacts.js';
import type { CatalogEntry } from './catalog-documents.js';
import { acceptanceDigest, catalogContent, readerLimits } from './catalog-documents.js';
import { EntryRecords } from './catalog-records.js';
import type { AnnouncedRegistry, Candidate, CatalogReport, Walk } from './catalog-walk.js';
import { CatalogWalker } from './catalog-walk.js';
import { type AnnouncedCatalog, type CatalogDiscovery, describeWay, discoverCatalog } from './catalog-announcements.js';
import { PeriodicSource, type Listing } from './periodic-source.js';
import type { EndpointRecord } from './types.js';

/** Hosts asked at the same time for a catalog they announce (each asks at most two requests). */
const DISCOVERY_CONCURRENCY = 8;

/** Problems kept per refresh (each new one is an alert): a catalog with thousands of bad entries is summarized. */
const MAX_PROBLEMS = 100;

/** A configured catalog. */
export interface CatalogRoot {
  /** The catalog URL as configured (fragment dropped). */
  url: string;
  /**
   * For a host: its predecessor well-known catalog (`/.well-known/ai-catalog.json`), read when
   * `url` (`/.well-known/ard.json`, ARD 0.91) is absent (404/410).
   */
  fallback?: string;
  /** For a host probed at its well-known catalog: the host, proposed by itself when it has none. */
  domain?: string;
}

/** The options of a source, checked and completed (see `aiCatalogSource`). */
export interface CatalogSourceSettings {
  id: string;
  roots: CatalogRoot[];
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
  cache: Pick<CardCacheOptions, 'defaultTtlMs' | 'minTtlMs' | 'maxTtlMs' | 'maxStaleMs' | 'backoffBaseMs' | 'backoffMaxMs'>;
  store: CardStore<CatalogEntry> | undefined;
  events: EventStream | undefined;
  clock: Clock;
  random: Random | undefined;
}

/** The source `aiCatalogSource` returns. */
export class CatalogSource extends PeriodicSource {
  override readonly kind = 'ai-catalog' as const;
  readonly artifacts: CatalogArtifacts;
  readonly storePrefix: string;
  readonly #s: CatalogSourceSettings;
  readonly #cache: CardCache<CachedAiCatalog, string>;
  readonly #walker: CatalogWalker;
  readonly #records: EntryRecords;
  #reports: readonly CatalogReport[] = Object.freeze([]);
  #registries: readonly AnnouncedRegistry[] = Object.freeze([]);
  /** Every catalog key this source has read (or tried to): what a walk no longer reaches is forgotten. */
  readonly #attempted = new Set<string>();
  /** The catalog cache's store: this source's view of a shared one, or its own memory. */
  readonly #store: CardStore<CatalogEntry>;
  /** The inline cards of the last refresh, by key (each knows the catalog that carries it). */
  #inline: ReadonlyMap<string, InlineCard> = new Map();

  constructor(settings: CatalogSourceSettings) {
    // Never rejects for what a catalog holds: an unexpected failure keeps the last good list.
    super({ id: settings.id, kind: 'ai-catalog', pollIntervalMs: settings.pollIntervalMs, closedReason: 'the AI Catalog source was closed', failure: { code: 'ERR_INTERNAL' }, events: settings.events, clock: settings.clock });
    this.#s = settings;
    this.artifacts = settings.artifacts;
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
    this.#walker = new CatalogWalker(this.#cache, settings);
    this.#records = new EntryRecords(settings);
  }

  catalogs(): readonly CatalogReport[] {
    return this.#reports;
  }

  registries(): readonly AnnouncedRegistry[] {
    return this.#registries;
  }

  protected override async released(): Promise<void> {
    await this.#cache.close();
    this.artifacts.withdraw(this.id);
  }

  protected async read(): Promise<Listing | undefined> {
    const walk: Walk = { candidates: [], problems: [], reports: [], documents: new Set(), absent: new Set(), prefetched: new Map(), entries: 0, truncated: false, pacer: new Pacer(), registries: [] };
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
        // A host without `ard.json`: its predecessor is asked as soon as that is known, still together with the other hosts.
        const fallback = root.fallback;
        if (fallback !== undefined) {
          void p.then(
            (entry) => !entry.usable && absentStatus(entry.lastError?.status) && this.#prefetch(fallback, walk),
            (err: unknown) => absentStatus(toDiscoveryError(err, 'ERR_FETCH_NETWORK').status) && this.#prefetch(fallback, walk),
          );
        }
      }
    }
    const records: EndpointRecord[] = [];
    /** The candidates of catalogs a host announced (not at its well-known URI): how each was found. */
    const foundBy = new Map<Candidate, AnnouncedCatalog>();
    /** Hosts with no catalog at their well-known URI (404/410): asked for one they announce, after the configured roots. */
    const absent: string[] = [];
    let readable = 0;
    let firstError: DiscoveryError | undefined;
    for (const root of this.#s.roots) {
      try {
        // A configured catalog another one nests was read with it: once is enough.
        if (this.#walker.alreadyRead(root.url, walk)) {
          readable++;
          continue;
        }
        await this.#readRoot(root, walk);
        readable++;
      } catch (err) {
        const error = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: root.fallback ?? root.url, stage: 'source' });
        if (root.domain !== undefined) {
          readable++;
          // No catalog at the well-known URI: the host may announce one elsewhere (Link header, HTML <link>, robots.txt).
          if (error.code === 'ERR_FETCH_STATUS' && absentStatus(error.status)) {
            absent.push(root.domain);
            continue;
          }
          // A host without a usable catalog is read as the well-known source reads it.
          records.push(this.#hostRecord(root.domain));
          walk.problems.push({ path: root.url, message: `no usable AI Catalog (${error.message}); the host's agent card is read instead` });
        } else {
          firstError ??= error;
          walk.problems.push({ path: root.url, message: `the catalog could not be read: ${error.message}` });
        }
      }
    }
    // The hosts are asked together (at most DISCOVERY_CONCURRENCY at a time); what they announce is read in their order.
    const discoveries: CatalogDiscovery[] = new Array<CatalogDiscovery>(absent.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < absent.length && !this.closed) {
        const i = next++;
        discoveries[i] = await discoverCatalog(`https://${absent[i]!}`, this.#s.fetcher, this.#s.hostPolicy);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DISCOVERY_CONCURRENCY, absent.length) }, worker));
    for (const [i, domain] of absent.entries()) {
      if (this.closed) return undefined;
      if (!(await this.#announced(discoveries[i]!, walk, foundBy))) records.push(this.#hostRecord(domain));
    }
    if (this.closed) return undefined;
    if (readable === 0 && firstError !== undefined) {
      this.#reports = Object.freeze(walk.reports);
      throw firstError;
    }
    await walk.pacer.tick();
    const { chosen, problems } = selectVersions(walk.candidates, this.#s.versions);
    walk.problems.push(...problems);
    // One identifier from catalogs on two hosts: both are proposed (neither supersedes the other),
    // and the operator is told — one of them may be claiming the other's name.
    const firstBy = new Map<string, Candidate>();
    for (const c of chosen) {
      await walk.pacer.tick();
      const first = firstBy.get(c.identifier);
      if (first === undefined) firstBy.set(c.identifier, c);
      else walk.problems.push({ path: c.where, message: `lists ${c.identifier}, which ${first.where} lists too, on another origin; both are proposed, neither supersedes the other` });
    }
    const inline = new Map<string, InlineCard>();
    const pins = new Map<string, CardPin>();
    const now = this.#s.clock.wallNow();
    for (const c of chosen) {
      await walk.pacer.tick();
      try {
        const record = await this.#records.recordOf(c, inline, pins, walk.problems, now);
        const announced = foundBy.get(c);
        if (record !== undefined) records.push(announced === undefined ? record : { ...record, metadata: { ...record.metadata, catalogFoundBy: announced.foundBy, catalogAnnouncedBy: announced.announcedBy } });
      } catch (err) {
        // Whatever an entry holds, it costs that entry only.
        walk.problems.push({ path: c.where, message: `the entry ${c.identifier} could not be read (${err instanceof Error ? err.message : String(err)}); skipped` });
      }
    }
    if (this.closed) return undefined;
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
    this.#registries = Object.freeze(walk.registries.map((r) => Object.freeze(r)));
    this.#inline = inline;
    return { records, problems: bounded(walk.problems), commit: () => this.artifacts.publish(this.id, { inline, pins, freshen: (key) => this.#freshen(key) }) };
  }

  /**
   * Reads a configured root; for a host, `ard.json` and, when that is absent (404/410), its
   * predecessor `ai-catalog.json` (whose failure is then the one thrown). An `ard.json` that fails
   * otherwise (a 5xx, a document refused) is a problem when the predecessor reads, and the error
   * thrown when it does not. The absent `ard.json` stays in the walk's documents, so its cached 404
   * backs off instead of being asked at each refresh.
   */
  async #readRoot(root: CatalogRoot, walk: Walk): Promise<void> {
    try {
      await this.#walker.read(root.url, 1, 'root', [], walk);
    } catch (err) {
      const error = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: root.url, stage: 'source' });
      if (root.fallback === undefined) throw err;
      if (this.#walker.alreadyRead(root.fallback, walk)) return;
      if (error.code === 'ERR_FETCH_STATUS' && absentStatus(error.status)) {
        if (this.#walker.alreadyRead(root.url, walk)) walk.absent?.add(this.#cache.key(root.url));
        return this.#walker.read(root.fallback, 1, 'root', [], walk);
      }
      try {
        await this.#walker.read(root.fallback, 1, 'root', [], walk);
      } catch {
        throw err;
      }
      walk.problems.push({ path: root.url, message: `the ARD manifest could not be read (${error.message}); its predecessor ${root.fallback} is read instead` });
    }
  }

  /** Requests `url` now, for the walk to read later (the predecessor catalog of a host without `ard.json`). */
  #prefetch(url: string, walk: Walk): void {
    try {
      if (this.closed || walk.prefetched.has(url) || this.#cache.fresh(url) !== undefined) return;
      const p = this.#cache.get(url);
      p.catch(() => undefined);
      walk.prefetched.set(url, p);
    } catch {
      // Refused by the allowlist: the walk reports it when it reads the URL.
    }
  }

  /** A host without a usable catalog, proposed as the well-known source proposes it (its agent card). */
  #hostRecord(domain: string): EndpointRecord {
    return { name: domain, baseUrl: `https://${domain}/`, source: this.id, metadata: { domain } };
  }

  /**
   * A host without a well-known catalog: the catalog it announces (discoverCatalog), read as a
   * root, its report and its candidates marked with how it was found. False when it announces
   * none the allowlist admits, or none of those reads (each failure is a problem).
   */
  async #announced({ admitted, notes }: CatalogDiscovery, walk: Walk, foundBy: Map<Candidate, AnnouncedCatalog>): Promise<boolean> {
    walk.problems.push(...notes);
    for (const a of admitted) {
      if (this.closed) return false;
      if (this.#walker.alreadyRead(a.url, walk)) return true;
      const reportAt = walk.reports.length;
      const candidatesAt = walk.candidates.length;
      try {
        await this.#walker.read(a.url, 1, 'root', [], walk);
      } catch (err) {
        const e = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: a.url, stage: 'source' });
        walk.problems.push({ path: a.announcedBy, message: `${describeWay(a.foundBy, a.rel)} announces the catalog ${a.url}, which could not be read: ${e.message}` });
        const failed = walk.reports[reportAt];
        if (failed !== undefined) Object.assign(failed, { foundBy: a.foundBy, announcedBy: a.announcedBy });
        continue;
      }
      const report = walk.reports[reportAt];
      if (report !== undefined) Object.assign(report, { foundBy: a.foundBy, announcedBy: a.announcedBy });
      for (const c of walk.candidates.slice(candidatesAt)) foundBy.set(c, a);
      return true;
    }
    return false;
  }

  /**
   * Before an inline card is answered: its catalog is revalidated when it is due (through a
   * refresh, single-flight), then judged: good when its last read succeeded, fresh for as long
   * as it is.
   */
  async #freshen(key: string): Promise<{ ok: boolean; freshMs: number }> {
    const doc = this.#inline.get(key)?.catalog;
    if (doc === undefined) return { ok: false, freshMs: 0 };
    if (this.#cache.fresh(doc) === undefined && !this.closed && (await this.#due(doc))) await this.refresh();
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

/** A status that says there is no catalog there (not that the host failed): 404, 410. */
function absentStatus(status: number | undefined): boolean {
  return status === 404 || status === 410;
}

/** At most {@link MAX_PROBLEMS} problems, the last one saying how many more there were. */
function bounded(problems: Problem[]): Problem[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const more = problems.length - (MAX_PROBLEMS - 1);
  return [...problems.slice(0, MAX_PROBLEMS - 1), { path: problems[MAX_PROBLEMS - 1]!.path, message: `and ${more} more problems (only the first ${MAX_PROBLEMS - 1} are listed)` }];
}
