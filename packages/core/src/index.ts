/**
 * a2a-discovery: find A2A agents, admit only allowlisted hosts, keep their cards fresh with
 * real HTTP caching, and explain every decision.
 *
 * This entry exports the core (no server, no Kubernetes client). Everything is listed by name,
 * and the list is kept short on purpose (test/package/surface.test.ts fails over 150 names): a
 * user's API, as README.md and docs/ describe it. Helpers that only the store and the service share
 * are the `a2a-discovery/internal` entry, which carries no semver promise.
 *
 * @module
 */
export { DiscoveryError, isDiscoveryError } from './errors.js';
export type { DiscoveryErrorCode, FailureClass, Problem, Stage } from './errors.js';

export { systemClock, systemRandom, seededRandom, VirtualClock } from './clock/index.js';
export type { Clock, Random, TimerHandle } from './clock/index.js';

export { EventStream } from './events/index.js';
export type { DiscoveryEvent, EventListener } from './events/index.js';

export {
  parseAgentCard,
  checkCard,
  toAdkCard,
  verifyCardSignatures,
  canonicalCardPayload,
  signCard,
  signatureFailure,
  signDetached,
  verifyDetachedSignature,
  preferredInterface,
  checkSecurityRequirements,
} from './card/index.js';
export type {
  ParseCardOptions,
  ParseCardResult,
  CheckCardOptions,
  CheckCardResult,
  AgentCardModel,
  AgentInterfaceModel,
  AgentSkillModel,
  SecuritySchemeModel,
  AdkAgentCard,
  SignatureMode,
  SignatureOptions,
  SignatureResult,
  TrustedKey,
  CanonicalForm,
} from './card/index.js';

export { HostPolicy, createCardFetcher } from './fetch/index.js';
export type {
  HostPolicyOptions,
  HostVerdict,
  CardFetcher,
  CardFetcherOptions,
  FetchResult,
  PeerCredentials,
  CredentialsInput,
} from './fetch/index.js';

export { createPeerCredentials, staticHeaders, oauth2ClientCredentials, googleIdToken } from './auth/index.js';
export type {
  CreatePeerCredentialsOptions,
  PeerCredentialEntry,
  StaticHeadersOptions,
  OAuth2ClientCredentialsOptions,
  GoogleIdTokenOptions,
} from './auth/index.js';

export { CardCache, MemoryCardStore, effectiveEntry, extendedCardChange } from './cache/index.js';
export type { CardCacheOptions, RefreshOptions, CacheEntry, CardStore, ExtendedCardChange } from './cache/index.js';

export { readAiCatalog, canonicalIdentifier, sameIdentifier, ARD_WELL_KNOWN_PATH } from './catalog/index.js';
export type { AiCatalog, AiCatalogEntry, ReadCatalogResult } from './catalog/index.js';

export {
  staticSource,
  wellKnownSource,
  registrySource,
  simpleCatalogAdapter,
  googleAgentRegistryAdapter,
  kubernetesSource,
  aiCatalogSource,
  ardSource,
  dnsSource,
  createDnsResolver,
  CatalogArtifacts,
} from './sources/index.js';
export type {
  EndpointRecord,
  TransportOptions,
  Source,
  SourceKind,
  SourceState,
  StaticAgentConfig,
  StaticSource,
  StaticSourceOptions,
  WellKnownSourceOptions,
  RegistryAdapter,
  RegistryRead,
  RegistryTokenPage,
  GoogleAgentRegistryOptions,
  RegistrySourceOptions,
  KubernetesSourceOptions,
  AiCatalogSourceOptions,
  ArdSourceOptions,
  DnsResolverOptions,
  DnsSourceOptions,
} from './sources/index.js';

export { matchCard, TagVocabulary, selectAgents } from './match/index.js';
export type { Need, VocabularyEntry, TenantPolicy, RoutingDomain, SelectedAgent, Verdict, Selection } from './match/index.js';

export { HealthTracker, CallHealth, HEALTH_STATES, ENDPOINT_CAUSES } from './health/index.js';
export type { EndpointCause, HealthStatus, HealthOptions, RecordedCall, AgentCallHealth, CallFiguresView } from './health/index.js';
export { Rollouts } from './rollout/index.js';
export type { RolloutPolicy, RolloutState, RolloutStatus, RolloutDecision, RolloutFigures, RolloutChange, RolloutTrigger } from './rollout/index.js';

export { diffSnapshots, classifyAgentChange, SnapshotStore } from './snapshot/index.js';
export type { Snapshot, SnapshotAgent, SnapshotDiff, AgentImpact, ClassifiedAgent, ChangeImpact } from './snapshot/index.js';

export { DiscoveryLoop, ENDPOINT_VERDICTS } from './loop/index.js';
export type { DiscoveryLoopOptions, EndpointStatus, EndpointVerdict, SnapshotListener, RoutingVerdict } from './loop/index.js';
