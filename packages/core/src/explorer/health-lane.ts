/**
 * The explorer's health lane: after each attempt, the modeled agent's scripted call is counted by
 * the library's {@link CallHealth}, and the {@link HealthTracker} observes the card cache and the
 * calls' streak exactly as the discovery loop's evaluator does. The lane records the state and the
 * reason the tracker gave; it decides nothing itself.
 *
 * @module
 */
import type { CardCache } from '../cache/index.js';
import type { Clock } from '../clock/index.js';
import { CallHealth } from '../health/call-health.js';
import { HealthTracker, isMember } from '../health/health-tracker.js';
import { HEALTH_DEFAULTS } from '../rules/defaults.js';
import type { ScriptedCall } from './call-script.js';
import { parseCallScript, recordedCall } from './call-script.js';
import { seconds } from './classify.js';
import type { TraceInputs } from './inputs.js';
import type { TraceHealth, TraceHealthStep } from './types.js';
import { secondsText } from './why.js';

/** The health settings a run uses: the service's defaults, with the explorer's controls. */
function traceHealthSettings(inputs: TraceInputs): TraceHealth['settings'] {
  return { enterAfter: inputs.enterAfter, leaveAfter: HEALTH_DEFAULTS.leaveAfter, callLeaveAfter: inputs.callLeaveAfter, leaveWhileUsable: HEALTH_DEFAULTS.leaveWhileUsable };
}

/** Steps one attempt at a time; {@link HealthLane.result} gives the lane. */
export class HealthLane {
  readonly #calls: readonly ScriptedCall[];
  readonly #callHealth: CallHealth;
  readonly #tracker: HealthTracker;
  readonly #settings: TraceHealth['settings'];
  readonly #steps: TraceHealthStep[] = [];

  /** `script`: the `calls` control (validated); `latencyMs`: a call's latency when the script gives none. */
  constructor(inputs: TraceInputs & { calls: string }, clock: Clock, latencyMs: number) {
    this.#calls = parseCallScript(inputs.calls, latencyMs).calls ?? [];
    this.#settings = traceHealthSettings(inputs);
    this.#callHealth = new CallHealth(clock);
    this.#tracker = new HealthTracker(this.#settings, clock);
  }

  /**
   * Makes attempt `attempt`'s call (if scripted) and observes the endpoint `baseUrl` as the
   * evaluator does: the cache's failed fetches and usable card, the last failure's cause, the calls' streak.
   */
  async step(attempt: number, atMs: number, cache: CardCache, baseUrl: string): Promise<TraceHealthStep> {
    const call = this.#calls[attempt - 1];
    if (call?.outcome !== undefined) this.#callHealth.record(recordedCall({ ...call, outcome: call.outcome }, baseUrl));
    const entry = await cache.peek(baseUrl);
    const neverSeen = entry === undefined ? cache.lastFailure(baseUrl) : undefined;
    const failures = entry?.failures ?? neverSeen?.failures ?? 0;
    const lastError = entry?.lastError ?? neverSeen?.error;
    const streak = this.#callHealth.streak(baseUrl);
    const observation = {
      failures,
      usable: entry?.usable ?? false,
      ...(lastError !== undefined && { cause: { message: lastError.message, ...(lastError.stage !== undefined && { stage: lastError.stage }) } }),
      ...(streak !== undefined && { calls: streak }),
    };
    const transition = this.#tracker.observe(baseUrl, observation);
    const status = this.#tracker.get(baseUrl)!;
    const step: TraceHealthStep = {
      attempt,
      at: seconds(atMs),
      ...(call !== undefined && { call: call.token }),
      callOutcome: call?.outcome === undefined ? 'none' : call.outcome.ok ? 'ok' : 'failed',
      ...(call?.outcome?.errorClass !== undefined && { errorClass: call.outcome.errorClass }),
      ...(call?.message !== undefined && { callMessage: call.message }),
      observation: {
        failures,
        usable: observation.usable,
        ...(failures > 0 && lastError !== undefined && { cause: lastError.message }),
        ...(streak !== undefined && { calls: streak }),
      },
      state: status.state,
      reason: status.reason,
      member: isMember(status.state),
      ...(transition !== undefined && { transition: { from: transition.from, to: transition.to } }),
    };
    this.#steps.push(step);
    return step;
  }

  /** The lane so far. */
  result(): TraceHealth {
    const lines = this.#steps
      .filter((s) => s.transition !== undefined)
      .map((s) => `Attempt ${s.attempt} (${secondsText(s.at)}): ${s.transition!.from} → ${s.transition!.to}: ${s.reason}.`);
    if (lines.length === 0 && this.#steps.length > 0) {
      const last = this.#steps.at(-1)!;
      lines.push(`The agent stays ${last.state} throughout: ${last.reason}.`);
    }
    const unmade = this.#calls.length - this.#steps.length;
    if (unmade > 0) lines.push(`The script holds ${this.#calls.length} calls but the run has ${this.#steps.length} attempts: the last ${unmade} are not made (one call per attempt).`);
    return { settings: this.#settings, steps: this.#steps, lines };
  }
}
