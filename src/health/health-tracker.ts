/**
 * Health with hysteresis (anti-flapping, P4): an endpoint enters snapshots only after
 * `enterAfter` consecutive good observations and leaves only after `leaveAfter` consecutive
 * bad ones; in between a failing member is `degraded` but kept. A peer alternating good and bad
 * therefore never churns snapshots. Critical agents are never removed for health reasons: they
 * stay, flagged degraded, and the loop alerts.
 *
 * The cache decides what a fetch means; this tracker only counts observations.
 */

/** `pending`: not yet in snapshots; `healthy` / `degraded`: in; `removed`: out until it recovers. */
export type HealthState = 'pending' | 'healthy' | 'degraded' | 'removed';

export interface HealthStatus {
  readonly state: HealthState;
  /** Consecutive good / bad observations (one of them is always 0). */
  readonly successes: number;
  readonly failures: number;
  readonly critical: boolean;
}

export interface HealthOptions {
  /** Consecutive good observations before a new (or removed) endpoint enters. Default 2. */
  enterAfter?: number;
  /** Consecutive bad observations before a member leaves. Default 3. */
  leaveAfter?: number;
}

export interface HealthTransition {
  readonly endpoint: string;
  readonly from: HealthState;
  readonly to: HealthState;
  readonly status: HealthStatus;
}

/** Whether an endpoint in this state belongs in a snapshot. */
export function isMember(state: HealthState): boolean {
  return state === 'healthy' || state === 'degraded';
}

/**
 * Per-endpoint counters and states.
 *
 * @example
 * const health = new HealthTracker({ enterAfter: 2, leaveAfter: 3 });
 * health.observe(url, true); health.observe(url, true); // → healthy
 */
export class HealthTracker {
  readonly #enterAfter: number;
  readonly #leaveAfter: number;
  readonly #status = new Map<string, HealthStatus>();

  constructor(options: HealthOptions = {}) {
    this.#enterAfter = Math.max(1, options.enterAfter ?? 2);
    this.#leaveAfter = Math.max(1, options.leaveAfter ?? 3);
  }

  /**
   * Records one observation. `enterAfter` overrides the threshold for this endpoint (static,
   * reviewed entries may enter on their first good card). Returns the transition, if any.
   */
  observe(endpoint: string, good: boolean, options: { critical?: boolean; enterAfter?: number } = {}): HealthTransition | undefined {
    const known = this.#status.get(endpoint);
    // `critical` is remembered: a later call that omits it cannot remove a critical endpoint.
    const critical = options.critical ?? known?.critical ?? false;
    const enterAfter = Math.max(1, options.enterAfter ?? this.#enterAfter);
    const prev = known ?? { state: 'pending' as const, successes: 0, failures: 0, critical };
    const successes = good ? prev.successes + 1 : 0;
    const failures = good ? 0 : prev.failures + 1;
    let state: HealthState = prev.state;
    switch (prev.state) {
      case 'pending':
      case 'removed':
        if (good && successes >= enterAfter) state = 'healthy';
        break;
      case 'healthy':
      case 'degraded':
        if (good) state = 'healthy';
        else if (failures >= this.#leaveAfter && !critical) state = 'removed';
        else state = 'degraded';
        break;
    }
    const status: HealthStatus = { state, successes, failures, critical };
    this.#status.set(endpoint, status);
    return state === prev.state ? undefined : { endpoint, from: prev.state, to: state, status };
  }

  get(endpoint: string): HealthStatus | undefined {
    return this.#status.get(endpoint);
  }

  /** Forgets an endpoint that left discovery. */
  forget(endpoint: string): void {
    this.#status.delete(endpoint);
  }

  entries(): Array<[string, HealthStatus]> {
    return [...this.#status.entries()];
  }
}
