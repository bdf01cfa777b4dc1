/**
 * Card URLs (issue #10): the A2A 0.2 `.well-known/agent.json` fallback after a 404, remembered
 * per endpoint; and endpoints given by their card's own URL, from a static entry or a registry
 * record, through the resolver, the cache and a DiscoveryLoop, against a scripted loopback server.
 */
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { registrySource, staticSource } from '../../packages/core/src/sources/index.js';
import { cardFor } from '../helpers/cards.js';
import { storeEngines } from '../helpers/stores.js';
import { startScriptedServer } from './scripted-server.js';

for (const engine of storeEngines()) {
  describe(`card URLs (${engine.name} store)`, { skip: engine.skip }, () => {
    let srv: Awaited<ReturnType<typeof startScriptedServer>>;
    let policy: HostPolicy;
    let fetcher: CardFetcher;
    let clock: VirtualClock;
    const caches: CardCache[] = [];
    let n = 0;
    let id: string;
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
      id = `u${++n}`;
      base = `${srv.origin}/${id}/`;
      srv.requests.length = 0;
    });
    afterEach(async () => {
      await Promise.all(caches.splice(0).map((c) => c.close()));
    });

    function cache(options: Partial<CardCacheOptions> = {}): CardCache {
      const c = new CardCache({ fetcher, hostPolicy: policy, store: engine.cards(clock), clock, random: () => 1, expiryJitter: 0, backoffJitter: 0, minTtlMs: 0, check: { allowLoopback: true }, ...options });
      caches.push(c);
      return c;
    }
    const card = (extra: Record<string, unknown> = {}) => cardFor(srv, id, { skills: [{ id, name: id, description: 'Helps.', tags: ['support'] }], ...extra });
    const paths = () => srv.requests.map((r) => r.path.slice(r.path.indexOf('/', 1) + 1));
    /** Serves the card at the given paths (relative to the endpoint), 404 elsewhere. */
    const serveAt = (...at: string[]) =>
      srv.script((req, path) =>
        at.includes(path.slice(path.indexOf('/', 1) + 1))
          ? req.headers['if-none-match'] === '"v1"'
            ? { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=10' } }
            : { status: 200, headers: { etag: '"v1"', 'cache-control': 'max-age=10' }, body: card() }
          : { status: 404, body: { error: 'not found' } },
      );

    describe('the A2A 0.2 path', () => {
      test('a 404 at agent-card.json is followed by agent.json, which is remembered: the next refresh costs one request', async () => {
        serveAt('.well-known/agent.json');
        const c = cache();
        const first = await c.get(base);
        assert.deepEqual(paths(), ['.well-known/agent-card.json', '.well-known/agent.json']);
        assert.equal(first.cardUrl, `${base}.well-known/agent.json`);
        assert.equal(first.protocolVersion, '0.3', 'a card with protocolVersion is read as such, whatever the path');
        assert.equal(first.baseUrl, base);

        await clock.advance(11_000);
        const second = await c.get(base);
        assert.deepEqual(paths().slice(2), ['.well-known/agent.json'], 'straight to agent.json');
        assert.equal(srv.requests[2]!.headers['if-none-match'], '"v1"', 'conditional, under the same HTTP rules');
        assert.equal(second.lastOutcome, 'revalidated');
      });

      test('when agent.json later answers 404, agent-card.json is tried again and remembered', async () => {
        serveAt('.well-known/agent.json');
        const c = cache();
        await c.get(base);
        serveAt('.well-known/agent-card.json');
        await clock.advance(11_000);
        const e = await c.get(base);
        assert.deepEqual(paths().slice(2), ['.well-known/agent.json', '.well-known/agent-card.json']);
        assert.equal(srv.requests[3]!.headers['if-none-match'], undefined, 'validators belong to the other URL');
        assert.equal(e.cardUrl, `${base}.well-known/agent-card.json`);
        assert.equal(e.lastOutcome, 'unchanged', 'the same bytes: the parsed card is kept');
      });

      test('404 at both paths: one failure naming both answers', async () => {
        serveAt();
        await assert.rejects(cache().get(base), (err) => isDiscoveryError(err) && err.status === 404 && /agent-card\.json answered HTTP 404 \(and .*agent\.json answered HTTP 404\)/.test(err.message));
        assert.equal(srv.requests.length, 2);
      });

      test('legacyCardPath: false tries agent-card.json only', async () => {
        serveAt('.well-known/agent.json');
        await assert.rejects(cache({ legacyCardPath: false }).get(base), /HTTP 404/);
        assert.deepEqual(paths(), ['.well-known/agent-card.json']);
      });
    });

    describe('an endpoint given by its card URL', () => {
      test('is keyed by the normalized card URL and fetched exactly there, without a fallback', async () => {
        serveAt('api/.well-known/x/agent-card.json');
        const cardUrl = `${base}api/.well-known/x/agent-card.json`;
        const c = cache();
        assert.equal(c.key(`${cardUrl}#frag`), cardUrl);
        const e = await c.get(cardUrl);
        assert.deepEqual([e.baseUrl, e.cardUrl], [cardUrl, cardUrl]);
        assert.deepEqual(paths(), ['api/.well-known/x/agent-card.json']);

        serveAt();
        await assert.rejects(cache().get(cardUrl), /HTTP 404/);
        assert.equal(srv.requests.length, 2, 'a 404 at a given card URL is not followed by any other path');
      });

      test('outside the allowlist it is refused before any request; a redirect is refused', async () => {
        await assert.rejects(cache().get('https://evil.example.net/.well-known/agent-card.json'), (err) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED');
        srv.script(() => ({ status: 302, headers: { location: `${base}.well-known/agent-card.json` } }));
        await assert.rejects(cache().get(`${base}cards/finance.json`), (err) => isDiscoveryError(err) && err.code === 'ERR_REDIRECT_REFUSED');
      });

      test('the resolver dedupes by normalized card URL, keeps it apart from a base URL, and admits only allowlisted origins', () => {
        const cardUrl = `${base}.well-known/finance/agent-card.json`;
        const { admitted, refused } = resolveEndpoints(
          [
            [
              { name: 'finance', baseUrl: cardUrl, source: 'static', metadata: {} },
              { name: 'base', baseUrl: base, source: 'static', metadata: {} },
            ],
            [
              { name: 'finance-again', baseUrl: `${base}x/../.well-known/finance/agent-card.json`, source: 'catalog', metadata: {} },
              { name: 'finance-frag', baseUrl: `${cardUrl}#top`, source: 'catalog', metadata: {} },
              { name: 'outside', baseUrl: 'https://evil.example.net/.well-known/agent-card.json', source: 'catalog', metadata: {} },
            ],
          ],
          policy,
        );
        const finance = admitted.find((a) => a.baseUrl === cardUrl);
        assert.ok(finance);
        assert.deepEqual(finance.records.map((r) => r.name), ['finance', 'finance-again', 'finance-frag']);
        assert.deepEqual(finance.sources, ['static', 'catalog']);
        assert.ok(admitted.some((a) => a.baseUrl === base), 'a base URL stays its own endpoint');
        assert.deepEqual(refused.map((r) => [r.record.name, r.code]), [['outside', 'ERR_HOST_NOT_ALLOWED']]);
      });

      test('static entries take cardUrl (exactly one of url and cardUrl), and a DiscoveryLoop selects the agent fetched there', async () => {
        assert.throws(() => staticSource({ agents: [{ name: 'both', url: base, cardUrl: `${base}a.json`, description: 'x', tags: ['support'] }] }), /agents\[0\]\.cardUrl: give either url/);
        assert.throws(() => staticSource({ agents: [{ name: 'none', description: 'x', tags: ['support'] }] }), /agents\[0\]\.url: is required/);
        assert.throws(() => staticSource({ agents: [{ name: 'notjson', cardUrl: `${base}card`, description: 'x', tags: ['support'] }] }), /path must end in \.json/);
        assert.throws(() => staticSource({ agents: [{ name: 'jsonbase', url: `${base}card.json`, description: 'x', tags: ['support'] }] }), /give it as cardUrl/);

        serveAt('.well-known/finance/agent-card.json');
        const cardUrl = `${base}.well-known/finance/agent-card.json`;
        const c = cache();
        const loop = new DiscoveryLoop({
          sources: [staticSource({ agents: [{ name: 'finance', cardUrl, description: 'Reviewed finance.', tags: ['support'] }] })],
          hostPolicy: policy,
          cache: c,
          select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
          clock,
          cycleIntervalMs: 86_400_000,
          resyncIntervalMs: 86_400_000,
        });
        try {
          await loop.start();
          await loop.refreshNow();
          assert.deepEqual((loop.current()?.agents ?? []).map((a) => a.localName), ['finance']);
          assert.deepEqual(paths(), ['.well-known/finance/agent-card.json']);
          assert.equal((await c.peek(cardUrl))?.cardUrl, cardUrl);
        } finally {
          await loop.stop();
        }
      });

      test('a registry record gives cardUrl; one whose cardUrl is not a card URL is skipped with a problem', async () => {
        const cardUrl = `${base}.well-known/x/agent-card.json`;
        srv.script((_req, path) =>
          path.endsWith('/catalog')
            ? { status: 200, body: { agents: [{ name: 'x', cardUrl }, { name: 'bad', cardUrl: `${base}card?x=1` }, { name: 'base', url: base }] } }
            : { status: 404 },
        );
        const source = registrySource({ id: 'catalog', url: `${base}catalog`, fetcher });
        const state = await source.refresh();
        assert.deepEqual(state.records.map((r) => [r.name, r.baseUrl]), [['x', cardUrl], ['base', base]]);
        assert.deepEqual(state.problems?.map((p) => p.path), ['pages[0].records[1].cardUrl']);
        await source.close();
      });
    });
  });
}
