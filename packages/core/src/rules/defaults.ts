/**
 * Defaults of the card cache, the discovery loop, health, the sources, the AI Catalog walk,
 * sessions, routing evaluation and retention: the one place each value is written. The YAML schema fills its defaults from here, the
 * cross-checks compare against them, and the library's classes fall back to them when an
 * option is left out, so a configuration that says nothing and a program that passes nothing
 * behave alike. Durations in milliseconds.
 *
 * @module
 */

/** The card cache (`cache:` in the configuration, `CardCacheOptions`). */
export const CACHE_DEFAULTS = Object.freeze({
  /** Freshness of a card whose response has no caching headers. */
  defaultTtlMs: 300_000,
  /** Freshness floor, whatever the headers say. */
  minTtlMs: 30_000,
  /** Freshness ceiling, whatever the headers say. */
  maxTtlMs: 3_600_000,
  /** How long after expiry a card is still served while refetches fail. */
  maxStaleMs: 3_600_000,
  /** First retry delay after a failed fetch; doubled per failure up to `backoffMaxMs`. */
  backoffBaseMs: 5_000,
  backoffMaxMs: 300_000,
  /** Fetches in flight, all origins together. */
  maxConcurrentFetches: 32,
  /** Fetches in flight, all origins together, while a conversation turn is in flight. */
  maxConcurrentFetchesDuringTurns: 4,
  /** Fetches in flight per origin. */
  maxFetchesPerOrigin: 1,
  /** One card fetch's total deadline. */
  totalTimeoutMs: 5_000,
  /** Share of a freshness lifetime by which expiry is moved earlier at random (not a YAML key). */
  expiryJitter: 0.1,
  /** Share of a backoff delay added or removed at random (not a YAML key). */
  backoffJitter: 0.5,
  /**
   * Headers every card request carries, the cache's and `probe`'s (not a YAML key): A2A 1.x
   * servers then return the plain 1.0 card.
   */
  requestHeaders: Object.freeze({ 'a2a-version': '1.0' }),
});

/**
 * The upstream request budget per origin (`cache.originRequestsPerSecond`, `cache.originBurst`,
 * `cache.originMaxWaitMs`; `OriginBudget`), shared by discovery's fetchers and the service's
 * inspector. A cold discovery cycle over 1,000 endpoints on 32 origins asks each origin for ~32
 * cards, and one inspection makes at most 72 requests (`server.limits.inspectMaxRequests`): both
 * inside the burst, so a normal cycle never waits and one inspection of an idle origin is whole;
 * the 30 s freshness floor keeps discovery's steady state near 1 request per second per such
 * origin. 518 inspections in 15 s (the 36,793 requests) now reach one origin at most
 * 100 + 20 × 15 = 400 times.
 */
export const UPSTREAM_DEFAULTS = Object.freeze({
  /** Requests per second per origin, every fetcher together. */
  originRequestsPerSecond: 50,
  /** Requests an idle origin may receive at once before the rate applies. */
  originBurst: 200,
  /** How long a discovery request waits for its origin's turn before it fails (the inspector never waits). */
  originMaxWaitMs: 30_000,
  /** Origins whose buckets are held at once (not a YAML key; idle ones are freed first). */
  maxOrigins: 1_024,
});

/** The discovery loop (`loop:`, `DiscoveryLoopOptions`). */
export const LOOP_DEFAULTS = Object.freeze({
  /** Time between cycles. */
  cycleIntervalMs: 5_000,
  /** Unconditional refetch of each endpoint this often (jittered), catching wrong 304s. */
  resyncIntervalMs: 3_600_000,
  /** Bound on the first cycle: publish and become ready by then even if peers hang. */
  startupTimeoutMs: 10_000,
  /** Hold back the removal of more than this share of the current agents at once. */
  maxRemovalShare: 0.5,
  /** At most one publication per this many ms (0: no quiet window). */
  minPublishIntervalMs: 0,
  /** An agent a source stops proposing is forgotten after this long. */
  removalGraceMs: 600_000,
});

/** Health hysteresis (`health:`, `HealthTrackerOptions`): consecutive results before in or out. */
export const HEALTH_DEFAULTS = Object.freeze({
  /** Good observations before an agent enters. */
  enterAfter: 2,
  /** Failed observations before an agent leaves. */
  leaveAfter: 3,
  /** Leave after `leaveAfter` failures even while the card is still usable (served stale). */
  leaveWhileUsable: false,
  /** Good observations before a static (reviewed) agent enters. */
  staticEnterAfter: 1,
  /** Consecutive failed A2A calls (turns and active checks) before a member leaves new snapshots. */
  callLeaveAfter: 5,
  /** The active check (`health.activeCheck`): every admitted agent, or only those whose calls put them out. */
  activeCheck: Object.freeze({ enabled: false, intervalMs: 60_000, timeoutMs: 5_000, maxConcurrent: 4 }),
});

/** Staged rollouts (`rollout:`, `RolloutPolicy`): how a breaking change reaches new sessions. */
export const ROLLOUT_DEFAULTS = Object.freeze({
  /** Which changes roll out by stages: `breaking` ones, `any` change, or `off` (publish at once). */
  trigger: 'breaking' as 'breaking' | 'any' | 'off',
  /** Shares of new sessions (percent) the candidate gets, step by step; reaching 100 promotes it. */
  steps: Object.freeze([5, 25, 100]) as readonly number[],
  /** Each step lasts at least this long. */
  holdMs: 600_000,
  /** Each step lasts at least this many turns on the candidate. */
  minTurns: 20,
  /** Turns of a changed agent on the candidate before its figures are judged. */
  minSamples: 10,
  /** The candidate's turn error rate may exceed the current snapshot's by this much (0.05: 5 points). */
  maxErrorRateIncrease: 0.05,
  /** The candidate's p95 turn latency may be at most this multiple of the current snapshot's… */
  maxLatencyRatio: 1.5,
  /** …and no more than this many ms above it (small latencies are noisy). */
  minLatencyIncreaseMs: 250,
  /** Rolled-back changes remembered (an agent's version is not rolled out again until its card changes). */
  maxQuarantined: 1_000,
});

/** The sources (`sources:`, the source factories' options). */
export const SOURCE_DEFAULTS = Object.freeze({
  /** How often the well-known, AI Catalog and registry sources are refreshed. */
  pollIntervalMs: 300_000,
  /** How often the Kubernetes source re-lists behind its watch. */
  resyncIntervalMs: 300_000,
  /** Pages a registry source follows through `next` in one refresh. */
  maxPages: 20,
  /** Entries a registry source reads in one refresh; past it the refresh fails and the last good list is kept. */
  maxEntries: 5_000,
});

/** The Google Cloud Agent Registry adapter (`registry: { kind: google-agent-registry }`, `googleAgentRegistryAdapter`). */
export const GOOGLE_AGENT_REGISTRY_DEFAULTS = Object.freeze({
  /** The registry's API origin; the API version path (`/v1alpha`, ADK's) is appended when the URL has no path. */
  url: 'https://agentregistry.googleapis.com',
  /** Agents asked per page. */
  pageSize: 50,
  /** Bytes of one answer (the fetcher's body cap): a page carries stored cards. */
  maxBytes: 1_048_576,
});

/** The AI Catalog walk (`sources.aiCatalogs[]`, `aiCatalogSource`, `probeAiCatalog`). */
export const CATALOG_DEFAULTS = Object.freeze({
  /** Nesting depth followed; the root catalog is depth 1 (the specification recommends 4). */
  maxDepth: 4,
  /** Entries read in one walk (one refresh), all its catalogs together; also the most one document is read for. */
  maxEntries: 5_000,
  /** Catalog documents read in one walk (one refresh), nested ones included. */
  maxCatalogs: 50,
});

/** The ARD source (`sources.ard[]`, `ardSource`): another registry's entries, read through `GET /agents` or `POST /search`. */
export const ARD_SOURCE_DEFAULTS = Object.freeze({
  /** Entries asked per page (the ARD maximum is 100). */
  pageSize: 100,
  /** Pages read in one refresh (a full read, or the changes since the cursor). */
  maxPages: 50,
  /** Entries kept from one registry; past it the refresh fails and the last good list is kept. */
  maxEntries: 5_000,
  /** Bytes of one page (the fetcher's body cap). */
  maxBytes: 1_048_576,
  /** One refresh, every page together. */
  timeoutMs: 30_000,
});

/** The DNS source (`sources.dns[]`, `dnsSource`, `createDnsResolver`): DNS-AID and DNS-SD records. */
export const DNS_SOURCE_DEFAULTS = Object.freeze({
  /** One query's wait for an answer from one resolver, over UDP or TCP. */
  timeoutMs: 2_000,
  /** Further attempts after a failed one (each at the next resolver), with backoff. */
  retries: 2,
  /** The wait before the first retry; doubled each time. */
  backoffMs: 200,
  /** The UDP payload size advertised with EDNS0; a larger answer comes truncated and is asked again over TCP. */
  udpPayloadSize: 4_096,
  /** The largest answer read over TCP, in bytes (a DNS message is at most 65,535). */
  maxTcpBytes: 65_535,
  /** Resource records in one answer; more is refused. */
  maxRecords: 64,
  /** Agents (names, index entries, DNS-SD instances) read per refresh. */
  maxAgents: 200,
  /** The next refresh comes at the smallest TTL of the records read, but not sooner than this. */
  minRefreshMs: 30_000,
  /** ... and not later than this (also the interval before the first list and after a failure's retry). */
  maxRefreshMs: 3_600_000,
});

/** Federation of `POST /search` (`server.registry.federation`, `createFederation`). */
export const FEDERATION_DEFAULTS = Object.freeze({
  /** Registries asked by one `federation: auto` search; the others are named as skipped. */
  maxRegistries: 8,
  /** One registry's answer, from the request to its last byte. */
  requestTimeoutMs: 2_000,
  /** Every registry together: what has not answered by then is named as timed out. */
  timeoutMs: 3_000,
  /** Bytes of one registry's answer. */
  maxBytes: 1_048_576,
});

/** Conversations pinned to a snapshot (`sessions:`, `TreeFactoryOptions`). */
export const SESSION_DEFAULTS = Object.freeze({
  /** A pin unused this long is released, with the session's history. */
  idleTimeoutMs: 3_600_000,
  /** Pinned sessions at once; a new one beyond it is refused. */
  maxSessions: 10_000,
});

/** Routing evaluation (`routing:`, `evaluateRouting`). */
export const ROUTING_DEFAULTS = Object.freeze({
  /** Accuracy (0–1) below which an evaluation fails. */
  minAccuracy: 0.9,
});

/** What is kept (`retention:`; the version history is `SnapshotStore`'s `historyLimit`). */
export const RETENTION_DEFAULTS = Object.freeze({
  /** Journal events kept, the oldest going first (the kinds operators need last). */
  journalMaxEvents: 100_000,
  /** Journal events kept per event type, the newest: ten kinds at their quota still fit the total. */
  journalMaxEventsPerType: 10_000,
  /** Journal events older than this are deleted (7 days). */
  journalMaxAgeMs: 7 * 24 * 3_600_000,
  /** Published snapshots kept besides the current and the pinned ones. */
  snapshots: 50,
  /** Rows of the version history kept. */
  snapshotHistory: 200,
});

/** Graceful drain on SIGTERM (`server.drainTimeoutMs`; docs/operations.md "Graceful drain"). */
export const DRAIN_DEFAULTS = Object.freeze({
  /** How long chat turns in flight may take to finish once the service drains; past it they are aborted. */
  drainTimeoutMs: 25_000,
});

/** `serve`'s V8 heap (`server.heapGrowthPercent`; docs/operations.md "Memory"). */
export const HEAP_DEFAULTS = Object.freeze({
  /**
   * How far the heap may grow past what the last full collection found live, in percent; 0: V8's
   * own heuristics (1.1 to 4 times). At 100,000 endpoints 30 % held 150–240 MB less RSS after
   * the first snapshot, for about a fifth more CPU (medians) while the fleet was fetched or
   * revalidated at once: left to the operator.
   */
  heapGrowthPercent: 0,
  /** The largest growth accepted, in percent: V8's own heuristics never grow the heap past 4 times. */
  maxHeapGrowthPercent: 300,
});

/** Replicas on one PostgreSQL (`store.replica:`, the store's `ReplicaCoordinator`). */
export const REPLICA_DEFAULTS = Object.freeze({
  /** How often a follower tries to take the leader's advisory lock. */
  leaderRetryMs: 2_000,
  /** How often a follower polls for publications when LISTEN/NOTIFY is quiet. */
  pollMs: 5_000,
  /** How long a leader's lease lasts without renewal. */
  leaseMs: 10_000,
  /** How far a replica request's timestamp may be from the leader's clock, either way (`replica.authWindowMs`). */
  authWindowMs: 30_000,
  /** Replica request nonces remembered within that window (`replica.maxNonces`). */
  maxNonces: 10_000,
  /** How long the replica key before a reload's new one stays accepted (`replica.keyGraceMs`). */
  keyGraceMs: 900_000,
  /** The shortest replica key accepted, in characters (`replica.keyEnv` / `replica.keyFile`). */
  minKeyLength: 32,
});

/** People's OIDC tokens on the service's API (`server.oidc`): clock skew, the JWKS and discovery fetch bounds, the JWKS refetch cooldown. */
export const OIDC_DEFAULTS = Object.freeze({
  rolesClaim: 'roles',
  clockToleranceMs: 30_000,
  fetchTimeoutMs: 5_000,
  maxBytes: 65_536,
  /** After any fetch of the keys (good or failed), none other before this long. */
  cooldownMs: 30_000,
  /** How long the keys are kept before they are fetched again (the last good ones serve while that fails). */
  keysMaxAgeMs: 10 * 60_000,
});
