/**
 * The card cache against a loopback fault server, on a virtual clock. Each promised behaviour
 * (P1, P2, P5, P7, P8, P10 in shared/reference/threats-failures-limits.md) has a test here
 * that fails without it. The suite runs once per store implementation.
 */
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CacheEntry, CardCacheOptions, CardStore } from '../../packages/core/src/cache/index.js';
import { CardCache, MemoryCardStore } from '../../packages/core/src/cache/index.js';
import { Foreground } from '../../packages/core/src/cache/foreground.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { cardFor } from '../helpers/cards.js';
import type { Clock } from '../../packages/core/src/clock/index.js';
import { storeEngines } from '../helpers/stores.js';

const stores: Array<[string, (clock: Clock) => CardStore, ReturnType<typeof storeEngines>[number]]> = storeEngines().map((e) => [`${e.name} store`, (clock) => e.cards(clock), e]);

for (const [storeName, makeStore, engine] of stores) {
  describe(`CardCache (${storeName})`, { skip: engine.skip }, () => {
    let fs: FaultServer;
    let policy: HostPolicy;
    let fetcher: CardFetcher;
    let clock: VirtualClock;
    let events: DiscoveryEvent[];
    let stream: EventStream;
    const caches: CardCache[] = [];

    before(async () => {
      await engine.setup();
      fs = await startFaultServer();
      policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
      fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000, headersTimeoutMs: 1_000 });
    });
    after(async () => {
      await fetcher.close();
      await fs.close();
      await engine.teardown();
    });
    beforeEach(() => {
      clock = new VirtualClock();
      events = [];
      stream = new EventStream({ wallNow: () => clock.wallNow() });
      stream.subscribe((e) => events.push(e));
    });
    afterEach(async () => {
      await Promise.all(caches.splice(0).map((c) => c.close()));
    });

    function cache(options: Partial<CardCacheOptions> = {}): CardCache {
      const c = new CardCache({
        fetcher,
        hostPolicy: policy,
        store: makeStore(clock),
        clock,
        random: () => 1, // deterministic: full jitter taken, so bounds are exact
        expiryJitter: 0,
        backoffJitter: 0,
        events: stream,
        check: { allowLoopback: true },
        ...options,
      });
      caches.push(c);
      return c;
    }

    let n = 0;
    function endpoint(options: Parameters<FaultServer['endpoint']>[1] = {}): FaultEndpoint {
      const id = `ep${++n}`;
      return fs.endpoint(id, { card: cardFor(fs, id), ...options });
    }

    const outcomes = (ep: FaultEndpoint) =>
      events.filter((e) => e.type === 'card.result' && e.endpoint === ep.baseUrl).map((e) => (e.type === 'card.result' ? e.outcome : ''));

    describe('freshness and revalidation (P7)', () => {
      test('a fresh entry is served without a request; an expired one is revalidated with If-None-Match and a 304 keeps the parsed card', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60' });
        const c = cache({ minTtlMs: 0 });
        const first = await c.get(ep.baseUrl);
        assert.equal(first.lastOutcome, 'changed');
        assert.equal(first.etag, ep.etag);
        assert.equal(ep.hits, 1);

        await clock.advance(59_000);
        assert.equal(await c.get(ep.baseUrl), first, 'still fresh: the same entry, no request');
        assert.equal(ep.hits, 1);

        await clock.advance(2_000);
        const second = await c.get(ep.baseUrl);
        assert.equal(ep.hits, 2);
        assert.equal(ep.requests[1]!.headers['if-none-match'], ep.etag);
        assert.equal(second.lastOutcome, 'revalidated');
        assert.equal(second.card, first.card, 'the parsed card object is kept');
        assert.deepEqual(outcomes(ep), ['changed', 'hit', 'revalidated']);
      });

      test("hitEvents 'counted': a burst of fresh hits is one event per endpoint carrying the count, published after the burst (and by close())", async () => {
        const a = endpoint({ cacheControl: 'max-age=60' });
        const b = endpoint({ cacheControl: 'max-age=60' });
        const c = cache({ minTtlMs: 0, hitEvents: 'counted' });
        await c.get(a.baseUrl);
        await c.get(b.baseUrl);
        for (let i = 0; i < 5; i++) await c.get(a.baseUrl);
        await c.get(b.baseUrl);
        assert.deepEqual(outcomes(a), ['changed'], 'no event per hit while the burst runs');
        await new Promise((resolve) => setImmediate(resolve));
        const hits = events.filter((e) => e.type === 'card.result' && e.outcome === 'hit').map((e) => [e.type === 'card.result' && e.endpoint, e.type === 'card.result' && e.count]);
        assert.deepEqual(hits, [
          [a.baseUrl, 5],
          [b.baseUrl, 1],
        ]);
        await c.get(b.baseUrl);
        await c.close();
        assert.deepEqual(outcomes(b), ['changed', 'hit', 'hit'], 'close() publishes the hits still counted');
        assert.equal(a.hits + b.hits, 2, 'hits made no request');
      });

      test('fresh(): the fresh entry synchronously, counted as a hit; undefined once get() would have to refresh, and never a request', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60' });
        // A synchronous store (this suite's stores answer with promises: fresh() leaves those to get()).
        const c = cache({ minTtlMs: 0, store: new MemoryCardStore() });
        assert.equal(c.fresh(ep.baseUrl), undefined, 'nothing cached yet');
        const first = await c.get(ep.baseUrl);
        assert.equal(c.fresh(ep.baseUrl), first);
        const viaPromises = cache({ minTtlMs: 0 });
        await viaPromises.get(ep.baseUrl);
        assert.equal(viaPromises.fresh(ep.baseUrl), undefined, 'an asynchronous store: get() answers');
        await clock.advance(61_000);
        assert.equal(c.fresh(ep.baseUrl), undefined, 'expired: get() would revalidate');
        assert.equal(ep.hits, 2, 'one fetch per cache, none by fresh()');
        assert.deepEqual(outcomes(ep), ['changed', 'hit', 'changed'], 'the hit of fresh(), then the second cache’s first fetch');
      });

      test('while a forced refresh of a fresh entry is in flight, get() answers with the fresh entry at once', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60' });
        const c = cache({ minTtlMs: 0 });
        const first = await c.get(ep.baseUrl);
        ep.set({ mode: 'hang' });
        const forced = c.refresh(ep.baseUrl, { unconditional: true });
        assert.equal(await c.get(ep.baseUrl), first, 'the fresh entry, not the hanging refresh');
        const e = await forced;
        assert.equal(e.stale, true, 'the forced refresh itself fails at the deadline and serves stale');
      });

      test('a 304 carrying a new max-age extends freshness to it', async () => {
        const ep = endpoint({ cacheControl: 'max-age=10' });
        const c = cache({ minTtlMs: 0 });
        await c.get(ep.baseUrl);
        ep.set({ cacheControl: 'max-age=600' });
        await clock.advance(11_000);
        const e = await c.get(ep.baseUrl);
        assert.equal(e.lastOutcome, 'revalidated');
        assert.equal(e.expiresAt, clock.now() + 600_000);
      });

      test('the Age header shortens freshness: age 290 with max-age 300 is due after ~10 s', async () => {
        const ep = endpoint({ cacheControl: 'max-age=300', age: 290 });
        const c = cache({ minTtlMs: 0 });
        const e = await c.get(ep.baseUrl);
        assert.ok(Math.abs(e.expiresAt - clock.now() - 10_000) < 50, `${e.expiresAt - clock.now()}`);
      });

      test('a server clock a year off changes nothing (Expires is read against its own Date)', async () => {
        const c = cache({ minTtlMs: 0 });
        const schedule: number[] = [];
        for (const skewDays of [0, 365, -365]) {
          const date = new Date(Date.now() + skewDays * 86_400_000);
          const ep = endpoint({
            cacheControl: null,
            date: date.toUTCString(),
            headers: { expires: new Date(date.getTime() + 120_000).toUTCString() },
          });
          const e = await c.get(ep.baseUrl);
          schedule.push(Math.round((e.expiresAt - clock.now()) / 1000));
        }
        assert.deepEqual(schedule, [120, 120, 120]);
      });

      test('a wall-clock jump causes no refresh (freshness runs on the monotonic clock)', async () => {
        const ep = endpoint({ cacheControl: 'max-age=300' });
        const c = cache();
        await c.get(ep.baseUrl);
        clock.jumpWall(3_600_000);
        await c.get(ep.baseUrl);
        clock.jumpWall(-7_200_000);
        await c.get(ep.baseUrl);
        assert.equal(ep.hits, 1);
      });

      test('no lifetime from the server gives the default; lifetimes are clamped to [min, max]', async () => {
        const c = cache({ defaultTtlMs: 300_000, minTtlMs: 30_000, maxTtlMs: 3_600_000 });
        const silent = await c.get(endpoint({ cacheControl: null }).baseUrl);
        const zero = await c.get(endpoint({ cacheControl: 'max-age=0' }).baseUrl);
        const year = await c.get(endpoint({ cacheControl: 'max-age=31536000' }).baseUrl);
        const noCache = await c.get(endpoint({ cacheControl: 'no-cache' }).baseUrl);
        assert.deepEqual(
          [silent, zero, year, noCache].map((e) => e.expiresAt - clock.now()),
          [300_000, 30_000, 3_600_000, 30_000],
        );
      });

      test('the Last-Modified heuristic gives 10% of the document age', async () => {
        const now = Date.now();
        const ep = endpoint({ cacheControl: null, date: new Date(now).toUTCString(), lastModified: new Date(now - 1_000_000).toUTCString() });
        const e = await cache({ minTtlMs: 0 }).get(ep.baseUrl);
        const ttl = e.expiresAt - clock.now();
        assert.ok(Math.abs(ttl - 100_000) <= 1_000, `ttl ${ttl}`);
      });

      test('no-store: the next request carries no validator', async () => {
        const ep = endpoint({ cacheControl: 'no-store' });
        const c = cache({ minTtlMs: 1_000 });
        await c.get(ep.baseUrl);
        await clock.advance(1_500);
        const e = await c.get(ep.baseUrl);
        assert.equal(ep.hits, 2);
        assert.equal(ep.requests[1]!.headers['if-none-match'], undefined);
        assert.equal(e.lastOutcome, 'unchanged');
      });

      test('expiry jitter shortens each lifetime by at most the configured fraction', async () => {
        const ep = endpoint({ cacheControl: 'max-age=100' });
        const c = cache({ minTtlMs: 0, expiryJitter: 0.1, random: () => 0.5 });
        const e = await c.get(ep.baseUrl);
        assert.equal(e.expiresAt - clock.now(), 95_000);
      });
    });

    describe('change detection on bytes', () => {
      test('an ETag that changes on every response changes nothing', async () => {
        const ep = endpoint({ mode: 'etag-churn', cacheControl: 'max-age=30' });
        const c = cache({ minTtlMs: 0 });
        const first = await c.get(ep.baseUrl);
        const etags = new Set([first.etag]);
        for (let i = 0; i < 4; i++) {
          await clock.advance(31_000);
          const e = await c.get(ep.baseUrl);
          etags.add(e.etag);
          assert.equal(e.card, first.card);
          assert.equal(e.rawSha256, first.rawSha256);
        }
        assert.equal(etags.size, 5, 'five responses, five ETags');
        assert.deepEqual(outcomes(ep), ['changed', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
      });

      test('new bytes are parsed once and replace the card', async () => {
        const ep = endpoint({ cacheControl: 'max-age=30' });
        const c = cache({ minTtlMs: 0 });
        const v1 = await c.get(ep.baseUrl);
        ep.setCard(cardFor(fs, ep.id, { version: '2.0.0' }));
        await clock.advance(31_000);
        const v2 = await c.get(ep.baseUrl);
        assert.equal(v2.lastOutcome, 'changed');
        assert.equal(v2.card.version, '2.0.0');
        assert.notEqual(v2.canonicalSha256, v1.canonicalSha256);
      });

      test('an unconditional resync catches a server that answers 304 although the card changed (P6)', async () => {
        const ep = endpoint({ mode: 'etag-stuck', cacheControl: 'max-age=30' });
        const c = cache({ minTtlMs: 0 });
        await c.get(ep.baseUrl);
        ep.setCard(cardFor(fs, ep.id, { version: '9.9.9' }));
        await clock.advance(31_000);
        assert.equal((await c.get(ep.baseUrl)).card.version, '1.0.0', 'the wrong 304 is believed');
        const resynced = await c.refresh(ep.baseUrl, { unconditional: true });
        assert.equal(ep.requests.at(-1)!.headers['if-none-match'], undefined);
        assert.equal(resynced.card.version, '9.9.9');
      });
    });

    describe('single-flight and jitter (P8)', () => {
      test('100 concurrent callers on one expired endpoint share one request', async () => {
        const ep = endpoint({ cacheControl: 'max-age=30', latencyMs: 20 });
        const c = cache({ minTtlMs: 0 });
        const all = await Promise.all(Array.from({ length: 100 }, () => c.get(ep.baseUrl)));
        assert.equal(ep.hits, 1);
        assert.ok(all.every((e) => e === all[0]));
      });

      test('100 callers over 1,000 expired endpoints make exactly 1,000 upstream requests', async () => {
        const eps = Array.from({ length: 1_000 }, () => endpoint({ cacheControl: 'max-age=60' }));
        const c = cache({ minTtlMs: 0, maxConcurrentFetches: 64 });
        await Promise.all(eps.map((ep) => c.get(ep.baseUrl)));
        await clock.advance(61_000); // every entry expires at once
        const before = eps.reduce((s, ep) => s + ep.hits, 0);
        let errors = 0;
        await Promise.all(
          Array.from({ length: 100 }, async (_, caller) => {
            const order = [...eps].sort((a, b) => ((a.id.length * 31 + caller) % 7) - ((b.id.length * 17 + caller) % 5));
            await Promise.all(order.map((ep) => c.get(ep.baseUrl).catch(() => errors++)));
          }),
        );
        const upstream = eps.reduce((s, ep) => s + ep.hits, 0) - before;
        assert.equal(upstream, 1_000);
        assert.equal(errors, 0);
        assert.ok(eps.every((ep) => ep.hits === 2), 'at most one request per endpoint');
      });
    });

    describe('stale on error and backoff (P1, P2)', () => {
      test('a card seen before is served stale on 5xx, with doubling backoff, reset by one success', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60' });
        const c = cache({ minTtlMs: 0, backoffBaseMs: 5_000, backoffMaxMs: 300_000 });
        const good = await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 503 });
        await clock.advance(61_000);

        const s1 = await c.get(ep.baseUrl);
        assert.equal(s1.card, good.card, 'the last good card is served');
        assert.deepEqual([s1.stale, s1.usable, s1.failures, s1.lastError?.status], [true, true, 1, 503]);
        assert.equal(s1.nextAttemptAt, clock.now() + 5_000);

        const hits = ep.hits;
        await clock.advance(4_000);
        assert.equal((await c.get(ep.baseUrl)).failures, 1, 'backing off: no request');
        assert.equal(ep.hits, hits);

        await clock.advance(1_000);
        const s2 = await c.get(ep.baseUrl);
        assert.equal(s2.failures, 2);
        assert.equal(s2.nextAttemptAt, clock.now() + 10_000, 'the delay doubles');
        const delays = events.filter((e) => e.type === 'card.backoff' && e.endpoint === ep.baseUrl).map((e) => (e.type === 'card.backoff' ? e.retryInMs : 0));
        assert.deepEqual(delays, [5_000, 10_000]);

        ep.set({ mode: 'ok' });
        await clock.advance(10_000);
        const back = await c.get(ep.baseUrl);
        assert.deepEqual([back.stale, back.failures, back.lastOutcome], [false, 0, 'revalidated']);
      });

      test('the backoff is capped', async () => {
        const ep = endpoint({ cacheControl: 'max-age=1' });
        const c = cache({ minTtlMs: 0, backoffBaseMs: 5_000, backoffMaxMs: 300_000, maxStaleMs: 86_400_000 });
        await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 500 });
        let e: CacheEntry | undefined;
        for (let i = 0; i < 9; i++) {
          await clock.advance(400_000);
          e = await c.get(ep.baseUrl);
        }
        assert.equal(e!.failures, 9);
        assert.equal(e!.nextAttemptAt! - clock.now(), 300_000);
      });

      test('backoff jitter keeps each delay within [d·(1−j), d]', async () => {
        const ep = endpoint({ cacheControl: 'max-age=1' });
        const c = cache({ minTtlMs: 0, backoffJitter: 0.5, random: () => 0.999 });
        await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 500 });
        await clock.advance(2_000);
        const e = await c.get(ep.baseUrl);
        const delay = e.nextAttemptAt! - clock.now();
        assert.ok(delay >= 2_500 && delay <= 5_000, String(delay));
      });

      const faults: Array<[string, Parameters<FaultEndpoint['set']>[0], string]> = [
        ['a closed connection midway (truncated body)', { mode: 'truncated' }, 'ERR_FETCH_NETWORK'],
        ['a timeout', { mode: 'hang' }, 'ERR_FETCH_TIMEOUT'],
        ['malformed JSON', { mode: 'malformed' }, 'ERR_CARD_MALFORMED'],
        ['a schema-invalid card', { mode: 'ok', card: { name: 'x' } }, 'ERR_CARD_INVALID'],
        ['an insecure interface', { mode: 'ok', card: { ...cardFor({ origin: 'http://agents.example.com' }, 'x') } }, 'ERR_INSECURE_INTERFACE'],
        ['a redirect off the host', { mode: 'redirect', location: 'http://169.254.169.254/latest' }, 'ERR_REDIRECT_REFUSED'],
        ['an oversized body', { mode: 'big', bytes: 200_000 }, 'ERR_BODY_TOO_LARGE'],
        ['a 404', { mode: 'status', status: 404 }, 'ERR_FETCH_STATUS'],
      ];
      for (const [what, change, code] of faults) {
        test(`${what}: the last good card is kept and the update is NACKed with ${code}`, async () => {
          const ep = endpoint({ cacheControl: 'max-age=60' });
          const c = cache({ minTtlMs: 0, fetcher: what === 'a timeout' ? createCardFetcher({ policy, totalTimeoutMs: 150 }) : fetcher });
          const good = await c.get(ep.baseUrl);
          ep.set(change);
          await clock.advance(61_000);
          const e = await c.get(ep.baseUrl);
          assert.equal(e.card, good.card);
          assert.equal(e.canonicalSha256, good.canonicalSha256);
          assert.equal(e.stale, true);
          assert.equal(e.lastError?.code, code, JSON.stringify(e.lastError));
          const last = events.filter((ev) => ev.type === 'card.result' && ev.endpoint === ep.baseUrl).at(-1);
          assert.ok(last?.type === 'card.result' && last.code === code);
          if (what === 'a timeout') await c.close();
        });
      }

      test('a never-seen endpoint that fails throws, stores nothing, and is retried on the backoff', async () => {
        const ep = endpoint({ mode: 'malformed' });
        const c = cache({ backoffBaseMs: 5_000 });
        await assert.rejects(c.get(ep.baseUrl), (err) => isDiscoveryError(err) && err.code === 'ERR_CARD_MALFORMED' && err.failure === 'invalid');
        assert.equal(await c.peek(ep.baseUrl), undefined, 'invalid content is never stored');
        await assert.rejects(c.get(ep.baseUrl), /not valid JSON/);
        assert.equal(ep.hits, 1, 'within the backoff: no second request');
        assert.equal(c.lastFailure(ep.baseUrl)?.failures, 1);
        ep.set({ mode: 'ok' });
        await clock.advance(5_000);
        assert.equal((await c.get(ep.baseUrl)).lastOutcome, 'changed');
        assert.equal(c.lastFailure(ep.baseUrl), undefined);
      });

      test('a host outside the allowlist is refused before any request', async () => {
        const c = cache();
        await assert.rejects(c.get('https://evil.example.net/'), (err) => isDiscoveryError(err) && err.failure === 'policy');
      });
    });

    describe('bounded staleness (P5)', () => {
      test('stale use ends maxStaleMs after expiry: the entry becomes unusable', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60' });
        const c = cache({ minTtlMs: 0, maxStaleMs: 120_000, backoffBaseMs: 30_000, backoffMaxMs: 30_000 });
        await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 503 });
        await clock.advance(61_000);
        assert.equal((await c.get(ep.baseUrl)).usable, true);
        await clock.advance(120_000);
        const late = await c.get(ep.baseUrl);
        assert.equal(late.stale, true);
        assert.equal(late.usable, false);
        ep.set({ mode: 'ok' });
        await clock.advance(30_000);
        const back = await c.get(ep.baseUrl);
        assert.equal(back.usable, true);
        assert.equal(back.stale, false);
      });

      test('stale-if-error from the server extends the bound', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60, stale-if-error=600' });
        const c = cache({ minTtlMs: 0, maxStaleMs: 10_000, backoffBaseMs: 100_000, backoffMaxMs: 100_000 });
        await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 500 });
        await clock.advance(61_000 + 300_000);
        assert.equal((await c.get(ep.baseUrl)).usable, true);
      });

      test('must-revalidate: a card that cannot be revalidated after expiry is unusable at once', async () => {
        const ep = endpoint({ cacheControl: 'max-age=60, must-revalidate' });
        const c = cache({ minTtlMs: 0 });
        await c.get(ep.baseUrl);
        ep.set({ mode: 'status', status: 503 });
        await clock.advance(61_000);
        const e = await c.get(ep.baseUrl);
        assert.deepEqual([e.stale, e.usable], [true, false]);
      });
    });

    describe('bounded concurrency (P10)', () => {
      test('at most maxConcurrentFetches in flight overall and one per origin', async () => {
        const servers = await Promise.all(Array.from({ length: 6 }, () => startFaultServer()));
        try {
          const wide = HostPolicy.from({ allow: servers.map((s) => s.origin), allowLoopback: true });
          const f = createCardFetcher({ policy: wide });
          const eps = servers.flatMap((s) => Array.from({ length: 5 }, (_, i) => s.endpoint(`c${i}`, { card: cardFor(s, `c${i}`), latencyMs: 40 })));
          const c = cache({ fetcher: f, hostPolicy: wide, maxConcurrentFetches: 3 });
          await Promise.all(eps.map((ep) => c.get(ep.baseUrl)));
          assert.equal(c.concurrency.peak, 3);
          for (const s of servers) {
            const arrivals = eps
              .filter((ep) => ep.baseUrl.startsWith(s.origin))
              .map((ep) => ep.requests[0]!.at)
              .sort((a, b) => a - b);
            for (let i = 1; i < arrivals.length; i++) {
              assert.ok(arrivals[i]! - arrivals[i - 1]! >= 35, 'requests to one origin never overlap');
            }
          }
          await c.close();
          await f.close();
        } finally {
          await Promise.all(servers.map((s) => s.close()));
        }
      });

      test('an origin\'s next fetch starts when its last fetch is answered, not when that card is stored', async () => {
        // A durable store whose writes take a second (a SQL store's batch waiting for its turn).
        class SlowStore extends MemoryCardStore {
          readonly writes: number[] = [];
          override set(key: string, entry: CacheEntry): Promise<void> {
            super.set(key, entry);
            this.writes.push(Date.now());
            return new Promise((resolve) => setTimeout(resolve, 1_000));
          }
        }
        const store = new SlowStore();
        const eps = Array.from({ length: 3 }, (_, i) => fs.endpoint(`slow-store-${i}`, { card: cardFor(fs, `slow-store-${i}`), latencyMs: 20 }));
        const c = cache({ store, maxFetchesPerOrigin: 1 });
        const started = performance.now();
        await Promise.all(eps.map((ep) => c.get(ep.baseUrl)));
        const arrivals = eps.map((ep) => ep.requests[0]!.at).sort((a, b) => a - b);
        // One at a time on the origin, each as soon as the one before was answered: well within
        // the first write's second (a loaded machine included), where waiting for each write
        // would take two seconds and more.
        assert.ok(arrivals[2]! - started < 1_000, `the third fetch began ${Math.round(arrivals[2]! - started)} ms in: it waited for the stores`);
        for (let i = 1; i < arrivals.length; i++) assert.ok(arrivals[i]! - arrivals[i - 1]! >= 15, 'requests to one origin never overlap');
        assert.equal(store.writes.length, 3);
      });

      test('while a turn is in flight at most maxConcurrentFetchesDuringTurns start; the rest start once it ends', async () => {
        const servers = await Promise.all(Array.from({ length: 6 }, () => startFaultServer()));
        const wide = HostPolicy.from({ allow: servers.map((s) => s.origin), allowLoopback: true });
        const f = createCardFetcher({ policy: wide });
        try {
          const eps = servers.flatMap((s) => Array.from({ length: 4 }, (_, i) => s.endpoint(`c${i}`, { card: cardFor(s, `c${i}`), latencyMs: 30 })));
          const foreground = new Foreground();
          const c = cache({ fetcher: f, hostPolicy: wide, maxConcurrentFetches: 6, maxConcurrentFetchesDuringTurns: 2, foreground });
          const leave = foreground.enter();
          const all = Promise.all(eps.map((ep) => c.get(ep.baseUrl)));
          // Until the turn ends: never more than two in flight, while the others wait.
          const seen: number[] = [];
          for (let i = 0; i < 1_000 && eps.filter((ep) => ep.hits > 0).length < 6; i++) {
            seen.push(c.concurrency.running);
            await new Promise((r) => setTimeout(r, 5));
          }
          assert.ok(eps.filter((ep) => ep.hits > 0).length >= 6, 'refreshes went on during the turn');
          assert.ok(Math.max(...seen) <= 2 && c.concurrency.peak === 2, `in flight during the turn: ${Math.max(...seen)}, peak ${c.concurrency.peak}`);
          assert.ok(c.concurrency.waiting > 0, 'the other refreshes wait');
          leave();
          await all;
          assert.equal(c.concurrency.peak, 6, 'the turn ended: as many as maxConcurrentFetches at once');
          assert.ok(eps.every((ep) => ep.hits === 1));
          await c.close();
        } finally {
          await f.close();
          await Promise.all(servers.map((s) => s.close()));
        }
      });
    });

    describe('credentials', () => {
      test('a card endpoint that wants credentials fails without them and works with a per-origin provider', async () => {
        const ep = endpoint({ mode: 'unauthorized', value: 'Bearer s3cret', header: 'authorization' });
        await assert.rejects(cache().get(ep.baseUrl), /HTTP 401.*credentials/);
        const withCreds = createCardFetcher({ policy, credentials: (origin) => (origin === fs.origin ? { authorization: 'Bearer s3cret' } : undefined) });
        try {
          const e = await cache({ fetcher: withCreds }).get(ep.baseUrl);
          assert.equal(e.lastOutcome, 'changed');
        } finally {
          await withCreds.close();
        }
      });
    });

    test('events tell the whole story of a fetch', async () => {
      const ep = endpoint({ cacheControl: 'max-age=60' });
      await cache().get(ep.baseUrl);
      const mine = events.filter((e) => 'endpoint' in e && e.endpoint === ep.baseUrl);
      assert.deepEqual(mine.map((e) => e.type), ['card.fetch', 'card.result']);
      const result = mine[1]!;
      assert.ok(result.type === 'card.result');
      assert.equal(result.outcome, 'changed');
      assert.equal(result.status, 200);
      assert.equal(result.bytes, ep.body.byteLength);
      assert.ok((result.durationMs ?? -1) >= 0);
    });
  });
}
