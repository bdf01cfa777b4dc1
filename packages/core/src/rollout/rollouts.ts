/**
 * Staged rollouts of snapshots (docs/rollouts.md). A candidate snapshot whose change is breaking
 * is not made current at once: new sessions are assigned to it by a share that grows step by step
 * (5 % → 25 % → 100 % by default), each step held for a time and a number of turns. On the
 * candidate's sessions, the turn error rate and p95 latency of each agent it changes (and of all
 * its turns) are compared with the current snapshot's: within the bounds it advances, and reaching
 * 100 % it is promoted (made current); outside them it is rolled back at once, with an alert that
 * names the agent and the figure. Operators may hold, resume, promote or roll back.
 *
 * Sessions never move: a session pinned to either side stays there (the tree factory's pins). A
 * new session's side depends only on the rollout id and its session id ({@link rolloutBucket}),
 * so it is the same on every replica; the leader decides the steps and the store carries them
 * ({@link Rollouts.state}, {@link Rollouts.restore}).
 *
 * This class keeps the state, the figures and the quarantine of rolled-back changes; the publisher
 * builds, warms and publishes the snapshots it names.
 */
import type { Clock } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import { CallFigures, type CallFiguresView } from '../health/call-figures.js';
import type { RecordedCall } from '../health/call-health.js';
import { ROLLOUT_DEFAULTS } from '../rules/defaults.js';
import type { Snapshot, SnapshotStore } from '../snapshot/index.js';
import { ATTR, SPAN } from '../telemetry/attributes.js';
import { withSpan } from '../telemetry/otel.js';
import type { RolloutChange, RolloutTrigger } from './rollout-plan.js';
import { rolloutBucket } from './rollout-plan.js';

/** How changes roll out (`rollout:` in the configuration). */
export interface RolloutPolicy {
  trigger: RolloutTrigger;
  /** Shares of new sessions (percent, ascending); a step of 100 promotes. */
  steps: readonly number[];
  holdMs: number;
  minTurns: number;
  minSamples: number;
  maxErrorRateIncrease: number;
  maxLatencyRatio: number;
  minLatencyIncreaseMs: number;
}

export type RolloutStatus = 'running' | 'held' | 'promoted' | 'rolled-back' | 'superseded' | 'withdrawn';

type Action = 'started' | 'advanced' | 'held' | 'resumed' | 'promoted' | 'rolled-back' | 'superseded' | 'withdrawn';

/** One decision, kept in the rollout's record (the newest {@link MAX_DECISIONS}). */
export interface RolloutDecision {
  /** Epoch ms. */
  readonly at: number;
  readonly action: Action;
  /** `auto`, or the operator. */
  readonly by: string;
  readonly reason: string;
  readonly step: number;
  readonly share: number;
}

/** A rollout as plain data: what the store carries between replicas and the API shows. */
export interface RolloutState {
  readonly id: string;
  /** The candidate's digest and version. */
  readonly candidate: string;
  readonly candidateVersion: number;
  /** The current snapshot's digest when the candidate was staged (the other side). */
  readonly baseline: string;
  readonly changes: readonly RolloutChange[];
  readonly step: number;
  readonly share: number;
  /** Epoch ms. */
  readonly startedAt: number;
  readonly stepStartedAt: number;
  readonly status: RolloutStatus;
  readonly endedAt?: number;
  readonly decisions: readonly RolloutDecision[];
}

/** The figures of both sides, per staged agent and `*` (every agent's turns). */
export interface RolloutFigures {
  readonly candidate: Readonly<Record<string, CallFiguresView>>;
  readonly baseline: Readonly<Record<string, CallFiguresView>>;
  /** Turns on the candidate in the current step. */
  readonly stepTurns: number;
}

/** What the publisher must do now. */
export type RolloutAction = { readonly kind: 'promote' | 'advance' | 'rollback'; readonly by: string; readonly reason: string; readonly agent?: string };

export interface RolloutsOptions {
  policy?: Partial<RolloutPolicy>;
  snapshots: SnapshotStore;
  clock: Clock;
  events?: EventStream | undefined;
}

const MAX_DECISIONS = 32;
const MAX_HISTORY = 16;
/** The key of every agent's figures. */
const ALL_AGENTS = '*';

interface Live {
  state: RolloutState;
  /** Candidate digests of this rollout (it is rebased when other agents change) and their retention. */
  readonly candidates: Set<string>;
  readonly baselines: Set<string>;
  /** The candidate digest the rollout holds a reference to. */
  retained?: string | undefined;
  readonly candidate: Map<string, CallFigures>;
  readonly baseline: Map<string, CallFigures>;
  stepTurns: number;
  requested?: RolloutAction;
}

export class Rollouts {
  readonly policy: RolloutPolicy;
  readonly #o: RolloutsOptions;
  #live: Live | undefined;
  readonly #history: RolloutState[] = [];
  /** Rolled-back changes: local name → the version not to roll out again. */
  readonly quarantined = new Map<string, string>();
  readonly #listeners = new Set<(state: RolloutState) => void>();

  constructor(options: RolloutsOptions) {
    this.#o = options;
    this.policy = { ...ROLLOUT_DEFAULTS, ...options.policy };
  }

  /** The rollout in progress (running or held). */
  get active(): RolloutState | undefined {
    return this.#live?.state;
  }

  /** Ended rollouts, newest last (bounded). */
  get history(): readonly RolloutState[] {
    return this.#history;
  }

  /** The figures of the rollout in progress. */
  figures(): RolloutFigures | undefined {
    const live = this.#live;
    if (live === undefined) return undefined;
    const view = (m: Map<string, CallFigures>) => Object.fromEntries([...m].map(([k, f]) => [k, f.view()]));
    return { candidate: view(live.candidate), baseline: view(live.baseline), stepTurns: live.stepTurns };
  }

  /** The digest a new session starts on during a rollout (the candidate), or undefined (the current snapshot). */
  assign(sessionId: string): string | undefined {
    const s = this.#live?.state;
    if (s === undefined || s.share <= 0) return undefined;
    return rolloutBucket(s.id, sessionId) * 100 < s.share ? s.candidate : undefined;
  }

  /**
   * Stages `candidate` (warmed by the caller) against `baseline`: a new rollout at the first step,
   * or, when `id` is the rollout in progress (the same changes; other agents moved), the same
   * rollout on the new candidate. A different rollout in progress is superseded.
   */
  stage(id: string, changes: readonly RolloutChange[], candidate: Snapshot, baseline: Snapshot): void {
    const live = this.#live;
    if (live !== undefined && live.state.id === id) {
      if (live.state.candidate === candidate.digest && live.state.baseline === baseline.digest) return;
      this.#retain(live, candidate);
      keepNewest(live.baselines, baseline.digest);
      live.state = { ...live.state, candidate: candidate.digest, candidateVersion: candidate.version, baseline: baseline.digest, changes };
      this.#changed(live.state);
      return;
    }
    if (live !== undefined) this.#end(live, 'superseded', 'auto', `superseded by another change (${changes.map((c) => c.localName).join(', ')})`);
    const now = this.#o.clock.wallNow();
    const share = this.policy.steps[0] ?? 100;
    const next: Live = {
      state: { id, candidate: candidate.digest, candidateVersion: candidate.version, baseline: baseline.digest, changes, step: 0, share, startedAt: now, stepStartedAt: now, status: 'running', decisions: [] },
      candidates: new Set(),
      baselines: new Set([baseline.digest]),
      candidate: new Map(),
      baseline: new Map(),
      stepTurns: 0,
    };
    this.#retain(next, candidate);
    this.#live = next;
    this.#decide(next, 'started', 'auto', `${changes.map((c) => `${c.localName}: ${c.reasons.join('; ') || 'changed'}`).join(' | ')}`);
  }

  /** The staged change went away upstream (the selection no longer has it): the rollout ends, nothing is published. */
  withdraw(reason: string): void {
    if (this.#live !== undefined) this.#end(this.#live, 'withdrawn', 'auto', reason);
  }

  /** Counts a turn's call of an agent on either side (from `CallHealth.onCall`). */
  record(call: RecordedCall): void {
    const live = this.#live;
    if (live === undefined || call.source !== 'turn' || call.digest === undefined) return;
    const onCandidate = live.candidates.has(call.digest);
    if (!onCandidate && !live.baselines.has(call.digest)) return;
    const side = onCandidate ? live.candidate : live.baseline;
    figuresOf(side, ALL_AGENTS).add(call);
    if (live.state.changes.some((c) => c.localName === call.agent)) figuresOf(side, call.agent).add(call);
    if (onCandidate) live.stepTurns++;
  }

  /** An operator's hold (the share stays; an automatic rollback still happens) or resume. */
  hold(by: string, held: boolean): RolloutState | undefined {
    const live = this.#live;
    if (live === undefined || (live.state.status === 'held') === held) return live?.state;
    live.state = { ...live.state, status: held ? 'held' : 'running' };
    this.#decide(live, held ? 'held' : 'resumed', by, held ? 'held by an operator' : 'resumed by an operator');
    return live.state;
  }

  /** An operator's promotion or rollback, carried out by the publisher at once. */
  request(kind: 'promote' | 'rollback', by: string): RolloutAction | undefined {
    if (this.#live === undefined) return undefined;
    return (this.#live.requested = { kind, by, reason: kind === 'promote' ? `promoted by ${by}` : `rolled back by ${by}` });
  }

  /** What the figures (or an operator) decide now; undefined to wait. */
  judge(): RolloutAction | undefined {
    const live = this.#live;
    if (live === undefined) return undefined;
    if (live.requested !== undefined) return live.requested;
    const bad = this.#outOfBounds(live);
    if (bad !== undefined) return { kind: 'rollback', by: 'auto', reason: bad.reason, agent: bad.agent };
    if (live.state.status !== 'running') return undefined;
    const { holdMs, minTurns, steps } = this.policy;
    const held = this.#o.clock.wallNow() - live.state.stepStartedAt;
    if (held < holdMs || live.stepTurns < minTurns) return undefined;
    const next = steps[live.state.step + 1] ?? 100;
    const why = `step ${live.state.step + 1} (${live.state.share}%) held ${Math.round(held / 1000)} s and ${live.stepTurns} turns within bounds`;
    return next >= 100 ? { kind: 'promote', by: 'auto', reason: why } : { kind: 'advance', by: 'auto', reason: why };
  }

  /** The publisher carried out `action` (a promotion made the candidate current). */
  done(action: RolloutAction): void {
    const live = this.#live;
    if (live === undefined) return;
    if (action.kind === 'advance') {
      const step = live.state.step + 1;
      live.state = { ...live.state, step, share: this.policy.steps[step] ?? 100, stepStartedAt: this.#o.clock.wallNow() };
      live.stepTurns = 0;
      this.#decide(live, 'advanced', action.by, action.reason);
      return;
    }
    if (action.kind === 'rollback') {
      for (const c of live.state.changes) this.quarantined.set(c.localName, c.version);
      while (this.quarantined.size > ROLLOUT_DEFAULTS.maxQuarantined) this.quarantined.delete(this.quarantined.keys().next().value!);
      if (action.by === 'auto') {
        this.#o.events?.emit({
          type: 'alert',
          kind: 'rollout-rolled-back',
          message: `rollout of ${live.state.changes.map((c) => c.localName).join(', ')} rolled back: ${action.reason}`,
          detail: { rollout: live.state.id, candidate: live.state.candidate, ...(action.agent !== undefined && { agent: action.agent }) },
        });
      }
    }
    this.#end(live, action.kind === 'promote' ? 'promoted' : 'rolled-back', action.by, action.reason);
  }

  /**
   * Takes the rollout the leader recorded (a follower, at each change; a new leader, once, to carry
   * on from the step the last one reached): its state as it stands, `candidate` its stored
   * snapshot. `undefined` (or an ended state): no rollout is in progress any more. The figures this
   * replica counted for the same rollout are kept; the step's turns start again on a new leader.
   */
  follow(state: RolloutState | undefined, candidate: Snapshot | undefined): void {
    const live = this.#live;
    const running = state !== undefined && (state.status === 'running' || state.status === 'held');
    if (!running || candidate === undefined) {
      if (live !== undefined) {
        this.#unretain(live);
        this.#live = undefined;
        if (state !== undefined && state.id === live.state.id) this.#remember(state);
      }
      return;
    }
    if (live !== undefined && live.state.id === state.id) {
      // Its turns counted toward the step it was at; a new step's count starts again.
      if (state.step !== live.state.step) live.stepTurns = 0;
      live.state = state;
      keepNewest(live.baselines, state.baseline);
      this.#retain(live, candidate);
      return;
    }
    if (live !== undefined) this.#unretain(live);
    const next: Live = { state, candidates: new Set(), baselines: new Set([state.baseline]), candidate: new Map(), baseline: new Map(), stepTurns: 0 };
    this.#retain(next, candidate);
    this.#live = next;
  }

  /** Listens to every change of the rollout's state (a decision, a new candidate): the store writes it. */
  onChange(listener: (state: RolloutState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The rollout in progress and the last ones, as the store keeps them. */
  state(): { active?: RolloutState; history: readonly RolloutState[] } {
    return { ...(this.#live && { active: this.#live.state }), history: this.#history };
  }

  /** Releases the candidates it retains (the service is closing). */
  close(): void {
    if (this.#live !== undefined) this.#unretain(this.#live);
    this.#live = undefined;
  }

  /**
   * Holds `candidate` (the newest) for the rollout; an earlier candidate of a rebased rollout is
   * let go (sessions pinned to it hold it themselves). The digests whose turns count on each side
   * are the newest {@link MAX_DIGESTS}: a source churning other agents cannot grow them.
   */
  #retain(live: Live, candidate: Snapshot): void {
    if (live.retained === candidate.digest) return;
    this.#o.snapshots.retainCandidate(candidate);
    this.#unretain(live);
    live.retained = candidate.digest;
    keepNewest(live.candidates, candidate.digest);
  }

  /** Releases the candidate the rollout holds. */
  #unretain(live: Live): void {
    if (live.retained !== undefined) this.#o.snapshots.release(live.retained);
    live.retained = undefined;
  }


  /** The first changed agent (or all turns) whose figures on the candidate are out of bounds. */
  #outOfBounds(live: Live): { agent: string; reason: string } | undefined {
    const p = this.policy;
    const names = [...live.state.changes.map((c) => c.localName), ALL_AGENTS];
    for (const name of names) {
      const c = live.candidate.get(name);
      if (c === undefined || c.calls < p.minSamples) continue;
      const b = live.baseline.get(name);
      const known = b !== undefined && b.calls >= p.minSamples;
      const bRate = known ? b.errorRate : 0;
      const who = name === ALL_AGENTS ? 'all agents' : name;
      if (c.errorRate > bRate + p.maxErrorRateIncrease) {
        return {
          agent: name,
          reason: `${who}: turn error rate ${pct(c.errorRate)} on the candidate (${c.errors} of ${c.calls} turns) against ${pct(bRate)} on the current snapshot${known ? ` (${b.errors} of ${b.calls})` : ' (too few turns there: compared with 0%)'}; the bound is ${Math.round(p.maxErrorRateIncrease * 100)} points more`,
        };
      }
      const cp = c.percentile(95);
      const bp = known ? b.percentile(95) : undefined;
      if (cp !== undefined && bp !== undefined && cp > bp * p.maxLatencyRatio && cp - bp > p.minLatencyIncreaseMs) {
        return { agent: name, reason: `${who}: p95 latency ${Math.round(cp)} ms on the candidate against ${Math.round(bp)} ms on the current snapshot; the bound is ×${p.maxLatencyRatio} and +${p.minLatencyIncreaseMs} ms` };
      }
    }
    return undefined;
  }

  #end(live: Live, status: RolloutStatus, by: string, reason: string): void {
    live.state = { ...live.state, status, endedAt: this.#o.clock.wallNow() };
    this.#decide(live, status as Action, by, reason);
    this.#unretain(live);
    this.#remember(live.state);
    if (this.#live === live) this.#live = undefined;
  }

  #remember(ended: RolloutState): void {
    this.#history.push(ended);
    if (this.#history.length > MAX_HISTORY) this.#history.shift();
  }

  #changed(state: RolloutState): void {
    for (const l of this.#listeners) {
      try {
        l(state);
      } catch {
        // A listener's failure never affects the rollout.
      }
    }
  }

  #decide(live: Live, action: Action, by: string, reason: string): void {
    const decision: RolloutDecision = { at: this.#o.clock.wallNow(), action, by, reason, step: live.state.step, share: action === 'promoted' ? 100 : action === 'rolled-back' || action === 'superseded' || action === 'withdrawn' ? 0 : live.state.share };
    live.state = { ...live.state, decisions: [...live.state.decisions, decision].slice(-MAX_DECISIONS) };
    const s = live.state;
    withSpan(SPAN.rolloutDecision, { attributes: { [ATTR.rolloutId]: s.id, [ATTR.rolloutAction]: action, [ATTR.rolloutShare]: decision.share, [ATTR.rolloutCandidate]: s.candidate, [ATTR.rolloutReason]: reason.slice(0, 500) } }, () => undefined);
    this.#o.events?.emit({ type: `rollout.${action}`, rollout: s.id, candidate: s.candidate, baseline: s.baseline, step: s.step, share: decision.share, by, reason, agents: s.changes.map((c) => c.localName) });
    this.#changed(s);
  }
}

/** Digests of each side kept per rollout (the newest). */
const MAX_DIGESTS = 8;

/** Adds `digest` as the newest of `set`, dropping the oldest past {@link MAX_DIGESTS}. */
function keepNewest(set: Set<string>, digest: string): void {
  set.delete(digest);
  set.add(digest);
  for (const oldest of set) {
    if (set.size <= MAX_DIGESTS) break;
    set.delete(oldest);
  }
}

function figuresOf(side: Map<string, CallFigures>, name: string): CallFigures {
  let f = side.get(name);
  if (f === undefined) side.set(name, (f = new CallFigures()));
  return f;
}

function pct(rate: number): string {
  return `${Math.round(rate * 1000) / 10}%`;
}
