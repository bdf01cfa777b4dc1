/**
 * The journal as the API serves it (`GET /api/journal`, `GET /api/activity`): pages of the
 * store's event journal, newest first, so a page opened hours later or after a restart reads the
 * whole story back to the retention horizon; and cache chatter (hits, 304s, fetches, stale
 * serving, failures, backoff — never journaled) as counts and rates per endpoint.
 *
 * Pages are cut by journal position (the store assigns one to each row, in one order for every
 * replica; an event's `seq` is its process's). The store is written behind (StoreWriter), so the
 * newest events may not be in it yet: the first page also takes the writer's unwritten events,
 * as the newest, each once.
 */
import type { DiscoveryEvent, EventStream } from '../events/index.js';
import type { StateStore } from '../store/index.js';
import { journalOrCounter } from '../store/index.js';

/** Events per page at most (a larger `limit` is cut to this). */
export const MAX_JOURNAL_PAGE = 1_000;
/** The window over which per-endpoint rates are computed. */
export const ACTIVITY_WINDOW_MS = 5 * 60_000;
const BUCKET_MS = 10_000;

export interface JournalPageQuery {
  /** Only events before this journal position (the previous page's `nextBefore`). */
  before?: number;
  /** Events in the page; default 200, at most {@link MAX_JOURNAL_PAGE}. */
  limit?: number;
  /** Only these event types. */
  types?: readonly string[];
}

/**
 * A journal event as a page shows it: the event, the replica that recorded it and its journal
 * position (`journalId`; absent while it is still being written).
 */
export type JournalPageEvent = DiscoveryEvent & { readonly replica: string; readonly journalId?: number };

export interface JournalPage {
  /** Oldest first. */
  events: JournalPageEvent[];
  /** `before` for the next (older) page; null when this page reached the retention horizon. */
  nextBefore: number | null;
  /** The replica serving this page: its events' `seq` are the ones its event stream carries. */
  replica: string;
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
  readonly #pending: () => readonly DiscoveryEvent[];
  readonly #wallNow: () => number;
  readonly #since: number;
  readonly #activity = new Map<string, Counts>();
  readonly #unsubscribe: () => void;

  /** `pending`: the journal events written behind and not in the store yet (the StoreWriter's). */
  constructor(o: { store: StateStore; pending?: () => readonly DiscoveryEvent[]; events: EventStream; wallNow: () => number }) {
    this.#store = o.store;
    this.#pending = o.pending ?? (() => []);
    this.#wallNow = o.wallNow;
    this.#since = o.wallNow();
    this.#unsubscribe = o.events.subscribe((e) => this.#count(e));
  }

  /** One page of the journal, the newest `limit` events below position `before`. */
  async page(q: JournalPageQuery = {}): Promise<JournalPage> {
    const limit = Math.max(1, Math.min(MAX_JOURNAL_PAGE, Math.floor(q.limit ?? 200)));
    const types = q.types && q.types.length > 0 ? new Set(q.types) : undefined;
    // Read before the store: an event written meanwhile is then found there, and shown once.
    const pending = q.before === undefined ? this.#pending().filter((e) => (!types || types.has(e.type)) && journalOrCounter(e) === 'journal') : [];
    const stored = await this.#store.journal({ ...(q.before !== undefined && { before: q.before }), ...(types && { types: [...types] }), limit });
    const replica = this.#store.replica;
    const written = new Set(stored.filter((r) => r.replica === replica).map((r) => r.event.seq));
    const all: JournalPageEvent[] = [
      ...stored.map((r) => ({ ...r.event, replica: r.replica, journalId: r.id })),
      ...pending.filter((e) => !written.has(e.seq)).map((e) => ({ ...e, replica })),
    ];
    const events = all.slice(Math.max(0, all.length - limit));
    const shown = events.filter((e) => e.journalId !== undefined);
    let nextBefore: number | null;
    if (shown.length === 0) {
      // Unwritten events filled the page: the stored journal follows, from its newest row.
      nextBefore = stored.length > 0 ? stored.at(-1)!.id + 1 : null;
    } else {
      // Older rows remain when the store gave a full page, or when this page left some of it out.
      nextBefore = stored.length === limit || shown.length < stored.length ? shown[0]!.journalId! : null;
    }
    return { events, nextBefore, replica };
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
