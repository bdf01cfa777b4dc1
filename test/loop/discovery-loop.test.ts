/**
 * The control loop's promises against a loopback fault server: bounded startup (P11), no
 * flapping (P4), the mass-removal guard (P12), warm-up vetoes (P3), allowlist refusals,
 * publication only on digest change, and a follower's adoption of another loop's snapshots.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import type { Clock } from '../../packages/core/src/clock/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { DiscoveryLoopOptions } from '../../packages/core/src/loop/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import type { StaticAgentConfig } from '../../packages/core/src/sources/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';

let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;

before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin, 'https://agents.example.com'], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 300 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

let n = 0;
/** An endpoint whose card carries one skill tagged `tag`. */
function peer(tag = 'support', options: Parameters<FaultServer['endpoint']>[1] = {}): FaultEndpoint {
  const id = `lp${++n}`;
  return fs.endpoint(id, { card: cardFor(fs, id, { skills: [{ id, name: id, description: 'x', tags: [tag] }] }), cacheControl: 'max-age=10', ...options });
}

interface Harness {
  loop: DiscoveryLoop;
  cache: CardCache;
  clock: VirtualClock;
  events: DiscoveryEvent[];
  published: () => number;
  stop: () => Promise<void>;
}

function harness(agents: StaticAgentConfig[], options: Partial<DiscoveryLoopOptions> = {}, cacheOptions: Partial<CardCacheOptions> = {}, clock: Clock = new VirtualClock()): Harness {
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, backoffBaseMs: 1_000, backoffMaxMs: 1_000, check: { allowLoopback: true }, ...cacheOptions });
  const loop = new DiscoveryLoop({
    sources: [staticSource({ id: 'config', agents })],
    hostPolicy: policy,
    cache,
    select: { needs: [{ tag: 'support' }, { tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }, { tag: 'billing', description: 'Billing.' }]) },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
    ...options,
  });
  return {
    loop,
    cache,
    clock: clock as VirtualClock,
    events,
    published: () => events.filter((e) => e.type === 'snapshot.published').length,
    stop: async () => {
      await loop.stop();
      await cache.close();
    },
  };
}

const agent = (ep: FaultEndpoint, name = ep.id, extra: Partial<StaticAgentConfig> = {}): StaticAgentConfig => ({ name, url: ep.baseUrl, description: `Reviewed ${name}.`, tags: ['support'], ...extra });

describe('DiscoveryLoop', () => {
  test('startup is bounded: with every peer hanging the loop is ready in time, with the fetches still in flight (P11)', async () => {
    const hanging = [peer('support', { mode: 'hang' }), peer('support', { mode: 'hang' })];
    const slowFetcher = createCardFetcher({ policy, totalTimeoutMs: 10_000 });
    const realClock = (await import('../../packages/core/src/clock/index.js')).systemClock;
    const h = harness(hanging.map((ep) => agent(ep)), { startupTimeoutMs: 200 }, { fetcher: slowFetcher }, realClock);
    try {
      await h.loop.start();
      assert.equal(h.loop.ready, true);
      assert.ok(h.cache.concurrency.running > 0, 'fetches to hanging peers are still running');
      assert.deepEqual(h.loop.current()?.agents, [], 'a snapshot (with no agents) is published on time');
      assert.ok(h.events.some((e) => e.type === 'alert' && e.kind === 'startup-timeout'));
    } finally {
      await slowFetcher.close();
      await h.stop();
    }
  });

  test('a snapshot is published only when the digest changes', async () => {
    const a = peer();
    const h = harness([agent(a)]);
    try {
      await h.loop.start();
      for (let i = 0; i < 5; i++) {
        await h.clock.advance(11_000);
        await h.loop.refreshNow();
      }
      assert.equal(h.published(), 1);
      assert.equal(a.hits, 6, 'the card was revalidated every cycle it expired');
    } finally {
      await h.stop();
    }
  });

  test('a peer alternating 200 and 503 for 50 cycles never changes the digest (P4)', async () => {
    const steady = peer();
    const flappy = peer();
    const h = harness([agent(steady)].concat(agent(flappy)), { health: { enterAfter: 2, leaveAfter: 3 } });
    try {
      await h.loop.start();
      await h.loop.refreshNow();
      const digest = h.loop.current()!.digest;
      assert.equal(h.loop.current()!.agents.length, 2);
      for (let i = 0; i < 50; i++) {
        flappy.set(i % 2 === 0 ? { mode: 'status', status: 503 } : { mode: 'ok' });
        await h.clock.advance(11_000);
        await h.loop.refreshNow();
        assert.equal(h.loop.current()!.digest, digest, `cycle ${i}`);
      }
      assert.equal(h.published(), 1);
    } finally {
      await h.stop();
    }
  });

  test('a snapshot dropping more than half the agents is held and alerted; the current one keeps serving; confirm or recovery resumes (P12)', async () => {
    const eps = [peer(), peer(), peer(), peer()];
    const h = harness(
      eps.map((ep) => agent(ep)),
      { health: { enterAfter: 1, leaveAfter: 1 }, staticEnterAfter: 1 },
      { maxStaleMs: 0 },
    );
    try {
      await h.loop.start();
      const before = h.loop.current()!;
      assert.equal(before.agents.length, 4);
      for (const ep of eps.slice(0, 3)) ep.set({ mode: 'status', status: 503 });
      await h.clock.advance(11_000);
      await h.loop.refreshNow();
      assert.equal(h.loop.current(), before, 'the current snapshot is unchanged');
      assert.ok(h.loop.held, 'the smaller snapshot is held');
      const held = h.events.find((e) => e.type === 'snapshot.held');
      assert.ok(held && held.type === 'snapshot.held' && /drop 3 of 4 agents/.test(held.reason ?? ''));
      assert.ok(h.events.some((e) => e.type === 'alert' && e.kind === 'mass-removal'));

      for (const ep of eps) ep.set({ mode: 'ok' });
      await h.clock.advance(2_000);
      await h.loop.refreshNow();
      assert.equal(h.loop.current(), before, 'recovered: nothing to publish');
      assert.equal(h.loop.held, undefined);

      for (const ep of eps.slice(0, 3)) ep.set({ mode: 'status', status: 503 });
      await h.clock.advance(11_000);
      await h.loop.refreshNow();
      assert.ok(h.loop.held);
      const confirmed = await h.loop.confirmRemovals();
      assert.equal(confirmed?.agents.length, 1, 'an operator confirmed the removal');
    } finally {
      await h.stop();
    }
  });

  test('a critical agent is never dropped for health reasons: it stays, degraded, with an alert', async () => {
    const crit = peer();
    const h = harness([agent(crit, 'crit', { critical: true })], { health: { leaveAfter: 2 } });
    try {
      await h.loop.start();
      crit.set({ mode: 'status', status: 500 });
      for (let i = 0; i < 4; i++) {
        await h.clock.advance(11_000);
        await h.loop.refreshNow();
      }
      assert.deepEqual(h.loop.current()!.agents.map((a) => a.localName), ['crit'], 'still in the snapshot');
      const [status] = await h.loop.status();
      assert.equal(status?.health?.state, 'degraded');
      assert.equal(status?.health?.failures, 4);
      assert.equal(status?.cache?.stale, true);
      assert.ok(h.events.some((e) => e.type === 'alert' && e.kind === 'critical-degraded'));
    } finally {
      await h.stop();
    }
  });

  test('a failed warm-up keeps the current snapshot and alerts (P3)', async () => {
    const a = peer();
    let veto = false;
    const h = harness([agent(a)], {
      beforePublish: (next) => {
        if (veto) throw new Error(`tree for ${next.digest.slice(0, 8)} failed its checks`);
      },
    });
    try {
      await h.loop.start();
      const first = h.loop.current()!;
      veto = true;
      a.setCard(cardFor(fs, a.id, { version: '2.0.0', skills: [{ id: 'x', name: 'x', description: 'x', tags: ['support'] }] }));
      await h.clock.advance(11_000);
      await h.loop.refreshNow();
      assert.equal(h.loop.current(), first);
      assert.ok(h.events.some((e) => e.type === 'alert' && e.kind === 'publish-refused' && /failed its checks/.test(e.message)));
      veto = false;
      await h.loop.refreshNow();
      assert.notEqual(h.loop.current(), first, 'the next cycle publishes once the warm-up succeeds');
    } finally {
      await h.stop();
    }
  });

  test('hosts outside the allowlist are refused with an event and never fetched', async () => {
    const outside = fs.endpoint('outside', { card: cardFor(fs, 'outside') });
    const h = harness([
      agent(peer()),
      { name: 'evil', url: 'https://evil.example.net/', description: 'x', tags: ['support'] },
    ]);
    try {
      await h.loop.start();
      const refused = h.events.find((e) => e.type === 'endpoint.refused');
      assert.ok(refused && refused.type === 'endpoint.refused' && refused.endpoint === 'https://evil.example.net/' && refused.code === 'ERR_HOST_NOT_ALLOWED');
      const status = await h.loop.status();
      assert.deepEqual(status.filter((s) => !s.admitted).map((s) => s.baseUrl), ['https://evil.example.net/']);
      assert.equal(outside.hits, 0);
    } finally {
      await h.stop();
    }
  });
});

test('a critical agent that never delivered a card is reported as unavailable, not degraded', async () => {
  const down = peer('support', { mode: 'status', status: 503 });
  const h = harness([agent(down, 'crit_down', { critical: true })]);
  try {
    await h.loop.start();
    const alerts = h.events.filter((e) => e.type === 'alert' && e.endpoint === down.baseUrl).map((e) => (e.type === 'alert' ? e.kind : ''));
    assert.deepEqual(alerts, ['critical-unavailable']);
    assert.deepEqual(h.loop.current()?.agents, []);
  } finally {
    await h.stop();
  }
});

test("a follower adopts another loop's snapshots with the same announcement as a publication, and a refused warm-up keeps its current one", async () => {
  const a = peer();
  const leader = harness([agent(a)]);
  let refuse = false;
  const follower = harness([], {
    beforePublish: () => {
      if (refuse) throw new Error('tree warm-up failed');
    },
  });
  const heard: Array<{ digest: string; added: readonly string[]; changed: readonly string[] }> = [];
  follower.loop.subscribe((s, diff) => heard.push({ digest: s.digest, added: diff.added, changed: diff.changed.map((c) => c.localName) }));
  try {
    await leader.loop.start();
    const v1 = leader.loop.current()!;
    a.setCard(cardFor(fs, a.id, { skills: [{ id: a.id, name: a.id, description: 'x', tags: ['support'] }, { id: 'refunds', name: 'refunds', description: 'Refunds.', tags: ['support'] }] }));
    await leader.clock.advance(11_000);
    await leader.loop.refreshNow();
    const v2 = leader.loop.current()!;
    assert.notEqual(v2.digest, v1.digest);
    assert.ok(leader.events.some((e) => e.type === 'alert' && e.kind === 'skills-changed'), 'the leader alerts the change it publishes');

    assert.equal(await follower.loop.adopt(v1), true);
    assert.equal(follower.loop.ready, true);
    assert.equal(await follower.loop.adopt(v1), false, 'the current digest is not adopted twice');
    refuse = true;
    assert.equal(await follower.loop.adopt(v2), false);
    assert.equal(follower.loop.current()?.digest, v1.digest, 'a refused warm-up keeps the current snapshot');
    const refused = follower.events.find((e) => e.type === 'alert' && e.kind === 'publish-refused');
    assert.match(refused?.type === 'alert' ? refused.message : '', /from the store was not adopted: tree warm-up failed/);
    refuse = false;
    assert.equal(await follower.loop.adopt(v2), true);
    assert.equal(follower.loop.current()?.digest, v2.digest);

    const published = follower.events.filter((e) => e.type === 'snapshot.published');
    assert.deepEqual(
      published.map((e) => (e.type === 'snapshot.published' ? [e.version, e.digest, e.previousDigest, e.agents] : [])),
      [
        [v1.version, v1.digest, undefined, v1.agents.map((x) => x.localName)],
        [v2.version, v2.digest, v1.digest, v2.agents.map((x) => x.localName)],
      ],
    );
    assert.deepEqual(heard, [
      { digest: v1.digest, added: [a.id], changed: [] },
      { digest: v2.digest, added: [], changed: [a.id] },
    ]);
    assert.ok(!follower.events.some((e) => e.type === 'alert' && e.kind === 'skills-changed'), 'the change was alerted where it was published, not again on adoption');
  } finally {
    await follower.stop();
    await leader.stop();
  }
});
