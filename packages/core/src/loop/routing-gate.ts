/**
 * The routing gate (docs/routing.md): evaluates the routing of candidate and published snapshots,
 * once per routing (agents' names, tags, criticality and domains, and the layout), alerts while it
 * fails, and with `gate` holds a failing candidate so the current routing stays. Keeps the
 * verdicts of the last publications for the API.
 */
import type { Clock } from '../clock/index.js';
import { toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { Snapshot } from '../snapshot/index.js';
import { buildSnapshot } from '../snapshot/index.js';
import type { AlertBook } from './alert-book.js';
import { ATTR, SPAN, spanError, withSpan } from '../telemetry/index.js';

/** What a routing evaluation says about a candidate snapshot (see `evaluateRouting`). */
export interface RoutingVerdict {
  /** 0–1. */
  readonly accuracy: number;
  readonly minAccuracy: number;
  readonly passed: boolean;
  /** Cases counted. */
  readonly evaluated: number;
  /** One line for the alert, e.g. the worst labels. */
  readonly summary?: string;
}

export interface RoutingGateOptions {
  /** The loop's `routing` option; without it the gate evaluates and holds nothing. */
  routing: { evaluate: (candidate: Snapshot) => RoutingVerdict | Promise<RoutingVerdict>; gate?: boolean } | undefined;
  clock: Clock;
  events: EventStream | undefined;
  alerts: AlertBook;
}

export class RoutingGate {
  readonly #o: RoutingGateOptions;
  /** Routing verdicts by routing key (agents' names, tags and domains, and the layout); the last few. */
  readonly #byKey = new Map<string, RoutingVerdict>();
  /** Verdicts of published snapshots, by digest. */
  readonly #byDigest = new Map<string, RoutingVerdict>();
  /** The candidate the gate last emitted `snapshot.held` for. */
  #lastHeld: string | undefined;

  constructor(options: RoutingGateOptions) {
    this.#o = options;
  }

  /** The routing verdict of a published snapshot (the last 64 publications). */
  verdictOf(digest: string): RoutingVerdict | undefined {
    return this.#byDigest.get(digest);
  }

  /** Forgets every verdict: the next cycle evaluates again. */
  reevaluate(): void {
    this.#byKey.clear();
  }

  /** The published snapshot's verdict: evaluated again after {@link reevaluate}, alerted while it fails. */
  async checkCurrent(current: Snapshot | undefined): Promise<void> {
    if (!current || !this.#o.routing) return;
    const r = await this.#verdictFor(current);
    if (!r) return;
    this.#byDigest.set(current.digest, r.verdict);
    if (r.fresh) this.#emit(current, r.verdict, false);
    this.#raise(current, r.verdict, false);
  }

  /** Evaluates a candidate; returns whether the gate holds it (never without a current snapshot, nor once confirmed). */
  async judge(candidate: Snapshot, previous: Snapshot | undefined, confirmed: boolean): Promise<{ hold: boolean }> {
    const r = await this.#verdictFor(candidate);
    if (!r) return { hold: false };
    const hold = !r.verdict.passed && this.#o.routing?.gate === true && previous !== undefined && !confirmed;
    if (r.fresh) this.#emit(candidate, r.verdict, hold);
    this.#raise(candidate, r.verdict, hold);
    if (!hold) {
      this.#lastHeld = undefined;
    } else if (this.#lastHeld !== candidate.digest) {
      this.#lastHeld = candidate.digest;
      this.#o.events?.emit({
        type: 'snapshot.held',
        version: candidate.version,
        digest: candidate.digest,
        ...(previous && { previousDigest: previous.digest }),
        agents: candidate.agents.map((a) => a.localName),
        reason: `routing accuracy ${(r.verdict.accuracy * 100).toFixed(1)}% is below ${(r.verdict.minAccuracy * 100).toFixed(1)}%`,
      });
    }
    return { hold };
  }

  /** The candidate is the published snapshot: the gate holds nothing. */
  unchanged(): void {
    this.#lastHeld = undefined;
  }

  /** `previous`'s agents and layout, each agent with its card from `candidate` when its routing is unchanged there. */
  keepRouting(previous: Snapshot, candidate: Snapshot, version: number): Snapshot {
    const next = new Map(candidate.agents.map((a) => [a.localName, a]));
    const agents = previous.agents.map((a) => {
      const n = next.get(a.localName);
      return n && n.domain === a.domain && n.tags.join('\u0000') === a.tags.join('\u0000') ? n : a;
    });
    return buildSnapshot(agents, version, this.#o.clock.wallNow(), previous.domains);
  }

  /** `published` replaced `previous`: it carries the verdict of its routing (or of the routing it kept). */
  published(published: Snapshot, previous: Snapshot | undefined): void {
    // Without a verdict evaluated (no routing check) there is no key to look up: none is written
    // (a JSON text of every agent's name and tags, 135 ms at 100,000 agents).
    const verdict = (this.#byKey.size === 0 ? undefined : this.#byKey.get(routingKey(published))) ?? (previous && this.#byDigest.get(previous.digest));
    if (verdict) this.#byDigest.set(published.digest, verdict);
    // Kept for the last 64 publications (the API shows archived snapshots too), oldest dropped first.
    for (const digest of this.#byDigest.keys()) {
      if (this.#byDigest.size <= 64) break;
      this.#byDigest.delete(digest);
    }
  }

  /**
   * The routing verdict of `snapshot`, evaluated unless a snapshot with the same routing (names,
   * tags, domains, layout) was evaluated already; undefined without `routing` or when the
   * evaluation failed (alerted). `fresh` when it was evaluated now.
   */
  async #verdictFor(snapshot: Snapshot): Promise<{ verdict: RoutingVerdict; fresh: boolean } | undefined> {
    const check = this.#o.routing;
    if (!check) return undefined;
    const key = routingKey(snapshot);
    const known = this.#byKey.get(key);
    if (known) return { verdict: known, fresh: false };
    // The span is failed here, with a redacted message (withSpan would record the raw one).
    const r = await withSpan(SPAN.routingEvaluate, { attributes: { [ATTR.snapshotVersion]: snapshot.version, [ATTR.snapshotDigest]: snapshot.digest } }, async (span) => {
      try {
        const v = await check.evaluate(snapshot);
        if (span.recording) span.set({ [ATTR.routingAccuracy]: v.accuracy, [ATTR.routingPassed]: v.passed });
        return { verdict: v };
      } catch (error) {
        span.fail(spanError(error));
        return { error };
      }
    });
    if ('error' in r) {
      const e = toDiscoveryError(r.error, 'ERR_INTERNAL');
      this.#o.alerts.raise('routing-evaluation-failed', { kind: 'routing-evaluation-failed', message: `routing of snapshot ${snapshot.digest.slice(0, 12)} could not be evaluated: ${e.message}` });
      return undefined;
    }
    const verdict = r.verdict;
    this.#byKey.set(key, verdict);
    for (const k of this.#byKey.keys()) {
      if (this.#byKey.size <= 16) break;
      this.#byKey.delete(k);
    }
    return { verdict, fresh: true };
  }

  /** Raises `routing-accuracy` for a failing verdict (in every evaluation while it holds). */
  #raise(snapshot: Snapshot, verdict: RoutingVerdict, held: boolean): void {
    if (verdict.passed) return;
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    this.#o.alerts.raise('routing-accuracy', {
      kind: 'routing-accuracy',
      message:
        `routing accuracy of snapshot ${snapshot.digest.slice(0, 12)} is ${pct(verdict.accuracy)} on ${verdict.evaluated} cases, below ${pct(verdict.minAccuracy)}` +
        `${verdict.summary ? ` (${verdict.summary})` : ''}${held ? '; held: the current routing stays until an operator confirms (card updates are published)' : ''}`,
      detail: { digest: snapshot.digest, accuracy: verdict.accuracy, minAccuracy: verdict.minAccuracy, held },
    });
  }

  #emit(snapshot: Snapshot, verdict: RoutingVerdict, held: boolean): void {
    this.#o.events?.emit({
      type: 'routing.evaluated',
      version: snapshot.version,
      digest: snapshot.digest,
      accuracy: verdict.accuracy,
      minAccuracy: verdict.minAccuracy,
      passed: verdict.passed,
      evaluated: verdict.evaluated,
      held,
    });
  }
}

/** What routing depends on in a snapshot: agents' names, tags, criticality and domains, and the layout. */
function routingKey(snapshot: Snapshot): string {
  return JSON.stringify([snapshot.agents.map((a) => [a.localName, a.tags, a.critical, a.domain ?? null]), (snapshot.domains ?? []).map((d) => [d.name, d.description])]);
}

