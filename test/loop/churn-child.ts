/**
 * Child process of churn-memory.test.ts (run with --expose-gc): a source that lists new card URLs
 * on every cycle, served on loopback, so endpoints are admitted, gone and evicted by the hundred;
 * the service's JournalReader counts their chatter. Prints one JSON line: heap after GC after the
 * warm-up and after the churn, the evictions between, and the activity map's size beside the
 * loop's endpoints.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { MemoryStateStore } from '../../packages/store/src/memory-state-store.js';
import { JournalReader } from '../../packages/service/src/telemetry/journal.js';
import { cardFor } from '../helpers/cards.js';
import { listSource } from '../helpers/list-source.js';
import { heapAfterGc } from '../helpers/heap-child.js';

const PER_CYCLE = Number(process.env.CHURN_PER_CYCLE ?? 10);
const WARM_CYCLES = Number(process.env.CHURN_WARM_CYCLES ?? 30);
const CYCLES = Number(process.env.CHURN_CYCLES ?? 200);

// Every path /<id>/.well-known/agent-card.json answers a valid card for <id>: no per-endpoint state here.
const server = createServer((req, res) => {
  const id = /^\/([^/]+)\/\.well-known\/agent-card\.json$/.exec(req.url ?? '')?.[1];
  if (!id) return void res.writeHead(404).end();
  const body = JSON.stringify(cardFor({ origin }, id, { skills: [{ id, name: id, description: 'x', tags: ['support'] }] }));
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=1' }).end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const clock = new VirtualClock();
const stream = new EventStream({ wallNow: () => clock.wallNow() });
let evictions = 0;
let heldAlerts = 0;
stream.subscribe((e) => {
  if (e.type === 'endpoint.evicted') evictions++;
  if (e.type === 'alert' && e.kind === 'mass-removal') heldAlerts++;
});
const policy = HostPolicy.from({ allow: [origin], allowLoopback: true });
const fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000 });
const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
const registry = listSource('catalog');
const loop = new DiscoveryLoop({
  sources: [registry],
  hostPolicy: policy,
  cache,
  select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
  clock,
  events: stream,
  cycleIntervalMs: 86_400_000,
  resyncIntervalMs: 86_400_000,
  removalGraceMs: 1_000,
});
const store = new MemoryStateStore();
const journal = new JournalReader({ store, events: stream, wallNow: () => clock.wallNow() });

let next = 0;
async function cycles(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    registry.set(Array.from({ length: PER_CYCLE }, () => {
      const id = `c${++next}`;
      return { name: id, baseUrl: `${origin}/${id}/` };
    }));
    await clock.advance(2_000);
    await loop.refreshNow();
    // A hit per endpoint too, as a dashboard's refresh would cause.
    for (const s of await loop.status()) await cache.get(s.baseUrl).catch(() => undefined);
  }
}

await loop.start();
await cycles(WARM_CYCLES);
const heapWarm = await heapAfterGc({ arrayBuffers: true });
const evictedWarm = evictions;
await cycles(CYCLES);
const heapAfter = await heapAfterGc({ arrayBuffers: true });
const current = (await loop.status()).length;
const page = await journal.activity({ limit: 1_000 });
process.stdout.write(
  `${JSON.stringify({ heapWarm, heapAfter, evicted: evictions - evictedWarm, current, agents: loop.current()?.agents.length ?? 0, massRemovalAlerts: heldAlerts, listed: page.endpoints.map((e) => e.endpoint), known: (await loop.status()).map((s) => s.baseUrl) })}\n`,
);
journal.close();
await loop.stop();
await cache.close();
await fetcher.close();
server.close();
