/**
 * "No longer fits" only for a static agent that once fitted, over the discovery loop's cycles: the
 * loop remembers, per endpoint, that its card once fitted, and forgets it with the endpoint.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
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

const card = (ep: { id: string }, tag: string): unknown => cardFor(fs, ep.id, { skills: [{ id: ep.id, name: ep.id, description: 'x', tags: [tag] }] });

function endpoint(id: string, tag: string): FaultEndpoint {
  return fs.endpoint(id, { card: card({ id }, tag), cacheControl: 'max-age=10' });
}

test('a static agent that never fitted "does not fit"; one whose card stops fitting "no longer fits"; an endpoint that left and came back starts over', async () => {
  const billing = endpoint('fit-billing', 'support');
  const stranger = endpoint('fit-stranger', 'other');
  const config = listSource('config', 'static');
  const entry = (name: string, ep: FaultEndpoint) => ({ name, baseUrl: ep.baseUrl, metadata: { description: `Reviewed ${name}.`, tags: 'support', critical: 'false' } });
  config.set([entry('billing', billing), entry('stranger', stranger)]);

  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, backoffBaseMs: 1_000, backoffMaxMs: 1_000, check: { allowLoopback: true } });
  const loop = new DiscoveryLoop({
    sources: [config],
    hostPolicy: policy,
    cache,
    select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
    removalGraceMs: 60_000,
    health: { enterAfter: 1 },
    staticEnterAfter: 1,
  });
  const unsuitable = (): string[] => events.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === 'static-unsuitable').map((e) => e.message);
  const cycle = async (ms: number): Promise<void> => {
    await clock.advance(ms);
    await loop.refreshNow();
  };
  try {
    await loop.start();
    assert.deepEqual(loop.current()?.agents.map((a) => a.localName), ['billing']);
    assert.deepEqual(unsuitable(), ['static agent stranger does not fit: no skill carries a tag of the reviewed vocabulary']);

    billing.setCard(card(billing, 'other'));
    await cycle(11_000);
    assert.deepEqual(unsuitable().slice(1), ['static agent billing no longer fits: no skill carries a tag of the reviewed vocabulary']);

    // It leaves the configuration, is forgotten after the grace period, and comes back unfit.
    config.set([entry('stranger', stranger)]);
    for (let i = 0; i < 7; i++) await cycle(11_000);
    assert.ok(events.some((e) => e.type === 'endpoint.evicted' && e.endpoint === billing.baseUrl));
    config.set([entry('billing', billing), entry('stranger', stranger)]);
    await cycle(11_000);
    assert.deepEqual(unsuitable().slice(2), ['static agent billing does not fit: no skill carries a tag of the reviewed vocabulary']);
  } finally {
    await loop.stop();
    await cache.close();
  }
});
