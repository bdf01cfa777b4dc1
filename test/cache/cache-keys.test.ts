/**
 * The card cache's keys: an endpoint it holds an entry for is named by its key without being
 * judged again (the loop asks for every endpoint on every cycle), but only under the host
 * policy's rules in force: once the allowlist changes (a reload), every key is judged again, and a
 * host no longer allowed is refused even though its entry is held.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';

let fs: FaultServer;
before(async () => {
  fs = await startFaultServer();
});
after(async () => {
  await fs.close();
});

test('a held key is served as itself while the rules stand; after policy.update() removes its host it is refused', async () => {
  const policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  const fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000 });
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock: new VirtualClock(), random: () => 0, check: { allowLoopback: true } });
  try {
    const ep = fs.endpoint('keys1', { card: cardFor(fs, 'keys1'), cacheControl: 'max-age=60' });
    const entry = await cache.get(ep.baseUrl);
    // The key, and the same endpoint written another way, reach the one entry.
    assert.equal(cache.fresh(entry.baseUrl), entry);
    assert.equal(cache.key(entry.baseUrl.slice(0, -1)), entry.baseUrl);
    assert.equal(ep.hits, 1);

    policy.update(HostPolicy.from({ allow: ['https://elsewhere.example.com'], allowLoopback: true }));
    assert.throws(() => cache.fresh(entry.baseUrl), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED', 'the held key is judged by the new rules');
    await assert.rejects(cache.get(entry.baseUrl), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED');

    // Allowed again: judged again, and served from the entry held.
    policy.update(HostPolicy.from({ allow: [fs.origin], allowLoopback: true }));
    assert.equal(cache.fresh(entry.baseUrl), entry);
    assert.equal(ep.hits, 1);
  } finally {
    await cache.close();
    await fetcher.close();
  }
});
