/**
 * The service's sources, in the order the configuration lists them: static agents, well-known
 * domains (or their AI Catalogs first), AI Catalogs, registries, ARD registries, DNS, Kubernetes, then extra sources.
 *
 * Each configured source has a key: its kind and its settings (with what it reads besides them:
 * the trust keys of an AI Catalog, the cache timings). A reload builds only the sources whose key
 * is new and keeps the running objects of the others ({@link ServiceSources.next}), so a source
 * whose settings did not change keeps its state, its schedule and its connections.
 */
import { aiCatalogSource, ardSource, createDnsResolver, dnsSource, googleAgentRegistryAdapter, kubernetesSource, registrySource, staticSource, wellKnownSource } from 'a2a-discovery';
import { DEFAULT_CATALOG_LIMITS } from 'a2a-discovery/internal';
import { ARD_SOURCE_DEFAULTS, GOOGLE_AGENT_REGISTRY_DEFAULTS } from 'a2a-discovery/config';
import type { CardFetcher, Clock, EventStream, CatalogArtifacts, Source } from 'a2a-discovery';
import type { AiCatalogSource } from 'a2a-discovery/internal';
import type { StateStore } from '@a2a-discovery/store';
import type { ServiceFetchers } from './service-fetchers.js';
import type { ServiceOptions } from './service-options.js';

type SourceDeps = { fetchers: ServiceFetchers; artifacts: CatalogArtifacts; store: StateStore; events: EventStream; clock: Clock };

/** One configured source: its key, and how to build it (with the fetcher it owns, if any). */
interface SourcePlan {
  readonly key: string;
  readonly build: () => { source: Source; fetcher?: CardFetcher };
}

/** The running sources, each with the key it was built from. */
export class ServiceSources {
  readonly #deps: SourceDeps;
  /** Running configured sources by key. */
  #byKey = new Map<string, Source>();
  readonly #fetchers = new Map<Source, CardFetcher>();
  /** Sources given as objects (not configured): kept as they are by every reload. */
  readonly #extras: readonly Source[];
  #sources: Source[] = [];

  constructor(o: ServiceOptions, deps: SourceDeps) {
    this.#deps = deps;
    this.#extras = o.extraSources ?? [];
    this.#sources = this.#take(plansOf(o, deps));
  }

  /** The sources in priority order (built, not started: the loop starts them). */
  get sources(): Source[] {
    return this.#sources;
  }

  /** The state-store prefixes of the AI Catalog sources now (stored documents under others are dropped). */
  catalogPrefixes(): string[] {
    return this.catalogSources().map((s) => s.storePrefix);
  }

  /** The AI Catalog sources now (the registries they announce are federated). */
  catalogSources(): AiCatalogSource[] {
    return this.#sources.filter((s): s is AiCatalogSource => s.kind === 'ai-catalog' && typeof (s as Partial<AiCatalogSource>).registries === 'function');
  }

  /**
   * The sources `next` configures: the running object for every key that stays, a new one for
   * each new key; extra sources stay. Call {@link released} with the sources the loop closed.
   */
  next(next: ServiceOptions): Source[] {
    this.#sources = this.#take(plansOf(next, this.#deps));
    return this.#sources;
  }

  /** Closes the fetchers of sources no longer running (after the loop closed them). */
  async released(): Promise<void> {
    const running = new Set(this.#sources);
    const gone = [...this.#fetchers].filter(([s]) => !running.has(s));
    for (const [s] of gone) this.#fetchers.delete(s);
    await Promise.allSettled(gone.map(([, f]) => this.#deps.fetchers.release(f)));
  }

  #take(plans: readonly SourcePlan[]): Source[] {
    const byKey = new Map<string, Source>();
    for (const plan of plans) {
      let source = this.#byKey.get(plan.key);
      if (source === undefined) {
        const built = plan.build();
        source = built.source;
        if (built.fetcher !== undefined) this.#fetchers.set(source, built.fetcher);
      }
      byKey.set(plan.key, source);
    }
    this.#byKey = byKey;
    return [...byKey.values(), ...this.#extras];
  }
}

/** The configured sources' plans, in order; no I/O. */
function plansOf(o: ServiceOptions, p: SourceDeps): SourcePlan[] {
  const { fetchers, events, clock } = p;
  const plans: SourcePlan[] = [];
  const plan = (kind: string, settings: unknown, build: SourcePlan['build']) => plans.push({ key: `${kind} ${keyOf(settings)}`, build });
  const staticAgents = o.static;
  if (staticAgents && staticAgents.length > 0) plan('static', staticAgents, () => ({ source: staticSource({ agents: staticAgents }) }));
  // AI Catalog documents are larger than cards: their own fetchers, bounded by each source's maxBytes.
  const cacheTimings = pick(o.cache, ['defaultTtlMs', 'minTtlMs', 'maxTtlMs', 'maxStaleMs', 'backoffBaseMs', 'backoffMaxMs']);
  const catalogPlan = (c: NonNullable<ServiceOptions['aiCatalogs']>[number]) => {
    const maxBytes = c.maxBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes;
    const { signatures: mode, ...rest } = c;
    const signatures = { ...o.signatures, mode: mode ?? 'if-present' };
    plan('ai-catalog', [c, signatures, cacheTimings], () => {
      const fetcher = fetchers.catalogs(maxBytes);
      const source = aiCatalogSource({
        ...rest,
        maxBytes,
        fetcher,
        hostPolicy: fetchers.policy,
        artifacts: p.artifacts,
        signatures,
        // Catalog documents survive a restart in the state store (each source under its own prefix).
        store: p.store.catalogs,
        cache: { ...cacheTimings },
        events,
        clock,
      });
      return { source, fetcher };
    });
  };
  const wellKnown = o.wellKnown;
  if (wellKnown?.catalogFirst === true) catalogPlan({ id: wellKnown.id, domains: wellKnown.domains, ...(wellKnown.pollIntervalMs !== undefined && { pollIntervalMs: wellKnown.pollIntervalMs }) });
  else if (wellKnown) plan('well-known', wellKnown, () => ({ source: wellKnownSource(wellKnown) }));
  for (const c of o.aiCatalogs ?? []) catalogPlan(c);
  for (const r of o.registries ?? []) {
    const { registry, ...rest } = r;
    if (registry === undefined) plan('registry', r, () => ({ source: registrySource({ ...rest, fetcher: fetchers.cards, events, clock }) }));
    else {
      // A Google Agent Registry's pages carry stored cards: a larger body cap, and the cards served inline to the cache.
      plan('registry', r, () => {
        const { kind: _kind, ...google } = registry;
        const fetcher = fetchers.catalogs(GOOGLE_AGENT_REGISTRY_DEFAULTS.maxBytes);
        return { source: registrySource({ ...rest, adapter: googleAgentRegistryAdapter(google), fetcher, artifacts: p.artifacts, events, clock }), fetcher };
      });
    }
  }
  // ARD pages are larger than cards: a fetcher of their own per source, bounded by its maxBytes.
  for (const a of o.ard ?? []) {
    plan('ard', a, () => {
      const { maxBytes, ...rest } = a;
      const fetcher = fetchers.catalogs(maxBytes ?? ARD_SOURCE_DEFAULTS.maxBytes);
      return { source: ardSource({ ...rest, fetcher, events, clock }), fetcher };
    });
  }
  // DNS sources publish their capsha256 pins into the table the card cache reads (with the AI Catalogs' pins).
  for (const d of o.dns ?? []) {
    plan('dns', d, () => {
      const { resolvers, timeoutMs, retries, backoffMs, udpPayloadSize, maxTcpBytes, maxRecords, ...rest } = d;
      const resolver = createDnsResolver({ servers: resolvers, ...pick({ timeoutMs, retries, backoffMs, udpPayloadSize, maxTcpBytes, maxRecords }, ['timeoutMs', 'retries', 'backoffMs', 'udpPayloadSize', 'maxTcpBytes', 'maxRecords']) });
      return { source: dnsSource({ ...rest, resolver, hostPolicy: fetchers.policy, artifacts: p.artifacts, events, clock }) };
    });
  }
  const kubernetes = o.kubernetes;
  if (kubernetes) plan('kubernetes', kubernetes, () => ({ source: kubernetesSource({ ...kubernetes, events, clock }) }));
  return plans;
}

/** Ids of the objects a key cannot spell (class instances, functions: an injected client): the same object, the same id. */
const objectIds = new WeakMap<object, number>();
let nextObjectId = 0;

/** A source's settings as a key: plain data by value, anything else by identity. */
function keyOf(settings: unknown): string {
  return JSON.stringify(settings, (_k, v: unknown) => {
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null || Array.isArray(v)) return v;
    const proto = Object.getPrototypeOf(v) as unknown;
    if (typeof v === 'object' && (proto === Object.prototype || proto === null)) return v;
    let id = objectIds.get(v);
    if (id === undefined) objectIds.set(v, (id = nextObjectId++));
    return `#object ${id}`;
  });
}

/** The named fields of an optional object that are set. */
function pick<T extends object, K extends keyof T>(from: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  if (from !== undefined) for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}
