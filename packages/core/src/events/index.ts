/**
 * The discovery event stream. Every stage publishes typed events here; logs, metrics, the SSE
 * feed, the dashboard timeline and alerts are all consumers. No stage knows about them.
 *
 * Events are also published on the `node:diagnostics_channel` channel
 * {@link DISCOVERY_CHANNEL}, so tools can observe the library without holding a reference.
 *
 * @module
 */
import diagnostics from 'node:diagnostics_channel';
import type { DiscoveryErrorCode, Problem, Stage } from '../errors.js';
import { activeTraceIds } from '../telemetry/otel.js';
import { systemClock } from '../clock/index.js';

/** The diagnostics channel every event is published on. */
const DISCOVERY_CHANNEL = 'a2a-discovery:event';

/** Fields every event carries. */
interface EventBase {
  /** Sequence number, increasing per stream, assigned by {@link EventStream.emit}. */
  seq: number;
  /** Epoch milliseconds (from the stream's clock) when it happened. */
  at: number;
  /**
   * The trace and span active (and sampled) when it was emitted, set by {@link EventStream.emit}
   * when the application records OpenTelemetry traces: a journal entry or the dashboard links the
   * event to its trace. Absent otherwise.
   */
  traceId?: string;
  spanId?: string;
}

/** What the card cache did for one endpoint (the outcomes of docs/fetching-and-caching.md, "Events"). */
export type CardOutcome =
  | 'hit' // fresh entry served without a request
  | 'revalidated' // 304 Not Modified
  | 'changed' // 200 with new bytes
  | 'unchanged' // 200 with the same bytes
  | 'stale' // an error occurred and a previously good card is served
  | 'invalid' // content rejected; nothing stored
  | 'failed'; // an error and no previous card to serve

interface CardFetchEvent extends EventBase {
  type: 'card.fetch';
  endpoint: string;
  url: string;
  conditional: boolean;
}

export interface CardResultEvent extends EventBase {
  type: 'card.result';
  endpoint: string;
  outcome: CardOutcome;
  status?: number;
  durationMs?: number;
  bytes?: number;
  rawSha256?: string;
  /** For an invalid outcome with `ERR_DIGEST_MISMATCH`: the SHA-256 the publisher pinned (`rawSha256` is the one received). */
  expectedSha256?: string;
  failures: number;
  /**
   * Hits only, from a cache counting them (`hitEvents: 'counted'`): how many fresh hits of this
   * endpoint the event stands for. Absent: one.
   */
  count?: number;
  /** For stale, invalid and failed outcomes. */
  code?: DiscoveryErrorCode;
  stage?: Stage;
  reason?: string;
  problems?: readonly Problem[];
  /** For a changed card that was accepted: the notes on it (ignored modes, uncalled interfaces, an unverified signature), each with its JSON path. */
  warnings?: readonly Problem[];
}

interface CardBackoffEvent extends EventBase {
  type: 'card.backoff';
  endpoint: string;
  failures: number;
  retryInMs: number;
}

/**
 * An operator-facing alert; later stages add their kinds. Alerts about a lasting condition
 * carry a `key` and are edge-triggered: raised when the condition starts, then one
 * {@link AlertResolvedEvent} with the same key when it clears; raised again on its next
 * occurrence. Alerts about a single happening (a skills change) have no key.
 */
export interface AlertEvent extends EventBase {
  type: 'alert';
  kind: string;
  message: string;
  /** Identifies the condition; its resolution carries the same key. */
  key?: string;
  endpoint?: string;
  detail?: Record<string, unknown>;
}

/** The condition of an earlier alert (same `key`) has cleared. */
export interface AlertResolvedEvent extends EventBase {
  type: 'alert.resolved';
  kind: string;
  key: string;
  message: string;
  endpoint?: string;
  /** Epoch ms when the alert was raised. */
  raisedAt: number;
}

/** The resolver admitted or refused an endpoint (emitted when its verdict changes). */
interface EndpointEvent extends EventBase {
  /** `gone`: no source proposes it any more (it stops being requested); `evicted`: forgotten after the grace period. */
  type: 'endpoint.admitted' | 'endpoint.refused' | 'endpoint.gone' | 'endpoint.evicted';
  endpoint: string;
  /** Ids of the sources that proposed it. */
  sources: readonly string[];
  code?: DiscoveryErrorCode;
  reason?: string;
}

/** Health state of an endpoint changed (healthy, degraded, removed...). */
interface HealthEvent extends EventBase {
  type: 'health.changed';
  endpoint: string;
  from: string;
  to: string;
  successes: number;
  failures: number;
}

/** The matcher's verdict on an endpoint changed. */
interface MatchEvent extends EventBase {
  type: 'match.verdict';
  endpoint: string;
  verdict: 'selected' | 'unsuitable' | 'excluded';
  localName?: string;
  reason?: string;
}

/** A snapshot was published, or held back by a guard. */
interface SnapshotEvent extends EventBase {
  type: 'snapshot.published' | 'snapshot.held';
  version: number;
  digest: string;
  previousDigest?: string;
  agents: readonly string[];
  reason?: string;
}

/**
 * A conversation's pin changed. `expired`: idle past its timeout (pin and stored history
 * dropped); `restarted`: an expired session came back and began anew on the current snapshot.
 */
interface SessionEvent extends EventBase {
  type: 'session.pinned' | 'session.upgraded' | 'session.ended' | 'session.expired' | 'session.restarted';
  sessionId: string;
  digest: string;
  previousDigest?: string;
}

/**
 * A candidate snapshot's routing was evaluated before publication (its agent set, tags or
 * domain layout differ from the last evaluated one): accuracy on the labelled cases, and whether
 * the gate held it.
 */
export interface RoutingEvent extends EventBase {
  type: 'routing.evaluated';
  version: number;
  digest: string;
  accuracy: number;
  minAccuracy: number;
  passed: boolean;
  /** Cases counted (their tag or agent is in the snapshot). */
  evaluated: number;
  /** The gate held the candidate back. */
  held: boolean;
}

/**
 * An AI Catalog source read a catalog document with a request (a fresh one read from its cache is
 * not an event), or could not: the cache's outcome (`changed`, `unchanged`, `revalidated` (304),
 * `stale` (its last good copy served after a failure), `failed`) or `refused` (the allowlist does
 * not admit it; never requested), and what the document lists.
 */
export interface CatalogEvent extends EventBase {
  type: 'catalog.read';
  source: string;
  url: string;
  outcome: 'changed' | 'unchanged' | 'revalidated' | 'stale' | 'invalid' | 'failed' | 'refused';
  /** 1 for a configured catalog, more for a nested one. */
  depth: number;
  entries: number;
  cards: number;
  nested: number;
  ignored: number;
  code?: DiscoveryErrorCode;
  reason?: string;
}

/** A snapshot's agent tree was built, or dropped once nothing needs it. */
interface TreeEvent extends EventBase {
  type: 'tree.built' | 'tree.evicted';
  digest: string;
}

/**
 * A lasting alert raised earlier and not resolved yet — by an earlier process (a restart) or the
 * previous leader replica (a takeover) — as a journal holds it: the newest {@link AlertEvent} of
 * its `key` with no later {@link AlertResolvedEvent} of that key. See `DiscoveryLoop.carryAlerts`.
 */
export interface OpenAlert {
  readonly key: string;
  readonly kind: string;
  readonly message: string;
  readonly endpoint?: string;
  readonly detail?: Record<string, unknown>;
  /** Epoch ms when it was raised (its resolution carries it). */
  readonly raisedAt: number;
}

/**
 * The service started: a new process, which on a durable store is a restart. Says what it took
 * over from the store (emitted by the service, before its first discovery cycle).
 */
interface ServiceStartedEvent extends EventBase {
  type: 'service.started';
  /** How this process names itself in the journal (`<hostname>:<pid>`, or the replica id). */
  replica: string;
  /** The process that wrote the newest journal entry before this one started (the one restarted), if any. */
  previousReplica?: string;
  /** What was restored: the current snapshot's version (0: none), the pinned sessions, the open alerts carried. */
  restored: { version: number; pins: number; alerts: number };
}

/**
 * A replica became the leader of several on one PostgreSQL store (at its start, or taking over
 * from a leader that stopped): it runs discovery from now on, carrying the open alerts.
 */
interface ReplicaLeaderEvent extends EventBase {
  type: 'replica.leader';
  replica: string;
  /** The fencing epoch it leads under. */
  epoch: number;
  /** The replica that led before it, as the journal names it, if known. */
  previousLeader?: string;
  /** Open alerts carried from the journal (not raised again). */
  alerts: number;
}

/**
 * Who acted through the service's API: a person (their token's `sub`, display name and role), the
 * holder of the static admin token, or `anonymous` (a loopback service without tokens). Never a token.
 */
export interface ActionActor {
  readonly kind: 'person' | 'admin-token' | 'anonymous';
  readonly sub?: string;
  readonly name?: string;
  readonly role?: 'viewer' | 'operator' | 'admin';
}

/**
 * Someone did something through the service's API (journaled: who did what): refreshed,
 * confirmed a held removal, ended or upgraded a session, inspected.
 */
export interface ActionEvent extends EventBase {
  type: 'api.action';
  action: 'refresh' | 'confirm' | 'session.end' | 'session.upgrade' | 'inspect' | 'config.reload' | 'rollout.hold' | 'rollout.resume' | 'rollout.promote' | 'rollout.rollback';
  actor: ActionActor;
  /** The session ended or upgraded. */
  sessionId?: string;
  /** The snapshot published (refresh, confirm) or the session is on (upgrade). */
  digest?: string;
  version?: number;
}

/**
 * The service's configuration file was read again (SIGHUP, `POST /api/config/reload`, or a change
 * of the file under `config.watch`): `config.reloaded` when it was applied, `config.refused` when
 * it was not (invalid, or a change that needs a restart); the running configuration then stays.
 */
export interface ConfigReloadEvent extends EventBase {
  type: 'config.reloaded' | 'config.refused';
  /** What asked for the reload. */
  trigger: 'signal' | 'api' | 'watch';
  /** SHA-256 (hex) of the file's bytes as read. */
  sha256: string;
  /** The configuration keys that differ from the running ones (`allow`, `static`, `server.port`, …). */
  changed: string[];
  /** Refused: why, one line per problem (`file:line:col path: message`, or the keys that need a restart). */
  problems?: string[];
}

/** What a staged rollout did (docs/rollouts.md). */
export interface RolloutEvent extends EventBase {
  type: 'rollout.started' | 'rollout.advanced' | 'rollout.held' | 'rollout.resumed' | 'rollout.promoted' | 'rollout.rolled-back' | 'rollout.superseded' | 'rollout.withdrawn';
  /** The rollout's id (its staged changes). */
  rollout: string;
  /** The candidate snapshot's digest. */
  candidate: string;
  /** The current snapshot's digest (the other side). */
  baseline: string;
  /** The step (0-based) and the share of new sessions (percent) on the candidate after this decision. */
  step: number;
  share: number;
  /** `auto`, or who did it (an operator's subject or name). */
  by: string;
  reason: string;
  /** The staged agents (local names). */
  agents: readonly string[];
}

/**
 * Any event. Stages added later extend this union with their own members; consumers switch on
 * `type` and ignore types they do not know.
 */
export type DiscoveryEvent =
  | CardFetchEvent
  | CardResultEvent
  | CardBackoffEvent
  | AlertEvent
  | AlertResolvedEvent
  | EndpointEvent
  | HealthEvent
  | MatchEvent
  | SnapshotEvent
  | SessionEvent
  | TreeEvent
  | RoutingEvent
  | CatalogEvent
  | ServiceStartedEvent
  | ReplicaLeaderEvent
  | ActionEvent
  | ConfigReloadEvent
  | RolloutEvent;

/** An event before the stream stamps it. */
export type EventInput<E extends DiscoveryEvent = DiscoveryEvent> = E extends DiscoveryEvent
  ? Omit<E, 'seq' | 'at'> & { at?: number }
  : never;

export type EventListener = (event: DiscoveryEvent) => void;

/** How many occurrences an event stands for: a counted cache-hit event's `count`, otherwise 1. */
export function occurrences(event: DiscoveryEvent): number {
  return event.type === 'card.result' && event.count !== undefined ? event.count : 1;
}

/**
 * A synchronous, in-process event stream. Listeners run in subscription order; a listener
 * that throws is isolated (reported through `onListenerError`) and never breaks the emitter.
 */
export class EventStream {
  #listeners = new Set<EventListener>();
  #seq = 0;
  readonly #channel = diagnostics.channel(DISCOVERY_CHANNEL);
  readonly #wallNow: () => number;
  readonly #onListenerError: (err: unknown) => void;

  /**
   * `startSeq`: the sequence number the first event follows (a service restarted on a durable
   * store continues after the last number it recorded, so `Last-Event-ID` stays meaningful).
   */
  constructor(options: { wallNow?: () => number; onListenerError?: (err: unknown) => void; startSeq?: number } = {}) {
    this.#seq = options.startSeq ?? 0;
    this.#wallNow = options.wallNow ?? systemClock.wallNow;
    this.#onListenerError = options.onListenerError ?? (() => {});
  }

  /** Stamps, publishes and returns the event. */
  emit<E extends DiscoveryEvent>(input: EventInput<E>): E {
    // Object.assign, not `{ ...input, seq, at }`: V8 (Node 20) takes a slow path for a spread
    // followed by more properties, microseconds per event.
    const event = Object.assign({}, input) as unknown as E;
    event.seq = ++this.#seq;
    event.at = input.at ?? this.#wallNow();
    const ids = activeTraceIds();
    if (ids !== undefined) {
      event.traceId = ids.traceId;
      event.spanId = ids.spanId;
    }
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#onListenerError(err);
      }
    }
    if (this.#channel.hasSubscribers) this.#channel.publish(event);
    return event;
  }

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The sequence number of the last event emitted. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Removes every listener. */
  close(): void {
    this.#listeners.clear();
  }
}
