/**
 * The recent-event buffer behind `/api/events` and the SSE feed: a bounded ring of discovery
 * events in sequence order, so a client that reconnects with `Last-Event-ID` receives what it
 * missed (when still buffered) and then live events. Adding an event costs the same however full
 * the ring is (a burst of a cycle's results is thousands of events).
 */
import type { DiscoveryEvent, EventStream } from 'a2a-discovery';

export class EventBuffer {
  readonly #limit: number;
  /** The ring: `#size` events from `#start`, oldest first. */
  readonly #ring: Array<DiscoveryEvent | undefined>;
  #start = 0;
  #size = 0;
  readonly #listeners = new Set<(e: DiscoveryEvent) => void>();
  readonly #unsubscribe: () => void;

  constructor(stream: EventStream, limit = 1_000) {
    this.#limit = Math.max(1, limit);
    this.#ring = new Array<DiscoveryEvent | undefined>(this.#limit);
    this.#unsubscribe = stream.subscribe((e) => {
      this.#push(e);
      for (const l of this.#listeners) l(e);
    });
  }

  /**
   * Puts events recorded earlier (the journal of a durable store) before the live ones, so
   * `/api/events` and a reconnecting stream see the story from before a restart.
   */
  seed(events: readonly DiscoveryEvent[]): void {
    const first = this.#at(0)?.seq ?? Number.POSITIVE_INFINITY;
    const all = [...events.filter((e) => e.seq < first), ...this.#from(0)];
    this.#start = 0;
    this.#size = 0;
    this.#ring.fill(undefined);
    for (const e of all.slice(Math.max(0, all.length - this.#limit))) this.#push(e);
  }

  /** Buffered events with `seq` greater than `afterSeq`, oldest first (at most `max`). */
  since(afterSeq: number, max = this.#limit): DiscoveryEvent[] {
    // In sequence order: the first one after `afterSeq` by bisection.
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#at(mid)!.seq > afterSeq) hi = mid;
      else lo = mid + 1;
    }
    return this.#from(Math.max(lo, this.#size - Math.max(0, max)));
  }

  /** The newest sequence number buffered (0 when empty): where a stream opened now starts. */
  get newestSeq(): number {
    return this.#at(this.#size - 1)?.seq ?? 0;
  }

  /** The oldest sequence number still buffered (0 when empty). */
  get oldestSeq(): number {
    return this.#at(0)?.seq ?? 0;
  }

  listen(listener: (e: DiscoveryEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }

  #push(e: DiscoveryEvent): void {
    if (this.#size < this.#limit) {
      this.#ring[(this.#start + this.#size) % this.#limit] = e;
      this.#size++;
    } else {
      // Full: the oldest makes room.
      this.#ring[this.#start] = e;
      this.#start = (this.#start + 1) % this.#limit;
    }
  }

  /** The `i`-th buffered event, oldest first. */
  #at(i: number): DiscoveryEvent | undefined {
    return i >= 0 && i < this.#size ? this.#ring[(this.#start + i) % this.#limit] : undefined;
  }

  /** The buffered events from the `first`-th on, oldest first. */
  #from(first: number): DiscoveryEvent[] {
    const out: DiscoveryEvent[] = [];
    for (let i = first; i < this.#size; i++) out.push(this.#at(i)!);
    return out;
  }
}
