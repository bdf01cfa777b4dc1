/**
 * A card cache's options with gaps: an option given as `undefined` (a JavaScript caller, or
 * options assembled from a configuration that leaves a key out) takes its default, as an option
 * left out does. Before, it overrode the default with `undefined`: a cache given
 * `maxConcurrentFetches: undefined` never started a fetch.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { startFaultServer } from '../helpers/fault-server.js';
import type { FaultServer } from '../helpers/fault-server.js';
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

test('an option given as undefined takes its default: the card is fetched, kept and served fresh', { timeout: 15_000 }, async () => {
  const ep = fs.endpoint('gaps', { card: cardFor(fs, 'gaps'), cacheControl: 'max-age=600' });
  const gaps = {
    fetcher,
    hostPolicy: policy,
    check: { allowLoopback: true },
    store: undefined,
    clock: undefined,
    random: undefined,
    minTtlMs: undefined,
    maxTtlMs: undefined,
    maxConcurrentFetches: undefined,
    maxFetchesPerOrigin: undefined,
    requestHeaders: undefined,
    hitEvents: undefined,
  } as unknown as CardCacheOptions;
  const c = new CardCache(gaps);
  try {
    const first = await c.get(ep.baseUrl);
    assert.equal(first.lastOutcome, 'changed');
    assert.ok(first.expiresAt > performance.now(), 'kept fresh for its max-age, within the default bounds');
    const again = await c.get(ep.baseUrl);
    assert.equal(again, first, 'the same entry, served fresh');
    assert.equal(ep.hits, 1, 'one request');
  } finally {
    await c.close();
  }
});
