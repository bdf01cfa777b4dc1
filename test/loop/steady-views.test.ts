/**
 * A cycle with nothing due computes no endpoint view again, and allocates no health status: an
 * endpoint's status object stays the same while only its count of good observations moves; once a
 * pass changed nothing, the next ones with the same inputs do not observe each endpoint again. What
 * the views show still follows every change: of health, even one that changes no selection (a
 * degraded member's failures counting up while its stale card keeps the snapshot as it is), and of
 * the calls (failed A2A calls, with every card fresh).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { CallHealth } from '../../packages/core/src/health/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import type { DiscoveryLoopOptions, EndpointStatus } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { cardFor, skillsFor } from '../helpers/cards.js';
import { useFaultFetcher } from '../helpers/fault-fetcher.js';
import { listSource } from '../helpers/list-source.js';

const faults = useFaultFetcher();

/**
 * A loop over a registry source and the fault server's fetcher, selecting agents tagged `billing`
 * (the only tag of its vocabulary), on a virtual clock, with no jitter and cycles only when asked;
 * `withCalls`: it also judges the A2A calls recorded in `calls`.
 */
function billingLoop(cacheOptions: Pick<CardCacheOptions, 'backoffBaseMs' | 'backoffMaxMs' | 'maxStaleMs'>, health: DiscoveryLoopOptions['health'], withCalls = false) {
  const { fetcher, hostPolicy } = faults;
  const clock = new VirtualClock();
  const cache = new CardCache({ fetcher, hostPolicy, clock, random: () => 0, expiryJitter: 0, minTtlMs: 0, check: { allowLoopback: true }, ...cacheOptions });
  const registry = listSource('registry');
  const calls = withCalls ? new CallHealth(clock) : undefined;
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy,
    cache,
    ...(calls && { calls }),
    select: { needs: [{ tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'billing', description: 'Billing.' }]) },
    health,
    clock,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  return { clock, cache, registry, calls, loop };
}

test('steady cycles keep each status object and view; a degraded member failing again shows its new count while the snapshot stands', async () => {
  const { fs } = faults;
  const billing = fs.endpoint('billing', { card: cardFor(fs, 'billing', skillsFor('billing')), cacheControl: 'max-age=10' });
  // Stale cards may be served for an hour: a failing member stays, degraded, with the same card.
  const { clock, cache, registry, loop } = billingLoop({ backoffBaseMs: 1_000, backoffMaxMs: 1_000, maxStaleMs: 3_600_000 }, { enterAfter: 1, leaveAfter: 10 });
  const status = async (): Promise<EndpointStatus> => (await loop.status()).find((s) => s.baseUrl === billing.baseUrl)!;
  try {
    registry.set([{ name: 'billing', baseUrl: billing.baseUrl }]);
    await loop.start();
    const published = await loop.refreshNow();
    const first = await status();
    assert.equal(first.state.verdict, 'selected');

    // Nothing due: the same status object counts on, the same view stands.
    const successes = first.health!.successes;
    await loop.refreshNow();
    await loop.refreshNow();
    const steady = await status();
    assert.equal(steady.health, first.health, 'the same status object');
    assert.equal(steady.health!.successes, successes + 2, 'its good observations counted in place');
    assert.equal(steady.state, first.state, 'the same view');

    // The peer fails: the member is degraded and keeps its stale card; the snapshot stands.
    billing.set({ mode: 'status', status: 500 });
    await clock.advance(11_000);
    assert.equal(await loop.refreshNow(), published, 'the same snapshot');
    const once = await status();
    assert.equal(once.state.verdict, 'degraded');
    assert.match(once.state.reason, /^1 failed fetch; its card is served stale/);
    assert.notEqual(once.health, first.health, 'a changed status is a new object');
    assert.equal(first.health!.state, 'healthy', 'and the one shown before is left as it was');

    // It fails again: nothing the selection reads changed, the view's count does.
    await clock.advance(2_000);
    assert.equal(await loop.refreshNow(), published, 'still the same snapshot');
    const twice = await status();
    assert.equal(twice.health!.failures, 2);
    assert.equal(twice.state.verdict, 'degraded');
    assert.match(twice.state.reason, /^2 failed fetches; its card is served stale/);
    assert.equal(twice.state.since, once.state.since, 'degraded since the first failure');

    // It answers again: healthy, selected.
    billing.set({ mode: 'ok' });
    await clock.advance(2_000);
    await loop.refreshNow();
    assert.equal((await status()).state.verdict, 'selected');
  } finally {
    await loop.stop();
    await cache.close();
  }
});

test('steady passes skip observing, and still count good observations, keep their alerts, and see failed calls', async () => {
  const { fs } = faults;
  const billing = fs.endpoint('billing-2', { card: cardFor(fs, 'billing-2', skillsFor('billing')), cacheControl: 'max-age=600' });
  const support = fs.endpoint('support-2', { card: cardFor(fs, 'support-2', skillsFor('support')), cacheControl: 'max-age=600' });
  // `support` has a tag outside the vocabulary: a lasting alert, raised by every pass. Alerts
  // clear after `enterAfter` passes without them: one pass that did not raise it again would clear it.
  const { cache, registry, calls, loop } = billingLoop({}, { enterAfter: 1, callLeaveAfter: 2 }, true);
  const status = async (url: string): Promise<EndpointStatus> => (await loop.status()).find((s) => s.baseUrl === url)!;
  try {
    registry.set([
      { name: 'billing', baseUrl: billing.baseUrl },
      { name: 'support', baseUrl: support.baseUrl },
    ]);
    await loop.start();
    await loop.refreshNow();
    await loop.refreshNow();
    const alerts = [...loop.activeAlerts].sort();
    assert.ok(alerts.some((k) => k.startsWith('unknown-tags:')), `a lasting alert is up: ${alerts.join(', ')}`);
    const before = (await status(billing.baseUrl)).health!.successes;
    for (let i = 0; i < 5; i++) await loop.refreshNow();
    assert.equal((await status(billing.baseUrl)).health!.successes, before + 5, 'every pass counts a good observation');
    assert.deepEqual([...loop.activeAlerts].sort(), alerts, 'the lasting alerts stay up');

    // Failed calls, every card fresh: the next pass sees them.
    const failed = { ok: false, latencyMs: 5, errorClass: 'http_500', agent: 'billing', baseUrl: billing.baseUrl, message: 'billing answered HTTP 500', source: 'turn' } as const;
    calls!.record(failed);
    await loop.refreshNow();
    const degraded = await status(billing.baseUrl);
    assert.equal(degraded.health!.state, 'degraded', 'one failed call degrades it');
    assert.equal(degraded.health!.successes, 0);
    calls!.record(failed);
    const left = await loop.refreshNow();
    assert.equal((await status(billing.baseUrl)).health!.state, 'removed', 'callLeaveAfter failed calls remove it');
    assert.ok(!left?.agents.some((a) => a.baseUrl === billing.baseUrl), 'and a new snapshot leaves it out');
    // Out, and steady again: the passes that skip observing keep its alert up.
    const removed = `removed:${billing.baseUrl}`;
    assert.ok(loop.activeAlerts.includes(removed), loop.activeAlerts.join(', '));
    for (let i = 0; i < 3; i++) await loop.refreshNow();
    assert.ok(loop.activeAlerts.includes(removed), 'its alert stays up while it stays out');
    assert.equal((await status(billing.baseUrl)).health!.state, 'removed');
  } finally {
    await loop.stop();
    await cache.close();
  }
});
