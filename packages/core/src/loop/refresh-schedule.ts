/**
 * Refresh: when each source is polled and each admitted endpoint's card is refreshed through the
 * cache (a fresh card is a hit), plus a periodic unconditional resync per endpoint, jittered,
 * that catches a wrong 304.
 */
import type { CacheEntry, CardCache } from '../cache/index.js';
import type { Clock, Random } from '../clock/index.js';
import type { AdmittedEndpoint } from '../resolve/index.js';
import type { Source } from '../sources/index.js';
import { ATTR, SPAN, spanError, withSpan } from '../telemetry/index.js';
import { Pacer } from '../clock/pacer.js';

export interface RefreshScheduleOptions {
  sources: readonly Source[];
  cache: CardCache;
  clock: Clock;
  random: Random;
  /** Unconditional refetch of each endpoint this often (jittered). */
  resyncIntervalMs: number;
}

/** A cycle's cards: the entries aligned with the admitted list (undefined where no card was ever obtained). */
export interface RefreshedCards {
  readonly admitted: readonly AdmittedEndpoint[];
  readonly entries: ReadonlyArray<CacheEntry | undefined>;
  /** Fresh cards taken from the cache without a refresh (the cycle span counts them). */
  readonly hits: number;
}

export class RefreshSchedule {
  readonly #o: RefreshScheduleOptions;
  readonly #nextPollAt = new Map<string, number>();
  readonly #nextResyncAt = new Map<string, number>();

  constructor(options: RefreshScheduleOptions) {
    this.#o = options;
  }

  /** Forgets an endpoint discovery forgot. */
  forget(url: string): void {
    this.#nextResyncAt.delete(url);
  }

  /** Polls the sources that are due; on the `first` cycle, every source not synced yet. Returns how many were polled. */
  async pollSources(first: boolean): Promise<number> {
    const now = this.#o.clock.now();
    let polled = 0;
    await Promise.all(
      this.#o.sources.map(async (source) => {
        const interval = source.pollIntervalMs;
        const due = this.#nextPollAt.get(source.id) ?? Number.NEGATIVE_INFINITY;
        if (!first && (interval === undefined || now < due)) return;
        if (first && source.current().synced) return;
        polled++;
        await withSpan(SPAN.sourceList, { attributes: { [ATTR.source]: source.id, [ATTR.sourceKind]: source.kind } }, async (span) => {
          // A source never throws for remote failures: it keeps its last list and reports the error in its state.
          const state = await source.refresh();
          if (span.recording) {
            span.set({ [ATTR.records]: state.records.length, [ATTR.outcome]: state.ok ? 'ok' : 'failed' });
            if (!state.ok && state.error !== undefined) span.fail(spanError(state.error));
          }
        });
        // Read again after the refresh: a source may set its next interval from what it read (DNS TTLs).
        const next = source.pollIntervalMs;
        if (next !== undefined) this.#nextPollAt.set(source.id, now + next);
      }),
    );
    return polled;
  }

  /** Brings every admitted endpoint's card up to date and returns the entries. */
  async refreshCards(admitted: readonly AdmittedEndpoint[]): Promise<RefreshedCards> {
    const { cache, random } = this.#o;
    const resyncEvery = this.#o.resyncIntervalMs;
    const now = this.#o.clock.now();
    const entries = new Array<CacheEntry | undefined>(admitted.length);
    const pending: Array<Promise<unknown>> = [];
    const keep = (i: number, p: Promise<CacheEntry>) => pending.push(p.then((e) => (entries[i] = e), () => undefined));
    let hits = 0;
    // In slices: a wave of 100,000 due cards starts 100,000 refreshes (a promise and a span each).
    const pacer = new Pacer();
    for (let i = 0; i < admitted.length; i++) {
      if ((i & 63) === 63 && pacer.due) await pacer.tick();
      const url = admitted[i]!.baseUrl;
      let resyncAt = this.#nextResyncAt.get(url);
      if (resyncAt === undefined) {
        // Spread resyncs over [0.5, 1] × the interval so they never come together.
        resyncAt = now + resyncEvery * (0.5 + 0.5 * random());
        this.#nextResyncAt.set(url, resyncAt);
      }
      if (now >= resyncAt) {
        keep(
          i,
          cache.peek(url).then((seen) => {
            if (seen === undefined) return cache.get(url);
            this.#nextResyncAt.set(url, now + resyncEvery);
            return cache.refresh(url, { unconditional: true });
          }),
        );
      } else {
        // A fresh card needs no promise (most endpoints, most cycles).
        const fresh = cache.fresh(url);
        if (fresh !== undefined) {
          entries[i] = fresh;
          hits++;
        } else keep(i, cache.get(url));
      }
    }
    await Promise.all(pending);
    return { admitted, entries, hits };
  }
}
