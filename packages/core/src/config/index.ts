/**
 * The YAML configuration (`discovery.yaml`): schema and defaults, loading with every problem
 * reported at its line and column, and reading the secrets it names. See docs/configuration.md.
 *
 * @module
 */
export { parseConfig, loadConfig } from './parse-config.js';
export type { ParseConfigOptions } from './parse-config.js';
export { resolveSecrets } from './resolve-secrets.js';
export type { ResolvedSecrets, ResolveSecretsOptions, TokenRequestCount } from './resolve-secrets.js';
export { formatProblems } from './format-problems.js';
export { readBoundedFile, FileReadError } from '../rules/bounded-file.js';
export { DEFAULT_A2A_SETTINGS, DEFAULT_REGISTRY_SETTINGS, DEFAULT_SERVER_LIMITS } from './schema.js';
export type {
  DiscoveryConfig,
  ServerConfig,
  ServerCatalogConfig,
  ServerRegistryConfig,
  ServerA2aConfig,
  ServerOidcConfig,
  ServerTelemetryConfig,
  ServerClientsConfig,
  CatalogSigningConfig,
  CredentialConfig,
  PeerCredentialEntry,
  SignaturesConfig,
  TrustedKeyConfig,
  VocabularyTagConfig,
  NeedConfig,
  TenantConfig,
  PoliciesConfig,
  StaticAgentEntry,
  DomainConfig,
  RoutingConfig,
  WellKnownConfig,
  AiCatalogConfig,
  RegistryConfig,
  GoogleAgentRegistryConfig,
  ArdSourceConfig,
  DnsSourceConfig,
  DnsDomainConfig,
  KubernetesConfig,
  SourcesConfig,
  HealthConfig,
  RolloutConfig,
  CacheConfig,
  LoopConfig,
  RootConfig,
  SessionsConfig,
  ServerLimitsConfig,
  RetentionConfig,
  ReplicaConfig,
  ConfigFileConfig,
} from './types.js';
// The store description (`store:` in the YAML, `--store`): one rule for config and the store engines.
export { DEFAULT_SQLITE_FILE, parseStoreSpec, postgresConnection, sqliteFilePath, storeSpecKind } from '../rules/store-spec.js';
export { redactUrl } from '../rules/redaction.js';
export type { PostgresConnection, StoreSpec } from '../rules/store-spec.js';
// The card size limit: one setting for the fetcher, the content check and the JSON reader.
export { DEFAULT_MAX_CARD_BYTES, cardSizeLimit } from '../rules/limits.js';
export type { CardSizeLimit } from '../rules/limits.js';
// Every default of the library, for the store engines and the service (one place: rules/defaults.ts).
export { DRAIN_DEFAULTS, HEAP_DEFAULTS } from '../rules/defaults.js';
export { CACHE_DEFAULTS, CATALOG_DEFAULTS, HEALTH_DEFAULTS, LOOP_DEFAULTS, REPLICA_DEFAULTS, RETENTION_DEFAULTS, ROLLOUT_DEFAULTS, ROUTING_DEFAULTS, SESSION_DEFAULTS, SOURCE_DEFAULTS } from '../rules/defaults.js';
export { UPSTREAM_DEFAULTS } from '../rules/defaults.js';
export { ARD_SOURCE_DEFAULTS, FEDERATION_DEFAULTS } from '../rules/defaults.js';
export { GOOGLE_AGENT_REGISTRY_DEFAULTS } from '../rules/defaults.js';
export { DNS_SOURCE_DEFAULTS } from '../rules/defaults.js';
export { OIDC_DEFAULTS } from '../rules/defaults.js';
export { OIDC_ALGORITHMS } from '../rules/jws.js';
