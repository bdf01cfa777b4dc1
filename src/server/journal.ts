/**
 * The journal as the API serves it (`GET /api/journal`, `GET /api/activity`): pages of the
 * store's event journal, newest first, so a page opened hours later or after a restart reads the
 * whole story back to the retention horizon; and cache chatter (hits, 304s, fetches, stale
 * serving, failures, backoff — never journaled) as counts and rates per endpoint.
 *
 * The store is written behind (StoreWriter), so the newest events may not be in it yet: a page
 * also takes the journal-worthy events of the recent-event buffer, deduplicated by `seq`.
 */
import type { DiscoveryEvent, EventStream } from '../events/index.js';
import type { StateStore } from '../store/index.js';
import { journalOrCounter } from '../store/index.js';
import type { EventBuffer } from './event-buffer.js';

/** Events per page at most (a larger `limit` is cut to this). */
export const MAX_JOURNAL_PAGE = 1_000;
/** The window over which per-endpoint rates are computed. */
export const ACTIVITY_WINDOW_MS = 5 * 60_000;
const BUCKET_MS = 10_000;

export interface JournalPageQuery {
  /** Only events with a smaller `seq` (the previous page's `nextBefore`). */
  before?: number;
  /** Events in the page; default 200, at most {@link MAX_JOURNAL_PAGE}. */
  limit?: number;
  /** Only these event types. */
  types?: readonly string[];
}

export interface JournalPage {
  /** Oldest first. */
  events: DiscoveryEvent[];
  /** `before` for the next (older) page; null when this page reached the retention horizon. */
  nextBefore: number | null;
}

/** Chatter of one endpoint: totals since `since` and counts within the last `windowMs`. */
export interface EndpointActivity {
  endpoint: string;
  /** Counter name (`card.result.hit`, `card.result.revalidated`, `card.fetch.conditional`, …) → count. */
  counts: Record<string, number>;
  /** The same counters within the window. */
  recent: Record<string, number>;
  /** Epoch ms of the last chatter event. */
  lastAt: number;
}

export interface ActivityJson {
  /** Epoch ms since when this process counts (per-endpoint counts start again at a restart). */
  since: number;
  windowMs: number;
  endpoints: EndpointActivity[];
  /** The store's durable counters (all endpoints, across restarts). */
  totals: Record<string, number>;
}

interface Counts {
  counts: Map<string, number>;
  /** bucket start → counter → count */
  buckets: Map<number, Map<string, number>>;
  lastAt: number;
}

export class JournalReader {
  readonly #store: StateStore;
  readonly #buffer: EventBuffer;
  readonly #wallNow: () => number;
  readonly #since: number;
  readonly #activity = new Map<string, Counts>();
  readonly #unsubscribe: () => void;

  constructor(o: { store: StateStore; buffer: EventBuffer; events: EventStream; wallNow: () => number }) {
    this.#store = o.store;
    this.#buffer = o.buffer;
    this.#wallNow = o.wallNow;
    this.#since = o.wallNow();
    this.#unsubscribe = o.events.subscribe((e) => this.#count(e));
  }

  /** One page of the journal, the newest `limit` events below `before`. */
  async page(q: JournalPageQuery = {}): Promise<JournalPage> {
    const limit = Math.max(1, Math.min(MAX_JOURNAL_PAGE, Math.floor(q.limit ?? 200)));
    const before = q.before ?? Number.POSITIVE_INFINITY;
    const types = q.types && q.types.length > 0 ? new Set(q.types) : undefined;
    const stored = await this.#store.events({
      ...(Number.isFinite(before) && { beforeSeq: before }),
      ...(types && { types: [...types] }),
      limit,
    });
    const recent = this.#buffer.since(0).filter((e) => e.seq < before && (!types || types.has(e.type)) && journalOrCounter(e) === 'journal');
    const bySeq = new Map<number, DiscoveryEvent>();
    for (const e of stored) bySeq.set(e.seq, e);
    for (const e of recent) bySeq.set(e.seq, e);
    const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
    const events = all.slice(Math.max(0, all.length - limit));
    return { events, nextBefore: events.length === limit && events[0] !== undefined ? events[0].seq : null };
  }

  /** Cache chatter per endpoint. */
  async activity(): Promise<ActivityJson> {
    const now = this.#wallNow();
    const from = now - ACTIVITY_WINDOW_MS;
    const endpoints: EndpointActivity[] = [];
    for (const [endpoint, c] of this.#activity) {
      const recent: Record<string, number> = {};
      for (const [start, counts] of c.buckets) {
        if (start + BUCKET_MS <= from) {
          c.buckets.delete(start);
          continue;
        }
        for (const [k, v] of counts) recent[k] = (recent[k] ?? 0) + v;
      }
      endpoints.push({ endpoint, counts: Object.fromEntries(c.counts), recent, lastAt: c.lastAt });
    }
    endpoints.sort((a, b) => (a.endpoint < b.endpoint ? -1 : 1));
    const totals = await this.#store.counters().catch(() => ({}));
    return { since: this.#since, windowMs: ACTIVITY_WINDOW_MS, endpoints, totals };
  }

  close(): void {
    this.#unsubscribe();
  }

  #count(e: DiscoveryEvent): void {
    const name = journalOrCounter(e);
    if (name === 'journal' || !('endpoint' in e) || typeof e.endpoint !== 'string') return;
    let c = this.#activity.get(e.endpoint);
    if (!c) {
      c = { counts: new Map(), buckets: new Map(), lastAt: 0 };
      this.#activity.set(e.endpoint, c);
    }
    c.counts.set(name, (c.counts.get(name) ?? 0) + 1);
    const start = Math.floor(e.at / BUCKET_MS) * BUCKET_MS;
    let bucket = c.buckets.get(start);
    if (!bucket) {
      bucket = new Map();
      c.buckets.set(start, bucket);
      for (const s of c.buckets.keys()) if (s + BUCKET_MS <= e.at - ACTIVITY_WINDOW_MS) c.buckets.delete(s);
    }
    bucket.set(name, (bucket.get(name) ?? 0) + 1);
    c.lastAt = Math.max(c.lastAt, e.at);
  }
}

/** Parses the query of `GET /api/journal`; a problem string for a bad value. */
export function parseJournalQuery(q: { before?: string | undefined; limit?: string | undefined; types?: string | undefined }): JournalPageQuery | string {
  const out: JournalPageQuery = {};
  if (q.before !== undefined && q.before !== '') {
    const n = Number(q.before);
    if (!Number.isSafeInteger(n) || n < 0) return 'before must be a non-negative integer (a previous page’s nextBefore)';
    out.before = n;
  }
  if (q.limit !== undefined && q.limit !== '') {
    const n = Number(q.limit);
    if (!Number.isSafeInteger(n) || n < 1) return `limit must be an integer from 1 to ${MAX_JOURNAL_PAGE}`;
    out.limit = Math.min(n, MAX_JOURNAL_PAGE);
  }
  if (q.types !== undefined && q.types !== '') {
    const types = q.types.split(',').map((t) => t.trim()).filter((t) => t !== '');
    if (types.length > 32 || types.some((t) => !/^[a-z][a-z.]{0,63}$/.test(t))) return 'types must be a comma-separated list of event types (e.g. snapshot.published,alert)';
    out.types = types;
  }
  return out;
}
