/**
 * Counted hits (`hitEvents: 'counted'`, the service's setting) after a burst bigger than one
 * slice: a discovery cycle checks every endpoint's freshness at once, and each endpoint's count
 * is an event every listener handles. They are published a slice per turn of the event loop, so
 * a request waiting meanwhile goes between slices; `flushHits()` still publishes all at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache, MemoryCardStore } from '../../packages/core/src/cache/index.js';
import { HIT_EVENTS_PER_TURN } from '../../packages/core/src/cache/result-events.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { cardFor } from '../helpers/cards.js';

let fs: FaultServer;
let fetcher: CardFetcher;
let policy: HostPolicy;
before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("a burst over more endpoints than one slice is published a slice per turn (a request's turn goes between); flushHits() publishes the rest at once", async () => {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const c = new CardCache({ fetcher, hostPolicy: policy, clock, random: () => 1, expiryJitter: 0, events: stream, hitEvents: 'counted', store: new MemoryCardStore(), check: { allowLoopback: true } });
  try {
    const urls = Array.from({ length: HIT_EVENTS_PER_TURN * 2 + 10 }, (_, i) => fs.endpoint(`ep${i}`, { card: cardFor(fs, `ep${i}`), cacheControl: 'max-age=600' }).baseUrl);
    for (const url of urls) await c.get(url);
    const hits = () => events.filter((e) => e.type === 'card.result' && e.outcome === 'hit');
    // One burst, as a discovery cycle's freshness checks are: every endpoint once, synchronously.
    for (const url of urls) assert.ok(c.fresh(url), url);
    assert.equal(hits().length, 0, 'counted while the burst runs');
    let between = -1;
    setImmediate(() => (between = hits().length));
    await turn();
    assert.equal(hits().length, HIT_EVENTS_PER_TURN, 'the first slice');
    assert.equal(between, HIT_EVENTS_PER_TURN, 'work queued during the burst ran after the first slice, before the rest');
    await turn();
    assert.equal(hits().length, HIT_EVENTS_PER_TURN * 2, 'the next slice, a turn later');
    c.flushHits();
    assert.equal(hits().length, urls.length, 'flushHits() publishes the rest');
    assert.deepEqual(hits().map((e) => (e.type === 'card.result' ? [e.endpoint, e.count] : [])).sort(), urls.map((u) => [u, 1]).sort(), 'one event per endpoint with its count: none lost or repeated');
    await turn();
    assert.equal(hits().length, urls.length, 'nothing more');
  } finally {
    await c.close();
  }
});
