/**
 * A cycle after a wave of revalidations (304s: new cache entries, the same cards) reuses the last
 * selection: it selects nothing again and builds no snapshot, only to find the same digest. A
 * card whose bytes change is selected again and published. Observed through the loop's spans
 * (`a2a_discovery.match` is the selection, `a2a_discovery.publish` the snapshot's build).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { SPAN } from '../../packages/core/src/telemetry/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { cardFor, skillsFor } from '../helpers/cards.js';
import { useFaultFetcher } from '../helpers/fault-fetcher.js';
import { listSource } from '../helpers/list-source.js';
import { collect } from '../helpers/collect.js';


const exporter = new InMemorySpanExporter();
let provider: NodeTracerProvider;
const faults = useFaultFetcher();
before(() => {
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
});
after(async () => {
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

/**
 * Two endpoints (`billing`, `support`: cards of max-age 10 s) in a registry source, and a loop over
 * it and the fault server's fetcher selecting agents tagged `billing` or `support`, on a virtual
 * clock, with no jitter and cycles only when asked.
 */
function billingAndSupport() {
  const { fs, fetcher, hostPolicy } = faults;
  const billing = fs.endpoint('billing', { card: cardFor(fs, 'billing', skillsFor('billing')), cacheControl: 'max-age=10' });
  const support = fs.endpoint('support', { card: cardFor(fs, 'support', skillsFor('support')), cacheControl: 'max-age=10' });
  const clock = new VirtualClock();
  const cache = new CardCache({ fetcher, hostPolicy, clock, random: () => 0, expiryJitter: 0, minTtlMs: 0, check: { allowLoopback: true } });
  const registry = listSource('registry');
  registry.set([
    { name: 'billing', baseUrl: billing.baseUrl },
    { name: 'support', baseUrl: support.baseUrl },
  ]);
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy,
    cache,
    select: {
      needs: [{ tag: 'billing' }, { tag: 'support' }],
      vocabulary: new TagVocabulary([
        { tag: 'billing', description: 'Billing.' },
        { tag: 'support', description: 'Support.' },
      ]),
    },
    health: { enterAfter: 1, leaveAfter: 3 },
    clock,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  return { billing, support, clock, cache, loop };
}

test('after a wave of 304s the last selection stands (no selection, no snapshot built); a changed card is selected and published', async () => {
  const { fs } = faults;
  const { billing, support, clock, cache, loop } = billingAndSupport();
  const spans = () => {
    const names = exporter.getFinishedSpans().map((s) => s.name);
    exporter.reset();
    return { selections: names.filter((n) => n === SPAN.match).length, builds: names.filter((n) => n === SPAN.publish).length };
  };
  try {
    await loop.start();
    const first = await loop.refreshNow();
    assert.deepEqual(first?.agents.map((a) => a.baseUrl).sort(), [billing.baseUrl, support.baseUrl].sort());
    spans();
    const entryBefore = await cache.peek(billing.baseUrl);

    await clock.advance(11_000);
    const afterWave = await loop.refreshNow();
    const entryAfter = await cache.peek(billing.baseUrl);
    assert.equal(entryAfter!.lastOutcome, 'revalidated', 'the cycle revalidated the card (a 304)');
    assert.notEqual(entryAfter, entryBefore, 'a new entry (new freshness)');
    assert.deepEqual(spans(), { selections: 0, builds: 0 }, 'the last selection stands: nothing selected or built again');
    assert.equal(afterWave, first, 'the same snapshot');

    billing.set({ card: cardFor(fs, 'billing', { skills: [{ ...skillsFor('billing').skills[0]!, description: 'Does billing, and refunds.' }] }) });
    await clock.advance(11_000);
    const changed = await loop.refreshNow();
    assert.deepEqual(spans(), { selections: 1, builds: 1 }, 'a changed card is selected again');
    const agent = (s: Snapshot | undefined, url: string) => s!.agents.find((a) => a.baseUrl === url)!;
    assert.notEqual(changed?.digest, first?.digest, 'a new snapshot');
    assert.notEqual(agent(changed, billing.baseUrl).rawSha256, agent(first, billing.baseUrl).rawSha256, 'with the new card');
    assert.equal(agent(changed, billing.baseUrl).rawSha256, (await cache.peek(billing.baseUrl))!.rawSha256);
    assert.equal(agent(changed, support.baseUrl).rawSha256, agent(first, support.baseUrl).rawSha256, 'the other agent as it was');
  } finally {
    await loop.stop();
    await cache.close();
  }
});

test('the entries a wave of 304s replaced are let go: the loop keeps no entry its selection was made from', async () => {
  const { billing, support, clock, cache, loop } = billingAndSupport();
  /** Weak references to the cache's current entries (none is held here). */
  const current = async () => [new WeakRef((await cache.peek(billing.baseUrl))!), new WeakRef((await cache.peek(support.baseUrl))!)];
  try {
    await loop.start();
    const first = await loop.refreshNow();
    assert.equal(first?.agents.length, 2);
    const selectedFrom = await current();

    // Two waves: the first reuses the selection, the second reuses it again (the steady path).
    for (let wave = 1; wave <= 2; wave++) {
      await clock.advance(11_000);
      assert.equal(await loop.refreshNow(), first, `wave ${wave}: the same snapshot`);
      assert.equal((await cache.peek(billing.baseUrl))!.lastOutcome, 'revalidated');
    }
    const now = await current();
    await collect();
    assert.deepEqual(
      selectedFrom.map((r) => r.deref() === undefined),
      [true, true],
      'the entries the selection was made from are collected once the cache replaced them',
    );
    assert.ok(now.every((r) => r.deref() !== undefined), 'the current entries are kept');
    // The snapshot still reads its agents' cards.
    assert.equal(first!.agents.find((a) => a.baseUrl === billing.baseUrl)!.card.name, (await cache.peek(billing.baseUrl))!.card.name);
  } finally {
    await loop.stop();
    await cache.close();
  }
});
