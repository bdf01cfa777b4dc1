/**
 * Health with hysteresis (anti-flapping, P4), driven by what the card cache really saw.
 *
 * - An endpoint enters snapshots after `enterAfter` consecutive observations with a usable card
 *   and no failed fetch.
 * - A member leaves only after `leaveAfter` consecutive **failed fetches** (the cache's counter:
 *   a cycle spent waiting in backoff is not a failure) **and** once its card can no longer be
 *   used (past its allowed staleness). In between it is `degraded`: still in snapshots, served
 *   stale. `leaveWhileUsable: true` drops it after the failures alone.
 * - A removed endpoint returns after `enterAfter` good observations in a row; a failed fetch in
 *   between starts the count again, even while the card it revalidated is usable.
 * - Calls count too (`observation.calls`, from {@link CallHealth}): a member whose A2A calls fail is
 *   degraded, and leaves after `callLeaveAfter` failed calls in a row, however good its card; it
 *   returns like any removed endpoint, after a good call (a turn of a session still pinned to it,
 *   or the active check) and then `enterAfter` good observations in a row.
 * - Critical agents are never removed for health reasons: they stay, flagged degraded.
 *
 * The cache decides what a fetch means; this tracker only turns its counters into states.
 */
import type { Clock } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import type { DiscoveryErrorCode } from '../errors.js';
import { HEALTH_DEFAULTS } from '../rules/defaults.js';
import type { EndpointCause } from './endpoint-causes.js';
import { causeOf, causeRefuses, CONTENT_STAGES, ENDPOINT_CAUSES } from './endpoint-causes.js';

/** `pending`: not yet in snapshots; `healthy` / `degraded`: in; `removed`: out until it recovers. */
export type HealthState = 'pending' | 'healthy' | 'degraded' | 'removed';

/** Every health state and what it means (docs/vocabulary.md; the dashboard's health badges say the same). */
export const HEALTH_STATES: Readonly<Record<HealthState, string>> = Object.freeze({
  healthy: 'Its card is fresh and its fetches and calls succeed: it may be in snapshots.',
  pending: 'Not yet in snapshots: no usable card so far, or fewer good observations in a row than health.enterAfter.',
  degraded: 'In snapshots, but its last fetches or calls failed (its card may be served stale); it leaves after health.leaveAfter failed fetches in a row, unless it is critical.',
  removed: 'Out of new snapshots after repeated failures; it returns after health.enterAfter good observations in a row.',
});

export interface HealthStatus {
  readonly state: HealthState;
  /**
   * Consecutive observations with a usable card and no failed fetch. The one field counted on in
   * place: while nothing else changes, an endpoint keeps its status object (a steady fleet
   * allocates nothing per observation).
   */
  readonly successes: number;
  /** Consecutive failed fetches (from the cache; 0 after any successful fetch). */
  readonly failures: number;
  /** Whether the last observation had a card that may still be used. */
  readonly usable: boolean;
  readonly critical: boolean;
  /** Epoch ms when the endpoint entered `state`. */
  readonly since: number;
  /** Why it is in this state, in words (naming the last failure's cause when one is known). */
  readonly reason: string;
  /** Why its extended card is not used (the public card, or the last good extended card, is), while that lasts. */
  readonly extendedCard?: string;
  /**
   * The last failed fetch's cause in the vocabulary (docs/vocabulary.md), while fetches fail. A
   * refusing cause (a pin, a signature, 401/403, …) with no usable card makes the endpoint's
   * verdict `refused`.
   */
  readonly cause?: EndpointCause;
}

export interface HealthOptions {
  /** Consecutive good observations before a new (or removed) endpoint enters. Default 2. */
  enterAfter?: number;
  /** Consecutive failed fetches before a member may leave. Default 3. */
  leaveAfter?: number;
  /** Leave after `leaveAfter` failures even while the card is still usable (served stale). Default false. */
  leaveWhileUsable?: boolean;
  /** Consecutive failed A2A calls before a member leaves, whatever its card. Default 5. */
  callLeaveAfter?: number;
}

/** One observation: what the cache holds for the endpoint now. */
export interface HealthObservation {
  /** Consecutive failed fetches since the last successful one, as the cache counts them. */
  readonly failures: number;
  /** A card is held and may be used (fresh, or stale within its allowed staleness). */
  readonly usable: boolean;
  /**
   * Why the last fetch failed, as the cache classified it (its error's message and stage): the
   * reasons name it. A content stage (`parse`, `schema`, `policy`, `signature`) means the card
   * was fetched and refused, not that the fetch failed.
   */
  readonly cause?: HealthCause;
  /** Why the extended card could not be used while the public card is (see `HealthStatus.extendedCard`). */
  readonly extendedCard?: string;
  /** Its A2A calls: failed calls in a row since the last good one, and the last one's message. */
  readonly calls?: { readonly failures: number; readonly message?: string };
}

/** The last failure behind an observation, as the cache classified it. */
interface HealthCause {
  readonly message: string;
  readonly stage?: string;
  readonly code?: DiscoveryErrorCode;
  readonly status?: number;
}

/** A failure's cause with its place in the vocabulary, read once per observation. */
type Cause = HealthCause & { readonly kind: EndpointCause | undefined };

/**
 * `failed fetches`; `refused cards` when the last one was fetched and refused at a content stage;
 * `refused requests` when the request itself was refused (a redirect, a blocked address, 401/403).
 */
function failedNoun(failures: number, cause: Cause | undefined): string {
  const one = failures === 1;
  if (CONTENT_STAGES.has(cause?.stage)) return one ? 'refused card' : 'refused cards';
  if (causeRefuses(cause?.kind)) return one ? 'refused request' : 'refused requests';
  return one ? 'failed fetch' : 'failed fetches';
}

/** The cause with its place in the vocabulary (docs/vocabulary.md), when the cache's classification names one. */
function classified(cause: HealthCause): Cause {
  return { ...cause, kind: cause.code === undefined ? undefined : causeOf({ code: cause.code, ...(cause.stage !== undefined && { stage: cause.stage }), ...(cause.status !== undefined && { status: cause.status }) }) };
}

/** `2 failed fetches`, `1 refused card`. */
function failed(failures: number, cause: Cause | undefined): string {
  return `${failures} ${failedNoun(failures, cause)}`;
}

/** `; last: <why>` (empty without a cause). */
function last(cause: Cause | undefined): string {
  return cause === undefined ? '' : `; last: ${cause.message}`;
}

export interface HealthTransition {
  readonly endpoint: string;
  readonly from: HealthState;
  readonly to: HealthState;
  readonly status: HealthStatus;
}

/** `refused by a pin: <why> (1 refused card)`, or `no usable card (2 failed fetches): <why>`. */
function noUsableCard(failures: number, cause: Cause | undefined): string {
  if (cause?.kind !== undefined && causeRefuses(cause.kind)) return `${ENDPOINT_CAUSES[cause.kind].label}: ${cause.message} (${failed(failures, cause)})`;
  return `no usable card (${failed(failures, cause)})${cause === undefined ? '' : `: ${cause.message}`}`;
}

function leftBecause(failures: number, usable: boolean, cause: Cause | undefined): string {
  return `${failures} consecutive ${failedNoun(failures, cause)}${usable ? '' : ' and its card is past its allowed staleness'}${last(cause)}`;
}

/** A removed endpoint that answered since it left but failed again: not why it left (it may have failed fewer than `leaveAfter` times). */
function stillOutBecause(failures: number, usable: boolean, enterAfter: number, cause: Cause | undefined): string {
  return `${failed(failures, cause)} since it last answered${usable ? ' (its card is usable again)' : ' and no usable card'}; it returns after ${enterAfter} good observations in a row${last(cause)}`;
}

/** Whether an endpoint in this state belongs in a snapshot. */
export function isMember(state: HealthState): boolean {
  return state === 'healthy' || state === 'degraded';
}

/**
 * Per-endpoint states.
 *
 * @example
 * const health = new HealthTracker({ enterAfter: 2, leaveAfter: 3 });
 * health.observe(url, { failures: 0, usable: true }); // pending
 * health.observe(url, { failures: 0, usable: true }); // → healthy
 */
export class HealthTracker {
  readonly #enterAfter: number;
  readonly #leaveAfter: number;
  readonly #leaveWhileUsable: boolean;
  readonly #callLeaveAfter: number;
  readonly #clock: Clock;
  readonly #status = new Map<string, HealthStatus>();
  #revision = 0;

  constructor(options: HealthOptions = {}, clock: Clock = systemClock) {
    this.#enterAfter = Math.max(1, options.enterAfter ?? HEALTH_DEFAULTS.enterAfter);
    this.#leaveAfter = Math.max(1, options.leaveAfter ?? HEALTH_DEFAULTS.leaveAfter);
    this.#leaveWhileUsable = options.leaveWhileUsable ?? HEALTH_DEFAULTS.leaveWhileUsable;
    this.#callLeaveAfter = Math.max(1, options.callLeaveAfter ?? HEALTH_DEFAULTS.callLeaveAfter);
    this.#clock = clock;
  }

  /**
   * Counts the changes of any endpoint's status other than its `successes` (its state, reason,
   * failures, usability, cause or extended-card note), an endpoint forgotten or restored: while it
   * stays the same, what is computed from the statuses (the endpoint views) stands.
   */
  get revision(): number {
    return this.#revision;
  }

  /**
   * One more good observation for each of `statuses` whose last observation was good (`successes`
   * above 0), when the observations repeat a pass that changed nothing but these counts: the
   * evaluator's pass with nothing due, which does not observe each endpoint again.
   */
  repeatGood(statuses: readonly HealthStatus[]): void {
    for (const s of statuses) if (s.successes > 0) (s as { successes: number }).successes++;
  }

  /** Consecutive failed fetches before a member may leave. */
  get leaveAfter(): number {
    return this.#leaveAfter;
  }

  /**
   * Records one observation. `enterAfter` overrides the threshold for this endpoint (static,
   * reviewed entries may enter on their first good card). Returns the transition, if any.
   */
  observe(endpoint: string, observation: HealthObservation, options: { critical?: boolean; enterAfter?: number } = {}): HealthTransition | undefined {
    const known = this.#status.get(endpoint);
    // `critical` is remembered: a later call that omits it cannot remove a critical endpoint.
    const critical = options.critical ?? known?.critical ?? false;
    const enterAfter = Math.max(1, options.enterAfter ?? this.#enterAfter);
    const { failures, usable } = observation;
    // A cause is only told while fetches fail.
    const cause = failures > 0 && observation.cause !== undefined ? classified(observation.cause) : undefined;
    const causeCode = cause?.kind;
    const callFailures = observation.calls?.failures ?? 0;
    const good = usable && failures === 0 && callFailures === 0;
    const prevState: HealthState = known?.state ?? 'pending';
    const successes = good ? (known?.successes ?? 0) + 1 : 0;
    let state: HealthState = prevState;
    let reason: string;
    const byCalls = this.#byCalls(prevState, usable && failures === 0, callFailures, observation.calls?.message, critical);
    if (byCalls !== undefined) {
      ({ state, reason } = byCalls);
      return this.#settle(endpoint, known, prevState, state, successes, failures, usable, critical, reason, observation.extendedCard, causeCode);
    }
    switch (prevState) {
      case 'pending':
      case 'removed':
        if (good && successes >= enterAfter) {
          state = 'healthy';
          reason = 'card fresh';
        } else if (good) reason = `${successes} of ${enterAfter} good observations before it enters`;
        // Removed: the failures that would remove it, or else (it answered since) what keeps it out.
        else if (prevState === 'removed' && failures > 0) reason = failures >= this.#leaveAfter && (!usable || this.#leaveWhileUsable) ? leftBecause(failures, usable, cause) : stillOutBecause(failures, usable, enterAfter, cause);
        else if (!usable && failures > 0) reason = noUsableCard(failures, cause);
        else if (!usable) reason = 'no card yet';
        else reason = `${failed(failures, cause)} since its card${last(cause)}`;
        break;
      case 'healthy':
      case 'degraded': {
        const leave = !critical && failures >= this.#leaveAfter && (!usable || this.#leaveWhileUsable);
        if (good) {
          state = 'healthy';
          reason = 'card fresh';
        } else if (leave) {
          state = 'removed';
          reason = leftBecause(failures, usable, cause);
        } else {
          state = 'degraded';
          reason = usable
            ? `${failed(failures, cause)}; its card is served stale${last(cause)}`
            : `${failed(failures, cause)}; its card is past its allowed staleness${critical ? ' (critical: kept while degraded)' : ''}${last(cause)}`;
        }
        break;
      }
    }
    return this.#settle(endpoint, known, prevState, state, successes, failures, usable, critical, reason, observation.extendedCard, causeCode);
  }

  /**
   * What failing calls decide, when the card alone would not (its fetches are good): a member
   * degraded, or removed after `callLeaveAfter` in a row (never a critical one); a removed one
   * kept out until a good call. Undefined when the calls decide nothing.
   */
  #byCalls(prev: HealthState, cardGood: boolean, callFailures: number, message: string | undefined, critical: boolean): { state: HealthState; reason: string } | undefined {
    if (callFailures === 0 || !cardGood) return undefined;
    const calls = `${callFailures} failed call${callFailures === 1 ? '' : 's'} in a row${message === undefined ? '' : `; last: ${message}`}`;
    if (prev === 'pending') return undefined;
    if (prev === 'removed') return { state: 'removed', reason: `${calls}; it returns after a good call and ${this.#enterAfter} good observations in a row` };
    if (!critical && callFailures >= this.#callLeaveAfter) return { state: 'removed', reason: `left new snapshots after ${calls}` };
    return { state: 'degraded', reason: `${calls}${critical ? ' (critical: kept while degraded)' : ''}` };
  }

  /**
   * Records an endpoint's new status (one object, built once: every endpoint is observed every
   * cycle) and answers the transition, if its state changed.
   */
  #settle(
    endpoint: string,
    known: HealthStatus | undefined,
    prevState: HealthState,
    state: HealthState,
    successes: number,
    failures: number,
    usable: boolean,
    critical: boolean,
    reason: string,
    extendedCard: string | undefined,
    cause: EndpointCause | undefined,
  ): HealthTransition | undefined {
    if (
      known !== undefined &&
      state === prevState &&
      reason === known.reason &&
      failures === known.failures &&
      usable === known.usable &&
      critical === known.critical &&
      extendedCard === known.extendedCard &&
      cause === known.cause
    ) {
      // Only the count of good observations moves: the same status, counted on in place.
      (known as { successes: number }).successes = successes;
      return undefined;
    }
    this.#revision++;
    const since = state === prevState && known ? known.since : this.#clock.wallNow();
    const status: HealthStatus =
      extendedCard === undefined && cause === undefined
        ? { state, successes, failures, usable, critical, reason, since }
        : { state, successes, failures, usable, critical, reason, ...(extendedCard !== undefined && { extendedCard }), ...(cause !== undefined && { cause }), since };
    this.#status.set(endpoint, status);
    return state === prevState ? undefined : { endpoint, from: prevState, to: state, status };
  }

  /**
   * Marks an endpoint a member without observations: it was in the snapshot a durable store
   * restored, so it stays (healthy until its next observation says otherwise, then degraded and
   * served stale while its peer is down) instead of having to enter again after a restart.
   * `removed`: it had left snapshots before the restart (its alert is carried), so it stays out
   * until it recovers, as it would have.
   */
  restore(endpoint: string, options: { critical?: boolean; removed?: boolean } = {}): void {
    if (this.#status.has(endpoint)) return;
    const removed = options.removed === true;
    this.#revision++;
    this.#status.set(endpoint, {
      state: removed ? 'removed' : 'healthy',
      successes: 0,
      failures: 0,
      usable: !removed,
      critical: options.critical ?? false,
      since: this.#clock.wallNow(),
      reason: removed ? 'it had left snapshots before the restart' : 'restored from the store',
    });
  }

  get(endpoint: string): HealthStatus | undefined {
    return this.#status.get(endpoint);
  }

  /** Forgets an endpoint that left discovery. */
  forget(endpoint: string): void {
    if (this.#status.delete(endpoint)) this.#revision++;
  }

  entries(): Array<[string, HealthStatus]> {
    return [...this.#status.entries()];
  }
}
