/**
 * The options of {@link startService}: plain values the YAML configuration maps onto
 * (`serviceOptionsFromConfig`), each read by one build step of the service.
 */
import type { BaseLlm } from '@google/adk';
import type { RouteHints } from 'a2a-discovery/adk';
import type { CredentialsInput, CardCacheOptions, SignatureMode, SignatureOptions, Clock, HostPolicyOptions, HealthOptions, DiscoveryLoopOptions, Need, RoutingDomain, TenantPolicy, VocabularyEntry, KubernetesSourceOptions, Source, StaticAgentConfig, ArdSourceOptions, DnsResolverOptions, DnsSourceOptions, RolloutPolicy } from 'a2a-discovery';
import type { FederationPeer } from '../registry/federation.js';
import type { RoutingCase } from 'a2a-discovery/routing';
import type { DiscoveryConfig, GoogleAgentRegistryConfig, ServerRegistryConfig } from 'a2a-discovery/config';
import type { OpenStateStoreOptions, StateStore } from '@a2a-discovery/store';
import type { CatalogSigning } from '../http/routes/ai-catalog-route.js';
import type { A2aSettings } from '../http/a2a/routes.js';
import type { Federate } from '../registry/routes.js';
import type { ServerLimits } from '../http/limits.js';
import type { ClientIdentityOptions } from '../http/client-identity.js';
import type { PeopleAuthOptions } from '../auth/people-auth.js';
import type { Logger } from '../telemetry/logger.js';
import type { ReloadResult } from './reload-result.js';

/** `cache`'s keys of the upstream request budget per origin (`UPSTREAM_DEFAULTS` of `a2a-discovery/config`). */
interface UpstreamBudgetOptions {
  /** Requests per second per origin, every fetcher together. Default 20. */
  originRequestsPerSecond?: number;
  /** Requests an idle origin may receive at once. Default 100. */
  originBurst?: number;
  /** How long a discovery request waits for its origin's turn before it fails. Default 5,000 ms. */
  originMaxWaitMs?: number;
}

export interface ServiceOptions {
  host?: string;
  port?: number;
  /** Required when `host` is not loopback. */
  token?: string;
  /**
   * People's OIDC bearer tokens and their roles on the API (people-auth.ts); with or without
   * `token` (the static admin token). `allowLoopback`: an http issuer on loopback (tests).
   */
  oidc?: Omit<PeopleAuthOptions, 'onFetchRefused' | 'fetch'>;
  /** Host names clients may use besides the bind address and loopback names (a reverse proxy's). */
  allowedHosts?: readonly string[];
  /** Origins allowed to make non-GET calls besides the service's own. */
  allowedOrigins?: readonly string[];
  /** Who an anonymous caller is for fair shares and pools (`server.clients`: address prefixes, trusted proxies; client-identity.ts). */
  clients?: Partial<ClientIdentityOptions>;
  /**
   * A trace viewer's URL with `{traceId}` in it (`server.telemetry.traceUrl`): the dashboard links
   * chat turns and snapshots to their traces there.
   */
  traceUrl?: string;
  /** Request, stream and socket limits (docs/security.md); defaults `DEFAULT_SERVER_LIMITS` (./limits.ts). */
  limits?: Partial<ServerLimits>;
  /** When the service drains (`close()`, SIGTERM): how long chat turns in flight may take to finish before they are aborted, ms. Default 25,000 (`server.drainTimeoutMs`). */
  drainTimeoutMs?: number;
  /**
   * `GET /.well-known/ai-catalog.json`, the current snapshot as an AI Catalog (docs/service.md):
   * served when `enabled` (404 otherwise). `cacheControl` default `max-age=60`, `hostName`
   * (`host.displayName`) default `a2a-discovery`; with `signing`, the document carries a detached
   * JWS signature (the key is tried once at start: a key that cannot sign is `ERR_CONFIG_INVALID`).
   * `registryUrl` (default `/api/registry/`): the ARD registry API's base, listed as an `application/ai-registry+json` entry.
   */
  catalog?: { enabled: boolean; cacheControl?: string; hostName?: string; signing?: CatalogSigning; registryUrl?: string };
  /**
   * The ARD registry API under `/api/registry/` (docs/registry-api.md): on by default; its index
   * bound and request limits default to `DEFAULT_REGISTRY_SETTINGS` (`server.registry`).
   * `federate` answers `federation: auto | referrals` (default: the service's federation over
   * `peers` — API bases, besides those the AI Catalog sources announce — bounded by `federation`;
   * a registry on the origin this service listens on is this one: never asked).
   */
  registry?: Partial<Omit<ServerRegistryConfig, 'peers' | 'federation'>> & {
    peers?: readonly FederationPeer[];
    federation?: Partial<ServerRegistryConfig['federation']>;
    federate?: Federate;
  };
  /**
   * The service as an A2A agent (docs/service.md): its card at `/.well-known/agent-card.json` and
   * the JSON-RPC endpoint `POST /api/a2a`, each A2A context a chat session. Default on
   * (`enabled: false`: 404); name, description, `publicUrl`, `cacheControl`, `maxTasks` as `server.a2a`.
   */
  a2a?: Partial<A2aSettings> & { enabled?: boolean };
  policy: HostPolicyOptions;
  /**
   * The peers' credentials (a function or a `PeerCredentials` provider, such as
   * `ResolvedSecrets.credentials`), for discovery's fetches and the A2A calls; a provider's
   * `close()` is called when the service stops.
   */
  credentials?: CredentialsInput;
  /** Token requests of the peers' credential providers so far (`ResolvedSecrets.tokenRequests`), for `a2a_discovery_peer_token_requests_total`. */
  peerTokenRequests?: () => ReadonlyArray<{ readonly origin: string; readonly outcome: string; readonly count: number }>;
  signatures?: SignatureOptions;
  vocabulary: ReadonlyArray<VocabularyEntry & Omit<RouteHints, 'tag'>>;
  needs: readonly Need[];
  requireStreaming?: boolean;
  tenant?: TenantPolicy;
  /** A lookalike of an earlier agent from another origin: `flag` (default) or `exclude` (`policies.lookalikes`). */
  lookalikes?: DiscoveryLoopOptions['lookalikes'];
  maxAgents?: number;
  /** Routing domains (two-level trees); `maxAgents` default to the tree's. */
  domains?: ReadonlyArray<Omit<RoutingDomain, 'maxAgents'> & { maxAgents?: number }>;
  /**
   * Routing evaluation before each publication that changes routing (docs/routing.md): the
   * vocabulary's examples plus `cases` (or the cases of `casesFile`), alert below `minAccuracy`,
   * hold with `gate`. Unset: routing is evaluated with the vocabulary's examples only, never gated.
   */
  routing?: { minAccuracy?: number; gate?: boolean; cases?: readonly RoutingCase[]; casesFile?: string };
  static?: readonly StaticAgentConfig[];
  /** `catalogFirst`: read each domain's `/.well-known/ai-catalog.json` first (an AI Catalog source over the domains). */
  wellKnown?: { id: string; domains: readonly string[]; pollIntervalMs?: number; catalogFirst?: boolean };
  /** AI Catalog sources (docs/sources.md): catalogs and hosts; signatures checked against `signatures.keys`. */
  aiCatalogs?: ReadonlyArray<{
    id: string;
    catalogs?: readonly string[];
    domains?: readonly string[];
    pollIntervalMs?: number;
    versions?: Readonly<Record<string, string>>;
    maxDepth?: number;
    maxEntries?: number;
    maxCatalogs?: number;
    /** Bytes of one catalog document. Default 1,048,576. */
    maxBytes?: number;
    signatures?: SignatureMode;
  }>;
  /** Registry catalogs; `registry` chooses a Google Cloud Agent Registry (docs/sources.md). */
  registries?: ReadonlyArray<{ id: string; url: string; pollIntervalMs?: number; maxPages?: number; maxEntries?: number; registry?: GoogleAgentRegistryConfig }>;
  /** ARD sources (docs/sources.md): other registries' entries, following their change feed. `maxBytes`: one page (default 1 MiB). */
  ard?: ReadonlyArray<Omit<ArdSourceOptions, 'fetcher' | 'events' | 'clock'> & { maxBytes?: number }>;
  /**
   * DNS sources (docs/sources.md "DNS"): DNS-AID and DNS-SD records of domains, asked of
   * `resolvers` (`host:port`) with the resolver bounds; their `capsha256` pins go to the card cache.
   */
  dns?: ReadonlyArray<Omit<DnsSourceOptions, 'resolver' | 'hostPolicy' | 'artifacts' | 'events' | 'clock'> & Omit<DnsResolverOptions, 'servers' | 'clock' | 'random' | 'queryId'> & { resolvers: readonly string[] }>;
  kubernetes?: Omit<KubernetesSourceOptions, 'events' | 'clock'>;
  health?: HealthOptions & { staticEnterAfter?: number; activeCheck?: Partial<DiscoveryConfig['health']['activeCheck']> };
  /**
   * Staged rollouts (docs/rollouts.md): which changes reach new sessions step by step, the steps,
   * and the bounds on the candidate's call figures. Default: breaking changes, 5 → 25 → 100 %.
   */
  rollout?: Partial<RolloutPolicy>;
  /**
   * The card cache's options, plus the fetcher's `totalTimeoutMs` (one whole fetch) and
   * `maxBodyBytes`: the largest card accepted, in bytes, one setting for the fetcher's body cap,
   * inline cards and the content check alike (`cardSizeLimit` of `a2a-discovery/config`; default 65,536),
   * and the upstream request budget per origin every fetcher shares (`originRequestsPerSecond`, `originBurst`, `originMaxWaitMs`).
   */
  cache?: Omit<CardCacheOptions, 'fetcher' | 'hostPolicy' | 'store' | 'clock' | 'random' | 'events' | 'check'> & { maxBodyBytes?: number; totalTimeoutMs?: number } & UpstreamBudgetOptions;
  loop?: Pick<DiscoveryLoopOptions, 'cycleIntervalMs' | 'resyncIntervalMs' | 'startupTimeoutMs' | 'maxRemovalShare' | 'minPublishIntervalMs'>;
  root?: { name?: string } & ({ kind: 'routed'; fallback?: string } | { kind: 'model'; model: string | BaseLlm });
  /**
   * `history`: where conversations live — `store` (default: ADK's `DatabaseSessionService` on the
   * database of a SQLite or PostgreSQL store given by description) or `memory`.
   */
  sessions?: { idleTimeoutMs?: number; maxSessions?: number; allowAdkMetadata?: boolean; history?: 'store' | 'memory' };
  clock?: Clock;
  logger?: Logger;
  /** Folder of the dashboard's files. Default: the package's `web/`. */
  webRoot?: string;
  /** Extra sources (the demo's, tests'). */
  extraSources?: readonly Source[];
  /**
   * The state store: a description (`memory`, `sqlite:<path>`, `postgres://user@host:5432/db`)
   * that the service opens and closes, or an open store the caller owns. Default `memory`.
   * `a2a-discovery serve` defaults to a SQLite file under the data directory.
   */
  store?: string | StateStore;
  /** For a store given by description: the data directory (relative SQLite paths), the PostgreSQL password, retention. */
  storeOptions?: Pick<OpenStateStoreOptions, 'dataDir' | 'password' | 'retention' | 'schema'>;
  /**
   * Several replicas on one PostgreSQL store (given by description): the leader election's
   * timings (docs/deployment.md). Every replica on PostgreSQL takes part; alone, it leads.
   * `advertiseUrl`: where the other replicas reach this one's API when it leads (followers answer
   * the leader's lists from it); default the URL this service listens on.
   * `key`: the replicas' shared key (read from `replica.keyEnv` / `keyFile`): followers sign their
   * requests with it and the leader its answers (replica-auth.ts); without it a follower does not ask
   * the leader. `leaderUrls`: the leader URLs a follower sends to (unset: loopback only).
   */
  replica?: {
    leaderRetryMs?: number;
    pollMs?: number;
    leaseMs?: number;
    id?: string;
    advertiseUrl?: string;
    acceptNewerMigrations?: readonly string[];
    key?: string;
    keyGraceMs?: number;
    authWindowMs?: number;
    maxNonces?: number;
    leaderUrls?: readonly string[];
  };
  /** `POST /api/config/reload` (admin): reloads the configuration file (reload.ts); 404 without it. */
  reload?: () => Promise<ReloadResult>;
}
