/**
 * AI Catalog benchmark (`npm run bench:catalog`, issue 11; see docs/benchmarks.md "Figures: AI
 * Catalog"): what keeping a 1,000-entry catalog fresh costs, counted in requests and card checks.
 *
 * The statement: a catalog of 1,000 entries refreshed with a 304 costs one request, and a
 * change to one entry re-validates only that entry's card.
 *
 * Two variants, each with its own loopback servers, caches and VirtualClock:
 * - `url`: 1,000 entries each naming a card URL on a loopback card server (strong ETags, 304s,
 *   `max-age=60`, like the catalog);
 * - `inline`: 1,000 entries each carrying its card in `data` (served to the card cache by
 *   `CatalogArtifacts`, never requested).
 * The catalog server answers with a strong ETag and `Cache-Control: max-age=60`, and 304 to a
 * matching `If-None-Match`. The real `aiCatalogSource`, `CatalogArtifacts`, `CardCache`,
 * `createCardFetcher` and `HostPolicy` are wired as the service wires them; each phase runs what
 * a loop cycle runs: `source.refresh()`, then `cache.fresh(url) ?? cache.get(url)` for every record.
 *
 * Counted per phase: catalog requests and their statuses (the catalog server's log), card
 * requests (the card server's log), the card cache's `card.fetch` / `card.result` events, and
 * cards validated, twice: from the events (`changed`: a new body passed the checks; `invalid`
 * after a check) and from the stored entries (`fetchedAtWall` is the phase's wall time only for
 * a card checked in that phase; each phase runs at its own virtual time). Wall time per phase
 * is reported, never asserted.
 *
 * Exits 1 when a count contradicts the issue: a refresh where nothing changed costs more or
 * fewer than one catalog request (a 304), or a one-entry change validates other than exactly one
 * card. Bounded to 2 minutes (exit 2). Prints a table; writes bench/results/catalog.json.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import { CardCache } from '../packages/core/src/cache/index.js';
import { seededRandom, VirtualClock } from '../packages/core/src/clock/index.js';
import { EventStream, type CardOutcome } from '../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy } from '../packages/core/src/fetch/index.js';
import { aiCatalogSource, CatalogArtifacts } from '../packages/core/src/sources/index.js';
import { startFaultServer, type FaultServer } from '../test/helpers/fault-server.js';
import { startJsonServer, type JsonServer } from '../test/helpers/json-server.js';
import { benchCard } from './lib/card.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, table } from './lib/stats.js';

const N = 1_000;
const MAX_AGE_S = 60;
/** One step past every freshness lifetime (max-age, shortened by jitter): everything is due. */
const EXPIRE_MS = (MAX_AGE_S + 1) * 1000;
const A2A = 'application/a2a-agent-card+json';
const CATALOG_PATH = '/.well-known/ai-catalog.json';
/** A catalog of 1,000 inline cards is about 1.3 MB: above the service's default `maxBytes` (1 MiB), within the reader's 4 MiB. */
const CATALOG_MAX_BYTES = 4 * 1024 * 1024;
/** The entries the one-entry changes touch. */
const CHANGED = 500;
const MOVED = 700;
const TOTAL_LIMIT_MS = 2 * 60_000;
const OUTCOMES: readonly CardOutcome[] = ['changed', 'revalidated', 'unchanged', 'hit', 'stale', 'invalid', 'failed'];

const t00 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench:catalog +${((performance.now() - t00) / 1000).toFixed(1)}s] ${msg}\n`);
const pad = (i: number) => String(i).padStart(4, '0');
const identifier = (i: number) => `urn:air:bench.example:agent:a${pad(i)}`;

/** What the issue says each counted phase must show; other expectations are printed, not enforced. */
type Claim = 'one-request-304' | 'one-card-validated';

interface PhaseSpec {
  name: string;
  what: string;
  /** Changes made (and time moved) before the phase is measured. */
  before: () => Promise<void>;
  /** `cards-first`: the source is not polled (its interval is not due); the first expired inline card revalidates the catalog. */
  order?: 'source-first' | 'cards-first';
  claim?: Claim;
  /** Expected counts, printed next to the measured ones. */
  expect: Partial<Record<'catalogRequests' | 'catalog304' | 'cardRequests' | 'validated' | 'changed' | 'revalidated' | 'hit', number>>;
}

interface PhaseResult {
  variant: string;
  phase: string;
  what: string;
  order: 'source-first' | 'cards-first';
  records: number;
  catalogRequests: number;
  catalog200: number;
  catalog304: number;
  catalogConditional: number;
  catalogBytesSent: number;
  /** The source's catalog cache: changed (parsed again), revalidated (304), hit. */
  catalogOutcome: string;
  /** Requests the card server received. */
  cardRequests: number;
  /** `card.fetch` events: conditional ones carried a validator. */
  cardFetches: number;
  cardConditional: number;
  /** `card.result` statuses (for inline cards: answered locally by CatalogArtifacts). */
  card200: number;
  card304: number;
  outcomes: Record<CardOutcome, number>;
  /** Card bodies checked: `changed` plus `invalid` after a check. */
  validated: number;
  /** Stored entries whose card was checked in this phase (their fetchedAtWall is the phase's wall time). */
  validatedStored: number;
  readErrors: number;
  sourceMs: number;
  cardsMs: number;
  totalMs: number;
  expect: PhaseSpec['expect'];
  claim?: Claim;
}

interface CatalogServer {
  readonly url: string;
  readonly origin: string;
  readonly bytes: number;
  /** Serves these entries from now on (a new strong ETag when the text changes). */
  set(entries: readonly object[]): void;
  readonly tally: { requests: number; ok: number; notModified: number; conditional: number; bytesSent: number };
  readonly server: JsonServer;
  close(): Promise<void>;
}

async function startCatalogServer(): Promise<CatalogServer> {
  const server = await startJsonServer();
  const tally = { requests: 0, ok: 0, notModified: 0, conditional: 0, bytesSent: 0 };
  let text = '';
  let bytes = 0;
  let etag = '""';
  server.routes.set(CATALOG_PATH, (req) => {
    tally.requests++;
    const headers = { etag, 'cache-control': `max-age=${MAX_AGE_S}`, 'content-type': 'application/ai-catalog+json' };
    const inm = req.headers['if-none-match'];
    if (inm !== undefined) tally.conditional++;
    if (inm === etag) {
      tally.notModified++;
      return { status: 304, body: '', headers };
    }
    tally.ok++;
    tally.bytesSent += bytes;
    return { body: text, headers };
  });
  return {
    url: `${server.origin}${CATALOG_PATH}`,
    origin: server.origin,
    get bytes() {
      return bytes;
    },
    set(entries) {
      text = JSON.stringify({ specVersion: '1.0', host: { displayName: 'Bench catalog' }, entries });
      bytes = Buffer.byteLength(text);
      etag = `"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
    },
    tally,
    server,
    close: () => server.close(),
  };
}

/** One variant: servers, the source, the card cache and the counters, on one VirtualClock. */
async function runVariant(variant: 'url' | 'inline'): Promise<{ phases: PhaseResult[]; catalogBytes: number; cardBytes: number }> {
  const catalog = await startCatalogServer();
  const cards: FaultServer = await startFaultServer({ maxRecordedRequests: 0 });
  const clock = new VirtualClock({ wallStart: Date.parse('2026-12-01T00:00:00Z') });
  const events = new EventStream({ wallNow: () => clock.wallNow() });
  const policy = HostPolicy.from({ allow: [catalog.origin, cards.origin], allowLoopback: true });
  // As the service wires it: catalogs through their own fetcher (larger documents), cards through
  // the card fetcher behind the artifacts table.
  const catalogFetcher = createCardFetcher({ policy, maxBodyBytes: CATALOG_MAX_BYTES });
  const cardFetcher = createCardFetcher({ policy });
  const artifacts = new CatalogArtifacts();
  const source = aiCatalogSource({ id: 'bench-catalog', catalogs: [catalog.url], fetcher: catalogFetcher, hostPolicy: policy, artifacts, clock, random: seededRandom(7), events });
  const cache = new CardCache({ fetcher: artifacts.fetcher(cardFetcher), pins: artifacts, hostPolicy: policy, clock, random: seededRandom(11), events, check: { allowLoopback: true } });

  const card = (i: number, version = '1.0.0') => ({ ...benchCard(cards.origin, `a${pad(i)}`), version });
  const endpoints = Array.from({ length: N }, (_, i) => cards.endpoint(`a${pad(i)}`, { card: card(i), cacheControl: `max-age=${MAX_AGE_S}` }));
  const entry = (i: number, over: { url?: string; data?: object } = {}) => ({
    identifier: identifier(i),
    type: A2A,
    displayName: `Agent a${pad(i)}`,
    description: `Bench agent ${i} (catalog text, display only).`,
    tags: ['billing', 'finance'],
    ...(variant === 'url' ? { url: over.url ?? endpoints[i]!.cardUrl } : { data: over.data ?? card(i) }),
  });
  const entries = Array.from({ length: N }, (_, i) => entry(i));
  catalog.set(entries);
  const catalogBytes = catalog.bytes;
  const cardBytes = endpoints[0]!.body.byteLength;

  // Counters, reset at each phase.
  let fetches = 0;
  let conditional = 0;
  let card200 = 0;
  let card304 = 0;
  let validated = 0;
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<CardOutcome, number>;
  events.subscribe((e) => {
    if (e.type === 'card.fetch') {
      fetches++;
      if (e.conditional) conditional++;
    } else if (e.type === 'card.result') {
      outcomes[e.outcome] += e.count ?? 1;
      if (e.status === 200) card200++;
      else if (e.status === 304) card304++;
      // A digest mismatch is refused before the checks; any other refusal of a received body ran them.
      if (e.outcome === 'changed' || (e.outcome === 'invalid' && e.rawSha256 !== undefined && e.expectedSha256 === undefined)) validated++;
    }
  });

  const specs: PhaseSpec[] = [
    {
      name: 'initial load',
      what: 'the catalog and every card read for the first time',
      before: async () => {},
      expect: { catalogRequests: 1, catalog304: 0, cardRequests: variant === 'url' ? N : 0, validated: N, changed: N },
    },
    {
      name: 'fresh',
      what: '1 s later: nothing is due',
      before: () => clock.advance(1_000),
      expect: { catalogRequests: 0, cardRequests: 0, validated: 0, hit: N },
    },
    {
      name: 'expired, unchanged',
      what: `${EXPIRE_MS / 1000} s later: everything due, nothing changed`,
      before: () => clock.advance(EXPIRE_MS),
      claim: 'one-request-304',
      expect: { catalogRequests: 1, catalog304: 1, cardRequests: variant === 'url' ? N : 0, validated: 0, revalidated: N },
    },
  ];
  if (variant === 'inline') {
    specs.push(
      {
        name: 'expired, unchanged, cards first',
        what: 'the source not polled; the first expired inline card revalidates the catalog',
        before: () => clock.advance(EXPIRE_MS),
        order: 'cards-first',
        claim: 'one-request-304',
        expect: { catalogRequests: 1, catalog304: 1, cardRequests: 0, validated: 0, revalidated: N },
      },
      {
        name: "one entry's data changed",
        what: `entry ${CHANGED}'s inline card gets a new version`,
        before: async () => {
          entries[CHANGED] = entry(CHANGED, { data: card(CHANGED, '1.0.1') });
          catalog.set(entries);
          await clock.advance(EXPIRE_MS);
        },
        claim: 'one-card-validated',
        expect: { catalogRequests: 1, catalog304: 0, cardRequests: 0, validated: 1, changed: 1, revalidated: N - 1 },
      },
    );
  } else {
    let moved: string | undefined;
    specs.push(
      {
        name: "one card's bytes changed",
        what: `the card behind entry ${CHANGED} gets a new version; the catalog is unchanged`,
        before: async () => {
          endpoints[CHANGED]!.setCard(card(CHANGED, '1.0.1'));
          await clock.advance(EXPIRE_MS);
        },
        claim: 'one-card-validated',
        expect: { catalogRequests: 1, catalog304: 1, cardRequests: N, validated: 1, changed: 1, revalidated: N - 1 },
      },
      {
        name: "one entry's url changed",
        what: `entry ${MOVED} names a new card URL; the catalog changes`,
        before: async () => {
          moved = cards.endpoint(`a${pad(MOVED)}-v2`, { card: card(MOVED, '2.0.0'), cacheControl: `max-age=${MAX_AGE_S}` }).cardUrl;
          entries[MOVED] = entry(MOVED, { url: moved });
          catalog.set(entries);
          await clock.advance(EXPIRE_MS);
        },
        claim: 'one-card-validated',
        expect: { catalogRequests: 1, catalog304: 0, cardRequests: N, validated: 1, changed: 1, revalidated: N - 1 },
      },
    );
  }

  const phases: PhaseResult[] = [];
  try {
    for (const spec of specs) {
      await spec.before();
      fetches = conditional = card200 = card304 = validated = 0;
      for (const o of OUTCOMES) outcomes[o] = 0;
      const cat0 = { ...catalog.tally };
      const cards0 = cards.hits;
      const order = spec.order ?? 'source-first';

      const t0 = performance.now();
      if (order === 'source-first') await source.refresh();
      const t1 = performance.now();
      const records = source.current().records;
      const reads = await Promise.allSettled(records.map((r) => cache.fresh(r.baseUrl) ?? cache.get(r.baseUrl)));
      const t2 = performance.now();
      cache.flushHits();

      const now = clock.wallNow();
      const validatedStored = (await cache.entries()).filter((e) => e.fetchedAtWall === now).length;
      const result: PhaseResult = {
        variant,
        phase: spec.name,
        what: spec.what,
        order,
        records: records.length,
        catalogRequests: catalog.tally.requests - cat0.requests,
        catalog200: catalog.tally.ok - cat0.ok,
        catalog304: catalog.tally.notModified - cat0.notModified,
        catalogConditional: catalog.tally.conditional - cat0.conditional,
        catalogBytesSent: catalog.tally.bytesSent - cat0.bytesSent,
        catalogOutcome: source.catalogs()[0]?.outcome ?? 'none',
        cardRequests: cards.hits - cards0,
        cardFetches: fetches,
        cardConditional: conditional,
        card200,
        card304,
        outcomes: { ...outcomes },
        validated,
        validatedStored,
        readErrors: reads.filter((r) => r.status === 'rejected').length,
        sourceMs: t1 - t0,
        cardsMs: t2 - t1,
        totalMs: t2 - t0,
        expect: spec.expect,
        ...(spec.claim !== undefined && { claim: spec.claim }),
      };
      phases.push(result);
      log(`${variant}: ${spec.name}: catalog ${result.catalogRequests} (${result.catalog200}×200, ${result.catalog304}×304), cards ${result.cardRequests} requests, ${result.validated} validated, ${fmt(result.totalMs, 0)} ms`);
      if (result.readErrors > 0) {
        const first = reads.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        log(`${variant}: ${spec.name}: ${result.readErrors} card reads failed, first: ${first?.reason instanceof Error ? first.reason.message : String(first?.reason)}`);
      }
    }
  } finally {
    await source.close();
    await cache.close();
    await catalogFetcher.close();
    await cardFetcher.close();
    await catalog.close();
    await cards.close();
  }
  return { phases, catalogBytes, cardBytes };
}

/** The statement against one phase: undefined when it holds, else what contradicts it. */
function contradiction(p: PhaseResult): string | undefined {
  if (p.claim === 'one-request-304' && (p.catalogRequests !== 1 || p.catalog304 !== 1)) {
    return `${p.variant} / ${p.phase}: a refresh where nothing changed cost ${p.catalogRequests} catalog requests (${p.catalog304} answered 304); the issue says one request, a 304`;
  }
  if (p.claim === 'one-card-validated' && (p.validated !== 1 || p.validatedStored !== 1)) {
    return `${p.variant} / ${p.phase}: ${p.validated} cards validated (events), ${p.validatedStored} (stored entries); the issue says exactly 1 after a one-entry change`;
  }
  return undefined;
}

/** Expected counts that did not match, for the notes (not an exit status). */
function deviations(p: PhaseResult): string[] {
  const measured: Record<keyof PhaseSpec['expect'], number> = {
    catalogRequests: p.catalogRequests,
    catalog304: p.catalog304,
    cardRequests: p.cardRequests,
    validated: p.validated,
    changed: p.outcomes.changed,
    revalidated: p.outcomes.revalidated,
    hit: p.outcomes.hit,
  };
  return Object.entries(p.expect)
    .filter(([k, v]) => measured[k as keyof PhaseSpec['expect']] !== v)
    .map(([k, v]) => `${p.variant} / ${p.phase}: ${k} ${measured[k as keyof PhaseSpec['expect']]}, expected ${v}`);
}

// ---- run ----------------------------------------------------------------------------------------

const watchdog = setTimeout(() => {
  console.error(`[bench:catalog] aborted: the run exceeded ${TOTAL_LIMIT_MS / 60_000} minutes`);
  process.exit(2);
}, TOTAL_LIMIT_MS);
watchdog.unref();

const started = new Date();
const loadBefore = os.loadavg();
log(`url variant: ${N} entries naming card URLs`);
const url = await runVariant('url');
log(`inline variant: ${N} entries carrying their cards`);
const inline = await runVariant('inline');
const phases = [...url.phases, ...inline.phases];

console.log(`\nbench:catalog — ${started.toISOString()}, Node ${process.version}, ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), load before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
console.log(`catalog of ${N} entries: ${fmt(url.catalogBytes / 1024, 1)} KiB with card URLs, ${fmt(inline.catalogBytes / 1024, 1)} KiB with inline cards (${fmt(inline.catalogBytes / N, 0)} B per entry); each card ${fmt(url.cardBytes, 0)} B\n`);
console.log(
  table(
    ['variant / phase', 'catalog req (200/304)', 'catalog', 'card req', 'card 200/304', 'changed', 'revalidated', 'unchanged', 'hit', 'validated (events/stored)', 'ms (source + cards)'],
    phases.map((p) => [
      `${p.variant} / ${p.phase}`,
      `${p.catalogRequests} (${p.catalog200}/${p.catalog304})`,
      p.catalogOutcome,
      String(p.cardRequests),
      `${p.card200}/${p.card304}`,
      String(p.outcomes.changed),
      String(p.outcomes.revalidated),
      String(p.outcomes.unchanged),
      String(p.outcomes.hit),
      `${p.validated}/${p.validatedStored}`,
      `${fmt(p.totalMs, 0)} (${fmt(p.sourceMs, 0)} + ${fmt(p.cardsMs, 0)})`,
    ]),
  ),
);
console.log('\ninline variant: card 200/304 are answered locally by CatalogArtifacts (no request); "card req" counts the card server\'s requests.');

const contradictions = phases.map(contradiction).filter((c): c is string => c !== undefined);
const notes = phases.flatMap(deviations);
const errors = phases.filter((p) => p.readErrors > 0).map((p) => `${p.variant} / ${p.phase}: ${p.readErrors} card reads failed`);
console.log('\nThe issue, phase by phase:');
for (const p of phases.filter((x) => x.claim !== undefined)) {
  const what = p.claim === 'one-request-304' ? `one catalog request, a 304: ${p.catalogRequests} (${p.catalog304} × 304)` : `exactly one card validated: ${p.validated} (stored: ${p.validatedStored})`;
  console.log(`  ${contradiction(p) === undefined ? 'holds' : 'CONTRADICTED'}  ${p.variant} / ${p.phase}: ${what}`);
}
if (notes.length > 0 || errors.length > 0) {
  console.log('\nOther counts that differ from what was expected (not the issue\'s statement):');
  for (const n of [...notes, ...errors]) console.log(`  ${n}`);
}

const file = writeResults('catalog.json', {
  meta: machineMeta(started, loadBefore),
  entries: N,
  maxAgeS: MAX_AGE_S,
  catalogBytes: { url: url.catalogBytes, inline: inline.catalogBytes },
  cardBytes: url.cardBytes,
  phases,
  contradictions,
  notes: [...notes, ...errors],
});
log(`wrote ${file}`);
if (contradictions.length > 0) {
  console.error('\nThe counts contradict the issue\'s statement:');
  for (const c of contradictions) console.error(`  ${c}`);
  process.exit(1);
}
process.exit(0);
