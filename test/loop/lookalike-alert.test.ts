/**
 * Lookalike agents in the discovery loop (issue 26): two real ADK peers on two loopback origins,
 * "billing" first and "bіlling" (Cyrillic і) later. The later one is flagged: one `lookalike`
 * alert naming both origins, raised once and resolved when the original leaves; its endpoint
 * status carries `lookalike`; it stays in the snapshot (`flag`), or is kept out (`exclude`).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, AlertResolvedEvent, DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { LookalikePolicy } from '../../packages/core/src/loop/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { listSource } from '../helpers/list-source.js';

const LOOKALIKE = 'b\u0456lling';

let original: RunningPeer;
let later: RunningPeer;

before(async () => {
  original = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'billing', [{ id: 'invoices', tags: ['billing'] }]) });
  later = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, LOOKALIKE, [{ id: 'invoices', tags: ['billing'] }]) });
});
after(async () => {
  await Promise.all([original?.close(), later?.close()]);
});

const origin = (p: RunningPeer): string => new URL(p.baseUrl).origin;

async function withLoop(lookalikes: LookalikePolicy | undefined, body: (h: { loop: DiscoveryLoop; registry: ReturnType<typeof listSource>; events: DiscoveryEvent[] }) => Promise<void>): Promise<void> {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const hostPolicy = HostPolicy.from({ allow: [origin(original), origin(later)], allowLoopback: true });
  const fetcher = createCardFetcher({ policy: hostPolicy, totalTimeoutMs: 2_000 });
  const cache = new CardCache({ fetcher, hostPolicy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
  const registry = listSource('registry');
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy,
    cache,
    select: { needs: [{ tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'billing', description: 'Billing.' }]) },
    health: { enterAfter: 1, leaveAfter: 3 },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
    ...(lookalikes !== undefined && { lookalikes }),
  });
  try {
    registry.set([{ name: 'billing', baseUrl: original.baseUrl }]);
    await loop.start();
    await loop.refreshNow();
    // The lookalike arrives later, from another origin.
    registry.set([
      { name: 'billing', baseUrl: original.baseUrl },
      { name: 'payments', baseUrl: later.baseUrl },
    ]);
    await loop.refreshNow();
    await body({ loop, registry, events });
  } finally {
    await loop.stop();
    await cache.close();
    await fetcher.close();
  }
}

const alerts = (events: DiscoveryEvent[]) => events.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === 'lookalike');
const resolved = (events: DiscoveryEvent[]) => events.filter((e): e is AlertResolvedEvent => e.type === 'alert.resolved' && e.kind === 'lookalike');
const reason = () => `name "${LOOKALIKE}" looks like "billing" of ${origin(original)}: confusable characters`;

test('flag (the default): the later agent is flagged once, stays in the snapshot, and the alert resolves when the original leaves', async () => {
  await withLoop(undefined, async ({ loop, registry, events }) => {
    await loop.refreshNow();
    await loop.refreshNow();
    assert.deepEqual(
      alerts(events).map((a) => ({ endpoint: a.endpoint, message: a.message })),
      [{ endpoint: later.baseUrl, message: `${later.baseUrl}: ${reason()}` }],
      'one alert, about the later agent, naming both origins',
    );
    const status = await loop.status();
    const of = (p: RunningPeer) => status.find((s) => s.baseUrl === p.baseUrl);
    assert.deepEqual(of(later)?.lookalike, { of: 'billing', origin: origin(original), reason: reason() });
    assert.equal(of(original)?.lookalike, undefined, 'the first to arrive is the original');
    assert.deepEqual(loop.current()?.agents.map((a) => a.baseUrl).sort(), [original.baseUrl, later.baseUrl].sort(), 'flagged, not blocked');

    // The original leaves: the condition ends and the alert resolves.
    registry.set([{ name: 'payments', baseUrl: later.baseUrl }]);
    for (let i = 0; i < 5 && resolved(events).length === 0; i++) await loop.refreshNow();
    assert.equal(resolved(events).length, 1);
    assert.equal((await loop.status()).find((s) => s.baseUrl === later.baseUrl)?.lookalike, undefined);
    assert.equal(alerts(events).length, 1, 'raised once');
  });
});

test('exclude: the later agent is kept out of the snapshot, its verdict saying why', async () => {
  await withLoop('exclude', async ({ loop, events }) => {
    assert.deepEqual(loop.current()?.agents.map((a) => a.baseUrl), [original.baseUrl]);
    const state = (await loop.status()).find((s) => s.baseUrl === later.baseUrl)?.state;
    assert.deepEqual({ verdict: state?.verdict, reason: state?.reason }, { verdict: 'excluded', reason: `lookalike: ${reason()}` });
    assert.equal(alerts(events).length, 1);
  });
});
