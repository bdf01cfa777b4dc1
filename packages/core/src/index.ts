/**
 * a2a-discovery: find A2A agents, admit only allowlisted hosts, keep their cards fresh with
 * real HTTP caching, and explain every decision.
 *
 * This entry exports the core (no server, no Kubernetes client). Everything is listed by name.
 *
 * @module
 */
export { DiscoveryError, isDiscoveryError, toDiscoveryError, failureOf } from './errors.js';
export type { DiscoveryErrorCode, DiscoveryErrorOptions, FailureClass, Problem, Stage } from './errors.js';

export { systemClock, systemRandom, seededRandom, VirtualClock } from './clock/index.js';
export type { Clock, Random, TimerHandle } from './clock/index.js';

export { EventStream, DISCOVERY_CHANNEL, occurrences } from './events/index.js';
// The active trace (a log line names it) and the instrumentation scope of our spans and instruments.
export { activeTraceIds, INSTRUMENTATION_SCOPE } from './telemetry/index.js';
export type {
  DiscoveryEvent,
  EventBase,
  EventInput,
  EventListener,
  CardOutcome,
  CardFetchEvent,
  CardResultEvent,
  CardBackoffEvent,
  AlertEvent,
  AlertResolvedEvent,
  EndpointEvent,
  HealthEvent,
  MatchEvent,
  SnapshotEvent,
  SessionEvent,
  TreeEvent,
  RoutingEvent,
  CatalogEvent,
  OpenAlert,
  ServiceStartedEvent,
  ReplicaLeaderEvent,
  ActionEvent,
  ConfigReloadEvent,
  ActionActor,
} from './events/index.js';

export {
  parseAgentCard,
  parseFailure,
  checkCard,
  toAdkCard,
  verifyCardSignatures,
  canonicalCardPayload,
  signCard,
  signatureFailure,
  signDetached,
  verifyDetachedSignature,
  canonicalMode,
  modesCover,
  effectiveModes,
  canonicalJson,
  canonicalCardSha256,
  deepFreeze,
  DEFAULT_JSON_LIMITS,
  preferredInterface,
  checkSecurityRequirements,
} from './card/index.js';
export type {
  ParseCardOptions,
  ParseCardResult,
  CardStage,
  CheckCardOptions,
  CheckCardResult,
  AgentCardModel,
  AgentInterfaceModel,
  AgentSkillModel,
  AgentCapabilitiesModel,
  AgentProviderModel,
  AgentExtensionModel,
  AgentCardSignatureModel,
  SecuritySchemeModel,
  SecurityRequirementModel,
  CardProtocolVersion,
  AdkAgentCard,
  AdkCardResult,
  SignatureMode,
  SignatureOptions,
  SignatureResult,
  TrustedKey,
  CanonicalForm,
  JsonLimits,
  UrlJudge,
  CardUrl,
  CardUrlRole,
  InterfacePolicyOptions,
  ChosenInterface,
  PreferredInterfaceOptions,
  CardAccess,
  SecurityRequirementsResult,
  DescribedScheme,
} from './card/index.js';

export type { RangeOrigin } from './fetch/index.js';
export { HostPolicy, isLoopbackHost, originOf, secureOrLoopback, inRangeOrigin, looksLikeRangeOrigin, parseRangeOrigin, createCardFetcher, createGuardedLookup, inlineCardKey, catalogCardUrl, isCardUrl, isInlineCardKey, CATALOG_CARD_FRAGMENT, CARD_PATH } from './fetch/index.js';
export { OriginBudget, toPeerCredentials, createDeploymentFetch, createGuardedFetch, createOriginFetch, exactOriginPolicy, readBoundedStream, redactUrl, REDACTED } from './fetch/index.js';
export type { ConnectionPolicy, DeploymentFetchOptions, GuardedFetch, GuardedFetchOptions, OriginFetchOptions } from './fetch/index.js';
export type { OriginBudgetOptions, OriginBudgetStats } from './fetch/index.js';
export type {
  HostPolicyOptions,
  HostVerdict,
  CardFetcher,
  CardFetcherOptions,
  FetchInit,
  FetchResult,
  GuardedLookupOptions,
  ResolvedAddress,
  Resolver,
  OriginCredentials,
  PeerCredentials,
  PresentableScheme,
  CredentialsInput,
} from './fetch/index.js';

export { createPeerCredentials, staticHeaders, oauth2ClientCredentials, googleIdToken } from './auth/index.js';
export type { CreatePeerCredentialsOptions, PeerCredentialEntry, StaticHeadersOptions, OAuth2ClientCredentialsOptions, GoogleIdTokenOptions, GoogleIdTokenSource, TokenRequestOutcome } from './auth/index.js';

export { CardCache, MemoryCardStore, effectiveEntry, extendedCardChange, describeExtendedCardChange } from './cache/index.js';
export type { CardCacheOptions, RefreshOptions, CacheEntry, CardStore, EntryError, CacheDirectives, CacheContent, AcceptedContent, DigestPins, ExtendedCard, ExtendedCardState, ExtendedCardChange } from './cache/index.js';

export {
  A2A_CARD_MEDIA_TYPE,
  AI_CATALOG_MEDIA_TYPE,
  AI_CATALOG_SPEC_VERSION,
  AI_CATALOG_WELL_KNOWN_PATH,
  ARD_WELL_KNOWN_PATH,
  CATALOG_WELL_KNOWN_PATHS,
  AIR_URN_PREFIX,
  airIdentifier,
  canonicalIdentifier,
  relativeIdentifierProblem,
  sameIdentifier,
  DEFAULT_CATALOG_LIMITS,
  readAiCatalog,
  readAiCatalogValue,
  judgeTrustManifest,
  selectVersions,
  isSemanticVersion,
  Pacer,
} from './catalog/index.js';
export type { AiCatalog, AiCatalogEntry, CachedAiCatalog, CatalogLimits, ReadCatalogResult, ManifestVerdict, TrustPin, Versioned } from './catalog/index.js';

export { staticSource, wellKnownSource, registrySource, simpleCatalogAdapter, googleAgentRegistryAdapter, kubernetesSource, aiCatalogSource, ardSource, dnsSource, createDnsResolver, pruneCatalogStore, CatalogArtifacts, A2A_PORT_NAME, BASE_URL_ANNOTATION, PORT_ANNOTATION } from './sources/index.js';
export type {
  EndpointRecord,
  TransportOptions,
  Source,
  SourceKind,
  SourceListener,
  SourceState,
  StaticAgentConfig,
  StaticSource,
  StaticSourceOptions,
  WellKnownSourceOptions,
  RegistryAdapter,
  RegistryClientAdapter,
  RegistryRead,
  RegistryTokenPage,
  GoogleAgentRegistryOptions,
  RegistryEntry,
  RegistryPage,
  RegistrySourceOptions,
  KubernetesSourceOptions,
  AiCatalogSource,
  AiCatalogSourceOptions,
  AnnouncedRegistry,
  ArdSource,
  ArdSourceOptions,
  DnsAnswer,
  DnsDomainOptions,
  DnsQueryType,
  DnsRecord,
  DnsResolver,
  DnsResolverOptions,
  DnsSource,
  DnsSourceOptions,
  CatalogReport,
  CatalogFoundBy,
  CatalogLinkRel,
  CardPin,
  CatalogPublication,
  InlineCard,
  CatalogEntry,
} from './sources/index.js';

// DNS-AID records for an operator's zone (a2a-discovery dns-records).
export { DNS_AID_DEFAULT_TTL_SECONDS, dnsAidZone, zoneCharacterString, zoneComment, zoneDomainNameProblem } from './sources/index.js';
export type { DnsAidPublishedAgent, DnsAidZoneOptions, DnsAidZoneRecord, DnsAidZoneResult } from './sources/index.js';

export { resolveEndpoints } from './resolve/index.js';
export type { AdmittedEndpoint, RefusedRecord, ResolveResult } from './resolve/index.js';

export { matchCard, TagVocabulary, selectAgents, deriveLocalName, LOCAL_NAME, RESERVED_NAMES } from './match/index.js';
export type {
  Need,
  VocabularyEntry,
  RequiredCapabilities,
  CardMatch,
  ReviewedAgent,
  TenantPolicy,
  SelectOptions,
  RoutingDomain,
  Candidate,
  SelectedAgent,
  Verdict,
  SelectionAlert,
  Selection,
  MatchMemo,
} from './match/index.js';

export { HealthTracker, isMember } from './health/index.js';
export type { HealthCause, HealthState, HealthStatus, HealthOptions, HealthObservation, HealthTransition } from './health/index.js';

export { snapshotDigest, buildSnapshot, toSnapshotAgents, diffSnapshots, SnapshotStore } from './snapshot/index.js';
export type { Snapshot, SnapshotAgent, SnapshotDomain, SnapshotDiff, AgentChange, SnapshotSummary, RetainedSnapshot } from './snapshot/index.js';

export { DiscoveryLoop } from './loop/index.js';
export type { DiscoveryLoopOptions, LoopReconfiguration, EndpointStatus, EndpointVerdict, SnapshotListener, RoutingVerdict, Lookalike, LookalikePolicy } from './loop/index.js';

// The ARD registry API's wire shapes (spec v0.9) and our verified extension (issue 26).
export { AI_REGISTRY_MEDIA_TYPE, VERIFIED_EXTENSION } from './ard/wire.js';
export type {
  ArdChangesResponse,
  ArdError,
  ArdExploreRequest,
  ArdExploreResponse,
  ArdFederation,
  ArdFederationReport,
  ArdListResponse,
  ArdQuery,
  ArdReferral,
  ArdSearchRequest,
  ArdSearchResponse,
  ArdSearchResult,
  ArdVerified,
} from './ard/wire.js';

// Telemetry (issue 27): the service's HTTP server spans go through the same facade and attribute keys.
export { withSpan, withIncomingTraceContext, ATTR } from './telemetry/index.js';
