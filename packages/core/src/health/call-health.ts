/**
 * Health from real calls: every A2A call the orchestrator makes (each turn's call of a specialist,
 * each active check) is counted per agent, by error class, with its latency, per snapshot digest
 * and per interface. The consecutive failures feed the {@link HealthTracker}'s hysteresis beside
 * the card cache's fetch failures: an agent whose calls fail is degraded, then left out of new
 * snapshots, then back after good calls. The router reads {@link CallHealth.score} to prefer,
 * among agents that fit a message equally, the one with the better record.
 *
 * Everything is keyed by the agent's base URL (the endpoint, as the health tracker keys it) and
 * freed with it ({@link CallHealth.forget}); the figures per digest are freed with the snapshot
 * ({@link CallHealth.forgetDigest}) and bounded per agent.
 */
import type { Clock } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { CallFigures, type CallFiguresView, type CallOutcome } from './call-figures.js';

/** Digests kept per agent (the newest); figures of older ones are dropped. */
const MAX_DIGESTS = 8;
/** Interfaces kept per agent. */
const MAX_INTERFACES = 4;
/** Latencies kept per digest and per interface (the agent's whole window keeps more). */
const SPLIT_SAMPLES = 64;

/** One call, as recorded. */
export interface RecordedCall extends CallOutcome {
  /** The agent's local name in the snapshot the call was made from. */
  readonly agent: string;
  /** The agent's base URL (its endpoint). */
  readonly baseUrl: string;
  /** The snapshot the calling session is pinned to (absent for an active check). */
  readonly digest?: string;
  /** The interface URL called (redacted). */
  readonly interfaceUrl?: string;
  /** One sentence naming the agent and what went wrong (a failure). */
  readonly message?: string;
  /** A turn of a conversation, or the active check. */
  readonly source: 'turn' | 'check';
}

/** What {@link CallHealth.view} shows of one agent. */
export interface AgentCallHealth {
  readonly baseUrl: string;
  readonly agent: string;
  /** Failed calls in a row since the last good one. */
  readonly consecutiveFailures: number;
  /** The last failure's message, while calls fail. */
  readonly lastFailure?: string;
  /** Epoch ms of the last call. */
  readonly lastCallAt: number;
  readonly all: CallFiguresView;
  readonly byDigest: Readonly<Record<string, CallFiguresView>>;
  readonly byInterface: Readonly<Record<string, CallFiguresView>>;
  /** Active checks only. */
  readonly checks: CallFiguresView;
}

interface AgentState {
  agent: string;
  consecutiveFailures: number;
  lastFailure: string | undefined;
  lastCallAt: number;
  readonly all: CallFigures;
  readonly checks: CallFigures;
  readonly byDigest: Map<string, CallFigures>;
  readonly byInterface: Map<string, CallFigures>;
}

/** Per-agent figures of real calls. */
export class CallHealth {
  readonly #agents = new Map<string, AgentState>();
  readonly #clock: Clock;
  readonly #listeners = new Set<(call: RecordedCall) => void>();
  #revision = 0;

  /** `clock`: when each call was made (its `wallNow`). */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Counts one call. */
  record(call: RecordedCall): void {
    let s = this.#agents.get(call.baseUrl);
    if (s === undefined) {
      s = { agent: call.agent, consecutiveFailures: 0, lastFailure: undefined, lastCallAt: 0, all: new CallFigures(), checks: new CallFigures(), byDigest: new Map(), byInterface: new Map() };
      this.#agents.set(call.baseUrl, s);
    }
    s.agent = call.agent;
    s.lastCallAt = this.#clock.wallNow();
    // What health reads of the calls (each agent's streak) changes: a good call after good ones does not.
    if (!call.ok || s.consecutiveFailures > 0 || s.all.calls === 0) this.#revision++;
    if (call.ok) {
      s.consecutiveFailures = 0;
      s.lastFailure = undefined;
    } else {
      s.consecutiveFailures++;
      s.lastFailure = call.message ?? `${call.agent} failed (${call.errorClass ?? 'error'})`;
    }
    s.all.add(call);
    if (call.source === 'check') s.checks.add(call);
    if (call.digest !== undefined) bounded(s.byDigest, call.digest, MAX_DIGESTS).add(call);
    if (call.interfaceUrl !== undefined) bounded(s.byInterface, call.interfaceUrl, MAX_INTERFACES).add(call);
    for (const l of this.#listeners) l(call);
  }

  /** Listens to every recorded call (the rollout's figures); returns the unsubscribe function. */
  onCall(listener: (call: RecordedCall) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Failed calls in a row, and the last one's message, for the health tracker; undefined when the agent was never called. */
  streak(baseUrl: string): { failures: number; message?: string } | undefined {
    const s = this.#agents.get(baseUrl);
    if (s === undefined) return undefined;
    return { failures: s.consecutiveFailures, ...(s.lastFailure !== undefined && { message: s.lastFailure }) };
  }

  /**
   * How good the agent's record is, for the router's tie-break (read at every routing decision):
   * higher is better. The share of good calls (1 without calls), less a little per second of its
   * moving mean latency. Constant time: no percentile is computed.
   */
  score(baseUrl: string): number {
    const s = this.#agents.get(baseUrl);
    if (s === undefined || s.all.calls === 0) return 1;
    return 1 - s.all.errorRate - (s.all.meanMs ?? 0) / 1_000_000;
  }

  /** One agent's figures. */
  view(baseUrl: string): AgentCallHealth | undefined {
    const s = this.#agents.get(baseUrl);
    if (s === undefined) return undefined;
    return {
      baseUrl,
      agent: s.agent,
      consecutiveFailures: s.consecutiveFailures,
      ...(s.lastFailure !== undefined && { lastFailure: s.lastFailure }),
      lastCallAt: s.lastCallAt,
      all: s.all.view(),
      byDigest: views(s.byDigest),
      byInterface: views(s.byInterface),
      checks: s.checks.view(),
    };
  }

  /** Every agent's figures. */
  views(): AgentCallHealth[] {
    return [...this.#agents.keys()].map((url) => this.view(url)!);
  }

  /** Forgets an agent that left discovery. */
  forget(baseUrl: string): void {
    if (this.#agents.delete(baseUrl)) this.#revision++;
  }

  /** Counts the changes of any agent's streak (`streak()`): while it stays the same, so do they. */
  get revision(): number {
    return this.#revision;
  }

  /** Forgets the figures of a snapshot no longer retained. */
  forgetDigest(digest: string): void {
    for (const s of this.#agents.values()) s.byDigest.delete(digest);
  }

  /** Agents with figures. */
  get size(): number {
    return this.#agents.size;
  }
}

function bounded(map: Map<string, CallFigures>, key: string, max: number): CallFigures {
  let f = map.get(key);
  if (f !== undefined) return f;
  f = new CallFigures(SPLIT_SAMPLES);
  map.set(key, f);
  for (const oldest of map.keys()) {
    if (map.size <= max) break;
    map.delete(oldest);
  }
  return f;
}

function views(map: ReadonlyMap<string, CallFigures>): Record<string, CallFiguresView> {
  return Object.fromEntries([...map].map(([k, f]) => [k, f.view()]));
}
