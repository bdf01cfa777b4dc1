/**
 * Publication: makes a selection (or a snapshot another replica published) current. A new
 * snapshot goes out only when its digest changes and nothing holds it: the removal guard (mass
 * removal, critical agent lost) keeps the agents it concerns until an operator confirms, the
 * routing gate keeps the current routing, a quiet window defers it, and the `beforePublish`
 * warm-up may refuse it. Each publication is announced once: event, change alerts, listeners.
 */
import type { Clock } from '../clock/index.js';
import { toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { SelectOptions } from '../match/index.js';
import type { Snapshot, SnapshotAgent, SnapshotDiff, SnapshotStore } from '../snapshot/index.js';
import { buildSnapshot } from '../snapshot/index.js';
import { buildSnapshotPaced, diffSnapshotsPaced } from '../snapshot/snapshot.js';
import { Pacer } from '../clock/pacer.js';
import type { AlertBook } from './alert-book.js';
import type { RolloutAction, Rollouts } from '../rollout/rollouts.js';
import type { RolloutPlan } from '../rollout/rollout-plan.js';
import { planRollout } from '../rollout/rollout-plan.js';
import type { RoutingGate } from './routing-gate.js';
import type { SpanScope } from '../telemetry/index.js';
import { ATTR, SPAN, withSpan } from '../telemetry/index.js';

export type SnapshotListener = (snapshot: Snapshot, diff: SnapshotDiff) => void;

export interface PublisherOptions {
  store: SnapshotStore;
  gate: RoutingGate;
  alerts: AlertBook;
  events: EventStream | undefined;
  clock: Clock;
  /** The selection's routing domains (the snapshot's layout). */
  domains: SelectOptions['domains'];
  /** Hold back the removal of more than this share of the current agents at once. */
  maxRemovalShare: number;
  /** At most one publication per this many ms. */
  minPublishIntervalMs: number;
  /** The warm-up: throwing keeps the current snapshot. */
  beforePublish: (next: Snapshot, previous: Snapshot | undefined) => void | Promise<void>;
  /** Staged rollouts: a breaking change reaches new sessions step by step (absent: every change at once). */
  rollouts?: Rollouts | undefined;
}

const NO_NAMES: readonly string[] = Object.freeze([]);

export class Publisher {
  readonly #o: PublisherOptions;
  readonly #listeners = new Set<SnapshotListener>();
  /** Local names of the previous snapshot kept by the removal guard in the current one. */
  #heldNames: readonly string[] = NO_NAMES;
  #heldDigest: string | undefined;
  /**
   * While a removal is held: the local names of the snapshot it was held from. Only these are
   * held until an operator confirms; agents that came since may go again (a source churning new
   * agents would otherwise grow the snapshot for ever, evicted endpoints included).
   */
  #holdBaseline: ReadonlySet<string> | undefined;
  /** The held digest a `snapshot.held` event was last emitted for (one event per held candidate). */
  #lastHeldDigest: string | undefined;
  #confirmRemovals = false;
  #lastPublishAt = Number.NEGATIVE_INFINITY;

  constructor(options: PublisherOptions) {
    this.#o = options;
  }

  /** Listens for publications; returns the unsubscribe function. */
  subscribe(listener: SnapshotListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The digest of the snapshot a guard is holding back, if any. */
  get held(): string | undefined {
    return this.#heldDigest;
  }

  /** Local names the removal guard keeps in the current snapshot. */
  get heldNames(): readonly string[] {
    return this.#heldNames;
  }

  /** Whether the next publication confirms the held removals (and the routing the gate holds). */
  get confirming(): boolean {
    return this.#confirmRemovals;
  }

  /** Publishes the held snapshot at the next {@link publish}. */
  confirm(): void {
    this.#confirmRemovals = true;
  }

  /**
   * Publishes the selection when its digest differs, holding back guarded removals only. Returns
   * the digest now current when that is the whole outcome (nothing held, deferred or refused), so
   * the next cycle may skip an identical evaluation; otherwise undefined.
   */
  publish(selected: SnapshotAgent[]): Promise<string | undefined> {
    return withSpan(SPAN.publish, {}, (span) => this.#publishStaged(selected, span));
  }

  /**
   * With staged rollouts: the part of the selection that may go out at once is published as
   * usual; the breaking changes are staged as the rollout's candidate (the full selection).
   */
  async #publishStaged(selected: SnapshotAgent[], span: SpanScope): Promise<string | undefined> {
    const rollouts = this.#o.rollouts;
    if (rollouts === undefined || this.#o.store.current === undefined) return this.#publish(selected, span);
    const plan = planRollout(this.#o.store.current, selected, rollouts.policy.trigger, rollouts.quarantined);
    const settled = await this.#publish(plan.base, span);
    if (plan.staged === undefined) {
      if (rollouts.active !== undefined) rollouts.withdraw('the change it stages is no longer in the selection (its agent changed back or left)');
      return settled;
    }
    await this.#stage(plan.staged, rollouts);
    span.set({ [ATTR.rolloutId]: plan.staged.id });
    return undefined;
  }

  /** Builds and warms the rollout's candidate, and stages it (once per digest). */
  async #stage(staged: NonNullable<RolloutPlan['staged']>, rollouts: Rollouts): Promise<void> {
    const { store, clock, domains } = this.#o;
    const current = store.current!;
    const active = rollouts.active;
    const candidate = buildSnapshot(staged.agents, Math.max(current.version, active?.candidateVersion ?? 0) + 1, clock.wallNow(), domains);
    if (active?.id === staged.id && active.candidate === candidate.digest && active.baseline === current.digest) return;
    if (candidate.digest === current.digest) return;
    if (!(await this.#warmUp(candidate, current, 'was not staged'))) return;
    rollouts.stage(staged.id, staged.changes, candidate, current);
  }

  /**
   * Carries out what the rollout's figures (or an operator) decide: the next step, a promotion
   * (the candidate becomes current, announced as any publication) or a rollback. Returns the
   * action taken, if any.
   */
  async advanceRollout(): Promise<RolloutAction | undefined> {
    const rollouts = this.#o.rollouts;
    const action = rollouts?.judge();
    const active = rollouts?.active;
    if (rollouts === undefined || action === undefined || active === undefined) return undefined;
    if (action.kind === 'promote') {
      const { store, clock, domains, gate } = this.#o;
      const staged = store.get(active.candidate);
      if (staged === undefined) {
        const lost: RolloutAction = { kind: 'rollback', by: 'auto', reason: 'its candidate snapshot is no longer retained' };
        rollouts.done(lost);
        return lost;
      }
      const previous = store.current;
      const rebuilt = buildSnapshot(staged.agents, (previous?.version ?? 0) + 1, clock.wallNow(), domains);
      const promoted = rebuilt.digest === staged.digest ? rebuilt : staged;
      const diff = await diffSnapshotsPaced(previous, promoted, new Pacer());
      this.#lastPublishAt = clock.now();
      store.publish(promoted);
      gate.published(promoted, previous);
      this.#announce(previous, promoted, diff, true);
    }
    rollouts.done(action);
    return action;
  }

  async #publish(selected: SnapshotAgent[], span: SpanScope): Promise<string | undefined> {
    const { events, store, clock, gate, domains } = this.#o;
    const previous = store.current;
    const version = (previous?.version ?? 0) + 1;
    const pacer = new Pacer();
    const full = await buildSnapshotPaced(selected, version, clock.wallNow(), domains, pacer);
    const confirmed = this.#confirmRemovals;
    const hold = this.#confirmRemovals ? undefined : guardRemovals(previous, full, this.#o.maxRemovalShare, this.#holdBaseline);
    this.#confirmRemovals = false;
    this.#holdBaseline = hold ? (this.#holdBaseline ?? new Set(previous!.agents.map((a) => a.localName))) : undefined;
    // A held removal holds only the agents it concerns: they stay as they were published, and
    // every other addition and change goes out.
    let candidate = hold ? await buildSnapshotPaced([...selected, ...hold.keep], version, clock.wallNow(), domains, pacer) : full;
    this.#heldDigest = hold ? full.digest : undefined;
    this.#heldNames = hold ? hold.keep.map((a) => a.localName) : NO_NAMES;
    if (hold) {
      this.#o.alerts.raise(`held:${this.#heldNames.join(',')}`, {
        kind: 'mass-removal',
        message: `${hold.reason}; held: ${this.#heldNames.join(', ')} stay in snapshots until an operator confirms (other changes are published)`,
        detail: { held: this.#heldNames },
      });
      if (this.#lastHeldDigest !== full.digest) {
        this.#lastHeldDigest = full.digest;
        events?.emit({ type: 'snapshot.held', version, digest: full.digest, ...(previous && { previousDigest: previous.digest }), agents: full.agents.map((a) => a.localName), reason: hold.reason });
      }
    } else this.#lastHeldDigest = undefined;
    if (span.recording) {
      span.set({ [ATTR.snapshotVersion]: version, [ATTR.snapshotDigest]: candidate.digest, [ATTR.previousDigest]: previous?.digest, [ATTR.held]: hold !== undefined });
      if (hold) span.set({ [ATTR.heldReason]: hold.reason });
    }
    await gate.checkCurrent(previous);
    if (previous && candidate.digest === previous.digest) {
      gate.unchanged();
      span.set({ [ATTR.outcome]: hold ? 'held' : 'unchanged' });
      return hold ? undefined : previous.digest;
    }
    const routing = await gate.judge(candidate, previous, confirmed);
    if (clock.now() - this.#lastPublishAt < this.#o.minPublishIntervalMs) {
      span.set({ [ATTR.outcome]: 'deferred' });
      return undefined;
    }
    if (routing.hold) {
      // The gate keeps the current routing: the candidate is held, and only the card updates of
      // the current agents (same names, tags and domains) go out.
      if (!hold) this.#heldDigest = candidate.digest;
      span.set({ [ATTR.held]: true, [ATTR.heldReason]: 'routing accuracy below its threshold' });
      if (!previous) {
        span.set({ [ATTR.outcome]: 'held' });
        return undefined;
      }
      candidate = gate.keepRouting(previous, candidate, version);
      if (candidate.digest === previous.digest) {
        span.set({ [ATTR.outcome]: 'held' });
        return undefined;
      }
    }
    if (!(await this.#warmUp(candidate, previous, 'was not published'))) {
      span.set({ [ATTR.outcome]: 'refused' });
      return undefined;
    }
    // The diff is worked out before the publication, in slices (100,000 agents added by a first
    // one): the snapshot becomes current and is announced in one piece after it.
    const diff = await diffSnapshotsPaced(previous, candidate, pacer);
    if (store.current !== previous) {
      // Another snapshot became current meanwhile (adopted from another replica): judged again next cycle.
      span.set({ [ATTR.outcome]: 'deferred' });
      return undefined;
    }
    this.#lastPublishAt = clock.now();
    store.publish(candidate);
    gate.published(candidate, previous);
    this.#announce(previous, candidate, diff, true);
    if (span.recording) span.set({ [ATTR.outcome]: 'published', [ATTR.snapshotDigest]: candidate.digest, [ATTR.agentCount]: candidate.agents.length, [ATTR.agentsAdded]: diff.added.length, [ATTR.agentsRemoved]: diff.removed.length });
    return hold || routing.hold ? undefined : candidate.digest;
  }

  /**
   * Makes a snapshot another replica published current, after the warm-up, unless another one
   * became current meanwhile. `members` runs once it is current, before it is announced. Returns
   * whether it became current.
   */
  async adopt(snapshot: Snapshot, members: () => void): Promise<boolean> {
    const { store } = this.#o;
    const previous = store.current;
    if (!(await this.#warmUp(snapshot, previous, 'from the store was not adopted'))) return false;
    const diff = await diffSnapshotsPaced(previous, snapshot, new Pacer());
    if (store.current !== previous) return false;
    store.publish(snapshot);
    members();
    // The other replica alerted the changes when it published.
    this.#announce(previous, snapshot, diff, false);
    return true;
  }

  /** Runs `beforePublish`; a refusal raises `publish-refused` (`outcome` says what did not happen). */
  async #warmUp(next: Snapshot, previous: Snapshot | undefined, outcome: string): Promise<boolean> {
    try {
      await this.#o.beforePublish(next, previous);
      return true;
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_INTERNAL', { stage: 'build' });
      this.#o.alerts.raise('publish-refused', { kind: 'publish-refused', message: `snapshot ${next.digest.slice(0, 12)} ${outcome}: ${e.message}` });
      return false;
    }
  }

  /** Announces `next`, now current: `snapshot.published`, the change alerts (`alertChanges`), then the listeners. */
  #announce(previous: Snapshot | undefined, next: Snapshot, diff: SnapshotDiff, alertChanges: boolean): void {
    const { events } = this.#o;
    events?.emit({ type: 'snapshot.published', version: next.version, digest: next.digest, ...(previous && { previousDigest: previous.digest }), agents: next.agents.map((a) => a.localName) });
    if (alertChanges) {
      for (const c of diff.changed) {
        if (c.skillsAdded.length + c.skillsRemoved.length + c.skillsModified.length > 0) {
          events?.emit({
            type: 'alert',
            kind: 'skills-changed',
            message: `${c.localName}: skills changed (added ${c.skillsAdded.join(', ') || 'none'}; removed ${c.skillsRemoved.join(', ') || 'none'}; modified ${c.skillsModified.join(', ') || 'none'})`,
            detail: { ...c },
          });
        }
        if (c.endpointChanged) events?.emit({ type: 'alert', kind: 'endpoint-changed', message: `${c.localName}: interfaces changed`, detail: { ...c.endpointChanged } });
        if (c.securityChanged) events?.emit({ type: 'alert', kind: 'security-changed', message: `${c.localName}: security schemes or requirements changed` });
      }
      // What the publication breaks, in words, agent by agent (docs/rollouts.md "What a change breaks").
      for (const i of diff.impacts) {
        if (i.impact !== 'breaking') continue;
        events?.emit({ type: 'alert', kind: 'breaking-change', message: `${i.localName}: a breaking change reaches every new session: ${i.reasons.join('; ')}`, detail: { agent: i.localName, reasons: [...i.reasons] } });
      }
    }
    for (const listener of this.#listeners) {
      try {
        listener(next, diff);
      } catch {
        // A listener's failure never affects discovery.
      }
    }
  }
}

/** Which agents of `previous` must not be dropped yet (P12), and why; undefined to publish all. */
function guardRemovals(previous: Snapshot | undefined, next: Snapshot, share: number, baseline: ReadonlySet<string> | undefined): { reason: string; keep: SnapshotAgent[] } | undefined {
  if (!previous) return undefined;
  const kept = new Set(next.agents.map((a) => a.localName));
  const removed = previous.agents.filter((a) => !kept.has(a.localName));
  if (removed.length >= 2 && removed.length / previous.agents.length > share) {
    // While a hold lasts, only the agents of the snapshot it was held from are kept: those that
    // came since and went again are let go.
    const keep = baseline === undefined ? removed : removed.filter((a) => baseline.has(a.localName));
    if (keep.length > 0) {
      return {
        reason: `the new snapshot would drop ${removed.length} of ${previous.agents.length} agents (${removed.map((a) => a.localName).join(', ')}), more than ${Math.round(share * 100)}%`,
        keep,
      };
    }
  }
  const critical = removed.filter((a) => a.critical);
  if (critical.length > 0) return { reason: `the new snapshot would drop critical agent(s) ${critical.map((a) => a.localName).join(', ')}`, keep: critical };
  return undefined;
}
