/**
 * Edge-triggered alerts for lasting conditions. Each evaluation raises the conditions that hold
 * now; a condition fires one `alert` when it starts, and one `alert.resolved` once it has been
 * absent for `clearAfter` consecutive evaluations (the same hysteresis as health, so a flapping
 * condition does not flood the journal). It fires again on its next occurrence. Alerts an earlier
 * process left open are carried ({@link AlertBook.carry}), not raised again.
 */
import type { EventStream, OpenAlert } from '../events/index.js';
import { HEALTH_DEFAULTS } from '../rules/defaults.js';
import { systemClock } from '../clock/index.js';

export interface AlertInput {
  readonly kind: string;
  readonly message: string;
  readonly endpoint?: string;
  readonly detail?: Record<string, unknown>;
}

interface Active {
  readonly alert: AlertInput;
  readonly raisedAt: number;
  absent: number;
  /** The last evaluation that raised it (see {@link AlertBook.settle}). */
  seen: number;
}

export class AlertBook {
  readonly #events: EventStream | undefined;
  readonly #clearAfter: number;
  readonly #active = new Map<string, Active>();
  /** The evaluation in progress: a condition raised in it carries its number (no set of keys built per evaluation). */
  #evaluation = 0;

  constructor(events: EventStream | undefined, options: { clearAfter?: number } = {}) {
    this.#events = events;
    this.#clearAfter = Math.max(1, options.clearAfter ?? HEALTH_DEFAULTS.enterAfter);
  }

  /** The condition `key` holds in this evaluation: alerts if it was not active. */
  raise(key: string, alert: AlertInput): void {
    const active = this.#active.get(key);
    if (active) {
      active.absent = 0;
      active.seen = this.#evaluation;
      return;
    }
    const event = this.#events?.emit({ type: 'alert', key, ...alert });
    this.#active.set(key, { alert, raisedAt: event?.at ?? systemClock.wallNow(), absent: 0, seen: this.#evaluation });
  }

  /**
   * Holds `open` (alerts an earlier process or the previous leader raised and did not resolve) as
   * the active conditions, in place of the ones held, without emitting: a condition that still
   * holds is not raised again; one that does not resolves after `clearAfter` evaluations, with
   * its original `raisedAt`.
   */
  carry(open: readonly OpenAlert[]): void {
    // A condition already raised in this evaluation stays raised in it.
    const raisedNow = new Set([...this.#active].filter(([, a]) => a.seen === this.#evaluation).map(([key]) => key));
    this.#active.clear();
    for (const { key, raisedAt, ...alert } of open) this.#active.set(key, { alert, raisedAt, absent: 0, seen: raisedNow.has(key) ? this.#evaluation : this.#evaluation - 1 });
  }

  /** Ends an evaluation: conditions not raised in it count one absence, and resolve after `clearAfter`. */
  settle(): void {
    for (const [key, active] of this.#active) {
      if (active.seen === this.#evaluation) continue;
      if (++active.absent >= this.#clearAfter) this.#resolve(key, active);
    }
    this.#evaluation++;
  }

  /** Resolves at once every condition about `endpoint` (it left discovery). */
  resolveEndpoint(endpoint: string): void {
    for (const [key, active] of this.#active) if (active.alert.endpoint === endpoint) this.#resolve(key, active);
  }

  #resolve(key: string, active: Active): void {
    this.#active.delete(key);
    this.#events?.emit({
      type: 'alert.resolved',
      kind: active.alert.kind,
      key,
      message: `resolved: ${active.alert.message}`,
      ...(active.alert.endpoint !== undefined && { endpoint: active.alert.endpoint }),
      raisedAt: active.raisedAt,
    });
  }

  /** Keys of the conditions that hold now. */
  get active(): string[] {
    return [...this.#active.keys()];
  }
}
