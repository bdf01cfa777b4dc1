/**
 * Revalidation by RFC 9111 against a scripted loopback server: which 304s update the stored
 * response (§4.3.4), what `no-store` keeps (§5.2.2.5), how `Vary` limits reuse (§4.1), and the
 * directives a private cache honours. Each test fails without the rule it names.
 */
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cardFor } from '../helpers/cards.js';
import { storeEngines } from '../helpers/stores.js';
import type { Answer } from './scripted-server.js';
import { startScriptedServer } from './scripted-server.js';

for (const engine of storeEngines()) {
  describe(`CardCache revalidation (RFC 9111) (${engine.name} store)`, { skip: engine.skip }, () => {
    let srv: Awaited<ReturnType<typeof startScriptedServer>>;
    let policy: HostPolicy;
    let fetcher: CardFetcher;
    let clock: VirtualClock;
    const caches: CardCache[] = [];
    let n = 0;
    let base: string;

    before(async () => {
      await engine.setup();
      srv = await startScriptedServer();
      policy = HostPolicy.from({ allow: [srv.origin], allowLoopback: true });
      fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000 });
    });
    after(async () => {
      await fetcher.close();
      await srv.close();
      await engine.teardown();
    });
    beforeEach(() => {
      clock = new VirtualClock();
      base = `${srv.origin}/r${++n}/`;
      srv.requests.length = 0;
    });
    afterEach(async () => {
      await Promise.all(caches.splice(0).map((c) => c.close()));
    });

    function cache(options: Partial<CardCacheOptions> = {}): CardCache {
      const c = new CardCache({
        fetcher,
        hostPolicy: policy,
        store: engine.cards(clock),
        clock,
        random: () => 1,
        expiryJitter: 0,
        backoffJitter: 0,
        minTtlMs: 0,
        check: { allowLoopback: true },
        ...options,
      });
      caches.push(c);
      return c;
    }
    const card = (version: string) => cardFor(srv, 'r', { version });
    const inm = (i: number) => srv.requests[i]!.headers['if-none-match'];

    describe('which 304 updates the stored response (§4.3.4)', () => {
      test('a 304 carrying another ETag than the stored one is not a revalidation: the card is fetched in full, without validators', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        srv.script((req): Answer =>
          req.headers['if-none-match'] !== undefined
            ? { status: 304, headers: { etag: '"b"', 'cache-control': 'max-age=10' } }
            : { status: 200, headers: { etag: '"b"', 'cache-control': 'max-age=10' }, body: card('2.0.0') },
        );
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.deepEqual([inm(1), inm(2)], ['"a"', undefined], 'the conditional request, then an unconditional one');
        assert.equal(e.lastOutcome, 'changed');
        assert.equal(e.etag, '"b"');
        assert.equal(e.card.version, '2.0.0');
      });

      test('a 304 carrying the stored ETag (weak comparison) revalidates and keeps the stored validators', async () => {
        srv.script(() => ({ status: 200, headers: { etag: 'W/"a"', 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        const first = await c.get(base);
        srv.script(() => ({ status: 304, headers: { etag: 'W/"a"', 'cache-control': 'max-age=600' } }));
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.equal(e.lastOutcome, 'revalidated');
        assert.equal(e.card, first.card);
        assert.equal(e.etag, 'W/"a"');
        assert.equal(e.expiresAt, clock.now() + 600_000);
      });

      test('a 304 with no validator at all, answering our conditional request, revalidates the one stored response and keeps its validators', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', 'last-modified': 'Tue, 01 Oct 2024 10:00:00 GMT', 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        srv.script(() => ({ status: 304, headers: { 'cache-control': 'max-age=600' } }));
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.equal(inm(1), '"a"');
        assert.equal(srv.requests[1]!.headers['if-modified-since'], 'Tue, 01 Oct 2024 10:00:00 GMT');
        assert.equal(e.lastOutcome, 'revalidated');
        assert.deepEqual([e.etag, e.lastModified], ['"a"', 'Tue, 01 Oct 2024 10:00:00 GMT']);
        assert.equal(e.expiresAt, clock.now() + 600_000);
        assert.equal(srv.requests.length, 2);
      });

      // The cache keeps the validators http-cache-semantics derived when it stored an entry and,
      // when a 304 repeats them, updates the entry without rebuilding the stored policy. Entries
      // without those derived validators (rows written by an older version) go through the
      // library's revalidatedPolicy(). Both must give the same entry, whatever the headers.
      const updates: Array<{ name: string; stored: Record<string, string>; answer: Record<string, string> }> = [
        { name: 'the 304 replaces max-age', stored: { etag: '"a"', 'cache-control': 'max-age=10' }, answer: { etag: '"a"', 'cache-control': 'max-age=600' } },
        {
          name: 'headers the stored response lacked are not added',
          stored: { etag: '"a"', 'cache-control': 'max-age=10' },
          answer: { etag: '"a"', 'cache-control': 'max-age=10', expires: 'Wed, 01 Jan 2031 00:00:00 GMT', 'last-modified': 'Tue, 01 Oct 2024 10:00:00 GMT' },
        },
        { name: 'Age shortens the new lifetime', stored: { etag: 'W/"a"', 'cache-control': 'max-age=100' }, answer: { etag: 'W/"a"', 'cache-control': 'max-age=100', age: '40' } },
        {
          name: 'Last-Modified only, heuristic lifetime',
          stored: { 'last-modified': 'Tue, 01 Oct 2024 10:00:00 GMT' },
          answer: { 'last-modified': 'Tue, 01 Oct 2024 10:00:00 GMT', 'cache-control': 'max-age=5' },
        },
        { name: 'a 304 without validators', stored: { etag: '"a"', 'cache-control': 'max-age=10, stale-if-error=60' }, answer: { 'cache-control': 'max-age=20, must-revalidate' } },
      ];
      for (const u of updates) {
        test(`a matching 304 updates the entry as http-cache-semantics does, with or without the validators kept at store time: ${u.name}`, async () => {
          // Two caches side by side on one clock: one keeps the derived validators, the other's
          // store hands entries back without them.
          const inner = engine.cards(clock);
          const withValidators = cache({ store: engine.cards(clock) });
          const rebuilt = cache({
            store: { get: async (k) => ((e) => e && { ...e, conditional: undefined })(await inner.get(k)), set: (k, e) => inner.set(k, e), delete: (k) => inner.delete(k), keys: () => inner.keys() },
          });
          srv.script(() => ({ status: 200, headers: u.stored, body: card('1.0.0') }));
          const first = await withValidators.get(`${base}a/`);
          await rebuilt.get(`${base}b/`);
          srv.script(() => ({ status: 304, headers: u.answer }));
          // Twice: the second 304 leaves the headers the first stored as they are, which the cache
          // with kept validators reads without building a policy again (issue 43).
          let due = first.expiresAt;
          for (const round of [1, 2]) {
            await clock.advance(due - clock.now() + 1);
            const entries = [];
            for (const [c, b] of [[withValidators, `${base}a/`], [rebuilt, `${base}b/`]] as const) {
              const e = await c.get(b);
              assert.equal(e.lastOutcome, 'revalidated');
              assert.equal(e.validatedAtWall, clock.wallNow());
              entries.push({ cacheHeaders: e.cacheHeaders, expiresAt: e.expiresAt, etag: e.etag, lastModified: e.lastModified, mustRevalidate: e.mustRevalidate, staleIfErrorMs: e.staleIfErrorMs, conditional: e.conditional });
            }
            assert.deepEqual(entries[0]!.expiresAt > clock.now(), true, `round ${round}: fresh again`);
            assert.deepEqual({ ...entries[0], conditional: undefined }, { ...entries[1], conditional: undefined }, `round ${round}`);
            due = entries[0]!.expiresAt;
          }
        });
      }

      test('a 304 to a request that sent no validator is a failure (the stored response had none to send)', async () => {
        srv.script(() => ({ status: 200, headers: { 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        srv.script(() => ({ status: 304, headers: { 'cache-control': 'max-age=600' } }));
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.equal(inm(1), undefined);
        assert.deepEqual([e.stale, e.lastOutcome, e.lastError?.code], [true, 'stale', 'ERR_FETCH_STATUS']);
        assert.match(e.lastError!.message, /304 Not Modified to a request that had no validator/);
      });

      test('a 304 to an unconditional resync is a failure', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        srv.script(() => ({ status: 304, headers: { etag: '"a"' } }));
        const e = await c.refresh(base, { unconditional: true });
        assert.equal(inm(1), undefined);
        assert.deepEqual([e.stale, e.lastError?.code], [true, 'ERR_FETCH_STATUS']);
      });
    });

    describe('no-store keeps nothing (§5.2.2.5)', () => {
      test('no validator is kept or sent, and the card is not served stale after an error', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', 'last-modified': 'Tue, 01 Oct 2024 10:00:00 GMT', 'cache-control': 'no-store' }, body: card('1.0.0') }));
        const c = cache({ minTtlMs: 1_000 });
        const first = await c.get(base);
        assert.deepEqual([first.noStore, first.etag, first.lastModified], [true, undefined, undefined]);
        assert.equal(first.cacheHeaders.etag, undefined, 'no validator in the kept headers either');

        srv.script(() => ({ status: 304, headers: { etag: '"a"' } }));
        await clock.advance(1_500);
        const answered304 = await c.get(base);
        assert.deepEqual([inm(1), srv.requests[1]!.headers['if-modified-since']], [undefined, undefined]);
        assert.equal(answered304.lastError?.code, 'ERR_FETCH_STATUS', 'the stored body is not reused on a 304');
        assert.equal(answered304.usable, false, 'no stale use of a no-store card');

        srv.script(() => ({ status: 503 }));
        const failed = await c.refresh(base);
        assert.deepEqual([failed.stale, failed.usable], [true, false]);
      });
    });

    describe('Vary (§4.1)', () => {
      test('Vary: * never matches: the next request is unconditional', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', vary: '*', 'cache-control': 'max-age=10' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.equal(inm(1), undefined);
        assert.equal(e.lastOutcome, 'unchanged');
      });

      test('Vary on a request header we send: reused while it matches, not after it changed', async () => {
        srv.script((req): Answer =>
          req.headers['if-none-match'] === '"a"'
            ? { status: 304, headers: { etag: '"a"', vary: 'a2a-version' } }
            : { status: 200, headers: { etag: '"a"', vary: 'a2a-version', 'cache-control': 'max-age=10' }, body: card('1.0.0') },
        );
        const store = engine.cards(clock);
        const c1 = cache({ store });
        await c1.get(base);
        await clock.advance(11_000);
        assert.equal((await c1.get(base)).lastOutcome, 'revalidated');
        assert.equal(inm(1), '"a"');

        // Another cache on the same store sends another value of the varying header.
        const c2 = cache({ store, requestHeaders: { 'a2a-version': '0.3' } });
        await c2.refresh(base);
        assert.equal(inm(2), undefined, 'the stored response does not match this request: no validator');
      });
    });

    describe('directives of a private cache', () => {
      test('proxy-revalidate applies to shared caches only: the card is still served stale after an error', async () => {
        srv.script(() => ({ status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=10, proxy-revalidate' }, body: card('1.0.0') }));
        const c = cache();
        await c.get(base);
        srv.script(() => ({ status: 503 }));
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.deepEqual([e.stale, e.usable], [true, true]);
      });

      test('s-maxage alone says nothing to a private cache: the default lifetime applies', async () => {
        srv.script(() => ({ status: 200, headers: { 'cache-control': 's-maxage=600' }, body: card('1.0.0') }));
        const e = await cache({ defaultTtlMs: 300_000 }).get(base);
        assert.equal(e.expiresAt, clock.now() + 300_000);
      });
    });
  });
}
