/**
 * Counted hits (`hitEvents: 'counted'`, the service's setting) after a burst bigger than one
 * slice: a discovery cycle checks every endpoint's freshness at once, and each endpoint's count
 * is an event every listener handles. They are published a slice per turn of the event loop, so
 * a request waiting meanwhile goes between slices; `flushHits()` still publishes all at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache, MemoryCardStore } from '../../packages/core/src/cache/index.js';
import { HIT_EVENTS_PER_TURN, ResultEvents } from '../../packages/core/src/cache/result-events.js';
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

test("an endpoint's hits are one event per burst across a change of the rules (the cache's tally for the key is let go and taken up again)", async () => {
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream();
  stream.subscribe((e) => events.push(e));
  const own = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  const ownFetcher = createCardFetcher({ policy: own });
  const c = new CardCache({ fetcher: ownFetcher, hostPolicy: own, events: stream, hitEvents: 'counted', check: { allowLoopback: true } });
  try {
    const a = fs.endpoint('rules-a', { card: cardFor(fs, 'rules-a'), cacheControl: 'max-age=600' }).baseUrl;
    const b = fs.endpoint('rules-b', { card: cardFor(fs, 'rules-b'), cacheControl: 'max-age=600' }).baseUrl;
    await c.get(a);
    await c.get(b);
    await turn();
    events.length = 0;
    // One burst: hits on the cache's tallies, the rules changed (every key is judged again), more hits.
    for (let i = 0; i < 2; i++) assert.ok(c.fresh(a));
    assert.ok(c.fresh(b));
    own.update(HostPolicy.from({ allow: [fs.origin], allowLoopback: true }));
    for (let i = 0; i < 3; i++) assert.ok(c.fresh(a));
    await turn();
    const hits = events.filter((e) => e.type === 'card.result' && e.outcome === 'hit').map((e) => (e.type === 'card.result' ? [e.endpoint, e.count] : []));
    assert.deepEqual(hits, [
      [a, 5],
      [b, 1],
    ]);
    // The next burst counts from zero on the key's tally, taken up again when the cache writes it.
    assert.ok(c.fresh(a));
    await c.refresh(a);
    assert.ok(c.fresh(a));
    await turn();
    const later = events.filter((e) => e.type === 'card.result' && e.outcome === 'hit').slice(2);
    assert.equal(later.reduce((n, e) => n + (e.type === 'card.result' ? (e.count ?? 1) : 0), 0), 2, 'each hit counted once');
  } finally {
    await c.close();
    await ownFetcher.close();
  }
});

test('hits counted before the cache holds a tally for the key go on the tally it takes up when it writes the key', () => {
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream();
  stream.subscribe((e) => events.push(e));
  const results = new ResultEvents(stream, 'counted');
  results.hit('https://a.example/', 0);
  results.hit('https://a.example/', 0);
  const tally = results.tallyFor('https://a.example/');
  assert.equal(tally.count, 2, 'the loose tally, taken up');
  results.hit('https://a.example/', 0, tally);
  assert.equal(results.tallyFor('https://b.example/').count, 0, 'a key never hit gets a new tally');
  results.flush();
  assert.deepEqual(
    events.map((e) => (e.type === 'card.result' ? [e.endpoint, e.count] : [])),
    [['https://a.example/', 3]],
  );
});

test('hits that keep coming faster than the slices publish them: every hit published once, and the queue stays bounded', async () => {
  const stream = new EventStream();
  let published = 0;
  stream.subscribe((e) => (published += e.type === 'card.result' ? (e.count ?? 1) : 0));
  const results = new ResultEvents(stream, 'counted');
  // More endpoints hit each turn than one slice publishes: the queue never empties while it lasts.
  const perTurn = HIT_EVENTS_PER_TURN + 100;
  const tallies = Array.from({ length: 3 * perTurn }, (_, i) => results.tallyFor(`https://e${i}.example/`));
  let hits = 0;
  let held = 0;
  for (let t = 0; t < 60; t++) {
    for (let i = 0; i < perTurn; i++) {
      results.hit('', 0, tallies[(t * perTurn + i) % tallies.length]);
      hits++;
    }
    await turn();
    held = Math.max(held, results.heldTallies);
  }
  assert.ok(published < hits, 'the queue had not emptied');
  // Each tally is queued once until published; the published ones at the front are dropped in bulk.
  const bound = 2 * tallies.length + 5 * HIT_EVENTS_PER_TURN;
  assert.ok(held <= bound, `at most ${bound} tallies held of ${hits} hits: ${held}`);
  results.flush();
  assert.equal(results.heldTallies, 0);
  assert.equal(published, hits, 'every hit published exactly once');
});
