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
import { type DiscoveryEvent, type EventStream } from 'a2a-discovery';
import { occurrences } from 'a2a-discovery/internal';
import type { StateStore } from '@a2a-discovery/store';
import { journalOrCounter } from '@a2a-discovery/store/internal';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';

/** Events per page at most (a larger `limit` is cut to this). */
export const MAX_JOURNAL_PAGE = 1_000;
/** The window over which per-endpoint rates are computed. */
const ACTIVITY_WINDOW_MS = 5 * 60_000;
const BUCKET_MS = 10_000;
/** The resolution of the per-endpoint rate series (the timeline's rate strip). */
const SERIES_BUCKET_MS = 60_000;
/** How far back the rate series reach: 6 hours of one-minute buckets per endpoint. */
export const SERIES_HORIZON_MS = 6 * 60 * 60_000;
const SERIES_SLOTS = SERIES_HORIZON_MS / SERIES_BUCKET_MS;
/** The kinds of chatter a series counts, and the counters each sums. */
const SERIES_KINDS = {
  hits: ['card.result.hit'],
  revalidated: ['card.result.revalidated'],
  fetches: ['card.fetch.conditional', 'card.fetch.unconditional'],
  failures: ['card.result.failed', 'card.result.stale'],
} as const;
type SeriesKind = keyof typeof SERIES_KINDS;
const KIND_OF = new Map<string, number>(Object.values(SERIES_KINDS).flatMap((names, i) => names.map((n) => [n, i] as const)));
const KIND_NAMES = Object.keys(SERIES_KINDS) as SeriesKind[];
/** Buckets in one series answer at most. */
const MAX_SERIES_BUCKETS = 720;
/**
 * Endpoints whose chatter is counted at once, by default. An endpoint's counters are freed when
 * the loop evicts it (`endpoint.evicted`); past this bound (more endpoints chattering than the
 * loop keeps, e.g. a source churning faster than the removal grace) the endpoints counted
 * longest ago are dropped first, an eighth of the bound at a time, and `droppedEndpoints` counts them.
 */
const DEFAULT_ACTIVITY_ENDPOINTS = DEFAULT_SERVER_LIMITS.activityEndpoints;
/** Endpoints in one `/api/activity` answer: by default, and at most. */
const ACTIVITY_PAGE = 500;
const MAX_ACTIVITY_PAGE = 1_000;

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
type JournalPageEvent = DiscoveryEvent & { readonly replica: string; readonly journalId?: number };

export interface JournalPage {
  /** Oldest first. */
  events: JournalPageEvent[];
  /** `before` for the next (older) page; null when this page reached the retention horizon. */
  nextBefore: number | null;
  /** The replica serving this page: its events' `seq` are the ones its event stream carries. */
  replica: string;
}

/** Chatter of one endpoint: totals since `since` and counts within the last `windowMs`. */
interface EndpointActivity {
  endpoint: string;
  /** Counter name (`card.result.hit`, `card.result.revalidated`, `card.fetch.conditional`, …) → count. */
  counts: Record<string, number>;
  /** The same counters within the window. */
  recent: Record<string, number>;
  /** Epoch ms of the last chatter event. */
  lastAt: number;
  /** The rates over time, when the query asked for them (`bucketMs`). */
  series?: ActivitySeries;
}

/**
 * One endpoint's chatter over time: per bucket of `bucketMs` from `from` (epoch ms), the number
 * of cache hits, 304s (`revalidated`), requests (`fetches`, conditional or not) and failed
 * refreshes (`failures`: failed, or served stale after a failure). Arrays are aligned with the
 * buckets, oldest first. Counting starts with the process and reaches back
 * {@link SERIES_HORIZON_MS} at most.
 */
interface ActivitySeries {
  from: number;
  bucketMs: number;
  hits: number[];
  revalidated: number[];
  fetches: number[];
  failures: number[];
}

/** What `GET /api/activity` may ask for beyond the counts: rate series from `from` in buckets of `bucketMs`. */
export interface ActivityQuery {
  /** Epoch ms; the series start at the bucket holding it (not before the horizon). */
  from?: number;
  /** Bucket width, rounded up to a whole number of {@link SERIES_BUCKET_MS}. */
  bucketMs?: number;
  /** Endpoints in the answer; default {@link ACTIVITY_PAGE}, at most {@link MAX_ACTIVITY_PAGE}. */
  limit?: number;
  /** Only endpoints after this one (the previous answer's `nextAfter`), in URL order. */
  after?: string;
}

export interface ActivityJson {
  /** Epoch ms since when this process counts (per-endpoint counts start again at a restart). */
  since: number;
  windowMs: number;
  /** One page of the endpoints counted now (evicted endpoints are not), in URL order. */
  endpoints: EndpointActivity[];
  /** `after` for the next page; null when this page reached the last endpoint. */
  nextAfter: string | null;
  /** Endpoints counted now, all pages together. */
  endpointCount: number;
  /** The store's durable counters (all endpoints, across restarts). */
  totals: Record<string, number>;
}

/**
 * The counter names (`card.result.hit`, `card.fetch.conditional`, …: journal.ts's vocabulary, about
 * a dozen), numbered as they are first seen, for every endpoint's arrays.
 */
const MAX_COUNTER_NAMES = 64;
const counterIndex = new Map<string, number>();
const counterNames: string[] = [];
function counterNumber(name: string): number {
  let i = counterIndex.get(name);
  // Bounded although the vocabulary is the code's own: a name past the cap counts as the last one.
  if (i === undefined && counterNames.length >= MAX_COUNTER_NAMES) return MAX_COUNTER_NAMES - 1;
  if (i === undefined) {
    i = counterNames.length;
    counterNames.push(name);
    counterIndex.set(name, i);
  }
  return i;
}

/** The rate window's ring: one slot per {@link BUCKET_MS}, one more than the window holds. */
const RECENT_SLOTS = ACTIVITY_WINDOW_MS / BUCKET_MS + 1;

/**
 * One endpoint's counters, in typed arrays: about 9.7 KB an endpoint, most of it the six-hour
 * series (a map per counter and per 10-second bucket took 16.5 KB, and twice the time an event).
 */
interface Counts {
  /** Since the process started, by counter number. */
  totals: number[];
  /** The bucket (its start / {@link BUCKET_MS}) each slot of `recent` holds; -1: none. */
  recentBuckets: Float64Array;
  /** Per slot, `width` counters. */
  recent: Uint32Array;
  width: number;
  lastAt: number;
  /** A ring of one-minute buckets: slot → the minute it holds (`series` counts 4 kinds per slot). */
  minutes: Int32Array;
  series: Uint32Array;
}

export class JournalReader {
  readonly #store: StateStore;
  readonly #pending: () => readonly DiscoveryEvent[];
  readonly #wallNow: () => number;
  readonly #since: number;
  readonly #activity = new Map<string, Counts>();
  readonly #maxEndpoints: number;
  /** Counters of endpoints dropped to make room, cleared and given to the next endpoints (at most an eighth of the bound). */
  readonly #spare: Counts[] = [];
  #dropped = 0;
  /** Events of endpoints not counted: the bound was reached and no counted endpoint was idle. */
  #uncounted = 0;
  /** The event time before which no sweep for idle endpoints runs again ({@link #makeRoom}). */
  #nextSweepAt = Number.NEGATIVE_INFINITY;
  readonly #unsubscribe: () => void;

  /**
   * `pending`: the journal events written behind and not in the store yet (the StoreWriter's).
   * `maxEndpoints`: endpoints counted at once (default {@link DEFAULT_ACTIVITY_ENDPOINTS}).
   */
  constructor(o: { store: StateStore; pending?: () => readonly DiscoveryEvent[]; events: EventStream; wallNow: () => number; maxEndpoints?: number }) {
    this.#store = o.store;
    this.#maxEndpoints = Math.max(1, o.maxEndpoints ?? DEFAULT_ACTIVITY_ENDPOINTS);
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

  /**
   * Endpoints counted now; those dropped so far to make room (idle for the whole window while the
   * bound was reached); and the events not counted because the bound was reached (the metrics read these).
   */
  get activityStats(): { endpoints: number; dropped: number; uncounted: number } {
    return { endpoints: this.#activity.size, dropped: this.#dropped, uncounted: this.#uncounted };
  }

  /** Cache chatter per endpoint, one page in URL order; with `query.bucketMs`, each endpoint's rate series too. */
  async activity(query: ActivityQuery = {}): Promise<ActivityJson> {
    const now = this.#wallNow();
    const from = now - ACTIVITY_WINDOW_MS;
    const limit = Math.max(1, Math.min(MAX_ACTIVITY_PAGE, Math.floor(query.limit ?? ACTIVITY_PAGE)));
    const after = query.after;
    const names = [...this.#activity.keys()].filter((k) => after === undefined || k > after).sort();
    const page = names.slice(0, limit);
    const endpoints: EndpointActivity[] = [];
    for (const endpoint of page) {
      const c = this.#activity.get(endpoint)!;
      const counts: Record<string, number> = {};
      c.totals.forEach((n, i) => {
        if (n !== undefined) counts[counterNames[i]!] = n;
      });
      const recent: Record<string, number> = {};
      for (let slot = 0; slot < RECENT_SLOTS; slot++) {
        const bucket = c.recentBuckets[slot]!;
        if (bucket < 0 || (bucket + 1) * BUCKET_MS <= from) continue;
        for (let i = 0; i < c.width; i++) {
          const v = c.recent[slot * c.width + i]!;
          if (v > 0) recent[counterNames[i]!] = (recent[counterNames[i]!] ?? 0) + v;
        }
      }
      endpoints.push({ endpoint, counts, recent, lastAt: c.lastAt, ...(query.bucketMs !== undefined && { series: seriesOf(c, now, query) }) });
    }
    const totals = await this.#store.counters().catch(() => ({}));
    const nextAfter = names.length > limit ? page.at(-1)! : null;
    return { since: this.#since, windowMs: ACTIVITY_WINDOW_MS, endpoints, nextAfter, endpointCount: this.#activity.size, totals };
  }

  close(): void {
    this.#unsubscribe();
  }

  /**
   * Bounded, and the endpoints counted keep their counts: once `maxEndpoints` are counted, room is
   * made only from endpoints with no event for the whole activity window (their five-minute counts
   * are zero), found by one pass over the map at most every {@link BUCKET_MS} of event time, and
   * their arrays are kept for the newcomers. An endpoint that finds no room is not counted
   * (`uncounted`). Dropping the endpoints counted first instead (the design before, issue 43) had a
   * fleet past the bound start every endpoint's counts again each cycle: its cycle's events came in
   * the same order each time, so each newcomer dropped the endpoint due next, and no endpoint's
   * counts lasted a cycle (3–4.5 µs an event, where counting one takes under 1).
   */
  #makeRoom(at: number): boolean {
    if (at < this.#nextSweepAt) return false;
    this.#nextSweepAt = at + BUCKET_MS;
    const idleBefore = at - ACTIVITY_WINDOW_MS;
    for (const [endpoint, counts] of this.#activity) {
      if (counts.lastAt > idleBefore) continue;
      this.#activity.delete(endpoint);
      // Kept for newcomers up to an eighth of the bound; the rest is the collector's.
      if (this.#spare.length < Math.ceil(this.#maxEndpoints / 8)) this.#spare.push(counts);
      this.#dropped++;
    }
    return this.#activity.size < this.#maxEndpoints;
  }

  #count(e: DiscoveryEvent): void {
    // An evicted endpoint's counters go with it: discovery forgot it, its chatter has ended.
    if (e.type === 'endpoint.evicted') {
      this.#activity.delete(e.endpoint);
      return;
    }
    const name = journalOrCounter(e);
    if (name === 'journal' || !('endpoint' in e) || typeof e.endpoint !== 'string') return;
    const n = occurrences(e);
    let c = this.#activity.get(e.endpoint);
    if (!c) {
      if (this.#activity.size >= this.#maxEndpoints && !this.#makeRoom(e.at)) {
        this.#uncounted++;
        return;
      }
      const spare = this.#spare.pop();
      c = spare === undefined ? newCounts() : clearCounts(spare);
      this.#activity.set(e.endpoint, c);
    }
    const kind = KIND_OF.get(name);
    if (kind !== undefined) {
      const slot = ringSlot(c.minutes, c.series, KIND_NAMES.length, Math.floor(e.at / SERIES_BUCKET_MS));
      if (slot !== undefined) c.series[slot * KIND_NAMES.length + kind]! += n;
    }
    const i = counterNumber(name);
    c.totals[i] = (c.totals[i] ?? 0) + n;
    if (i >= c.width) widen(c);
    const slot = ringSlot(c.recentBuckets, c.recent, c.width, Math.floor(e.at / BUCKET_MS));
    if (slot !== undefined) c.recent[slot * c.width + i]! += n;
    c.lastAt = Math.max(c.lastAt, e.at);
  }
}

/** Counters at zero, as wide as the counter names known now. */
function newCounts(): Counts {
  const width = Math.max(counterNames.length, 1);
  return { totals: [], recentBuckets: new Float64Array(RECENT_SLOTS).fill(-1), recent: new Uint32Array(RECENT_SLOTS * width), width, lastAt: 0, minutes: new Int32Array(SERIES_SLOTS).fill(-1), series: new Uint32Array(SERIES_SLOTS * KIND_NAMES.length) };
}

/**
 * `c` at zero again (the arrays kept): an evicted endpoint's counters, given to the next one. The
 * rings' slots are marked as holding no bucket; {@link ringSlot} clears a slot's counts when it
 * takes it, and a read skips a slot that holds none.
 */
function clearCounts(c: Counts): Counts {
  c.totals.length = 0;
  c.recentBuckets.fill(-1);
  c.lastAt = 0;
  c.minutes.fill(-1);
  return c;
}

/**
 * The slot of `bucket` in a ring of buckets: `held` says which bucket each slot holds, `counts`
 * has `width` counters per slot. A slot taken by an older bucket is cleared for this one; one
 * holding a newer bucket means this one is past the ring (undefined: a late event, not counted).
 */
function ringSlot(held: Int32Array | Float64Array, counts: Uint32Array, width: number, bucket: number): number | undefined {
  const slot = bucket % held.length;
  const h = held[slot]!;
  if (h > bucket) return undefined;
  if (h !== bucket) {
    held[slot] = bucket;
    // A loop, not `fill`: a handful of counters, and `fill` is a call into the runtime.
    for (let i = slot * width, end = i + width; i < end; i++) counts[i] = 0;
  }
  return slot;
}

/** Makes room in `c.recent` for every counter name known now. */
function widen(c: Counts): void {
  const width = counterNames.length;
  const recent = new Uint32Array(RECENT_SLOTS * width);
  for (let slot = 0; slot < RECENT_SLOTS; slot++) recent.set(c.recent.subarray(slot * c.width, (slot + 1) * c.width), slot * width);
  c.recent = recent;
  c.width = width;
}

/** One endpoint's series from its ring of minutes, summed into the asked buckets. */
function seriesOf(c: Counts, now: number, q: ActivityQuery): ActivitySeries {
  const bucketMs = Math.max(1, Math.ceil((q.bucketMs ?? SERIES_BUCKET_MS) / SERIES_BUCKET_MS)) * SERIES_BUCKET_MS;
  const horizon = Math.floor((now - SERIES_HORIZON_MS) / SERIES_BUCKET_MS + 1) * SERIES_BUCKET_MS;
  let from = Math.floor(Math.max(q.from ?? horizon, horizon) / bucketMs) * bucketMs;
  const count = Math.min(MAX_SERIES_BUCKETS, Math.max(0, Math.floor((now - from) / bucketMs) + 1));
  from = Math.floor(now / bucketMs) * bucketMs - (count - 1) * bucketMs;
  const out: ActivitySeries = { from, bucketMs, hits: new Array<number>(count).fill(0), revalidated: new Array<number>(count).fill(0), fetches: new Array<number>(count).fill(0), failures: new Array<number>(count).fill(0) };
  for (let slot = 0; slot < SERIES_SLOTS; slot++) {
    const minute = c.minutes[slot]!;
    if (minute < 0) continue;
    const i = Math.floor((minute * SERIES_BUCKET_MS - from) / bucketMs);
    if (i < 0 || i >= count || minute * SERIES_BUCKET_MS < horizon) continue;
    KIND_NAMES.forEach((k, j) => (out[k][i]! += c.series[slot * KIND_NAMES.length + j]!));
  }
  return out;
}

/** Parses the query of `GET /api/activity`; a problem string for a bad value. */
export function parseActivityQuery(q: { from?: string | undefined; bucketMs?: string | undefined; limit?: string | undefined; after?: string | undefined }): ActivityQuery | string {
  const out: ActivityQuery = {};
  if (q.from !== undefined && q.from !== '') {
    const n = Number(q.from);
    if (!Number.isSafeInteger(n) || n < 0) return 'from must be epoch milliseconds';
    out.from = n;
  }
  if (q.bucketMs !== undefined && q.bucketMs !== '') {
    const n = Number(q.bucketMs);
    if (!Number.isSafeInteger(n) || n < 1 || n > SERIES_HORIZON_MS) return `bucketMs must be an integer from 1 to ${SERIES_HORIZON_MS} (rounded up to whole minutes)`;
    out.bucketMs = n;
  }
  if (q.limit !== undefined && q.limit !== '') {
    const n = Number(q.limit);
    if (!Number.isSafeInteger(n) || n < 1) return `limit must be an integer from 1 to ${MAX_ACTIVITY_PAGE}`;
    out.limit = Math.min(n, MAX_ACTIVITY_PAGE);
  }
  if (q.after !== undefined && q.after !== '') {
    if (q.after.length > 2_048) return 'after must be an endpoint URL (a previous answer’s nextAfter)';
    out.after = q.after;
  }
  return out;
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
