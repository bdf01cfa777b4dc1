/**
 * Probing: what a client would decide about a card, an endpoint or a catalog, stage by stage,
 * with the same policy, fetcher and checks discovery runs. `a2a-discovery probe` and the
 * service's inspector (`POST /api/inspect`) are its two users.
 *
 * @module
 */
export { probeCard, probeEndpoint } from './probe-endpoint.js';
export type { ProbeContentOptions, ProbeEndpointOptions } from './probe-endpoint.js';
export { DEFAULT_PROBE_CONCURRENCY, DEFAULT_PROBE_ENTRIES, probeCatalog } from './probe-catalog.js';
export type { CatalogEntryReport, CatalogReport, ProbeCatalogOptions } from './probe-catalog.js';
export { isAiCatalogDocument, probeAiCatalogDocument, probeAiCatalogUrl } from './probe-ai-catalog.js';
export type { ProbeAiCatalogOptions } from './probe-ai-catalog.js';
export type { ChosenInterface, DescribedScheme, SecurityRequirementsResult } from '../card/index.js';
export { identifierName } from '../rules/lookalike.js';
export type { Lookalike } from '../rules/lookalike.js';
export { renderAiCatalogProbe } from './ai-catalog-report.js';
export type { AiCatalogDocumentReport, AiCatalogEntryReport, AiCatalogReport, CatalogEntryVerdict, CatalogStage } from './ai-catalog-report.js';
export { probeTarget } from './probe-target.js';
export { probeDns, renderDnsProbe } from './probe-dns.js';
export type { DnsProbeRecord, DnsProbeReport, ProbeDnsOptions } from './probe-dns.js';
export type { ProbeTargetResult } from './probe-target.js';
export { refusedReport, renderProbe, reportFromCheck } from './probe-report.js';
export type { ProbeAccess, ProbeHttp, ProbeReport, ProbeSecurity, ProbeSelection, ProbeSkill, ProbeStage } from './probe-report.js';
