/**
 * The service's own limits: request bodies, Server-Sent Events streams, inspections, per-client fair shares and socket timeouts. Each
 * is a `server.limits` key in the configuration; each refusal it causes is counted in
 * `a2a_discovery_http_refusals_total{reason}` (docs/security.md lists them).
 */

import { DEFAULT_SERVER_LIMITS as CONFIG_SERVER_LIMITS } from 'a2a-discovery/config';

/** Limits of the HTTP service. Sizes in bytes, durations in milliseconds. */
export interface ServerLimits {
  /** Largest JSON body of `/api/chat`, `/api/sessions/:id/upgrade`, `/api/refresh` (413 beyond). Default 64 KiB. */
  maxBodyBytes: number;
  /** Largest JSON body of `/api/trace` (its inputs may carry a card). Default 256 KiB. */
  maxTraceBodyBytes: number;
  /** Largest JSON body of `/api/inspect` (a pasted card or catalog). Default 256 KiB. */
  maxInspectBodyBytes: number;
  /** `/api/inspect` calls running at once, all callers together (429 beyond). Default 2. */
  maxInspections: number;
  /** One inspection's deadline: requests still in flight are aborted and the report says so. Default 20 s. */
  inspectTimeoutMs: number;
  /** Catalog entries one inspection reads, every document together; later ones are not listed (the answer says `truncated`). Default 5,000. */
  inspectMaxEntries: number;
  /** Catalog documents one inspection fetches, the root and nested ones together; later ones are not requested. Default 10. */
  inspectMaxDocuments: number;
  /** Upstream requests one inspection makes in all (documents and card probes, one budget); later ones are not made. Default 72. */
  inspectMaxRequests: number;
  /** Bytes of one inspection's JSON answer; entries past it are left out and the answer says `truncated`. Default 512 KiB. */
  inspectMaxAnswerBytes: number;
  /** Open `/api/stream` connections, all clients together (503 beyond). Default 64. */
  maxStreams: number;
  /** Open `/api/stream` connections per client address (503 beyond). Default 8. */
  maxStreamsPerClient: number;
  /** Events queued for one stream while its reader is behind; past this it is dropped with a notice. Default 512. */
  streamQueueEvents: number;
  /** A reader whose socket stays full (reads nothing) this long is dropped with a notice. Default 30 s. */
  streamStallMs: number;
  /** Events replayed after `Last-Event-ID`; older missed events are announced as a `gap`. Default 256. */
  maxReplayEvents: number;
  /** Time to receive a request's headers (`server.headersTimeout`); 408 and close beyond. Default 10 s. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (`server.requestTimeout`). Default 30 s. */
  requestTimeoutMs: number;
  /** Idle time of a keep-alive connection between requests (`server.keepAliveTimeout`). Default 5 s. */
  keepAliveTimeoutMs: number;
  /** `/api/inspect` calls running at once for one client (429 beyond). Default 1, so one client never holds every inspector slot. */
  maxInspectionsPerClient: number;
  /**
   * Sessions one client may hold pinned; its next new session is 429. Default 32. Never more than
   * half of `sessions.maxSessions`, rounded up ({@link sessionsPerClient}).
   */
  maxSessionsPerClient: number;
  /** `/api/chat` turns running at once for one client (429 beyond). Default 2. */
  maxTurnsPerClient: number;
  /** `/api/chat` turns running at once, all clients together, shared fairly (fair-pool.ts). Default 64. */
  maxTurns: number;
  /** Requests waiting for a slot of a full pool (inspections, turns), at most one per client; 0: none wait. Default 64. */
  queueLength: number;
  /** The longest a request waits for a slot of a full pool (429 past it). Default 10 s. */
  queueWaitMs: number;
  /** Endpoints whose cache activity is counted at once; beyond, the one counted first is dropped (`a2a_discovery_activity_endpoints_dropped`). Default 10,000. */
  activityEndpoints: number;
  /** A follower waits this long for the leader's lists (`server.limits.leaderTimeoutMs`). Default 5 s. */
  leaderTimeoutMs: number;
  /** The largest answer a follower takes from the leader (`server.limits.leaderMaxBytes`). Default 32 MiB. */
  leaderMaxBytes: number;
}

/** The defaults, from the configuration schema (one definition for the YAML keys and the library). */
export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = CONFIG_SERVER_LIMITS;

/**
 * The sessions one client may hold: `server.limits.maxSessionsPerClient`, but never more than half
 * of `sessions.maxSessions` (rounded up, at least 1), so that with a lowered global cap one client
 * still cannot hold every session: a cap of 5 leaves each client 3 and another client its first
 * turn. (With a cap of 1 that one session is anyone's.)
 */
export function sessionsPerClient(maxSessionsPerClient: number, maxSessions: number): number {
  return Math.max(1, Math.min(maxSessionsPerClient, Math.ceil(maxSessions / 2)));
}

/** Why the service refused or cut a request: the `reason` label of `a2a_discovery_http_refusals_total`. */
export type RefusalReason =
  | 'host'
  | 'origin'
  | 'content_type'
  | 'body_bytes'
  | 'malformed_uri'
  | 'streams'
  | 'streams_per_client'
  // A stream ended to give its slot to a client under its share (fair-pool.ts).
  | 'streams_fair_share'
  | 'stream_queue'
  | 'stream_stall'
  | 'replay_events'
  | 'request_timeout'
  | 'sessions'
  | 'session_owner'
  | 'inspections'
  | 'inspect_timeout'
  | 'inspect_truncated'
  | 'inspections_per_client'
  | 'sessions_per_client'
  | 'turns_per_client'
  | 'turns'
  | 'registry_searches'
  | 'registry_searches_per_client'
  | 'turn_aborted'
  // Refused while the service drains (docs/operations.md "Graceful drain").
  | 'draining'
  | 'leader_unreachable'
  // Several replicas: a leader URL read from the store that replica.leaderUrls does not allow (follower), a replica signature refused (leader).
  | 'leader_url'
  | 'replica_auth'
  | 'unauthorized'
  | 'role'
  | 'oidc_keys'
  // The registry API's limits (server.registry; docs/registry-api.md).
  | 'registry_body_bytes'
  | 'registry_text'
  | 'registry_filter'
  | 'registry_facets'
  | 'registry_terms'
  | 'registry_candidates'
  | 'registry_page_size'
  | 'registry_page_token'
  | 'registry_cursor_expired';

/** Counts a refusal (the metrics' counter, or nothing). */
export type OnRefusal = (reason: RefusalReason) => void;
