/**
 * The card cache's `card.result` events: one per outcome, with the response's details and the
 * error's code, stage and problems; fresh hits either one event each or, `hitEvents: 'counted'`,
 * counted per endpoint and published together once the current burst of calls is over.
 *
 * @module
 */
import type { DiscoveryError } from '../errors.js';
import type { CardOutcome, CardResultEvent, EventInput, EventStream } from '../events/index.js';

/** What a result event tells beyond its outcome: the event's own fields. */
export type ResultDetail = Pick<CardResultEvent, 'status' | 'durationMs' | 'bytes' | 'rawSha256' | 'expectedSha256' | 'warnings'>;

const NO_DETAIL: ResultDetail = Object.freeze({});

/**
 * An endpoint's hits counted since the last publication (`hitEvents: 'counted'`). The cache keeps
 * one beside each key it judged, so a fresh hit finds its key and its tally with one lookup.
 */
export interface HitTally {
  count: number;
}

/** A tally at zero. */
export function newHitTally(): HitTally {
  return { count: 0 };
}

/**
 * Counted hits published per turn of the event loop, at most: each event reaches every listener
 * (the metrics, the journal's activity, the dashboard's feed), a few microseconds each.
 */
export const HIT_EVENTS_PER_TURN = 500;

/** Emits one cache's result events. */
export class ResultEvents {
  readonly #events: EventStream | undefined;
  /** `hitEvents: 'counted'` with an event stream: a hit is a counter. */
  readonly #countHits: boolean;
  /** The tallies with hits not yet published, and their endpoints (`hitEvents: 'counted'`): one per tally, at most one per entry. */
  readonly #pending: Array<{ readonly key: string; readonly tally: HitTally }> = [];
  /** Tallies of endpoints the cache gave none (a key it did not write yet), until the next publication. */
  readonly #loose = new Map<string, HitTally>();
  /** Counts taken from the tallies and not yet published (a burst bigger than one slice). */
  readonly #out: Array<[string, number]> = [];
  #hitFlush: NodeJS.Immediate | undefined;

  constructor(events: EventStream | undefined, hitEvents: 'each' | 'counted') {
    this.#events = events;
    this.#countHits = hitEvents === 'counted' && events !== undefined;
  }

  /** A fresh hit: an event, or a count (on the endpoint's tally when the cache has one). */
  hit(key: string, failures: number, tally?: HitTally): void {
    if (this.#countHits) this.#count(key, tally);
    else this.emit(key, 'hit', NO_DETAIL, failures);
  }

  /**
   * Publishes the hits counted so far (`hitEvents: 'counted'`), all of them now. After a burst it
   * runs by itself, {@link HIT_EVENTS_PER_TURN} events per turn of the event loop: a discovery
   * cycle's burst is one event per endpoint, and a request waiting meanwhile goes between slices.
   */
  flush(): void {
    this.#take();
    this.#publish(Number.POSITIVE_INFINITY);
  }

  /** The scheduled flush: a slice, and the rest at the next turn. */
  #flushSlice(): void {
    this.#hitFlush = undefined;
    this.#take();
    this.#publish(HIT_EVENTS_PER_TURN);
    if (this.#out.length > 0) this.#schedule();
  }

  /** Moves the counted hits to the publication queue: one count per endpoint. */
  #take(): void {
    if (this.#hitFlush !== undefined) clearImmediate(this.#hitFlush);
    this.#hitFlush = undefined;
    if (this.#pending.length === 0) return;
    // One event per endpoint: a key can have had two tallies in one burst (the rules changed, or
    // its first hit came before the cache wrote it).
    const counts = new Map<string, number>();
    for (const { key, tally } of this.#pending) {
      counts.set(key, (counts.get(key) ?? 0) + tally.count);
      tally.count = 0;
    }
    this.#pending.length = 0;
    this.#loose.clear();
    for (const entry of counts) this.#out.push(entry);
  }

  /** Emits up to `max` queued counts, oldest first. */
  #publish(max: number): void {
    const events = this.#events;
    const n = Math.min(max, this.#out.length);
    const taken = this.#out.splice(0, n);
    if (events !== undefined) for (const [endpoint, count] of taken) events.emit({ type: 'card.result', endpoint, outcome: 'hit', failures: 0, count });
  }

  #schedule(): void {
    if (this.#hitFlush !== undefined) return;
    this.#hitFlush = setImmediate(() => this.#flushSlice());
    this.#hitFlush.unref();
  }

  #count(key: string, given: HitTally | undefined): void {
    let tally = given ?? this.#loose.get(key);
    if (tally === undefined) this.#loose.set(key, (tally = newHitTally()));
    if (tally.count++ === 0) this.#pending.push({ key, tally });
    this.#schedule();
  }

  /** One `card.result` event (none without an event stream). */
  emit(key: string, outcome: CardOutcome, d: ResultDetail, failures: number, error?: DiscoveryError): void {
    const events = this.#events;
    if (!events) return;
    // Built field by field: object spreads cost microseconds per event on Node 20 (see EventStream.emit).
    const e: EventInput<CardResultEvent> = { type: 'card.result', endpoint: key, outcome, failures };
    if (d.status !== undefined) e.status = d.status;
    if (d.durationMs !== undefined) e.durationMs = d.durationMs;
    if (d.bytes !== undefined) e.bytes = d.bytes;
    if (d.rawSha256 !== undefined) e.rawSha256 = d.rawSha256;
    if (d.expectedSha256 !== undefined) e.expectedSha256 = d.expectedSha256;
    if (d.warnings !== undefined && d.warnings.length > 0) e.warnings = d.warnings;
    if (error !== undefined) {
      e.code = error.code;
      e.reason = error.message;
      if (error.stage !== undefined) e.stage = error.stage;
      if (error.problems.length > 0) e.problems = error.problems;
    }
    events.emit(e);
  }
}
