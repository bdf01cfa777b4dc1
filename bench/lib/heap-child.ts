/**
 * Benchmark 3, run in its own process with `--expose-gc`: retained memory per cached card.
 * Populates a CardCache with `n` entries from the fault servers (which live in another
 * process, so their heap is not counted), forces GC, and compares heapUsed and external memory
 * before and after; then does the same for the baseline, a Map holding each card's body string
 * and its JSON.parse() result (the least any card cache must keep), and for undici 7's own HTTP
 * cache (`interceptors.cache` with a `MemoryCacheStore`, its Agent closed after populating, the
 * store kept). The order rotates per process.
 */
import { setImmediate as tick } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { Agent, request } from 'undici';
import { undiciCachingAgent } from './sides.js';
import { CardCache, MemoryCardStore, type CacheEntry } from '../../packages/core/src/cache/index.js';
import { modelSlot, withFields } from '../../packages/core/src/cache/cache-entries.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { runPool } from './pool.js';

export interface HeapChildInput {
  origins: string[];
  perOrigin: number;
  n: number;
  concurrency: number;
  /** The measures to run, in this order (rotated per process by the parent); `cache` is required. */
  order: Array<'cache' | 'baseline' | 'undici'>;
  limitMs: number;
}

export interface HeapMeasure {
  entries: number;
  heapBefore: number;
  heapAfter: number;
  bytesPerEntry: number;
  externalBytesPerEntry: number;
  /** heap + external, per entry. */
  totalBytesPerEntry: number;
  /**
   * Of the heap per entry, the growth of V8's code spaces during the pass: machine code the
   * optimizing compiler produced for the paths the pass ran, once per process, not per entry.
   */
  codeBytesPerEntry: number;
  populateSeconds: number;
  errors: number;
}

/** Where a cache entry's bytes go: heap freed per entry when each field is dropped in turn. */
export interface HeapBreakdown {
  /**
   * Freed by replacing every entry with a copy of itself of the same fields (`withFields(entry,
   * {})`): the cost of entry objects left in V8 dictionary mode (e.g. by `delete`).
   */
  entryShape: number;
  /**
   * The parsed card model, with everything reachable only from it (e.g. the ADK original kept in a
   * WeakMap keyed by it); for an entry holding its card lazily, what only the entry's slot keeps
   * besides the text (its facts, the weak reference, a model not yet collected). Freed with the
   * body (both dropped at once), less {@link body}.
   */
  card: number;
  /** The stored caching headers. */
  cachePolicy: number;
  /**
   * The body's text as the entry holds it: the string itself, or the packed copy its slot holds
   * (`cache/packed-text.ts`); the size of those strings in V8's heap, not a freed measure.
   */
  body: number;
  /** Everything else: the entry object, its key, hashes, URLs, the Map slot. */
  rest: number;
}

export interface HeapChildOutput {
  type: 'heap';
  n: number;
  order: HeapChildInput['order'];
  cache: HeapMeasure;
  breakdown: HeapBreakdown;
  baseline: HeapMeasure;
  undici: HeapMeasure;
  /** Mean body bytes of the cards held. */
  bodyBytes: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as HeapChildInput;
const gc = globalThis.gc;
if (gc === undefined) throw new Error('heap-child needs --expose-gc');

async function settle(): Promise<NodeJS.MemoryUsage & { code: number }> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await tick();
  }
  let code = 0;
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'code_space' || s.space_name === 'code_large_object_space') code += s.space_used_size;
  return { ...process.memoryUsage(), code };
}

/** The servers' endpoints, origin by origin: the first `n` are measured, the rest warm up. */
const all: string[] = [];
for (let j = 0; j < input.perOrigin; j++) for (const o of input.origins) all.push(`${o}/a${j}/`);
const targets = all.slice(0, input.n);
/**
 * Cards fetched by the untimed warm-up of each measure, into an instance thrown away: as many as
 * are measured (up to 2,000), so that the optimizing compiler has compiled the fetch path before
 * the measured pass and its code is not counted per card. Other endpoints than the measured ones
 * where the servers have them, so that nothing kept per URL is warmed.
 */
const WARM_UP_CARDS = Math.max(256, Math.min(input.n, 2_000));
const policy = HostPolicy.from({ allow: input.origins, allowLoopback: true });
const cardUrl = (base: string) => `${base}.well-known/agent-card.json`;

async function measureCache(targets: readonly string[]): Promise<{ m: HeapMeasure; bodyBytes: number; breakdown: HeapBreakdown }> {
  const fetcher = createCardFetcher({ policy, maxConnectionsPerOrigin: 1 });
  const store = new MemoryCardStore();
  const cache = new CardCache({ fetcher, hostPolicy: policy, store, minTtlMs: 0, maxConcurrentFetches: input.concurrency, check: { allowLoopback: true } });
  const before = await settle();
  const t0 = performance.now();
  const r = await runPool(targets, input.concurrency, t0 + input.limitMs, async (t) => {
    await cache.get(t);
  });
  const populateSeconds = (performance.now() - t0) / 1000;
  await fetcher.close();
  const after = await settle();
  // In a function of its own so the array of entries is garbage before the breakdown below.
  const { count, bodyBytes } = await (async () => {
    const entries = await cache.entries();
    return { count: entries.length, bodyBytes: entries.reduce((s, e) => s + Buffer.byteLength(e.body), 0) / Math.max(1, entries.length) };
  })();
  const n = Math.max(1, count);
  // The text as held, in V8's heap: a one-byte string of 16 bytes of header and a byte a character
  // (two for a string with a character past U+00FF), rounded up to 8.
  let heldBytes = 0;
  for (const k of store.keys()) {
    const e = store.get(k);
    if (e === undefined) continue;
    const held = modelSlot(e)?.held ?? e.body;
    heldBytes += Math.ceil((16 + held.length * ([...held].some((c) => c.charCodeAt(0) > 0xff) ? 2 : 1)) / 8) * 8;
  }
  // After the measurement: drop fields from every stored entry and see what is freed (NaN for
  // fields the entries do not have). `withFields` keeps the entry's shape, and how it holds its
  // card unless the card is dropped (a spread would read a lazily held model and text into plain
  // fields).
  const freed = async (fields: ReadonlyArray<keyof CacheEntry>, from: number): Promise<[number, number]> => {
    let present = fields.length === 0;
    for (const k of store.keys()) {
      const e = store.get(k);
      if (e === undefined) continue;
      if (fields.some((f) => f in e)) present = true;
      store.set(k, withFields(e, Object.fromEntries(fields.map((f) => [f, undefined]))));
    }
    const now = (await settle()).heapUsed;
    return [present ? (from - now) / n : NaN, now];
  };
  const [entryShape, h0] = await freed([], after.heapUsed);
  const [cachePolicy, h1] = await freed(['cacheHeaders'], h0);
  const [cardAndBody, h2] = await freed(['card', 'body'], h1);
  const body = heldBytes / n;
  const breakdown: HeapBreakdown = { entryShape, card: cardAndBody - body, cachePolicy, body, rest: (h2 - before.heapUsed) / n };
  return {
    breakdown,
    m: {
      entries: count,
      heapBefore: before.heapUsed,
      heapAfter: after.heapUsed,
      bytesPerEntry: (after.heapUsed - before.heapUsed) / n,
      externalBytesPerEntry: (after.external - before.external) / n,
      totalBytesPerEntry: (after.heapUsed + after.external - before.heapUsed - before.external) / n,
      codeBytesPerEntry: (after.code - before.code) / n,
      populateSeconds,
      errors: r.errors + (r.timedOut ? 1 : 0),
    },
    bodyBytes,
  };
}

async function measureBaseline(targets: readonly string[]): Promise<HeapMeasure> {
  const agent = new Agent({ connections: 1 });
  const held = new Map<string, { body: string; card: unknown }>();
  const before = await settle();
  const t0 = performance.now();
  const r = await runPool(targets, input.concurrency, t0 + input.limitMs, async (t) => {
    const res = await request(cardUrl(t), { dispatcher: agent, method: 'GET', headers: { accept: 'application/json' } });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    held.set(new URL(t).href, { body, card: JSON.parse(body) });
  });
  const populateSeconds = (performance.now() - t0) / 1000;
  await agent.close();
  const after = await settle();
  const n = Math.max(1, held.size);
  return {
    entries: held.size,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    bytesPerEntry: (after.heapUsed - before.heapUsed) / n,
    externalBytesPerEntry: (after.external - before.external) / n,
    totalBytesPerEntry: (after.heapUsed + after.external - before.heapUsed - before.external) / n,
    codeBytesPerEntry: (after.code - before.code) / n,
    populateSeconds,
    errors: r.errors + (r.timedOut ? 1 : 0),
  };
}

/**
 * undici's cache: every card requested once through `interceptors.cache` (max-age=300, so every
 * 200 is stored; the store is sized to keep them all), the Agent closed, the store kept alive
 * until measured.
 */
async function measureUndici(targets: readonly string[]): Promise<HeapMeasure> {
  const holder: { store?: ReturnType<typeof undiciCachingAgent>['store'] } = {};
  const before = await settle();
  const t0 = performance.now();
  let stored = 0;
  const r = await (async () => {
    const { agent, dispatcher, store } = undiciCachingAgent(1);
    holder.store = store;
    const res = await runPool(targets, input.concurrency, t0 + input.limitMs, async (t) => {
      const rs = await request(cardUrl(t), { dispatcher, method: 'GET', headers: { accept: 'application/json' } });
      await rs.body.arrayBuffer();
      if (rs.statusCode !== 200) throw new Error(`HTTP ${rs.statusCode}`);
      stored++;
    });
    await agent.close();
    return res;
  })();
  const populateSeconds = (performance.now() - t0) / 1000;
  const after = await settle();
  const n = Math.max(1, stored);
  const out: HeapMeasure = {
    entries: holder.store === undefined ? 0 : stored,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    bytesPerEntry: (after.heapUsed - before.heapUsed) / n,
    externalBytesPerEntry: (after.external - before.external) / n,
    totalBytesPerEntry: (after.heapUsed + after.external - before.heapUsed - before.external) / n,
    codeBytesPerEntry: (after.code - before.code) / n,
    populateSeconds,
    errors: r.errors + (r.timedOut ? 1 : 0),
  };
  delete holder.store;
  return out;
}

// Untimed warm-up of every code path (results dropped): what V8 allocates once (bytecode,
// feedback, inline caches, optimized code, per-origin state) is not counted per card.
const spare = all.slice(input.n);
const warmTargets = spare.length >= WARM_UP_CARDS ? spare.slice(0, WARM_UP_CARDS) : targets.slice(0, Math.min(WARM_UP_CARDS, targets.length));
for (const what of input.order) {
  if (what === 'cache') await measureCache(warmTargets);
  else if (what === 'baseline') await measureBaseline(warmTargets);
  else await measureUndici(warmTargets);
}
let cache: Awaited<ReturnType<typeof measureCache>> | undefined;
let baseline: HeapMeasure | undefined;
let undici: HeapMeasure | undefined;
for (const what of input.order) {
  if (what === 'cache') cache = await measureCache(targets);
  else if (what === 'baseline') baseline = await measureBaseline(targets);
  else undici = await measureUndici(targets);
}
if (!cache) throw new Error('heap-child: the order must name cache');
/** A side left out of this process's order. */
const skipped = (): HeapMeasure => ({ entries: 0, heapBefore: NaN, heapAfter: NaN, bytesPerEntry: NaN, externalBytesPerEntry: NaN, totalBytesPerEntry: NaN, codeBytesPerEntry: NaN, populateSeconds: NaN, errors: 0 });
const out: HeapChildOutput = {
  type: 'heap',
  n: input.n,
  order: input.order,
  cache: cache.m,
  breakdown: cache.breakdown,
  baseline: baseline ?? skipped(),
  undici: undici ?? skipped(),
  bodyBytes: cache.bodyBytes,
};
process.send?.(out, () => process.exit(0));
