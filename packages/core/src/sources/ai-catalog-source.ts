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
 * This module holds the options and the factory; the source at work is in ai-catalog-refresh.ts,
 * its walk over a catalog tree in catalog-walk.ts, entry records in catalog-records.ts and the
 * catalog cache's content and store rules in catalog-documents.ts.
 *
 * @module
 */
import { z } from 'zod';
import type { CardStore } from '../cache/index.js';
import type { SignatureOptions } from '../card/index.js';
import { CATALOG_WELL_KNOWN_PATHS, canonicalIdentifier } from '../catalog/index.js';
import type { Clock, Random } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import type { CardFetcher, HostPolicy } from '../fetch/index.js';
import type { CatalogRoot } from './ai-catalog-refresh.js';
import { CATALOG_DEFAULTS, SOURCE_DEFAULTS } from '../rules/defaults.js';
import { normalizeDomain } from '../rules/domains.js';
import { impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import { CatalogSource } from './ai-catalog-refresh.js';
import { CatalogArtifacts } from './catalog-artifacts.js';
import type { CatalogEntry } from './catalog-documents.js';
import type { AnnouncedRegistry, CatalogReport } from './catalog-walk.js';
import { optional, positiveInt, readOptions, sourceId, stringRecord, withMethod } from './source-options.js';
import type { Source } from './types.js';

export type { AnnouncedRegistry, CatalogReport } from './catalog-walk.js';
export { pruneCatalogStore } from './catalog-documents.js';

/** Inputs of {@link aiCatalogSource}. Durations are milliseconds. */
export interface AiCatalogSourceOptions {
  /** Source id, e.g. `'catalogs'`. */
  id: string;
  /** Catalog URLs, read as given (any path; the well-known ones are `https://<host>/.well-known/ard.json` and, before ARD 0.91, `…/ai-catalog.json`). */
  catalogs?: readonly string[];
  /**
   * Hosts (`host[:port]`, as the well-known source takes them): for each, the catalog at
   * `https://<host>/.well-known/ard.json` (ARD 0.91) is read first, then, when the host has none
   * there (404/410), its predecessor `https://<host>/.well-known/ai-catalog.json`, then what the
   * host announces (`Link: rel="ard"`, then `rel="ai-catalog"`, an HTML `<link>`, a robots.txt
   * `Agentmap:` line); a host without a usable catalog is proposed as `https://<host>/` (its
   * `agent-card.json`), as the well-known source would.
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

/** The AI Catalog source, with its catalog report. */
export interface AiCatalogSource extends Source {
  /** The table the card cache must share (inline cards, pins). */
  readonly artifacts: CatalogArtifacts;
  /** Every catalog document of the last refresh. */
  catalogs(): readonly CatalogReport[];
  /**
   * The registries (`application/ai-registry+json` entries with a `url`) the catalogs of the last
   * successful refresh announce, in walk order; their text is third-party data. Federation asks
   * them, each under the allowlist.
   */
  registries(): readonly AnnouncedRegistry[];
  /**
   * The prefix of this source's keys in a shared `store`: `<id> <digest of what decides whether a
   * document is accepted (signature mode, trust store, algorithms, jku list, document size and entry bounds)> `. A
   * configuration that accepts differently finds none of the entries an earlier one accepted.
   */
  readonly storePrefix: string;
}

/**
 * Creates an AI Catalog source. Pure: validates the options and does no I/O.
 *
 * Records: `name` = the trailing segment of the entry's identifier (after its last `:`, `/` or
 * `#`, the specification's display-name fallback), `baseUrl` = the card's URL (`#card` appended when
 * its path does not end in `.json`, so it is fetched exactly there) or, for inline `data`,
 * `<catalog URL>#card=<identifier>`; `metadata` = `{ catalog, entry, identifier, version?,
 * displayName?, description?, tags?, pinnedSha256? }` (third-party text, display only).
 * A host without a usable catalog: `{ name: <host>, baseUrl: https://<host>/, metadata: { domain } }`.
 * A record from a catalog the host announced (not at a well-known path) carries `catalogFoundBy`
 * (`link-header`, `html-link`, `robots-agentmap`) and `catalogAnnouncedBy`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const artifacts = new CatalogArtifacts();
 * const source = aiCatalogSource({ id: 'catalogs', catalogs: ['https://agents.example.com/.well-known/ai-catalog.json'], fetcher, hostPolicy: policy, artifacts });
 * const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy: policy });
 */
export function aiCatalogSource(options: AiCatalogSourceOptions): AiCatalogSource {
  const roots: CatalogRoot[] = [];
  const o = readOptions('AI Catalog source', AI_CATALOG_OPTIONS, options, (raw, add, refused) => {
    const seen = new Set<string>();
    const { catalogs = [], domains = [] } = raw as { catalogs?: unknown; domains?: unknown };
    if (Array.isArray(catalogs)) catalogs.forEach((item: unknown, i) => {
      const why = typeof item === 'string' ? impossibleUrl(item) : `must be a URL string, got ${describe(item)}`;
      if (why !== undefined) return add(`catalogs[${i}]`, why);
      const url = new URL(item as string);
      url.hash = '';
      if (seen.has(url.href)) return add(`catalogs[${i}]`, `duplicate catalog ${url.href}`);
      seen.add(url.href);
      roots.push({ url: url.href });
    });
    if (Array.isArray(domains)) domains.forEach((item: unknown, i) => {
      const host = normalizeDomain(item);
      if (typeof host !== 'string') return add(`domains[${i}]`, host.problem);
      // ARD 0.91: `/.well-known/ard.json` first, its predecessor `ai-catalog.json` when it has none.
      const [url, fallback] = CATALOG_WELL_KNOWN_PATHS.map((path) => `https://${host}${path}`) as [string, string];
      if (seen.has(url) || seen.has(fallback)) return add(`domains[${i}]`, `duplicate host ${host}`);
      seen.add(url);
      seen.add(fallback);
      roots.push({ url, fallback, domain: host });
    });
    const listed = Array.isArray(catalogs) && Array.isArray(domains) && roots.length === catalogs.length + domains.length;
    if (roots.length === 0 && listed && !refused.includes('id')) add('catalogs', 'give at least one catalog URL or one domain');
  });
  return new CatalogSource({
    id: o.id,
    roots,
    fetcher: o.fetcher,
    hostPolicy: o.hostPolicy,
    artifacts: o.artifacts ?? new CatalogArtifacts(),
    signatures: o.signatures ?? {},
    // Pins by identifier, as entries are read: `urn:ai:x` pins `urn:air:x`.
    versions: Object.fromEntries(Object.entries(o.versions ?? {}).map(([id, v]) => [canonicalIdentifier(id), v])),
    maxDepth: o.maxDepth ?? CATALOG_DEFAULTS.maxDepth,
    maxEntries: o.maxEntries ?? CATALOG_DEFAULTS.maxEntries,
    maxBytes: o.maxBytes,
    maxCatalogs: o.maxCatalogs ?? CATALOG_DEFAULTS.maxCatalogs,
    pollIntervalMs: o.pollIntervalMs ?? SOURCE_DEFAULTS.pollIntervalMs,
    cache: o.cache ?? {},
    store: o.store,
    events: o.events,
    clock: o.clock ?? systemClock,
    random: o.random,
  });
}

/** The options of {@link aiCatalogSource}, each with its sentence (the catalog URLs and hosts are read together, above: one may repeat the other). */
const AI_CATALOG_OPTIONS = {
  id: sourceId,
  catalogs: optional<readonly string[]>((v) => (Array.isArray(v) ? undefined : `must be an array of catalog URLs, got ${describe(v)}`)),
  domains: optional<readonly string[]>((v) => (Array.isArray(v) ? undefined : `must be an array of host names, got ${describe(v)}`)),
  fetcher: withMethod<CardFetcher>('fetch', 'a CardFetcher is required (createCardFetcher({ policy }))'),
  hostPolicy: withMethod<HostPolicy>('normalizeEndpoint', 'the HostPolicy (allowlist) is required'),
  versions: stringRecord('must be an object of identifier: version', (v) => (typeof v === 'string' && v !== '' ? undefined : `must be a version string, got ${describe(v)}`)),
  maxDepth: positiveInt,
  maxEntries: positiveInt,
  maxBytes: positiveInt,
  maxCatalogs: positiveInt,
  pollIntervalMs: positiveInt,
  artifacts: z.custom<CatalogArtifacts | undefined>(),
  signatures: z.custom<SignatureOptions | undefined>(),
  cache: z.custom<AiCatalogSourceOptions['cache']>(),
  store: z.custom<CardStore<CatalogEntry> | undefined>(),
  events: z.custom<EventStream | undefined>(),
  clock: z.custom<Clock | undefined>(),
  random: z.custom<Random | undefined>(),
};
