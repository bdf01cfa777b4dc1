/**
 * a2a-discovery/internal: helpers that the sibling packages of this repository
 * (`@a2a-discovery/store`, `@a2a-discovery/service`) share with the core.
 *
 * NOT PUBLIC. This entry carries no semver promise: any name here may change or disappear in a
 * patch release. Applications use the root entry (`a2a-discovery`) and its documented subpaths;
 * the lint refuses this entry outside `packages/` (eslint.config.js).
 *
 * @module
 */
export { toDiscoveryError } from './errors.js';
export { formatPath } from './config/messages.js';
// The config entry's file and size helpers, without its YAML parser and schema (a command that reads no configuration loads neither).
export { readBoundedFile, FileReadError } from './rules/bounded-file.js';
export { cardSizeLimit } from './rules/limits.js';
export { occurrences } from './events/index.js';
export { activeTraceIds, INSTRUMENTATION_SCOPE, withSpan, withIncomingTraceContext, ATTR } from './telemetry/index.js';
export type { EventInput, AlertEvent, OpenAlert, ActionEvent, ConfigReloadEvent, RolloutEvent, ActionActor } from './events/index.js';
export { canonicalJson, deepFreeze } from './card/index.js';
export type { CardProtocolVersion } from './card/index.js';
export type { RangeOrigin, GuardedFetch, OriginBudgetStats, Resolver, PresentableScheme } from './fetch/index.js';
export { isLoopbackHost, originOf, secureOrLoopback, inRangeOrigin, looksLikeRangeOrigin, parseRangeOrigin, isCardUrl, isInlineCardKey, CATALOG_CARD_FRAGMENT, CARD_PATH, OriginBudget, createDeploymentFetch, createGuardedFetch, createOriginFetch, readBoundedStream, redactUrl } from './fetch/index.js';
export { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE, AI_CATALOG_SPEC_VERSION, AI_CATALOG_WELL_KNOWN_PATH, CATALOG_WELL_KNOWN_PATHS, AIR_URN_PREFIX, airIdentifier, relativeIdentifierProblem, DEFAULT_CATALOG_LIMITS, Pacer } from './catalog/index.js';
export { runPaced, runSteps } from './clock/pacer.js';
export { compareCodeUnits } from './text.js';
export { backoffDelay } from './rules/backoff.js';
export { frozenCopy } from './rules/frozen.js';
export { heldCardEntry } from './cache/cache-entries.js';
export { fileErrorReason, readSecretFile } from './rules/bounded-file.js';
export type { BackoffOptions } from './rules/backoff.js';
export { pruneCatalogStore, DNS_AID_DEFAULT_TTL_SECONDS, dnsAidZone, zoneComment } from './sources/index.js';
export type { AiCatalogSource, AnnouncedRegistry, CatalogReport, CatalogLinkRel, CatalogEntry, DnsAidPublishedAgent, DnsAidZoneResult } from './sources/index.js';
export type { SnapshotSummary } from './snapshot/index.js';
export type { LoopReconfiguration } from './loop/index.js';
export { AI_REGISTRY_MEDIA_TYPE, VERIFIED_EXTENSION } from './ard/wire.js';
export type { ArdChangesResponse, ArdError, ArdExploreResponse, ArdFederation, ArdFederationReport, ArdReferral, ArdSearchRequest, ArdSearchResponse, ArdSearchResult, ArdVerified } from './ard/wire.js';
export { ActiveCheck } from './health/index.js';
export type { ActiveCheckOptions, ActiveCheckResult, ActiveCheckErrorClass, ActiveCheckStats, ActiveCheckTarget } from './health/index.js';
