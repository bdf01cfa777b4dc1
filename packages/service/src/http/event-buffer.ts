/**
 * The recent-event buffer behind `/api/events` and the SSE feed: a bounded ring of discovery
 * events in sequence order, so a client that reconnects with `Last-Event-ID` receives what it
 * missed (when still buffered) and then live events.
 */
import type { DiscoveryEvent, EventStream } from 'a2a-discovery';

export class EventBuffer {
  readonly #limit: number;
  readonly #events: DiscoveryEvent[] = [];
  readonly #listeners = new Set<(e: DiscoveryEvent) => void>();
  readonly #unsubscribe: () => void;

  constructor(stream: EventStream, limit = 1_000) {
    this.#limit = limit;
    this.#unsubscribe = stream.subscribe((e) => {
      this.#events.push(e);
      if (this.#events.length > this.#limit) this.#events.splice(0, this.#events.length - this.#limit);
      for (const l of this.#listeners) l(e);
    });
  }

  /**
   * Puts events recorded earlier (the journal of a durable store) before the live ones, so
   * `/api/events` and a reconnecting stream see the story from before a restart.
   */
  seed(events: readonly DiscoveryEvent[]): void {
    const first = this.#events[0]?.seq ?? Number.POSITIVE_INFINITY;
    const older = events.filter((e) => e.seq < first);
    this.#events.unshift(...older);
    if (this.#events.length > this.#limit) this.#events.splice(0, this.#events.length - this.#limit);
  }

  /** Buffered events with `seq` greater than `afterSeq`, oldest first (at most `max`). */
  since(afterSeq: number, max = this.#limit): DiscoveryEvent[] {
    const out = this.#events.filter((e) => e.seq > afterSeq);
    return out.length > max ? out.slice(out.length - max) : out;
  }

  /** The newest sequence number buffered (0 when empty): where a stream opened now starts. */
  get newestSeq(): number {
    return this.#events.at(-1)?.seq ?? 0;
  }

  /** The oldest sequence number still buffered (0 when empty). */
  get oldestSeq(): number {
    return this.#events[0]?.seq ?? 0;
  }

  listen(listener: (e: DiscoveryEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }
}
