/**
 * The hot-path benchmark, run in a process of its own (bench/lib/hot-path.ts forks it) so no
 * earlier benchmark's JIT state or heap weighs on it: ns per call of
 *
 * - a bare `Map.get` and an awaited one (`await map.get(key)`, and an async function returning
 *   `map.get(key)`, awaited), the baselines;
 * - `CardCache.get()` on a fresh entry (a hit), without an event stream, and with an
 *   `EventStream` attached and one subscriber listening to every event: with `hitEvents: 'each'`
 *   (the default: an event per hit) and `'counted'` (the service's setting: a counter per hit,
 *   one event per endpoint and burst);
 * - `TreeFactory.rootFor()` with 1 pinned session and with 10,000, sessions pinned through
 *   `rootFor` itself, the system clock (as the service runs it).
 *
 * The cache entries come from a loopback fault server in this process (1,000 endpoints,
 * `max-age=3600`), which is closed before timing, as is the fetcher: a refresh during the timed
 * part would be counted (and would fail). Every case calls through the same 16,384-slot key
 * array, indexed the same way, and sums something from each result so nothing is optimized away.
 * Each round runs one batch of every case, in an order shuffled per round (seeded), after a full
 * collection (the child runs with `--expose-gc`): in a fixed rotation each case always followed
 * the same one, and the case after the 'each' case's 50,000 events paid for their garbage (about
 * 0.2× an awaited `Map.get`; docs/benchmarks.md, "Issue 43: the hot path's fairness"). Batches
 * are timed with `process.hrtime.bigint()` around the whole batch, never per call. Each timed
 * batch ends with the turns of the event loop (`setImmediate`) in which the subscriber still
 * receives events, so work a case defers to the end of a burst (counted hits are published then,
 * a slice per turn) is inside its time.
 */
import { setImmediate as tick } from 'node:timers/promises';
import type { BaseAgent } from '@google/adk';
import { TreeFactory } from '../../packages/core/src/adk/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { startFaultServer } from '../../test/helpers/fault-server.js';
import { runPool } from './pool.js';
import { shuffled } from './stats.js';
import { benchCard } from './card.js';
import { EVENTS_CASE, EVENTS_EACH_CASE, NO_EVENTS_CASE } from './hot-path.js';

export interface HotPathChildInput {
  warmupRounds: number;
  rounds: number;
  /** Calls per batch for synchronous cases, and for the awaited ones. */
  syncBatch: number;
  asyncBatch: number;
  /** Distinct cache entries read (they cycle through the key array). */
  entries: number;
  sessions: number;
  /** Stop starting rounds after this long (the rounds done so far are reported). */
  limitMs: number;
}

export interface HotPathChildOutput {
  type: 'hot-path';
  /** ns per call of every batch, per case. */
  nsPerCall: Record<string, number[]>;
  roundsDone: number;
  /** Events the subscriber received per `CardCache.get()` call, per events case. */
  eventsPerCall: Record<string, number>;
  /** Card fetches attempted during the timed part (must be 0: every get() was a hit). */
  fetchesDuringTiming: number;
  pinnedSessions: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as HotPathChildInput;
const SLOTS = 16_384;
const MASK = SLOTS - 1;
const cycle = (distinct: readonly string[]): string[] => Array.from({ length: SLOTS }, (_, i) => distinct[i % distinct.length]!);

// ---- the cache entries ----------------------------------------------------------------------
const server = await startFaultServer({ maxRecordedRequests: 0 });
for (let j = 0; j < input.entries; j++) server.endpoint(`h${j}`, { card: benchCard(server.origin, `h${j}`), cacheControl: 'public, max-age=3600' });
const baseUrls = Array.from({ length: input.entries }, (_, j) => `${server.origin}/h${j}/`);
const policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
const inner = createCardFetcher({ policy, maxConnectionsPerOrigin: 4 });
let fetches = 0;
const fetcher: CardFetcher = {
  fetch(url, init) {
    fetches++;
    return inner.fetch(url, init);
  },
  close: () => inner.close(),
};
let received = 0;
const listened = (): EventStream => {
  const events = new EventStream();
  events.subscribe(() => {
    received++;
  });
  return events;
};
const common = { fetcher, hostPolicy: policy, minTtlMs: 0, maxConcurrentFetches: 4, maxFetchesPerOrigin: 4, check: { allowLoopback: true } };
const plain = new CardCache(common);
const each = new CardCache({ ...common, events: listened(), hitEvents: 'each' });
const counted = new CardCache({ ...common, events: listened(), hitEvents: 'counted' });
for (const cache of [plain, each, counted]) {
  const r = await runPool(baseUrls, 4, performance.now() + 60_000, async (u) => {
    const e = await cache.get(u);
    if (e.lastOutcome !== 'changed') throw new Error(`${u}: ${e.lastOutcome}`);
  });
  if (r.errors > 0 || r.timedOut) throw new Error(`hot path: populating the cache failed: ${String(r.firstError ?? 'timed out')}`);
}
await inner.close();
await server.close();
const fetchesBefore = fetches;

// ---- the tree factories ---------------------------------------------------------------------
const root = Object.freeze({ name: 'bench_root' }) as unknown as BaseAgent;
const snapshots = (): SnapshotStore => {
  const store = new SnapshotStore();
  store.publish(buildSnapshot([], 1, Date.now()));
  return store;
};
const sessionIds = Array.from({ length: input.sessions }, (_, i) => `session-${i.toString(36).padStart(6, '0')}`);
const one = new TreeFactory({ snapshots: snapshots(), buildRoot: () => root });
one.rootFor(sessionIds[0]!);
const many = new TreeFactory({ snapshots: snapshots(), buildRoot: () => root, maxSessions: input.sessions });
for (const id of sessionIds) many.rootFor(id);

// ---- the cases ------------------------------------------------------------------------------
const mapKeys = Array.from({ length: 10_000 }, (_, i) => `https://agents-${i % 64}.example.com/a${i}/`);
const map = new Map(mapKeys.map((k, i) => [k, { i }]));
const mapSlots = cycle(mapKeys);
const cacheSlots = cycle(baseUrls);
const oneSlots = cycle([sessionIds[0]!]);
const manySlots = cycle(sessionIds);
const asyncGet = async (k: string) => map.get(k);

type Case = { name: string; batch: number; run: (n: number) => number | Promise<number> };
const cases: Case[] = [
  {
    name: 'Map.get',
    batch: input.syncBatch,
    run(n) {
      let s = 0;
      for (let i = 0; i < n; i++) s += map.get(mapSlots[i & MASK]!)!.i;
      return s;
    },
  },
  {
    name: 'await Map.get',
    batch: input.asyncBatch,
    async run(n) {
      let s = 0;
      for (let i = 0; i < n; i++) s += (await map.get(mapSlots[i & MASK]!))!.i;
      return s;
    },
  },
  {
    name: 'await async () => Map.get',
    batch: input.asyncBatch,
    async run(n) {
      let s = 0;
      for (let i = 0; i < n; i++) s += (await asyncGet(mapSlots[i & MASK]!))!.i;
      return s;
    },
  },
  ...(
    [
      [NO_EVENTS_CASE, plain],
      [EVENTS_EACH_CASE, each],
      [EVENTS_CASE, counted],
    ] as const
  ).map(
    ([name, cache]): Case => ({
      name,
      batch: input.asyncBatch,
      async run(n) {
        let s = 0;
        for (let i = 0; i < n; i++) s += (await cache.get(cacheSlots[i & MASK]!)).failures;
        return s;
      },
    }),
  ),
  {
    name: 'rootFor, 1 session',
    batch: input.syncBatch,
    run(n) {
      let s = 0;
      for (let i = 0; i < n; i++) if (one.rootFor(oneSlots[i & MASK]!) === root) s++;
      return s;
    },
  },
  {
    name: `rootFor, ${input.sessions.toLocaleString('en-US')} sessions`,
    batch: input.syncBatch,
    run(n) {
      let s = 0;
      for (let i = 0; i < n; i++) if (many.rootFor(manySlots[i & MASK]!) === root) s++;
      return s;
    },
  },
];

const nsPerCall: Record<string, number[]> = Object.fromEntries(cases.map((c) => [c.name, []]));
let sink = 0;
const eventsCalls: Record<string, number> = { [EVENTS_EACH_CASE]: 0, [EVENTS_CASE]: 0 };
const eventsSeen: Record<string, number> = { [EVENTS_EACH_CASE]: 0, [EVENTS_CASE]: 0 };
const t0 = performance.now();
let roundsDone = 0;
for (let r = 0; r < input.warmupRounds + input.rounds; r++) {
  if (r >= input.warmupRounds && performance.now() - t0 > input.limitMs) break;
  for (const c of shuffled(cases, r + 1)) {
    const before = received;
    const s = process.hrtime.bigint();
    sink += await c.run(c.batch);
    // The turns that publish what the batch counted are its own (a slice of events per turn).
    let seen: number;
    do {
      seen = received;
      await tick();
    } while (received !== seen);
    const ns = Number(process.hrtime.bigint() - s);
    if (c.name in eventsCalls) {
      eventsCalls[c.name]! += c.batch;
      eventsSeen[c.name]! += received - before;
    }
    if (r >= input.warmupRounds) nsPerCall[c.name]!.push(ns / c.batch);
  }
  if (r >= input.warmupRounds) roundsDone++;
}
if (sink === -1) console.log('unreachable', sink);
one.close();
many.close();
for (const cache of [plain, each, counted]) await cache.close();

const out: HotPathChildOutput = {
  type: 'hot-path',
  nsPerCall,
  roundsDone,
  eventsPerCall: Object.fromEntries(Object.keys(eventsCalls).map((k) => [k, eventsSeen[k]! / Math.max(1, eventsCalls[k]!)])),
  fetchesDuringTiming: fetches - fetchesBefore,
  pinnedSessions: input.sessions,
};
process.send?.(out, () => process.exit(0));
