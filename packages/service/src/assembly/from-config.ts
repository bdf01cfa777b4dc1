/**
 * From a validated configuration and its resolved secrets to the service's options.
 */
import type { DiscoveryConfig, ResolvedSecrets } from 'a2a-discovery/config';
import { DiscoveryError, type CredentialsInput } from 'a2a-discovery';
import type { ServiceOptions } from './service.js';

/** The secrets it reads: {@link ResolvedSecrets}, where credentials may also be given as a function (tests, embedders). */
type SecretsInput = Omit<ResolvedSecrets, 'credentials' | 'tokenRequests'> & { readonly credentials: CredentialsInput; readonly tokenRequests?: ResolvedSecrets['tokenRequests'] };

// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function serviceOptionsFromConfig(config: DiscoveryConfig, secrets: SecretsInput): ServiceOptions {
  const root = config.root;
  return {
    host: config.server.host,
    port: config.server.port,
    ...(secrets.token !== undefined && { token: secrets.token }),
    ...(config.server.oidc && { oidc: { ...config.server.oidc, allowLoopback: config.allowLoopback } }),
    allowedHosts: config.server.allowedHosts,
    allowedOrigins: config.server.allowedOrigins,
    clients: config.server.clients,
    ...(config.server.telemetry.traceUrl !== undefined && { traceUrl: config.server.telemetry.traceUrl }),
    limits: config.server.limits,
    drainTimeoutMs: config.server.drainTimeoutMs,
    registry: config.server.registry,
    a2a: config.server.a2a,
    ...(config.server.catalog.enabled && {
      catalog: {
        enabled: true,
        cacheControl: config.server.catalog.cacheControl,
        hostName: config.server.catalog.hostName,
        registryUrl: config.server.catalog.registryUrl,
        ...(config.server.catalog.signing !== undefined && { signing: { key: signingKey(secrets), kid: config.server.catalog.signing.kid, alg: config.server.catalog.signing.alg } }),
      },
    }),
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
    static: config.static,
    ...(config.sources.wellKnown && { wellKnown: config.sources.wellKnown }),
    aiCatalogs: config.sources.aiCatalogs,
    registries: config.sources.registries,
    ard: config.sources.ard,
    dns: config.sources.dns,
    ...(config.sources.kubernetes && { kubernetes: config.sources.kubernetes }),
    health: config.health,
    cache: config.cache,
    loop: config.loop,
    root:
      root.kind === 'model'
        ? { kind: 'model', name: root.name, model: root.model }
        : { kind: 'routed', name: root.name, ...(root.fallback !== undefined && { fallback: root.fallback }) },
    sessions: config.sessions,
    store: config.store,
    replica: {
      leaderRetryMs: config.replica.leaderRetryMs,
      pollMs: config.replica.pollMs,
      leaseMs: config.replica.leaseMs,
      ...(config.replica.advertiseUrl !== undefined && { advertiseUrl: config.replica.advertiseUrl }),
      acceptNewerMigrations: config.replica.acceptNewerMigrations,
      ...(secrets.replicaKey !== undefined && { key: secrets.replicaKey }),
      keyGraceMs: config.replica.keyGraceMs,
      authWindowMs: config.replica.authWindowMs,
      maxNonces: config.replica.maxNonces,
      ...(config.replica.leaderUrls !== undefined && { leaderUrls: config.replica.leaderUrls }),
    },
    storeOptions: {
      dataDir: config.dataDir,
      ...(secrets.storePassword !== undefined && { password: secrets.storePassword }),
      retention: {
        journalMaxEvents: config.retention.journalMaxEvents,
        journalMaxEventsPerType: config.retention.journalMaxEventsPerType,
        journalMaxAgeMs: config.retention.journalMaxAgeMs,
        snapshots: config.retention.snapshots,
        history: config.retention.snapshotHistory,
      },
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
