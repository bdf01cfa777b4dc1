/**
 * The promises the loop keeps over hours of running (issue #13): health follows real fetch
 * outcomes, alerts are edge-triggered, a removed endpoint stops being requested, the removal
 * guard holds only what it concerns, and every endpoint shows one verdict.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, AlertResolvedEvent, DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { DiscoveryLoopOptions } from '../../packages/core/src/loop/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import type { Source, StaticAgentConfig } from '../../packages/core/src/sources/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { listSource } from '../helpers/list-source.js';

let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;

before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 300 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

let n = 0;
function peer(tag = 'support', options: Parameters<FaultServer['endpoint']>[1] = {}): FaultEndpoint {
  const id = `pr${++n}`;
  return fs.endpoint(id, { card: cardFor(fs, id, { skills: [{ id, name: id, description: 'x', tags: [tag] }] }), cacheControl: 'max-age=10', ...options });
}

const agent = (ep: FaultEndpoint, name = ep.id, extra: Partial<StaticAgentConfig> = {}): StaticAgentConfig => ({ name, url: ep.baseUrl, description: `Reviewed ${name}.`, tags: ['support'], ...extra });

function harness(sources: Source[], options: Partial<DiscoveryLoopOptions> = {}, cacheOptions: Partial<CardCacheOptions> = {}) {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, backoffBaseMs: 1_000, backoffMaxMs: 8_000, check: { allowLoopback: true }, ...cacheOptions });
  const loop = new DiscoveryLoop({
    sources,
    hostPolicy: policy,
    cache,
    select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
    ...options,
  });
  const names = () => loop.current()?.agents.map((a) => a.localName) ?? [];
  const alerts = (kind: string) => events.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === kind);
  const resolved = (kind: string) => events.filter((e): e is AlertResolvedEvent => e.type === 'alert.resolved' && e.kind === kind);
  const cycle = async (ms: number) => {
    await clock.advance(ms);
    await loop.refreshNow();
  };
  return { loop, cache, clock, events, names, alerts, resolved, cycle, stop: async () => (await loop.stop(), await cache.close()) };
}

describe('health follows fetch outcomes', () => {
  test('cycles spent in backoff are not failures: a failing agent with a usable card stays in snapshots', async () => {
    const steady = peer();
    const failing = peer();
    const h = harness([staticSource({ id: 'config', agents: [agent(steady), agent(failing)] })]);
    try {
      await h.loop.start();
      await h.cycle(0);
      assert.deepEqual(h.names(), [steady.id, failing.id].sort());
      failing.set({ mode: 'status', status: 503 });
      const hitsBefore = failing.hits;
      // Cycles every 250 ms: most of them fall inside the backoff (1 s, 2 s, 4 s, 8 s...).
      for (let i = 0; i < 120; i++) await h.cycle(250);
      const realFailures = failing.hits - hitsBefore;
      assert.ok(realFailures >= 3 && realFailures < 20, `a handful of real requests, not one per cycle (${realFailures})`);
      assert.deepEqual(h.names(), [steady.id, failing.id].sort(), 'a usable stale card keeps the agent in');
      const status = (await h.loop.status()).find((s) => s.baseUrl === failing.baseUrl)!;
      assert.equal(status.health?.state, 'degraded');
      assert.equal(status.health?.failures, realFailures, 'health counts the requests that failed, nothing else');
      assert.equal(status.cache?.failures, realFailures, 'one failure count for one endpoint');
      assert.equal(status.state.verdict, 'degraded');
      assert.match(status.state.reason, /failed fetches; its card is served stale/);
      assert.equal(h.alerts('repeated-failures').length, 0);
    } finally {
      await h.stop();
    }
  });

  test('it leaves once it has failed leaveAfter times and its card is past its allowed staleness', async () => {
    const failing = peer();
    const other = peer();
    const h = harness([staticSource({ id: 'config', agents: [agent(failing), agent(other)] })], {}, { maxStaleMs: 30_000 });
    try {
      await h.loop.start();
      failing.set({ mode: 'status', status: 503 });
      // Expires at 10 s; usable stale until 40 s; the cache retries on its capped backoff.
      for (let t = 0; t < 38_000; t += 2_000) {
        await h.cycle(2_000);
        assert.ok(h.names().includes(failing.id), `still in at ${t + 2_000} ms`);
      }
      for (let t = 0; t < 12_000; t += 2_000) await h.cycle(2_000);
      assert.deepEqual(h.names(), [other.id]);
      const [left] = h.alerts('repeated-failures');
      assert.ok(left);
      assert.match(left.message, /consecutive failed fetches and its card is past its allowed staleness/);
      const status = (await h.loop.status()).find((s) => s.baseUrl === failing.baseUrl)!;
      assert.equal(status.state.verdict, 'removed');
    } finally {
      await h.stop();
    }
  });
  test('a removed agent that answers once and then fails while its card is usable again stays out until two good observations in a row, saying so', async () => {
    const flaky = peer();
    const other = peer();
    // Discovered (not static): it enters after enterAfter = 2 good observations.
    const registry = listSource('catalog');
    registry.set([flaky, other].map((ep) => ({ name: ep.id, baseUrl: ep.baseUrl })));
    const h = harness([registry], {}, { maxStaleMs: 30_000 });
    const statusOf = async () => (await h.loop.status()).find((s) => s.baseUrl === flaky.baseUrl)!;
    try {
      await h.loop.start();
      await h.cycle(0);
      assert.deepEqual(h.names(), [flaky.id, other.id].sort());
      flaky.set({ mode: 'status', status: 503 });
      // Expires at 10 s, usable stale until 40 s: removed once past that.
      for (let i = 0; i < 30 && (await statusOf()).health?.state !== 'removed'; i++) await h.cycle(2_000);
      assert.equal((await statusOf()).health?.state, 'removed');
      // It answers (a revalidation): one good observation of the two it needs.
      flaky.set({ mode: 'ok' });
      for (let i = 0; i < 10 && (await statusOf()).cache?.failures !== 0; i++) await h.cycle(1_000);
      let st = await statusOf();
      assert.deepEqual([st.health?.state, st.health?.successes, st.cache?.usable], ['removed', 1, true]);
      // Then an invalid body once its card has expired: one refused card, the card served stale.
      flaky.set({ mode: 'malformed', body: JSON.stringify({ name: flaky.id, description: 'no card' }) });
      await h.cycle(11_000);
      st = await statusOf();
      assert.deepEqual([st.health?.state, st.health?.usable, st.health?.failures, st.cache?.failures, st.cache?.usable], ['removed', true, 1, 1, true]);
      assert.deepEqual(h.names(), [other.id], 'hysteresis: still out of snapshots');
      assert.equal(st.state.verdict, 'removed');
      assert.doesNotMatch(st.state.reason, /consecutive/, 'it did not leave after one failure');
      // The body was fetched and refused: said so, with the cause (issue 39), not "a failed fetch".
      assert.match(st.state.reason, /^1 refused card since it last answered \(its card is usable again\); it returns after 2 good observations in a row; last: version: required/);
      // Two good observations in a row bring it back, and the alert resolves after enterAfter cycles.
      flaky.set({ mode: 'ok' });
      for (let i = 0; i < 10 && !h.names().includes(flaky.id); i++) await h.cycle(1_000);
      assert.deepEqual(h.names(), [flaky.id, other.id].sort());
      assert.equal(h.alerts('repeated-failures').length, 1, 'one alert for the one removal');
    } finally {
      await h.stop();
    }
  });
});

describe('alerts are edge-triggered', () => {
  test('a critical agent that recovers and fails again raises a second alert, each paired with a resolution', async () => {
    const crit = peer();
    const h = harness([staticSource({ id: 'config', agents: [agent(crit, 'crit', { critical: true })] })], { health: { enterAfter: 2, leaveAfter: 2 } });
    try {
      await h.loop.start();
      for (let round = 1; round <= 3; round++) {
        crit.set({ mode: 'status', status: 500 });
        await h.cycle(11_000);
        assert.equal(h.alerts('critical-degraded').length, round, `raised in round ${round}`);
        await h.cycle(2_000);
        assert.equal(h.alerts('critical-degraded').length, round, 'once per occurrence, not per cycle');
        crit.set({ mode: 'ok' });
        await h.cycle(9_000);
        assert.equal(h.resolved('critical-degraded').length, round - 1, 'one good cycle does not resolve it (hysteresis)');
        await h.cycle(1_000);
        assert.equal(h.resolved('critical-degraded').length, round, `resolved in round ${round}`);
      }
      const raised = h.alerts('critical-degraded');
      const cleared = h.resolved('critical-degraded');
      assert.ok(raised.every((a, i) => a.key === cleared[i]?.key && cleared[i]!.seq > a.seq));
      assert.deepEqual(h.loop.activeAlerts, []);
    } finally {
      await h.stop();
    }
  });

  test('a refused publication alerts again after one that succeeded', async () => {
    const a = peer();
    let veto = false;
    const h = harness([staticSource({ id: 'config', agents: [agent(a)] })], {
      beforePublish: () => {
        if (veto) throw new Error('warm-up failed');
      },
    });
    try {
      await h.loop.start();
      for (let round = 1; round <= 2; round++) {
        veto = true;
        a.setCard(cardFor(fs, a.id, { version: `${round + 1}.0.0`, skills: [{ id: 'x', name: 'x', description: 'x', tags: ['support'] }] }));
        await h.cycle(11_000);
        await h.cycle(0);
        assert.equal(h.alerts('publish-refused').length, round);
        veto = false;
        await h.cycle(0);
        await h.cycle(0);
        assert.equal(h.resolved('publish-refused').length, round);
      }
    } finally {
      await h.stop();
    }
  });
});

describe('removed means stopped', () => {
  test('an endpoint no source proposes is not requested again, shows as gone, and is forgotten after the grace period', async () => {
    const kept = peer();
    const dropped = peer();
    const registry = listSource('catalog');
    registry.set([{ name: 'kept', baseUrl: kept.baseUrl }, { name: 'dropped', baseUrl: dropped.baseUrl }]);
    const h = harness([registry], { removalGraceMs: 60_000, health: { enterAfter: 1 } });
    try {
      await h.loop.start();
      assert.deepEqual(h.names(), ['dropped', 'kept']);
      registry.set([{ name: 'kept', baseUrl: kept.baseUrl }]);
      await h.cycle(0);
      assert.deepEqual(h.names(), ['kept']);
      const hits = dropped.hits;
      let status = (await h.loop.status()).find((s) => s.baseUrl === dropped.baseUrl);
      assert.equal(status?.state.verdict, 'gone');
      for (let i = 0; i < 10; i++) await h.cycle(11_000);
      assert.equal(dropped.hits, hits, 'never requested after it left the sources');
      assert.ok(h.events.some((e) => e.type === 'endpoint.evicted' && e.endpoint === dropped.baseUrl));
      status = (await h.loop.status()).find((s) => s.baseUrl === dropped.baseUrl);
      assert.equal(status, undefined, 'forgotten');
      assert.equal(await h.cache.peek(dropped.baseUrl), undefined, 'its cache entry is dropped');
    } finally {
      await h.stop();
    }
  });

  test('an endpoint proposed again within its grace period comes back from its cached card', async () => {
    const flicker = peer();
    const registry = listSource('catalog');
    registry.set([{ name: 'flicker', baseUrl: flicker.baseUrl }]);
    const h = harness([registry], { removalGraceMs: 60_000, health: { enterAfter: 1 } });
    try {
      await h.loop.start();
      registry.set([]);
      await h.cycle(0);
      assert.deepEqual(h.names(), []);
      const hits = flicker.hits;
      registry.set([{ name: 'flicker', baseUrl: flicker.baseUrl }]);
      await h.cycle(1_000);
      assert.deepEqual(h.names(), ['flicker']);
      assert.equal(flicker.hits, hits, 'its fresh card was still cached');
    } finally {
      await h.stop();
    }
  });
});

describe('the removal guard cannot freeze discovery', () => {
  test('a held critical removal holds only that agent; an unrelated addition is still published, and the alert names what is held', async () => {
    const crit = peer();
    const other = peer();
    const newcomer = peer();
    const config = staticSource({ id: 'config', agents: [agent(crit, 'crit', { critical: true }), agent(other, 'other')] });
    const registry = listSource('catalog');
    const h = harness([config, registry], { health: { enterAfter: 1 } });
    try {
      await h.loop.start();
      assert.deepEqual(h.names(), ['crit', 'other']);
      // The critical agent's card stops matching the need (it drops its skill tag).
      crit.setCard(cardFor(fs, crit.id, { version: '2.0.0', skills: [{ id: 'y', name: 'y', description: 'y', tags: ['unrelated'] }] }));
      await h.cycle(11_000);
      assert.deepEqual(h.names(), ['crit', 'other'], 'the critical agent is held');
      assert.ok(h.loop.held);
      const [held] = h.alerts('mass-removal');
      assert.ok(held);
      assert.match(held.message, /held: crit/);
      registry.set([{ name: 'newcomer', baseUrl: newcomer.baseUrl }]);
      await h.cycle(0);
      assert.deepEqual(h.names(), ['crit', 'newcomer', 'other'], 'the addition is published while the removal is held');
      const status = (await h.loop.status()).find((s) => s.baseUrl === crit.baseUrl);
      assert.equal(status?.state.verdict, 'held');
      await h.loop.confirmRemovals();
      assert.deepEqual(h.names(), ['newcomer', 'other'], 'confirmed: the removal goes out');
      await h.cycle(0);
      await h.cycle(0);
      assert.equal(h.resolved('mass-removal').length, 1);
    } finally {
      await h.stop();
    }
  });

  test('under a held mass removal, a churning source does not grow the snapshot: only the agents published before the hold are held', async () => {
    const registry = listSource('catalog');
    const ids: string[] = [];
    const next = (k: number) =>
      Array.from({ length: k }, () => {
        const ep = peer();
        ids.push(ep.id);
        return { name: ep.id, baseUrl: ep.baseUrl };
      });
    registry.set(next(5));
    const h = harness([registry], { health: { enterAfter: 1 }, removalGraceMs: 1_000 });
    try {
      await h.loop.start();
      const before = h.names();
      assert.equal(before.length, 5);
      for (let round = 0; round < 5; round++) {
        registry.set(next(3));
        await h.cycle(11_000);
      }
      const names = h.names();
      assert.deepEqual(names.filter((n) => before.includes(n)), before, 'the agents published before the removal are held');
      assert.equal(names.length, 8, `the held ones and the current ones, not every agent seen since: ${names.join(', ')}`);
      assert.equal(h.alerts('mass-removal').length >= 1, true);
      await h.loop.confirmRemovals();
      assert.equal(h.names().length, 3, 'confirmed: the current ones');
    } finally {
      await h.stop();
    }
  });
});

describe('one verdict per endpoint', () => {
  test('each endpoint shows one verdict with its reason and the time it entered it', async () => {
    const ok = peer();
    const unsuitable = peer('other');
    const down = peer('support', { mode: 'status', status: 503 });
    const h = harness([
      staticSource({
        id: 'config',
        agents: [agent(ok, 'ok_agent'), { ...agent(unsuitable, 'unsuitable_agent') }, agent(down, 'down_agent'), { name: 'outside', url: 'https://evil.example.net/', description: 'x', tags: ['support'] }],
      }),
    ]);
    try {
      await h.loop.start();
      const at = h.clock.wallNow();
      await h.cycle(1_000);
      const byUrl = new Map((await h.loop.status()).map((s) => [s.baseUrl, s.state]));
      assert.deepEqual(byUrl.get(ok.baseUrl), { verdict: 'selected', reason: 'in snapshot v1', since: at });
      assert.equal(byUrl.get(unsuitable.baseUrl)?.verdict, 'unsuitable');
      assert.equal(byUrl.get(down.baseUrl)?.verdict, 'pending');
      assert.match(byUrl.get(down.baseUrl)!.reason, /no usable card/);
      assert.equal(byUrl.get('https://evil.example.net/')?.verdict, 'refused');
    } finally {
      await h.stop();
    }
  });
});
