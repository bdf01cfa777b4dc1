/**
 * Discovery sources: where endpoint records come from. Static configuration, well-known domain
 * probing, AI Catalogs, an HTTP registry catalog and a Kubernetes label watch all implement {@link Source};
 * a failing source keeps its last good list and reports the error, it never empties the set by
 * itself. See docs/sources.md.
 *
 * @module
 */
export type { EndpointRecord, Source, SourceKind, SourceListener, SourceState } from './types.js';
export type { TransportOptions } from './transport-options.js';
export { staticSource } from './static-source.js';
export type { StaticAgentConfig, StaticSource, StaticSourceOptions } from './static-source.js';
export { wellKnownSource } from './well-known-source.js';
export type { WellKnownSourceOptions } from './well-known-source.js';
export { simpleCatalogAdapter } from './registry-adapter.js';
export type { RegistryAdapter, RegistryClientAdapter,   RegistryRead, RegistryTokenPage } from './registry-adapter.js';
export { googleAgentRegistryAdapter } from './google-agent-registry.js';
export type { GoogleAgentRegistryOptions } from './google-agent-registry.js';
export { recordFromEntry, registrySource } from './registry-source.js';
export type { RegistrySourceOptions } from './registry-source.js';
export { aiCatalogSource, pruneCatalogStore } from './ai-catalog-source.js';
export type { AiCatalogSource, AiCatalogSourceOptions, AnnouncedRegistry, CatalogReport } from './ai-catalog-source.js';
export { ardSource } from './ard-source.js';
export type {  ArdSourceOptions } from './ard-source.js';
export type { CatalogFoundBy, CatalogLinkRel } from './catalog-announcements.js';
export { dnsSource } from './dns-source.js';
export type {   DnsSourceOptions } from './dns-source.js';
export { createDnsResolver } from './dns-resolver.js';
export type {     DnsResolverOptions } from './dns-resolver.js';
export { CatalogArtifacts } from './catalog-artifacts.js';
export type { CatalogEntry } from './catalog-documents.js';
export { dnsAidZone, zoneComment } from './dns-zone.js';
export { DNS_AID_DEFAULT_TTL_SECONDS } from '../rules/dns-aid.js';
export type { DnsAidPublishedAgent,   DnsAidZoneResult } from './dns-zone.js';
export { kubernetesSource } from './kubernetes-source.js';
export type { KubernetesSourceOptions } from './kubernetes-source.js';
;
