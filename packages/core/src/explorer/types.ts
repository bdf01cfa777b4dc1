/**
 * The shape of a trace run (`TraceResult` and its parts): plain data, the same for the CLI's
 * `--json` and for the explorer page.
 *
 * @module
 */
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import type { CardOutcome } from '../events/index.js';
import type { Need } from '../match/index.js';
import type { TraceInputs } from './inputs.js';
import type { CardVersionLabel } from './scripted-endpoint.js';

/** Identifies the shape of {@link TraceResult}; bumped on incompatible changes. */
export const TRACE_SCHEMA = 'a2a-discovery/trace@2';

/**
 * What an attempt did first: `cache-hit` (a fresh cached card, no request), `fetch` (a request
 * reached the network), or `backoff` (no request: the library is backing off after failures;
 * only with the `backoff` control).
 */
export type TraceAction = 'cache-hit' | 'fetch' | 'backoff';

/** The library's stage that rejected an attempt, or `match` for capability. */
export type TraceRejectStage = 'fetch' | 'parse' | 'schema' | 'policy' | 'signature' | 'match';

/**
 * The lanes of the playback diagram, in the order `CardCache.get` runs them: look the card up,
 * request it, validate new bytes, store (or refuse to store) the result, then select.
 */
export type TimelineStage = 'lookup' | 'request' | 'validation' | 'store' | 'selection';

/** Every lane, in the order the code runs. */
export const TIMELINE_STAGES: readonly TimelineStage[] = Object.freeze(['lookup', 'request', 'validation', 'store', 'selection']);

/** The lane names a person reads (the diagram, the stage cards and every rejection use them). */
export const TIMELINE_STAGE_NAMES: Readonly<Record<TimelineStage, string>> = Object.freeze({
  lookup: 'Cache lookup',
  request: 'Request',
  validation: 'Validation',
  store: 'Cache store',
  selection: 'Selection',
});

/**
 * Why an attempt did (or did not) go to the network: `no-card` (nothing cached yet), `expired`
 * (the cached card's freshness ran out), `fresh` (served from the cache), `retry` (a failed
 * attempt before, and no backoff forbids asking again), `backing-off` (no request until later).
 */
export type TraceTrigger = 'no-card' | 'expired' | 'fresh' | 'retry' | 'backing-off';

/** One discovery attempt. */
export interface TraceAttempt {
  /** 1-based. */
  readonly index: number;
  /** Model seconds when the attempt started. */
  readonly at: number;
  /** Model seconds when it ended (after the round trip, if any). */
  readonly endedAt: number;
  readonly action: TraceAction;
  /** What the cache entry said at the start of the attempt, as a keyword. */
  readonly trigger: TraceTrigger;
  /** The same in words, with its time, e.g. "the cached card expired at 10.1 s". */
  readonly why: string;
  /** HTTP status, when the attempt fetched. */
  readonly status?: number;
  /** Whether the request carried a validator (`If-None-Match`), when it fetched. */
  readonly conditional?: boolean;
  /** The `If-None-Match` value sent (the stored ETag), when conditional. */
  readonly ifNoneMatch?: string;
  /**
   * When conditional and answered 200 or 304: what the validator did, e.g. `If-None-Match
   * "card-v1" no longer matched: the card changed on the server (its ETag is now "card-v2"), so
   * the answer is 200 with the whole new card instead of 304 Not Modified`.
   */
  readonly revalidation?: string;
  /** Body bytes received, when it fetched. */
  readonly bytes?: number;
  /** The card cache's own outcome (`card.result` event), absent for `backoff`. */
  readonly cacheOutcome?: CardOutcome;
  /** The card used (a usable card was in hand): its `version` 1.0.0 → v1, 2.0.0 → v2. */
  readonly cardVersion?: CardVersionLabel;
  /** The card version the server publishes when the attempt starts. */
  readonly serverVersion: CardVersionLabel;
  /** True when the card used was served stale after a failed refresh (stale-on-error). */
  readonly stale?: boolean;
  readonly outcome: 'accepted' | 'rejected';
  /** When rejected: the library's stage that refused. */
  readonly stage?: TraceRejectStage;
  /** When rejected: the diagram lane that refused (`request`, `validation`, `selection`, or `lookup` while backing off). */
  readonly lane?: TimelineStage;
  /** When rejected: the library's reason (error message or matcher reason). */
  readonly reason?: string;
  /** When rejected by the cache: the library's error code. */
  readonly code?: DiscoveryErrorCode;
  /** Every problem the validator found, when content was refused. */
  readonly problems?: readonly Problem[];
  /** When accepted after a failure (stale-on-error): what failed. */
  readonly note?: string;
  /** When a newer card is on the server than the one used: why the client does not see it yet. */
  readonly hiddenNewer?: string;
}

/** Totals over the run. */
export interface TraceStats {
  /** Requests that reached the network. */
  readonly networkFetches: number;
  /** Attempts served by a fresh cached card. */
  readonly cacheHits: number;
  /** 304 Not Modified responses. */
  readonly notModified: number;
  /** Body bytes of 200 responses (a 304 or an error status carries none). */
  readonly bytesTransferred: number;
  readonly accepted: number;
  readonly rejected: number;
  /** Attempts that sent no request because the library was backing off. */
  readonly backoffSkips: number;
  /** Accepted attempts that used a stale card (stale-on-error). */
  readonly staleSelections: number;
}

/** One step of the playback timeline. */
export interface TraceEvent {
  /** Order in the run, from 1. */
  readonly seq: number;
  /** The attempt it belongs to (1-based). */
  readonly attempt: number;
  /** Model milliseconds. */
  readonly atMs: number;
  /** The lane (see {@link TIMELINE_STAGES}). */
  readonly stage: TimelineStage;
  /**
   * `attempt.start`, `cache.hit`, `cache.backing-off` (lookup); `request.sent`,
   * `request.received` (server side), `response.received` (request); `validation.passed`,
   * `validation.failed`, `validation.skipped` (validation); `cache.stored`, `cache.revalidated`,
   * `cache.unchanged`, `cache.not-stored`, `cache.stale`, `cache.failed`, `cache.backoff`
   * (store); `selection.accepted`, `selection.rejected` (selection).
   */
  readonly kind: string;
  /** One sentence for a person. */
  readonly message: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The cache entry for the endpoint after an attempt (from `CardCache.peek` / `lastFailure`). */
export interface TraceCacheState {
  readonly attempt: number;
  /** Model seconds when the snapshot was taken (the end of the attempt). */
  readonly at: number;
  /** Whether a card is stored. */
  readonly present: boolean;
  readonly cardVersion?: CardVersionLabel;
  readonly etag?: string;
  /** Model seconds when the stored card stops being fresh. */
  readonly expiresAt?: number;
  readonly stale: boolean;
  readonly usable: boolean;
  /** Consecutive failed refreshes (also counted for an endpoint that never delivered a card). */
  readonly failures: number;
  /** Model seconds before which no request is sent (backoff). */
  readonly nextAttemptAt?: number;
  readonly lastOutcome?: CardOutcome;
}

/** When the newer card reached the client, for the freshness-versus-requests trade-off. */
export interface TraceFreshness {
  /** Model seconds when v2 was published; `null` when it never is. */
  readonly v2PublishedAt: number | null;
  /** Model seconds when an attempt first used v2; `null` when none did. */
  readonly v2FirstUsedAt: number | null;
  /** Attempts that used v1 while v2 was already on the server. */
  readonly v2HiddenAttempts: readonly number[];
  /** The same in one sentence. */
  readonly sentence: string;
}

/** The library settings a run used, so a reader can see which real behaviour each control maps to. */
export interface TraceLibrarySettings {
  readonly cache: {
    readonly defaultTtlMs: number;
    readonly minTtlMs: number;
    readonly maxTtlMs: number;
    readonly expiryJitter: number;
    readonly backoffBaseMs: number;
    readonly backoffMaxMs: number;
    readonly backoffJitter: number;
    readonly maxStaleMs: number;
    readonly requestHeaders: Readonly<Record<string, string>>;
    readonly randomSeed: number;
  };
  readonly hostPolicy: { readonly allow: readonly string[] };
  readonly match: { readonly need: Need; readonly required: { readonly streaming: boolean } };
}

/** Fixed facts of the model, for a page that explains a run. */
export interface TraceModel {
  readonly baseUrl: string;
  readonly cardUrl: string;
  readonly cardBytes: number;
  readonly cardVersions: Readonly<Record<CardVersionLabel, string>>;
  /** The body the endpoint serves for each version under this run's condition and card controls (UTF-8 text). */
  readonly cards: Readonly<Record<CardVersionLabel, string>>;
  readonly units: Readonly<Record<string, string>>;
  readonly limits: readonly string[];
}

/** Everything a run produced. Plain data: `JSON.stringify` gives the whole of it. */
export interface TraceResult {
  readonly schema: typeof TRACE_SCHEMA;
  /** Every control, resolved (defaults filled in). */
  readonly inputs: TraceInputs;
  readonly model: TraceModel;
  readonly library: TraceLibrarySettings;
  readonly attempts: readonly TraceAttempt[];
  readonly stats: TraceStats;
  /** Playback timeline, in order. */
  readonly events: readonly TraceEvent[];
  /** The cache entry after each attempt, one per attempt. */
  readonly cacheStates: readonly TraceCacheState[];
  readonly freshness: TraceFreshness;
  /** One line: the stats in words. */
  readonly summary: string;
}
