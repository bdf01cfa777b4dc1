/**
 * Registry search benchmark (`npm run bench:search`, issue 26; docs/benchmarks.md "Figures:
 * registry search"): the service's `RegistryIndex` (packages/service/src/registry/) at 1,000,
 * 10,000 and 100,000 admitted cards.
 *
 * Per size, in one process (`--expose-gc`):
 * - build: the first sync over N endpoint views and cached cards (no network: the views and the
 *   cache are in-memory stand-ins with the shapes the loop and the card cache give), and the
 *   index's heap (heapUsed after a full GC, with and without the index; the cards themselves
 *   are counted outside it, as the card cache holds them anyway);
 * - search: 300 queries of one or two words drawn from the cards' vocabulary (seeded), each the
 *   route's work without HTTP (`match` over the text and a filter, then the first page of 10
 *   entries); p50 and p99;
 * - the same queries as a linear scan (every entry's text searched for the words): the baseline
 *   the ratios compare with, in the same run;
 * - re-indexing: a sync where nothing changed, and after a mass change (10% and 100% of the
 *   cards changed), as ratios to the build.
 *
 * Wall times are reported, never asserted. Bounded to 10 minutes (exit 2). Prints a table;
 * writes bench/results/search.json.
 */
import os from 'node:os';
import type { AgentCardModel, CacheEntry, EndpointStatus } from '../packages/core/src/index.js';
import { seededRandom } from '../packages/core/src/clock/index.js';
import { parseFilter } from '../packages/service/src/registry/filter.js';
import { RegistryIndex } from '../packages/service/src/registry/registry-index.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, percentile, table } from './lib/stats.js';

const SIZES = (process.env['BENCH_SEARCH_SIZES'] ?? '1000,10000,100000').split(',').map(Number);
const QUERIES = 300;
const PAGE = 10;
const TOTAL_LIMIT_MS = 10 * 60_000;

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench:search +${((performance.now() - t00) / 1000).toFixed(1)}s] ${msg}\n`);
setTimeout(() => {
  log('over the 10-minute bound');
  process.exit(2);
}, TOTAL_LIMIT_MS).unref();

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc (npm run bench:search does)');
function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** A vocabulary of 2,000 made-up words and 40 domains: cards differ, as real ones do. */
const random = seededRandom(26);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'xe', 'zu', 'bra', 'cle', 'dro', 'fli', 'gra', 'ple', 'sto', 'tri'];
const words = Array.from({ length: 2_000 }, () => `${pick(syllables)}${pick(syllables)}${pick(syllables)}`);
const domains = ['billing', 'warranty', 'shipping', 'returns', 'weather', 'travel', 'legal', 'payroll', 'support', 'search', ...Array.from({ length: 30 }, (_, i) => `domain${i}`)];
const sentence = (n: number): string => Array.from({ length: n }, () => pick(words)).join(' ');

function card(i: number, generation: number): AgentCardModel {
  const domain = domains[i % domains.length]!;
  return {
    name: `${domain} agent ${i}${generation > 0 ? ` v${generation}` : ''}`,
    description: `Answers ${domain} questions: ${sentence(12)}.`,
    version: `1.${generation}.0`,
    supportedInterfaces: [{ url: `https://a${i}.bench.example/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: `Org ${i % 500}`, url: 'https://bench.example' },
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: i % 3 === 0 ? ['text/plain', 'application/json'] : ['text/plain'],
    skills: [1, 2, 3].map((n) => ({ id: `s${n}`, name: `${domain} ${pick(words)}`, description: sentence(8), tags: [domain, pick(words)] })),
  } as unknown as AgentCardModel;
}

/** N endpoints as the loop's views and the card cache give them. */
function fixture(n: number): { statuses: EndpointStatus[]; entries: Map<string, CacheEntry>; change(share: number, generation: number): void } {
  const statuses: EndpointStatus[] = [];
  const entries = new Map<string, CacheEntry>();
  const put = (i: number, generation: number): void => {
    const baseUrl = `https://a${i}.bench.example/`;
    const sha = `${i}-${generation}`;
    const c = card(i, generation);
    entries.set(baseUrl, { baseUrl, cardUrl: `${baseUrl}.well-known/agent-card.json`, card: c, protocolVersion: '1.0', body: undefined, rawSha256: sha, canonicalSha256: sha, signature: undefined, fetchedAtWall: Date.now() } as unknown as CacheEntry);
    statuses[i] = {
      state: { verdict: 'excluded', reason: 'no need asks for it', since: 0 },
      baseUrl,
      sources: ['registry'],
      names: [`a${i}`],
      proposals: [{ source: 'registry', name: `a${i}`, metadata: {} }],
      admitted: true,
      cache: { usable: true, canonicalSha256: sha, rawSha256: sha, cardUrl: `${baseUrl}.well-known/agent-card.json`, cardKind: 'public', protocolVersion: '1.0' },
      health: { state: 'healthy' },
    } as unknown as EndpointStatus;
  };
  for (let i = 0; i < n; i++) put(i, 0);
  return {
    statuses,
    entries,
    change(share, generation) {
      const step = Math.round(1 / share);
      for (let i = 0; i < n; i += step) put(i, generation);
    },
  };
}

interface Row {
  n: number;
  buildMs: number;
  heapMiB: number;
  searchP50Ms: number;
  searchP99Ms: number;
  scanP50Ms: number;
  scanP99Ms: number;
  syncUnchangedMs: number;
  sync10Ms: number;
  sync100Ms: number;
}

const loadBefore = os.loadavg();
const started = new Date();
const rows: Row[] = [];
const filter = parseFilter({ 'verified.outputModes': ['text/plain'] }, { maxKeys: 16, maxValues: 64 });
if (typeof filter === 'string') throw new Error(filter);
const queries = Array.from({ length: QUERIES }, (_, i) => (i % 3 === 0 ? `${pick(domains)} ${pick(words)}` : i % 3 === 1 ? pick(words) : `${pick(words)} ${pick(words)}`));

for (const n of SIZES) {
  log(`${n}: fixture`);
  const f = fixture(n);
  const loop = { status: () => Promise.resolve(f.statuses), current: () => undefined };
  const cache = { peek: (url: string) => Promise.resolve(f.entries.get(url)) };
  const before = heap();
  const index = new RegistryIndex({ loop, cache, maxEntries: 1_000_000, maxTombstones: 1_000_000, tombstoneTtlMs: 86_400_000 });
  let t = performance.now();
  await index.sync();
  const buildMs = performance.now() - t;
  const heapMiB = (heap() - before) / 1024 / 1024;
  log(`${n}: built in ${fmt(buildMs)} ms, ${fmt(heapMiB)} MiB`);

  const searchMs: number[] = [];
  const slowest: { q: string; ms: number; hits: number }[] = [];
  for (const q of queries) {
    t = performance.now();
    const found = await index.match(q, filter, { maxCandidates: 1_000_000, overflow: 'best' });
    const hits = found.ok ? found.hits : [];
    for (const h of hits.slice(0, PAGE)) index.get(h.identifier);
    const ms = performance.now() - t;
    searchMs.push(ms);
    slowest.push({ q, ms, hits: hits.length });
  }
  slowest.sort((a, b) => b.ms - a.ms);
  log(`${n}: slowest queries ${slowest.slice(0, 4).map((x) => `"${x.q}" ${fmt(x.ms)} ms, ${x.hits} hits`).join('; ')}; median hits ${slowest.map((x) => x.hits).sort((a, b) => a - b)[slowest.length >> 1]}`);
  // The baseline: a linear scan of every entry's text for the words (what an index saves).
  const texts = [...f.entries.values()].map((e) => `${e.card.name} ${e.card.description} ${e.card.skills.map((s) => `${s.name} ${s.description} ${s.tags.join(' ')}`).join(' ')}`.toLowerCase());
  const scanMs: number[] = [];
  for (const q of queries) {
    const terms = q.toLowerCase().split(' ');
    t = performance.now();
    const hits: number[] = [];
    for (let i = 0; i < texts.length; i++) if (terms.some((w) => texts[i]!.includes(w))) hits.push(i);
    scanMs.push(performance.now() - t);
  }
  log(`${n}: search p50 ${fmt(percentile(searchMs, 50))} ms, p99 ${fmt(percentile(searchMs, 99))} ms`);

  t = performance.now();
  await index.sync();
  const syncUnchangedMs = performance.now() - t;
  f.change(0.1, 1);
  t = performance.now();
  await index.sync();
  const sync10Ms = performance.now() - t;
  f.change(1, 2);
  t = performance.now();
  await index.sync();
  const sync100Ms = performance.now() - t;
  log(`${n}: re-index unchanged ${fmt(syncUnchangedMs)} ms, 10% ${fmt(sync10Ms)} ms, 100% ${fmt(sync100Ms)} ms`);
  rows.push({ n, buildMs, heapMiB, searchP50Ms: percentile(searchMs, 50), searchP99Ms: percentile(searchMs, 99), scanP50Ms: percentile(scanMs, 50), scanP99Ms: percentile(scanMs, 99), syncUnchangedMs, sync10Ms, sync100Ms });
  index.close();
}

const base = rows[0]!;
console.log(
  table(
    ['entries', 'build ms', 'index heap MiB (× 1k)', 'search p50 / p99 ms', 'p99 × 1k', 'linear scan p50 / p99 ms', 'search p99 / scan p99', 'sync unchanged ms (/ build)', 'sync 10% changed ms (/ build)', 'sync 100% changed ms (/ build)'],
    rows.map((r) => [
      String(r.n),
      fmt(r.buildMs),
      `${fmt(r.heapMiB)} (${fmt(r.heapMiB / base.heapMiB)})`,
      `${fmt(r.searchP50Ms, 2)} / ${fmt(r.searchP99Ms, 2)}`,
      fmt(r.searchP99Ms / base.searchP99Ms),
      `${fmt(r.scanP50Ms, 2)} / ${fmt(r.scanP99Ms, 2)}`,
      fmt(r.searchP99Ms / r.scanP99Ms, 2),
      `${fmt(r.syncUnchangedMs)} (${fmt(r.syncUnchangedMs / r.buildMs, 2)})`,
      `${fmt(r.sync10Ms)} (${fmt(r.sync10Ms / r.buildMs, 2)})`,
      `${fmt(r.sync100Ms)} (${fmt(r.sync100Ms / r.buildMs, 2)})`,
    ]),
  ),
);
const path = writeResults('search.json', { meta: machineMeta(started, loadBefore), queries: QUERIES, page: PAGE, rows });
log(`wrote ${path}`);
