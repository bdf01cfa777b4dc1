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
 * An endpoint's hits counted since its last publication (`hitEvents: 'counted'`). The cache keeps
 * one beside each key it judged, so a fresh hit finds its key and its tally with one lookup; the
 * tally is itself the endpoint's place in the publication queue.
 */
export interface HitTally {
  readonly key: string;
  count: number;
}

/**
 * Counted hits published per turn of the event loop, at most: each event reaches every listener
 * (the metrics, the journal's activity, the dashboard's feed), a few microseconds each.
 */
export const HIT_EVENTS_PER_TURN = 500;

/** Published tallies kept at the queue's front, at most, while it never empties. */
const COMPACT_AT = 4 * HIT_EVENTS_PER_TURN;

/** Emits one cache's result events. */
export class ResultEvents {
  readonly #events: EventStream | undefined;
  /** `hitEvents: 'counted'` with an event stream: a hit is a counter. */
  readonly #countHits: boolean;
  /**
   * The tallies with hits not yet published, oldest first from `#head`: a tally joins when its
   * count leaves zero and leaves when it is published (its count back at zero), so it is queued at
   * most once and a burst allocates nothing per hit or per endpoint but the events themselves.
   */
  readonly #queue: HitTally[] = [];
  #head = 0;
  /**
   * Tallies of endpoints the cache holds none for (a key it did not write, or one it let go while
   * its hits were not yet published), until the queue is empty; the cache takes the key's tally
   * from here when it writes the key ({@link tallyFor}), so an endpoint has one tally and one event
   * per burst.
   */
  readonly #loose = new Map<string, HitTally>();
  #hitFlush: NodeJS.Immediate | undefined;

  constructor(events: EventStream | undefined, hitEvents: 'each' | 'counted') {
    this.#events = events;
    this.#countHits = hitEvents === 'counted' && events !== undefined;
  }

  /** A fresh hit: an event, or a count (on the endpoint's tally when the cache has one). */
  hit(key: string, failures: number, tally?: HitTally): void {
    if (!this.#countHits) this.emit(key, 'hit', NO_DETAIL, failures);
    else if (tally === undefined) this.#looseHit(key);
    // An endpoint hit again in the same burst is counted only: its tally is queued already.
    else if (tally.count++ === 0) this.#enqueue(tally);
  }

  /** The tally for a key the cache writes: the one its hits were counted on so far, else a new one. */
  tallyFor(key: string): HitTally {
    const loose = this.#loose.get(key);
    if (loose === undefined) return { key, count: 0 };
    this.#loose.delete(key);
    return loose;
  }

  /**
   * A tally the cache lets go (it forgot the key, or its rules changed): kept until its hits are
   * published, for the key's next tally to continue.
   */
  release(tally: HitTally): void {
    if (tally.count > 0) this.#loose.set(tally.key, tally);
  }

  /**
   * Publishes the hits counted so far (`hitEvents: 'counted'`), all of them now. After a burst it
   * runs by itself, {@link HIT_EVENTS_PER_TURN} events per turn of the event loop: a discovery
   * cycle's burst is one event per endpoint, and a request waiting meanwhile goes between slices.
   */
  flush(): void {
    if (this.#hitFlush !== undefined) clearImmediate(this.#hitFlush);
    this.#hitFlush = undefined;
    this.#publish(Number.POSITIVE_INFINITY);
  }

  /** The scheduled flush: a slice, and the rest at the next turn. */
  #flushSlice(): void {
    this.#hitFlush = undefined;
    this.#publish(HIT_EVENTS_PER_TURN);
    if (this.#head < this.#queue.length) this.#schedule();
  }

  /** Emits up to `max` queued tallies, oldest first, each as one event with its count. */
  #publish(max: number): void {
    const queue = this.#queue;
    const events = this.#events;
    const end = Math.min(queue.length, this.#head + max);
    for (let i = this.#head; i < end; i++) {
      const tally = queue[i]!;
      const count = tally.count;
      tally.count = 0;
      events?.emit({ type: 'card.result', endpoint: tally.key, outcome: 'hit', failures: 0, count });
    }
    this.#head = end;
    if (end === queue.length) {
      queue.length = 0;
      this.#head = 0;
      this.#loose.clear();
    } else if (end >= COMPACT_AT && end * 2 >= queue.length) {
      // Hits that keep coming faster than the slices publish them never empty the queue: drop
      // the published part, and the loose tallies published since (none of them is queued).
      queue.copyWithin(0, end);
      queue.length -= end;
      this.#head = 0;
      for (const [key, tally] of this.#loose) if (tally.count === 0) this.#loose.delete(key);
    }
  }

  /** The tallies the queue holds, published ones at its front included (bounded, see {@link #publish}). */
  get heldTallies(): number {
    return this.#queue.length;
  }

  #enqueue(tally: HitTally): void {
    this.#queue.push(tally);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#hitFlush !== undefined) return;
    this.#hitFlush = setImmediate(() => this.#flushSlice());
    this.#hitFlush.unref();
  }

  #looseHit(key: string): void {
    let tally = this.#loose.get(key);
    if (tally === undefined) this.#loose.set(key, (tally = { key, count: 0 }));
    if (tally.count++ === 0) this.#enqueue(tally);
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
