/**
 * The upstream request budget per origin (issue 24, item 4): one token bucket per origin shared by
 * every fetcher given it. Counted at a loopback origin under a virtual clock: what the origin
 * receives is at most `burst + rate × elapsed`, whoever asks; discovery (which may wait) and the
 * inspector (which may not) draw on the same tokens; the buckets are bounded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, OriginBudget, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

describe('OriginBudget: the buckets', () => {
  test('a burst at once, then the rate; a caller that may wait gets the exact wait, one that may not is refused and counted', () => {
    const clock = new VirtualClock();
    const budget = new OriginBudget({ requestsPerSecond: 2, burst: 5, clock });
    for (let i = 0; i < 5; i++) assert.equal(budget.reserve('https://a.example', 0, 'inspector'), 0);
    assert.equal(budget.reserve('https://a.example', 0, 'inspector'), undefined);
    assert.equal(budget.retryAfterMs('https://a.example'), 500);
    // Another origin has its own bucket.
    assert.equal(budget.reserve('https://b.example', 0, 'inspector'), 0);
    // A waiting caller reserves ahead: each next one waits one refill period more.
    assert.equal(budget.reserve('https://a.example', 10_000, 'discovery'), 500);
    assert.equal(budget.reserve('https://a.example', 10_000, 'discovery'), 1_000);
    // A wait longer than allowed is a refusal, and takes nothing.
    assert.equal(budget.reserve('https://a.example', 1_000, 'discovery'), undefined);
    assert.deepEqual(budget.stats, { origins: 2, exhausted: { inspector: 1, discovery: 1 }, waited: { discovery: 2 }, originsDropped: 0 });
  });

  test('idle buckets are freed, and past maxOrigins the least recently used busy one is dropped (counted)', async () => {
    const clock = new VirtualClock();
    const budget = new OriginBudget({ requestsPerSecond: 1, burst: 2, clock, maxOrigins: 2 });
    budget.reserve('https://a.example', 0, 'x');
    budget.reserve('https://b.example', 0, 'x');
    // Both buckets are below their burst: a third origin drops the oldest.
    budget.reserve('https://c.example', 0, 'x');
    assert.equal(budget.stats.origins, 2);
    assert.equal(budget.stats.originsDropped, 1);
    // Once refilled they are idle: freed, not dropped.
    await clock.advance(5_000);
    budget.reserve('https://d.example', 0, 'x');
    assert.equal(budget.stats.origins, 1);
    assert.equal(budget.stats.originsDropped, 1);
  });

  test('idle buckets are freed as requests go on, below the cap too', async () => {
    const clock = new VirtualClock();
    const budget = new OriginBudget({ requestsPerSecond: 100, burst: 10, clock });
    for (let i = 0; i < 100; i++) budget.reserve(`https://o${i}.example`, 0, 'x');
    assert.equal(budget.stats.origins, 100);
    await clock.advance(1_000);
    for (let i = 0; i < 1_024; i++) budget.reserve('https://busy.example', 60_000, 'x');
    assert.equal(budget.stats.origins, 1, 'only the busy origin is tracked');
  });

  test('bad options are a config error', () => {
    assert.throws(() => new OriginBudget({ requestsPerSecond: 0, burst: 0, clock: new VirtualClock() }), (err) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && err.problems.length === 2);
  });
});

describe('OriginBudget shared by fetchers, counted at a loopback origin', () => {
  let server: JsonServer;
  let policy: HostPolicy;
  const fetchers: CardFetcher[] = [];
  before(async () => {
    server = await startJsonServer();
    policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
    for (let i = 0; i < 50; i++) server.routes.set(`/c${i}.json`, { body: { name: `c${i}` } });
  });
  after(async () => {
    await Promise.all(fetchers.map((f) => f.close()));
    await server.close();
  });
  const make = (budget: OriginBudget, maxWaitMs: number, caller: string): CardFetcher => {
    const f = createCardFetcher({ policy, maxConnectionsPerOrigin: 4, originBudget: { budget, maxWaitMs, caller } });
    fetchers.push(f);
    return f;
  };
  const settle = async (promises: Array<Promise<unknown>>) => {
    const results = await Promise.allSettled(promises);
    return { ok: results.filter((r) => r.status === 'fulfilled').length, refused: results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as Error) };
  };

  test('the inspector spends the burst and is refused past it, nothing sent; discovery then waits for its turn', async () => {
    const clock = new VirtualClock();
    const budget = new OriginBudget({ requestsPerSecond: 2, burst: 5, clock });
    const inspector = make(budget, 0, 'inspector');
    const discovery = make(budget, 60_000, 'discovery');
    server.requests.length = 0;
    const first = await settle(Array.from({ length: 20 }, (_, i) => inspector.fetch(`${server.origin}/c${i}.json`)));
    assert.equal(first.ok, 5);
    assert.equal(server.requests.length, 5, 'the origin received the burst only');
    assert.equal(first.refused.length, 15);
    for (const err of first.refused) {
      assert.ok(isDiscoveryError(err) && err.code === 'ERR_FETCH_NETWORK', String(err));
      assert.match(err.message, new RegExp(`not requested: the upstream budget for ${server.origin} is spent .*cache\\.originRequestsPerSecond.*retry in 1 s`));
    }
    // Discovery shares the bucket: it waits (nothing sent) until the refill gives it a turn.
    let done = false;
    const waiting = discovery.fetch(`${server.origin}/c30.json`).then((r) => ((done = true), r));
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false);
    assert.equal(server.requests.length, 5);
    // While discovery holds the next token, the inspector is refused.
    await assert.rejects(inspector.fetch(`${server.origin}/c31.json`), /upstream budget .* is spent/);
    await clock.advance(500);
    assert.equal((await waiting).status, 200);
    assert.equal(server.requests.length, 6);
    assert.deepEqual(budget.stats.exhausted, { inspector: 16 });
    assert.deepEqual(budget.stats.waited, { discovery: 1 });
  });

  test('many callers of both kinds over a run: the origin receives at most burst + rate × elapsed', async () => {
    const clock = new VirtualClock();
    const rate = 4;
    const burst = 10;
    const budget = new OriginBudget({ requestsPerSecond: rate, burst, clock });
    const inspectors = [make(budget, 0, 'inspector'), make(budget, 0, 'inspector')];
    const discovery = make(budget, 2_000, 'discovery');
    server.requests.length = 0;
    const pending: Array<Promise<unknown>> = [];
    const steps = 20;
    for (let step = 0; step < steps; step++) {
      // Each 250 ms: 10 inspector requests and 3 discovery requests.
      for (let i = 0; i < 10; i++) pending.push(inspectors[i % 2]!.fetch(`${server.origin}/c${i}.json`).catch(() => undefined));
      for (let i = 0; i < 3; i++) pending.push(discovery.fetch(`${server.origin}/c${40 + i}.json`).catch(() => undefined));
      await new Promise((r) => setImmediate(r));
      await clock.advance(250);
    }
    const elapsedSeconds = (steps * 250) / 1000;
    // Let the waits still pending run out, counting their time too.
    await clock.advance(2_000);
    await Promise.all(pending);
    const bound = burst + rate * (elapsedSeconds + 2);
    assert.ok(server.requests.length <= bound, `${server.requests.length} requests > ${bound}`);
    // Without a budget 260 requests would have been sent; the budget still served some of each caller.
    assert.ok(server.requests.length >= bound - 2, `${server.requests.length} requests: the budget was not used up`);
    assert.ok((budget.stats.exhausted.inspector ?? 0) > 0 && (budget.stats.waited.discovery ?? 0) > 0, JSON.stringify(budget.stats));
  });
});
