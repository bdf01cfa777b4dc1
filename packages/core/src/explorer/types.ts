/**
 * The shape of a trace run (`TraceResult` and its parts): plain data, the same for the CLI's
 * `--json` and for the explorer page.
 *
 * @module
 */
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import type { CardOutcome } from '../events/index.js';
import type { CallFiguresView } from '../health/call-figures.js';
import type { HealthState } from '../health/health-tracker.js';
import type { RolloutPolicy, RolloutStatus } from '../rollout/rollouts.js';
import type { Need } from '../match/index.js';
import type { TraceCondition, TraceInputs } from './inputs.js';
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

/** Every condition, in the order a control lists them. */
export const TRACE_CONDITIONS: readonly TraceCondition[] = Object.freeze(['healthy', 'not-found', 'unavailable', 'unauthorized', 'malformed', 'insecure']);

/** The triggers of a staged rollout, in the order a control lists them. */
export const TRACE_ROLLOUT_TRIGGERS: readonly TraceInputs['rolloutTrigger'][] = Object.freeze(['breaking', 'any', 'off']);

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

/** The agent's health after one attempt and its call (present with the `calls` control). */
export interface TraceHealthStep {
  /** The attempt (1-based). */
  readonly attempt: number;
  /** Model seconds when health was observed (the end of the attempt). */
  readonly at: number;
  /** The call's token as scripted (`ok`, `500`, `network`, `-`); absent past the end of the script. */
  readonly call?: string;
  /** What the call came to: `ok`, `failed` or `none`. */
  readonly callOutcome: 'ok' | 'failed' | 'none';
  /** A failed call's error class (`http_500`, `network`). */
  readonly errorClass?: string;
  /** A failed call's message, as the orchestrator words it. */
  readonly callMessage?: string;
  /** What the health tracker observed: the card cache's failed fetches, whether the card may be used, and the calls' streak. */
  readonly observation: {
    readonly failures: number;
    readonly usable: boolean;
    readonly cause?: string;
    readonly calls?: { readonly failures: number; readonly message?: string };
  };
  /** The state `HealthTracker` gave. */
  readonly state: HealthState;
  /** Its reason, word for word (the service shows the same). */
  readonly reason: string;
  /** Whether the agent is in new snapshots (`healthy` or `degraded`). */
  readonly member: boolean;
  /** The change of state this observation made, if any. */
  readonly transition?: { readonly from: HealthState; readonly to: HealthState };
}

/** The agent's health through the run, from its card fetches and its calls (the `calls` control). */
export interface TraceHealth {
  /** The health settings the run used (`health.*` in the service's configuration). */
  readonly settings: { readonly enterAfter: number; readonly leaveAfter: number; readonly callLeaveAfter: number; readonly leaveWhileUsable: boolean };
  /** One per attempt. */
  readonly steps: readonly TraceHealthStep[];
  /** Every change of state in one sentence each. */
  readonly lines: readonly string[];
}

/** One decision of the rollout, in model time. */
export interface TraceRolloutDecision {
  /** Model seconds. */
  readonly at: number;
  /** `started`, `advanced`, `promoted`, `rolled-back`. */
  readonly action: string;
  /** `auto` (the library's judgement). */
  readonly by: string;
  /** The library's reason, word for word. */
  readonly reason: string;
  /** The step (0-based) after the decision. */
  readonly step: number;
  /** The share of new sessions (percent) the candidate has after the decision (0 once rolled back, 100 once promoted). */
  readonly share: number;
}

/** One step of the rollout: its share and what its sessions came to. */
export interface TraceRolloutStep {
  /** 0-based, as the library counts steps. */
  readonly step: number;
  /** Percent of new sessions assigned to the candidate. */
  readonly share: number;
  /** Model seconds when the step started. */
  readonly from: number;
  /** Model seconds when the step ended (a decision, or the sessions ran out). */
  readonly to: number;
  /** New sessions during the step. */
  readonly sessions: number;
  /** Those the library assigned to the candidate. */
  readonly candidateSessions: number;
  /** Turns on the candidate that reached the agent, and how many failed. */
  readonly candidate: { readonly turns: number; readonly errors: number };
  /** Turns on the current snapshot that reached the agent, and how many failed. */
  readonly current: { readonly turns: number; readonly errors: number };
}

/** Where a sample session lands during the rollout (`rolloutBucket`: the same on every replica). */
export interface TraceRolloutSample {
  /** `session-1` … `session-20`: the first sessions of the run. */
  readonly sessionId: string;
  /** Its bucket in [0, 1): on the candidate while the share (percent) is above `bucket × 100`. */
  readonly bucket: number;
  /** The steps' shares at which it starts on the candidate. */
  readonly candidateAt: readonly number[];
  /** Where it started in this run, when it arrived before the rollout ended. */
  readonly landed?: 'candidate' | 'current';
}

/** How the change from card v1 to card v2 rolls out (the `rollout` control), decided by the library's `Rollouts`. */
export interface TraceRollout {
  /** The agent's local name. */
  readonly agent: string;
  /** What `classifyAgentChange` says of v1 → v2. */
  readonly change: { readonly from: CardVersionLabel; readonly to: CardVersionLabel; readonly impact: 'breaking' | 'compatible'; readonly reasons: readonly string[] };
  /** Whether `planRollout` staged it (otherwise it is published to every new session at once). */
  readonly staged: boolean;
  /** The rollout's id (`planRollout`'s, from the change), when staged: a session's side is `rolloutBucket(id, sessionId)`. */
  readonly id?: string;
  /** The policy the run used. */
  readonly policy: RolloutPolicy;
  /** How it ended: the library's status, `published` (not staged), or `running` (the sessions ran out first). */
  readonly status: RolloutStatus | 'published';
  /** Every decision, in order, with the library's reason. */
  readonly decisions: readonly TraceRolloutDecision[];
  /** Each step the rollout went through, with its sessions and turns. */
  readonly steps: readonly TraceRolloutStep[];
  /** The agent's figures on both sides at the last judgement (what the library compared). */
  readonly figures?: { readonly candidate?: CallFiguresView; readonly current?: CallFiguresView };
  /** The alert an automatic rollback raised, word for word. */
  readonly alert?: string;
  /** New sessions run (until the rollout ended or the sessions ran out). */
  readonly sessions: number;
  /** How many of them started on the candidate. */
  readonly candidateSessions: number;
  /** Where the first sessions land, by `rolloutBucket` (empty when not staged). */
  readonly samples: readonly TraceRolloutSample[];
  /** The outcome in one sentence. */
  readonly sentence: string;
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
  /** The agent's health per attempt, with the `calls` control. */
  readonly health?: TraceHealth;
  /** How v1 → v2 rolls out, with the `rollout` control. */
  readonly rollout?: TraceRollout;
}
