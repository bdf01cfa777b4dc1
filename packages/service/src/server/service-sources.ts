/**
 * The service's sources, in the order the configuration lists them: static agents, well-known
 * domains (or their AI Catalogs first), AI Catalogs, registries, ARD registries, DNS, Kubernetes, then extra sources.
 */
import { DEFAULT_CATALOG_LIMITS, aiCatalogSource, ardSource, createDnsResolver, dnsSource, googleAgentRegistryAdapter, kubernetesSource, registrySource, staticSource, wellKnownSource } from 'a2a-discovery';
import { ARD_SOURCE_DEFAULTS, GOOGLE_AGENT_REGISTRY_DEFAULTS } from 'a2a-discovery/config';
import type { Clock, EventStream, CatalogArtifacts, Source } from 'a2a-discovery';
import type { StateStore } from '@a2a-discovery/store';
import type { ServiceFetchers } from './service-fetchers.js';
import type { ServiceOptions } from './service-options.js';

export interface ServiceSources {
  readonly sources: Source[];
  /** The state-store prefixes of the AI Catalog sources (stored documents under others are dropped). */
  readonly catalogPrefixes: string[];
}

/** Builds the sources; no I/O until the loop reads them. */
export function buildSources(o: ServiceOptions, p: { fetchers: ServiceFetchers; artifacts: CatalogArtifacts; store: StateStore; events: EventStream; clock: Clock }): ServiceSources {
  const { fetchers, events, clock } = p;
  const sources: Source[] = [];
  const catalogPrefixes: string[] = [];
  if (o.static && o.static.length > 0) sources.push(staticSource({ agents: o.static }));
  // AI Catalog documents are larger than cards: their own fetchers, bounded by each source's maxBytes.
  const catalogSource = (c: NonNullable<ServiceOptions['aiCatalogs']>[number]): Source => {
    const maxBytes = c.maxBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes;
    const { signatures: mode, ...rest } = c;
    const source = aiCatalogSource({
      ...rest,
      maxBytes,
      fetcher: fetchers.catalogs(maxBytes),
      hostPolicy: fetchers.policy,
      artifacts: p.artifacts,
      signatures: { ...o.signatures, mode: mode ?? 'if-present' },
      // Catalog documents survive a restart in the state store (each source under its own prefix).
      store: p.store.catalogs,
      cache: { ...pick(o.cache, ['defaultTtlMs', 'minTtlMs', 'maxTtlMs', 'maxStaleMs', 'backoffBaseMs', 'backoffMaxMs']) },
      events,
      clock,
    });
    catalogPrefixes.push(source.storePrefix);
    return source;
  };
  if (o.wellKnown?.catalogFirst === true) sources.push(catalogSource({ id: o.wellKnown.id, domains: o.wellKnown.domains, ...(o.wellKnown.pollIntervalMs !== undefined && { pollIntervalMs: o.wellKnown.pollIntervalMs }) }));
  else if (o.wellKnown) sources.push(wellKnownSource(o.wellKnown));
  for (const c of o.aiCatalogs ?? []) sources.push(catalogSource(c));
  for (const { registry, ...r } of o.registries ?? []) {
    if (registry === undefined) sources.push(registrySource({ ...r, fetcher: fetchers.cards, events, clock }));
    else {
      // A Google Agent Registry's pages carry stored cards: a larger body cap, and the cards served inline to the cache.
      const { kind: _kind, ...google } = registry;
      const adapter = googleAgentRegistryAdapter(google);
      sources.push(registrySource({ ...r, adapter, fetcher: fetchers.catalogs(GOOGLE_AGENT_REGISTRY_DEFAULTS.maxBytes), artifacts: p.artifacts, events, clock }));
    }
  }
  // ARD pages are larger than cards: a fetcher of their own per source, bounded by its maxBytes.
  for (const { maxBytes, ...a } of o.ard ?? []) sources.push(ardSource({ ...a, fetcher: fetchers.catalogs(maxBytes ?? ARD_SOURCE_DEFAULTS.maxBytes), events, clock }));
  // DNS sources publish their capsha256 pins into the table the card cache reads (with the AI Catalogs' pins).
  for (const { resolvers, timeoutMs, retries, backoffMs, udpPayloadSize, maxTcpBytes, maxRecords, ...d } of o.dns ?? []) {
    const resolver = createDnsResolver({ servers: resolvers, ...pick({ timeoutMs, retries, backoffMs, udpPayloadSize, maxTcpBytes, maxRecords }, ['timeoutMs', 'retries', 'backoffMs', 'udpPayloadSize', 'maxTcpBytes', 'maxRecords']) });
    sources.push(dnsSource({ ...d, resolver, hostPolicy: fetchers.policy, artifacts: p.artifacts, events, clock }));
  }
  if (o.kubernetes) sources.push(kubernetesSource({ ...o.kubernetes, events, clock }));
  sources.push(...(o.extraSources ?? []));
  return { sources, catalogPrefixes };
}

/** The named fields of an optional object that are set. */
function pick<T extends object, K extends keyof T>(from: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  if (from !== undefined) for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}
