/**
 * From a validated configuration and its resolved secrets to the service's options.
 */
import type { DiscoveryConfig, ResolvedSecrets } from 'a2a-discovery/config';
import { DiscoveryError, type CredentialsInput } from 'a2a-discovery';
import type { ServiceOptions } from './service.js';

/** The secrets it reads: {@link ResolvedSecrets}, where credentials may also be given as a function (tests, embedders). */
type SecretsInput = Omit<ResolvedSecrets, 'credentials' | 'tokenRequests'> & { readonly credentials: CredentialsInput; readonly tokenRequests?: ResolvedSecrets['tokenRequests'] };

/** The service's options from a validated configuration and its resolved secrets, section by section. */
export function serviceOptionsFromConfig(config: DiscoveryConfig, secrets: SecretsInput): ServiceOptions {
  return {
    ...serverOptions(config, secrets),
    ...discoveryOptions(config, secrets),
    ...sourceOptions(config),
    health: config.health,
    rollout: config.rollout,
    cache: config.cache,
    loop: config.loop,
    root: rootOptions(config.root),
    sessions: config.sessions,
    store: config.store,
    replica: replicaOptions(config, secrets),
    storeOptions: storeOptions(config, secrets),
  };
}

/** `server`: where it listens and who may call, its limits and drain, the registry, the A2A agent and the AI Catalog. */
function serverOptions(config: DiscoveryConfig, secrets: SecretsInput) {
  const { server } = config;
  return {
    host: server.host,
    port: server.port,
    ...(secrets.token !== undefined && { token: secrets.token }),
    ...(server.oidc && { oidc: { ...server.oidc, allowLoopback: config.allowLoopback } }),
    allowedHosts: server.allowedHosts,
    allowedOrigins: server.allowedOrigins,
    clients: server.clients,
    ...(server.telemetry.traceUrl !== undefined && { traceUrl: server.telemetry.traceUrl }),
    limits: server.limits,
    drainTimeoutMs: server.drainTimeoutMs,
    registry: server.registry,
    a2a: server.a2a,
    ...(server.catalog.enabled && {
      catalog: {
        enabled: true,
        cacheControl: server.catalog.cacheControl,
        hostName: server.catalog.hostName,
        registryUrl: server.catalog.registryUrl,
        ...(server.catalog.signing !== undefined && { signing: { key: signingKey(secrets), kid: server.catalog.signing.kid, alg: server.catalog.signing.alg } }),
      },
    }),
  } satisfies Partial<ServiceOptions>;
}

/** What discovery admits and selects: the allowlist, credentials, signatures, vocabulary, needs, policies, domains and routing. */
function discoveryOptions(config: DiscoveryConfig, secrets: SecretsInput) {
  return {
    policy: { allow: config.allow, allowLoopback: config.allowLoopback, allowCidrs: config.allowCidrs },
    ...(config.credentials.length > 0 && { credentials: secrets.credentials }),
    ...(secrets.tokenRequests !== undefined && { peerTokenRequests: secrets.tokenRequests }),
    signatures: {
      mode: config.signatures.mode,
      keys: secrets.keys,
      ...(config.signatures.algorithms && { algorithms: config.signatures.algorithms }),
    },
    vocabulary: config.vocabulary,
    needs: config.needs,
    requireStreaming: config.policies.requireStreaming,
    ...(config.policies.tenant && { tenant: config.policies.tenant }),
    maxAgents: config.policies.maxAgents,
    lookalikes: config.policies.lookalikes,
    ...(config.domains.length > 0 && { domains: config.domains }),
    routing: {
      minAccuracy: config.routing.minAccuracy,
      gate: config.routing.gate,
      ...(config.routing.cases !== undefined && { casesFile: config.routing.cases }),
    },
  } satisfies Partial<ServiceOptions>;
}

/** `static` and `sources`: where agents are discovered. */
function sourceOptions(config: DiscoveryConfig) {
  return {
    static: config.static,
    ...(config.sources.wellKnown && { wellKnown: config.sources.wellKnown }),
    aiCatalogs: config.sources.aiCatalogs,
    registries: config.sources.registries,
    ard: config.sources.ard,
    dns: config.sources.dns,
    ...(config.sources.kubernetes && { kubernetes: config.sources.kubernetes }),
  } satisfies Partial<ServiceOptions>;
}

/** `root`: the orchestrator, a model or the keyword router. */
function rootOptions(root: DiscoveryConfig['root']): ServiceOptions['root'] {
  return root.kind === 'model'
    ? { kind: 'model', name: root.name, model: root.model }
    : { kind: 'routed', name: root.name, ...(root.fallback !== undefined && { fallback: root.fallback }) };
}

/** `replica`: the leader election's timings, the address it advertises, and the replicas' shared key. */
function replicaOptions(config: DiscoveryConfig, secrets: SecretsInput): ServiceOptions['replica'] {
  const { replica } = config;
  return {
    leaderRetryMs: replica.leaderRetryMs,
    pollMs: replica.pollMs,
    leaseMs: replica.leaseMs,
    ...(replica.advertiseUrl !== undefined && { advertiseUrl: replica.advertiseUrl }),
    acceptNewerMigrations: replica.acceptNewerMigrations,
    ...(secrets.replicaKey !== undefined && { key: secrets.replicaKey }),
    keyGraceMs: replica.keyGraceMs,
    authWindowMs: replica.authWindowMs,
    maxNonces: replica.maxNonces,
    ...(replica.leaderUrls !== undefined && { leaderUrls: replica.leaderUrls }),
  };
}

/** The store's data directory, password and retention. */
function storeOptions(config: DiscoveryConfig, secrets: SecretsInput): ServiceOptions['storeOptions'] {
  return {
    dataDir: config.dataDir,
    ...(secrets.storePassword !== undefined && { password: secrets.storePassword }),
    retention: {
      journalMaxEvents: config.retention.journalMaxEvents,
      journalMaxEventsPerType: config.retention.journalMaxEventsPerType,
      journalMaxAgeMs: config.retention.journalMaxAgeMs,
      snapshots: config.retention.snapshots,
      history: config.retention.snapshotHistory,
    },
  };
}

/** The catalog's key, read by resolveSecrets; a configuration that asks for signing never publishes unsigned. */
function signingKey(secrets: SecretsInput): NonNullable<ResolvedSecrets['catalogSigningKey']> {
  if (secrets.catalogSigningKey === undefined) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', 'server.catalog.signing is set but its key was not read (resolveSecrets reads it)', { path: 'server.catalog.signing' });
  }
  return secrets.catalogSigningKey;
}
