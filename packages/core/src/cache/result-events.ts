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

/** Emits one cache's result events. */
export class ResultEvents {
  readonly #events: EventStream | undefined;
  /** `hitEvents: 'counted'` with an event stream: a hit is a counter. */
  readonly #countHits: boolean;
  /** Counted hits not yet published, per endpoint (`hitEvents: 'counted'`); at most one per entry. */
  readonly #pendingHits = new Map<string, number>();
  #hitFlush: NodeJS.Immediate | undefined;

  constructor(events: EventStream | undefined, hitEvents: 'each' | 'counted') {
    this.#events = events;
    this.#countHits = hitEvents === 'counted' && events !== undefined;
  }

  /** A fresh hit: an event, or a count. */
  hit(key: string, failures: number): void {
    if (this.#countHits) this.#count(key);
    else this.emit(key, 'hit', NO_DETAIL, failures);
  }

  /** Publishes the hits counted so far (`hitEvents: 'counted'`); runs by itself after each burst. */
  flush(): void {
    if (this.#hitFlush !== undefined) clearImmediate(this.#hitFlush);
    this.#hitFlush = undefined;
    const events = this.#events;
    if (events !== undefined) for (const [endpoint, count] of this.#pendingHits) events.emit({ type: 'card.result', endpoint, outcome: 'hit', failures: 0, count });
    this.#pendingHits.clear();
  }

  #count(key: string): void {
    const n = this.#pendingHits.get(key);
    this.#pendingHits.set(key, n === undefined ? 1 : n + 1);
    if (this.#hitFlush === undefined) {
      this.#hitFlush = setImmediate(() => this.flush());
      this.#hitFlush.unref();
    }
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
