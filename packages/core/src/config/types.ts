/**
 * The validated configuration: the shape of `discovery.yaml` with every default filled in, every
 * relative file path resolved against the file's directory, and every object frozen. The section
 * types mirror the YAML one to one; docs/configuration.md explains each key.
 *
 * The sections are shaped so they can be handed to the stage that uses them: `health` and the
 * `loop` timings to `DiscoveryLoop`, `cache` to `CardCache` and `createCardFetcher`,
 * `vocabulary` entries both as `VocabularyEntry` and as `RouteHints`, `needs` as `Need`,
 * `policies.tenant` as `TenantPolicy`, `static` as the static source's agents.
 *
 * @module
 */
import type { PeerCredentialEntry } from '../auth/index.js';

export type { PeerCredentialEntry };
import type { SignatureMode } from '../card/index.js';

/** `server:`, the HTTP service. */
export interface ServerConfig {
  /** Interface to bind. Default `127.0.0.1`. A host that is not loopback requires a token. */
  readonly host: string;
  /** TCP port, 1–65535. Default 7340. */
  readonly port: number;
  /** Name of the environment variable holding the bearer token. */
  readonly tokenEnv?: string;
  /** Absolute path of a file holding the bearer token (resolved against the config file's directory). */
  readonly tokenFile?: string;
  /** Host names the service answers to besides the bind address and `localhost`/`127.0.0.1`/`[::1]` (a reverse proxy's). Default none. */
  readonly allowedHosts: readonly string[];
  /** Origins allowed to make non-GET calls besides the service's own. Default none. */
  readonly allowedOrigins: readonly string[];
  /** Request, stream and socket limits; see docs/security.md. */
  readonly limits: ServerLimitsConfig;
  /** Who a client is for fair shares and pools (docs/security.md "Fair pools"). */
  readonly clients: ServerClientsConfig;
  /** The service's own AI Catalog (`GET /.well-known/ai-catalog.json`); off by default. */
  readonly catalog: ServerCatalogConfig;
  /** The ARD registry API over every admitted card (docs/registry-api.md). */
  readonly registry: ServerRegistryConfig;
  /** The service as an A2A agent: its card and `POST /api/a2a` (docs/service.md "The service as an A2A agent"). */
  readonly a2a: ServerA2aConfig;
  /** People's OIDC bearer tokens and their roles on the API (docs/authentication.md); unset: only the static token. */
  readonly oidc?: ServerOidcConfig;
  /** What the dashboard shows of OpenTelemetry traces (docs/observability.md). */
  readonly telemetry: ServerTelemetryConfig;
  /** On SIGTERM, how long chat turns in flight may take to finish before they are aborted, ms. Default 25,000 (docs/operations.md "Graceful drain"). */
  readonly drainTimeoutMs: number;
  /**
   * How far `serve`'s V8 heap may grow past what its last full collection found live, in percent
   * (V8's `--heap-growing-percent`). Default 0: V8's own heuristics, which grow it 1.1 to 4 times.
   * Read at start (docs/operations.md "Memory").
   */
  readonly heapGrowthPercent: number;
}

/** `server.clients:` how an anonymous caller's address becomes a client (a person or token holder is who they are). */
export interface ServerClientsConfig {
  /** Leading bits of an IPv4 address that make one client. Default 32. */
  readonly ipv4Prefix: number;
  /** Leading bits of an IPv6 address that make one client. Default 64. */
  readonly ipv6Prefix: number;
  /** Proxies (addresses or CIDR ranges) whose `X-Forwarded-For` is believed; the client is the rightmost address not among them. Default none. */
  readonly trustedProxies: readonly string[];
}

/** `server.telemetry:` links from the dashboard to a trace viewer. */
export interface ServerTelemetryConfig {
  /** A trace viewer's URL with `{traceId}` in it (`https://jaeger.example/trace/{traceId}`); unset: trace ids without links. */
  readonly traceUrl?: string;
}

/** `server.oidc:` an OIDC provider whose JWTs identify people, and how their roles map. */
export interface ServerOidcConfig {
  /** The issuer (`iss`); https, or http on loopback with `allowLoopback`. */
  readonly issuer: string;
  /** The audience (`aud`) tokens must be meant for. */
  readonly audience: string | readonly string[];
  /** The JWKS URL; default the issuer's discovery document's `jwks_uri`. */
  readonly jwksUrl?: string;
  /** The claim with the roles (an array, or a space-separated string); a dotted path reaches nested claims. Default `roles`. */
  readonly rolesClaim: string;
  /** Claim value → `viewer` | `operator` | `admin`. */
  readonly roles: Readonly<Record<string, 'viewer' | 'operator' | 'admin'>>;
  /** Clock skew tolerated on `exp`/`nbf`. Default 30,000 ms. */
  readonly clockToleranceMs: number;
  /** Signature algorithms accepted (asymmetric only). Default all of RS*, PS*, ES*, EdDSA. */
  readonly algorithms?: readonly string[];
  /** One JWKS or discovery document fetch: deadline. Default 5,000 ms. */
  readonly fetchTimeoutMs: number;
  /** One JWKS or discovery document: largest size. Default 65,536 bytes. */
  readonly maxBytes: number;
  /** After any fetch of the keys (good or failed), none other before this long. Default 30,000 ms. */
  readonly cooldownMs: number;
}

/** `server.registry:` the ARD registry API (`/api/registry/…`; docs/registry-api.md), its bounds and limits, the registries it knows and how a `federation: auto` search asks them. */
export interface ServerRegistryConfig {
  /** Serve `POST /api/registry/search`, `POST /api/registry/explore`, `GET /api/registry/agents`. Default true. */
  readonly enabled: boolean;
  /** Answer them without a token even when a token or people are configured (viewer otherwise). Default false. */
  readonly anonymous: boolean;
  /** Serve the registry as MCP tools at `POST /api/registry/mcp` (docs/mcp.md). Default true. */
  readonly mcp: boolean;
  /** Entries the index holds; admitted cards beyond are left out. Default 100,000. */
  readonly maxEntries: number;
  /** Largest JSON body of search and explore (413 beyond). Default 16,384. */
  readonly maxBodyBytes: number;
  /** Longest `query.text`, in characters (400 beyond). Default 512. */
  readonly maxTextLength: number;
  /** Keys of one `query.filter` (400 beyond). Default 16. */
  readonly maxFilterKeys: number;
  /** Values of one `query.filter`, every key together (400 beyond). Default 64. */
  readonly maxFilterValues: number;
  /** Facets of one explore (400 beyond). Default 16. */
  readonly maxFacets: number;
  /** Distinct terms of one `query.text`, after tokenizing, lower case (400 beyond). Default 32. */
  readonly maxQueryTerms: number;
  /** Entries one search or explore considers (its text's hits, or every entry without text): a search keeps its best ones, an explore beyond is refused (400). Default 20,000. */
  readonly maxCandidates: number;
  /** Searches (first pages) and explores running at once, all clients together, shared fairly (429 for a client at its share while others wait). Default 4. */
  readonly maxSearches: number;
  /** Searches and explores running at once for one client (429 beyond). Default 2. */
  readonly maxSearchesPerClient: number;
  /** Largest `pageSize` (400 beyond). Default 100, the spec's maximum. */
  readonly maxPageSize: number;
  /** Longest `pageToken` accepted (400 beyond). Default 512. */
  readonly maxPageTokenBytes: number;
  /** How long a page token is honoured after its first page. Default 600,000 ms. */
  readonly pageTokenTtlMs: number;
  /** Searches whose order is pinned at once; the oldest is dropped. Default 256. */
  readonly maxPinnedSearches: number;
  /** Removals the change feed remembers. Default 10,000. */
  readonly maxTombstones: number;
  /** How long the change feed remembers a removal. Default 7 days. */
  readonly tombstoneTtlMs: number;
  // Federation (docs/registry-api.md "Federation").
  /** Peer registries (API bases), referred to and asked besides those the AI Catalogs announce. Default none. */
  readonly peers: readonly { readonly url: string; readonly name?: string }[];
  readonly federation: {
    /** Registries asked by one search; the rest are named as skipped. Default 8. */
    readonly maxRegistries: number;
    /** One registry's answer. Default 2,000 ms. */
    readonly requestTimeoutMs: number;
    /** Every registry together. Default 3,000 ms. */
    readonly timeoutMs: number;
    /** One registry's answer. Default 1 MiB. */
    readonly maxBytes: number;
  };
}

/** `server.catalog:` the current snapshot published as an AI Catalog (docs/service.md). */
export interface ServerCatalogConfig {
  /** Serve `GET /.well-known/ai-catalog.json` (404 when off). Default false. */
  readonly enabled: boolean;
  /** The catalog response's `Cache-Control`. Default `max-age=60`. */
  readonly cacheControl: string;
  /** The catalog's `host.displayName`. Default `a2a-discovery`. */
  readonly hostName: string;
  /** The ARD registry API's base, listed in the catalog as an `application/ai-registry+json` entry: a path of the service or an absolute URL. Default `/`. */
  readonly registryUrl: string;
  /** Sign the catalog (a detached JWS in its `signature` member); unset = unsigned. */
  readonly signing?: CatalogSigningConfig;
}

/** `server.a2a:` the orchestrator published as an A2A agent (docs/service.md). */
export interface ServerA2aConfig {
  /** Serve the card at `/.well-known/agent-card.json` (and `agent.json`) and the JSON-RPC endpoint `POST /api/a2a`. Default true. */
  readonly enabled: boolean;
  /** The card's `name`. Default `a2a-discovery`. */
  readonly name: string;
  /** The card's `description`. */
  readonly description: string;
  /** Where clients reach the service (`https://discovery.example`): the card's endpoint URLs. Unset: the origin each card request came to (its Host passed the Host check). */
  readonly publicUrl?: string;
  /** The card response's `Cache-Control`. Default `max-age=30`. */
  readonly cacheControl: string;
  /** A2A tasks kept (status and history; the conversation lives in the session), the oldest dropped first. Default 1,000. */
  readonly maxTasks: number;
  /**
   * List the orchestrator in the service's own AI Catalog (`server.catalog`), one more entry at its
   * own card. Default false: another a2a-discovery reading the catalog would admit both the agents
   * and the orchestrator routing to them.
   */
  readonly listInCatalog: boolean;
}

/** `server.catalog.signing:` where the private key is and how it signs. */
export interface CatalogSigningConfig {
  /** Absolute path of a file holding the private key (PEM or JWK); exactly one of `keyFile` / `keyEnv`. */
  readonly keyFile?: string;
  /** Environment variable holding the private key (PEM or JWK). */
  readonly keyEnv?: string;
  /** The JWS header's `kid`: what verifiers configure the public key under. */
  readonly kid: string;
  /** JWS algorithm. Default `ES256`. */
  readonly alg: string;
}

/** `server.limits:` sizes in bytes, durations in milliseconds. */
export interface ServerLimitsConfig {
  /** Largest JSON body of /api/chat, /api/refresh, /api/sessions/:id/upgrade. Default 65536. */
  readonly maxBodyBytes: number;
  /** Largest JSON body of /api/trace. Default 262144. */
  readonly maxTraceBodyBytes: number;
  /** Largest JSON body of /api/inspect (a pasted card or catalog). Default 262144. */
  readonly maxInspectBodyBytes: number;
  /** Inspections running at once, all callers together (429 beyond). Default 2. */
  readonly maxInspections: number;
  /** One inspection's deadline; requests still in flight are aborted. Default 20000. */
  readonly inspectTimeoutMs: number;
  /** Catalog entries one inspection reads in all; later ones are not listed (`truncated`). Default 5000. */
  readonly inspectMaxEntries: number;
  /** Catalog documents one inspection fetches, nested ones included. Default 10. */
  readonly inspectMaxDocuments: number;
  /** Upstream requests one inspection makes in all (documents and cards). Default 72. */
  readonly inspectMaxRequests: number;
  /** Bytes of one inspection's JSON answer; entries past it are left out (`truncated`). Default 524288. */
  readonly inspectMaxAnswerBytes: number;
  /** Open /api/stream connections overall. Default 64. */
  readonly maxStreams: number;
  /** Open /api/stream connections per client address. Default 8. */
  readonly maxStreamsPerClient: number;
  /** Events queued for a slow stream reader before it is dropped. Default 512. */
  readonly streamQueueEvents: number;
  /** A stream reader that reads nothing this long is dropped. Default 30000. */
  readonly streamStallMs: number;
  /** Events replayed after Last-Event-ID. Default 256. */
  readonly maxReplayEvents: number;
  /** Time to receive a request's headers. Default 10000. */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request. Default 30000. */
  readonly requestTimeoutMs: number;
  /** Idle keep-alive time between requests. Default 5000. */
  readonly keepAliveTimeoutMs: number;
  /** /api/inspect calls running at once for one client (429 beyond). Default 1. */
  readonly maxInspectionsPerClient: number;
  /** Sessions one client may hold pinned (new sessions 429 beyond). Default 32. */
  readonly maxSessionsPerClient: number;
  /** /api/chat turns running at once for one client (429 beyond). Default 2. */
  readonly maxTurnsPerClient: number;
  /** /api/chat turns running at once, all clients together (shared fairly). Default 64. */
  readonly maxTurns: number;
  /** Requests waiting for a slot of a full pool (inspections, turns, searches), at most one per client; 0: none wait. Default 64. */
  readonly queueLength: number;
  /** The longest a request waits for a slot (429 past it). Default 10,000 ms. */
  readonly queueWaitMs: number;
  /** Endpoints whose cache activity (/api/activity) is counted at once; the one counted first is dropped beyond. Default 10,000. */
  readonly activityEndpoints: number;
  /** A follower replica waits this long for the leader's lists (503 `leaderUnreachable` past it). Default 5 s. */
  readonly leaderTimeoutMs: number;
  /** The largest answer a follower takes from the leader (503 past it). Default 32 MiB. */
  readonly leaderMaxBytes: number;
}

/**
 * One entry of `credentials:`: how to authenticate to one exact origin — the shape
 * `createPeerCredentials` takes (`type` decides which fields apply; secrets are only ever named,
 * an environment variable or a file), with the origin normalized (`https://host[:port]`, default
 * port omitted), the header filled in (lower case, default `authorization`) and files absolute.
 */
export interface CredentialConfig extends PeerCredentialEntry {
  readonly header: string;
}

/** One entry of `signatures.keys:`. */
export interface TrustedKeyConfig {
  /** Must equal the `kid` of the signatures it verifies. */
  readonly kid: string;
  /** Absolute path of the public JWK file. */
  readonly jwkFile: string;
  /** Origins whose cards this key may sign; unset = any. Normalized. */
  readonly origins?: readonly string[];
}

/** `signatures:`, card signature verification. */
export interface SignaturesConfig {
  /** Default `if-present`. */
  readonly mode: SignatureMode;
  /** JWS algorithms accepted; unset = the library default (ES256, ES384, EdDSA, RS256, PS256). */
  readonly algorithms?: readonly string[];
  /** The trust store. Default empty. */
  readonly keys: readonly TrustedKeyConfig[];
}

/** One reviewed tag of `vocabulary:`. Usable as `VocabularyEntry` and as `RouteHints`. */
export interface VocabularyTagConfig {
  readonly tag: string;
  /** Reviewed text; it may reach a router prompt. */
  readonly description: string;
  /** Routing hints for the offline keyword router. */
  readonly keywords?: readonly string[];
  readonly examples?: readonly string[];
}

/** One entry of `needs:`. Usable as `Need`. */
export interface NeedConfig {
  /** A tag of the vocabulary. */
  readonly tag: string;
  /** Media types or short forms (`text`, `text/plain`). Unset = no constraint. */
  readonly inputModes?: readonly string[];
  readonly outputModes?: readonly string[];
}

/** `policies.tenant:`. Usable as `TenantPolicy`. */
export interface TenantConfig {
  /** Provider organizations allowed (exact, case-insensitive); unset = any. */
  readonly providers?: readonly string[];
  /** Hosts allowed (exact, or `*.example.com`); unset = any allowlisted host. */
  readonly hosts?: readonly string[];
}

/** `policies:`. */
export interface PoliciesConfig {
  /** Exclude cards that do not advertise streaming. Default false. */
  readonly requireStreaming: boolean;
  readonly tenant?: TenantConfig;
  /** Most agents in one tree. Default 16. */
  readonly maxAgents: number;
  /** An agent whose name looks like an earlier one's of another origin: `flag` it (default) or `exclude` it from snapshots too. */
  readonly lookalikes: 'flag' | 'exclude';
}

/** One reviewed agent of `static:`. Usable as the static source's `StaticAgentConfig`. */
export interface StaticAgentEntry {
  /** Local name, `^[a-z][a-z0-9_]{1,47}$`, unique, not `user`, not the root's name. */
  readonly name: string;
  /** Base URL, admitted by the allowlist. Exactly one of `url` and `cardUrl`. */
  readonly url?: string;
  /** The card's own URL (path ending in `.json`), fetched exactly there; its origin must be allowlisted. */
  readonly cardUrl?: string;
  /** Reviewed description (1–1000 characters). */
  readonly description: string;
  /** Reviewed tags, each in the vocabulary, carried by its card's skills. At least one. Exactly one of `tags` and `routingTags`. */
  readonly tags?: readonly string[];
  /**
   * Reviewed tags, each in the vocabulary, it is routed by whatever its card's skills are tagged
   * (ADK's `llm`, Mastra's `tool`): its skills are judged on their modes only. At least one.
   */
  readonly routingTags?: readonly string[];
  /** Kept (flagged degraded) instead of removed for health reasons. Default false. */
  readonly critical: boolean;
  /** `false`: always `message/send` / `SendMessage`, even when the card says streaming. */
  readonly streaming?: boolean;
  /** Extra non-secret headers, sent to the agent's interface origin only (not reserved names, no CR/LF). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers deadline of each call to this agent, in ms (shortens the connection's own). */
  readonly timeoutMs?: number;
  /** Call the card's interface of this tenant; the tenant is echoed on every call. */
  readonly tenant?: string;
  /**
   * Where the agent answers when its card's chosen interface names an unroutable host (`0.0.0.0`,
   * `::`): replaces that one interface's URL; must be admitted by the allowlist. Unused when the host is routable.
   */
  readonly interfaceUrl?: string;
}

/**
 * One entry of `domains:`: a group of vocabulary tags routed by its own sub-router. With domains
 * configured every tree has two levels: the root routes to one sub-router per domain, each over
 * its domain's agents. An agent whose tags span domains goes to the first listed domain.
 */
export interface DomainConfig {
  /** The sub-router's agent name: a local name, unique in the tree (not a static agent's, not the root's). */
  readonly name: string;
  /** Reviewed text; the model root routes on it. */
  readonly description: string;
  /** Vocabulary tags of this domain; a tag belongs to one domain only. */
  readonly tags: readonly string[];
  /** Most agents under this sub-router. Default `policies.maxAgents`. */
  readonly maxAgents: number;
}

/** `routing:`, routing accuracy: the evaluation and the publication gate. */
export interface RoutingConfig {
  /** Accuracy (0–1) below which an evaluation fails (`eval-routing` exits 1; the loop alerts). Default 0.9. */
  readonly minAccuracy: number;
  /** Hold a snapshot whose routing evaluates below `minAccuracy` (like the mass-removal guard). Default false. */
  readonly gate: boolean;
  /** Absolute path of a labelled case file (`- message: ..., expect: tag | agent`), used besides the vocabulary's examples. */
  readonly cases?: string;
}

/** `sources.wellKnown:`. */
export interface WellKnownConfig {
  readonly id: string;
  /** `host[:port]`, no scheme. */
  readonly domains: readonly string[];
  /** Default 300,000 ms. */
  readonly pollIntervalMs: number;
  /** Read each domain's `/.well-known/ai-catalog.json` first, and its agent card only when it has none. Default false. */
  readonly catalogFirst: boolean;
}

/** One entry of `sources.aiCatalogs:` (docs/sources.md, "AI Catalog"). */
export interface AiCatalogConfig {
  readonly id: string;
  /** Catalog URLs (https, allowlisted), read as given. */
  readonly catalogs: readonly string[];
  /** `host[:port]`: each host's `/.well-known/ai-catalog.json`, or its agent card when it has none. */
  readonly domains: readonly string[];
  /** Default 300,000 ms. */
  readonly pollIntervalMs: number;
  /** identifier → the version to propose instead of the newest. */
  readonly versions: Readonly<Record<string, string>>;
  /** Nesting depth followed. Default 4. */
  readonly maxDepth: number;
  /** Entries read over all catalogs of one refresh. Default 5,000. */
  readonly maxEntries: number;
  /** Catalog documents read in one refresh. Default 50. */
  readonly maxCatalogs: number;
  /** Bytes of one catalog document. Default 1,048,576. */
  readonly maxBytes: number;
  /** Catalog signatures and Trust Manifests against `signatures.keys`. Default `if-present`. */
  readonly signatures: 'off' | 'if-present' | 'required';
}

/** One entry of `sources.registries:`. */
export interface RegistryConfig {
  readonly id: string;
  /** The catalog URL (https, allowlisted). A Google Agent Registry's default: `https://agentregistry.googleapis.com`. */
  readonly url: string;
  /** Default 300,000 ms. */
  readonly pollIntervalMs: number;
  /** Default 20. */
  readonly maxPages: number;
  /** Entries per refresh. Default 5,000. */
  readonly maxEntries: number;
  /** The catalog's kind when not the simple format. */
  readonly registry?: GoogleAgentRegistryConfig;
}

/** `sources.registries[].registry` for Google Cloud Agent Registry (docs/sources.md). */
export interface GoogleAgentRegistryConfig {
  readonly kind: 'google-agent-registry';
  readonly project: string;
  readonly location: string;
  /** The list method's filter expression. */
  readonly filter?: string;
  /** Agents per page. Default 50. */
  readonly pageSize: number;
  /** `google`: application default credentials (ADK's client); `configured`: the `credentials:` entry for the registry's origin. Default `google`. */
  readonly credentials: 'google' | 'configured';
}

/** One entry of `sources.ard:`: another ARD registry's entries as endpoints (docs/sources.md). */
export interface ArdSourceConfig {
  readonly id: string;
  /** The registry's API base (https, allowlisted). */
  readonly url: string;
  /** Read this search's results instead of following the registry's list and change feed. */
  readonly query?: string;
  /** The search's filter (ARD §7.1); only with `query`. */
  readonly filter?: Readonly<Record<string, unknown>>;
  /** Default 300,000 ms. */
  readonly pollIntervalMs: number;
  /** Pages per refresh. Default 50. */
  readonly maxPages: number;
  /** Entries kept. Default 5,000. */
  readonly maxEntries: number;
  /** One page. Default 1 MiB. */
  readonly maxBytes: number;
  /** One refresh. Default 30,000 ms. */
  readonly timeoutMs: number;
}

/** One domain of a `sources.dns[]` entry. */
export interface DnsDomainConfig {
  readonly domain: string;
  /** DNS-AID agent labels (`billing` → `_billing._a2a._agents.{domain}`). */
  readonly agents?: readonly string[];
  /** Read the agents the `_index._agents` TXT entry lists. Default: true when no agents are given. */
  readonly index?: boolean;
  /** Read DNS-SD (`_a2a._tcp.{domain}` PTR → SRV + TXT). Default false. */
  readonly dnsSd: boolean;
}

/** One entry of `sources.dns:`: agents announced in DNS (DNS-AID SVCB/TXT, DNS-SD) (docs/sources.md). */
export interface DnsSourceConfig {
  readonly id: string;
  /** Resolvers, `host:port` (IP addresses). */
  readonly resolvers: readonly string[];
  readonly domains: readonly DnsDomainConfig[];
  /** Refuse answers without the AD bit. Default false. */
  readonly requireDnssec: boolean;
  /** The scheme of a base URL made from a target host. Default `https`. */
  readonly scheme: 'https' | 'http';
  /** One query's wait. Default 2,000 ms. */
  readonly timeoutMs: number;
  /** Further attempts. Default 2. */
  readonly retries: number;
  /** First retry's wait, doubled each time. Default 200 ms. */
  readonly backoffMs: number;
  /** EDNS0 UDP payload size. Default 4,096. */
  readonly udpPayloadSize: number;
  /** Largest TCP answer. Default 65,535 bytes. */
  readonly maxTcpBytes: number;
  /** Records per answer. Default 64. */
  readonly maxRecords: number;
  /** Agents per refresh. Default 200. */
  readonly maxAgents: number;
  /** Earliest next refresh (smallest TTL, clamped). Default 30,000 ms. */
  readonly minRefreshMs: number;
  /** Latest next refresh. Default 3,600,000 ms. */
  readonly maxRefreshMs: number;
}

/** `sources.kubernetes:`. */
export interface KubernetesConfig {
  readonly id: string;
  /** Unset = every namespace. */
  readonly namespace?: string;
  readonly labelSelector: string;
  /** Default `https`. */
  readonly scheme: 'https' | 'http';
  /** Default 300,000 ms. */
  readonly resyncIntervalMs: number;
}

/** `sources:`, the discovered (not reviewed) agent sources. */
export interface SourcesConfig {
  readonly wellKnown?: WellKnownConfig;
  /** Default empty. */
  readonly aiCatalogs: readonly AiCatalogConfig[];
  /** Default empty. */
  readonly registries: readonly RegistryConfig[];
  /** Default empty. */
  readonly ard: readonly ArdSourceConfig[];
  /** Default empty. */
  readonly dns: readonly DnsSourceConfig[];
  readonly kubernetes?: KubernetesConfig;
}

/** `health:`, hysteresis thresholds (counts of consecutive cycles). */
export interface HealthConfig {
  /** Default 2. */
  readonly enterAfter: number;
  /** Consecutive failed fetches before a member may leave. Default 3. */
  readonly leaveAfter: number;
  /** Leave after `leaveAfter` failures even while the card is still usable (served stale). Default false. */
  readonly leaveWhileUsable: boolean;
  /** Default 1. */
  readonly staticEnterAfter: number;
  /** Consecutive failed A2A calls before a member leaves new snapshots, whatever its card. Default 5. */
  readonly callLeaveAfter: number;
  /**
   * The active check (docs/rollouts.md "Active checks"): a side-effect-free A2A request (`GetTask` of
   * an id that cannot exist) every `intervalMs` (± 10 %), through the guarded connection and within
   * the origin budget. `enabled`: every agent of the current snapshot; otherwise only the agents
   * whose failed calls put them out of new snapshots (so they can come back).
   */
  readonly activeCheck: { readonly enabled: boolean; readonly intervalMs: number; readonly timeoutMs: number; readonly maxConcurrent: number };
}

/** `rollout:`, staged rollouts of snapshots (docs/rollouts.md). */
export interface RolloutConfig {
  /** Which changes roll out by stages: `breaking` (default), `any`, or `off` (every change at once). */
  readonly trigger: 'breaking' | 'any' | 'off';
  /** Shares of new sessions on the candidate, step by step, in percent; reaching 100 promotes it. Default [5, 25, 100]. */
  readonly steps: readonly number[];
  /** Each step lasts at least this long, ms. Default 600,000. */
  readonly holdMs: number;
  /** Each step lasts at least this many turns on the candidate. Default 20. */
  readonly minTurns: number;
  /** Turns of a changed agent on the candidate before its figures are judged. Default 10. */
  readonly minSamples: number;
  /** How much more the candidate's turn error rate may be than the current snapshot's (0.05: 5 points). Default 0.05. */
  readonly maxErrorRateIncrease: number;
  /** The candidate's p95 latency may be at most this multiple of the current snapshot's… Default 1.5. */
  readonly maxLatencyRatio: number;
  /** …and at most this many ms above it. Default 250. */
  readonly minLatencyIncreaseMs: number;
}

/** `cache:`, the card cache and the fetcher bounds. Durations in ms, sizes in bytes. */
export interface CacheConfig {
  readonly defaultTtlMs: number;
  readonly minTtlMs: number;
  readonly maxTtlMs: number;
  readonly maxStaleMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly maxConcurrentFetches: number;
  /** Card fetches in flight while a conversation turn is in flight (at most `maxConcurrentFetches`). Default 4. */
  readonly maxConcurrentFetchesDuringTurns: number;
  readonly maxFetchesPerOrigin: number;
  /** Upstream requests per second per origin, discovery and the inspector together. Default 20. */
  readonly originRequestsPerSecond: number;
  /** Requests an idle origin may receive at once before the rate applies. Default 100. */
  readonly originBurst: number;
  /** How long a discovery request waits for its origin's turn before failing. Default 5,000. */
  readonly originMaxWaitMs: number;
  readonly maxBodyBytes: number;
  readonly totalTimeoutMs: number;
}

/** `loop:`, the discovery loop. Durations in ms. */
export interface LoopConfig {
  readonly cycleIntervalMs: number;
  readonly resyncIntervalMs: number;
  readonly startupTimeoutMs: number;
  /** A share, 0–1. */
  readonly maxRemovalShare: number;
  readonly minPublishIntervalMs: number;
  /** An endpoint no source proposes is forgotten (cache entry, state) after this many ms. Default 600,000. */
  readonly removalGraceMs: number;
}

/** `root:`, the orchestrator at the top of every tree. */
export type RootConfig =
  | {
      /** Deterministic keyword routing over reviewed tags; no model key. The default. */
      readonly kind: 'routed';
      /** Default `orchestrator`. */
      readonly name: string;
      /** A static agent's name: where unmatched messages go. */
      readonly fallback?: string;
    }
  | {
      /** An `LlmAgent` that transfers with `transfer_to_agent`. */
      readonly kind: 'model';
      readonly name: string;
      /** The model name, e.g. `gemini-2.5-flash`. */
      readonly model: string;
    };

/** `sessions:`, the tree factory and remote calls. */
export interface SessionsConfig {
  /** Idle pins expire after this many ms (with the session's history). Default 3,600,000. */
  readonly idleTimeoutMs: number;
  /** Most pinned sessions at once; a new one beyond it gets 429. Default 10,000. */
  readonly maxSessions: number;
  /** Let ADK's `adk_*` identifiers reach peers. Default false. */
  readonly allowAdkMetadata: boolean;
  /**
   * Where conversations live: `store` (default) keeps them with ADK's `DatabaseSessionService`
   * in the store's database (SQLite or PostgreSQL; in memory with `store: memory`); `memory`
   * keeps them in this process only.
   */
  readonly history: 'store' | 'memory';
}

/** `retention:`, how much the state store keeps. */
export interface RetentionConfig {
  /** Journal events kept (the oldest go first; snapshots, alerts, admissions and refusals last). Default 100,000. */
  readonly journalMaxEvents: number;
  /** Journal events kept per event type (the newest), so no one kind fills the journal. Default 10,000. */
  readonly journalMaxEventsPerType: number;
  /** Journal events older than this are deleted. Default 604,800,000 (7 days). */
  readonly journalMaxAgeMs: number;
  /** Published snapshots kept besides the current and the pinned ones. Default 50. */
  readonly snapshots: number;
  /** Rows of the version history kept. Default 200. */
  readonly snapshotHistory: number;
}

/** `replica:`, several replicas on one PostgreSQL store (ignored for SQLite and memory). */
export interface ReplicaConfig {
  /** Followers try the leader lock this often; the leader heartbeats as often. Default 2,000. */
  readonly leaderRetryMs: number;
  /** Followers read the database's current snapshot this often (a lost notification). Default 5,000. */
  readonly pollMs: number;
  /** A leader silent this long loses its lock (PostgreSQL's idle_session_timeout). Default 10,000; at least 2 × leaderRetryMs + 1,000. */
  readonly leaseMs: number;
  /**
   * Where the other replicas reach this one's HTTP API when it leads (followers answer the
   * leader's endpoints, sources and activity from it). Default: the URL it listens on
   * (`server.host` and port); with a wildcard host (`0.0.0.0`, `::`), this machine's first external
   * address (in a pod, the pod IP). Set it when that is not how the other replicas reach this one.
   */
  readonly advertiseUrl?: string;
  /**
   * Rolling back an upgrade: migrations of a newer release (names in `a2ad_migrations`) this build
   * may lead over. Without them listed, a replica that finds a migration it does not have serves
   * and follows but refuses to lead (docs/operations.md, Rolling upgrades). Default none.
   */
  readonly acceptNewerMigrations: readonly string[];
  /**
   * Where the replicas' shared key is read (an environment variable, or a file; the key is never
   * written in the configuration): followers sign their requests for the leader's lists with it and
   * the leader signs its answers (docs/deployment.md "Replica key"). At least 32 characters. Without
   * it, a follower does not ask the leader (its lists answer 503 naming it). Never the admin token.
   */
  readonly keyEnv?: string;
  /** The file holding the replicas' shared key (see {@link ReplicaConfig.keyEnv}). */
  readonly keyFile?: string;
  /** After a reload reads a new key, the one before stays accepted this long, ms. Default 900,000 (15 minutes). */
  readonly keyGraceMs: number;
  /** How far a replica request's timestamp may be from the leader's clock, either way, ms. Default 30,000. */
  readonly authWindowMs: number;
  /** Replica request nonces the leader remembers within that window (replays refused); past it, requests wait. Default 10,000. */
  readonly maxNonces: number;
  /**
   * The leader URLs a follower sends its signed request to: origins (`https://leader.internal:8443`)
   * or patterns (`https://*.discovery.internal:8443`); https outside loopback. A leader URL read from
   * the store that none allows is refused, logged and alerted. Unset: loopback URLs only.
   */
  readonly leaderUrls?: readonly string[];
}

/** `config:`, how `serve` treats its configuration file while it runs (docs/operations.md "Reload"). */
export interface ConfigFileConfig {
  /**
   * Reload when the file changes (debounced), as on SIGHUP or `POST /api/config/reload`: a valid
   * file is applied live, an invalid one refused while the running configuration keeps serving. Default false.
   */
  readonly watch: boolean;
}

/** The whole validated configuration, frozen. */
export interface DiscoveryConfig {
  readonly server: ServerConfig;
  /** Allowlisted origins (`https://host[:port]`, `https://*.example.com`), as written. */
  readonly allow: readonly string[];
  readonly allowLoopback: boolean;
  readonly allowCidrs: readonly string[];
  readonly credentials: readonly CredentialConfig[];
  readonly signatures: SignaturesConfig;
  readonly vocabulary: readonly VocabularyTagConfig[];
  readonly needs: readonly NeedConfig[];
  readonly policies: PoliciesConfig;
  readonly static: readonly StaticAgentEntry[];
  /** Default empty: one level, every agent directly under the root. */
  readonly domains: readonly DomainConfig[];
  readonly routing: RoutingConfig;
  readonly sources: SourcesConfig;
  readonly health: HealthConfig;
  readonly rollout: RolloutConfig;
  readonly cache: CacheConfig;
  readonly loop: LoopConfig;
  readonly root: RootConfig;
  readonly sessions: SessionsConfig;
  /** Absolute path of the data directory (default `data` next to the configuration file). */
  readonly dataDir: string;
  /**
   * The state store: `memory`, `sqlite:<absolute path>` (`sqlite` and relative paths are resolved
   * under `dataDir`; the default is `sqlite:<dataDir>/a2a-discovery.sqlite`) or a PostgreSQL URL
   * without password.
   */
  readonly store: string;
  /** Where the PostgreSQL password is: an environment variable or a file (absolute path). */
  readonly storePasswordEnv?: string;
  readonly storePasswordFile?: string;
  readonly retention: RetentionConfig;
  readonly replica: ReplicaConfig;
  readonly config: ConfigFileConfig;
}
