/**
 * What the default upstream budget (20 requests/s, burst 100 per origin) costs a normal discovery
 * cycle: measured, not assumed. 1,000 endpoints spread over 32 loopback origins, a cold cycle
 * (every card fetched) then a warm one, through the real card cache and loop, the budget shared by
 * the cache's fetcher as in the service. Counted: requests per origin, and the requests that had
 * to wait or were refused (none may).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock, systemClock } from '../../packages/core/src/clock/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { createCardFetcher, HostPolicy, OriginBudget } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { UPSTREAM_DEFAULTS } from '../../packages/core/src/rules/defaults.js';
import { cardFor } from '../helpers/cards.js';
import { listSource } from '../helpers/list-source.js';

const ORIGINS = 32;
const ENDPOINTS = 1_000;
const servers: Server[] = [];
const origins: string[] = [];
const received = new Map<string, number>();

before(async () => {
  for (let i = 0; i < ORIGINS; i++) {
    const server = createServer((req, res) => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      received.set(origin, (received.get(origin) ?? 0) + 1);
      const id = /^\/([^/]+)\/\.well-known\/agent-card\.json$/.exec(req.url ?? '')?.[1];
      if (!id) return void res.writeHead(404).end();
      const body = JSON.stringify(cardFor({ origin }, id, { skills: [{ id, name: id, description: 'x', tags: ['support'] }] }));
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
});
after(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

test('a cold cycle of 1,000 endpoints on 32 origins, then a warm one: nothing waits or is refused under the default budget', async (t) => {
  const clock = new VirtualClock();
  // The budget on real time (the loop's clock is virtual; a wait would be real).
  const budget = new OriginBudget({ requestsPerSecond: UPSTREAM_DEFAULTS.originRequestsPerSecond, burst: UPSTREAM_DEFAULTS.originBurst, clock: systemClock });
  const policy = HostPolicy.from({ allow: origins, allowLoopback: true });
  const fetcher = createCardFetcher({ policy, originBudget: { budget, maxWaitMs: UPSTREAM_DEFAULTS.originMaxWaitMs, caller: 'discovery' } });
  const events = new EventStream({ wallNow: () => clock.wallNow() });
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events, random: () => 0, check: { allowLoopback: true } });
  const registry = listSource('registry');
  registry.set(Array.from({ length: ENDPOINTS }, (_, i) => ({ name: `a${i}`, baseUrl: `${origins[i % ORIGINS]}/a${i}/` })));
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy: policy,
    cache,
    select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
    clock,
    events,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  try {
    await loop.start();
    await loop.refreshNow();
    const cold = Math.max(...received.values());
    // A minute later (the cards' max-age) every card is refetched once more.
    await clock.advance(61_000);
    await loop.refreshNow();
    const total = [...received.values()].reduce((a, b) => a + b, 0);
    t.diagnostic(`requests: ${total} in all, at most ${cold} per origin in the cold cycle; budget ${JSON.stringify(budget.stats)}`);
    assert.equal(total, 2 * ENDPOINTS, 'every card fetched in each cycle');
    assert.equal((await loop.status()).filter((s) => s.cache?.usable === true && s.lastFailure === undefined).length, ENDPOINTS, 'every card usable, no failure');
    assert.ok(cold <= UPSTREAM_DEFAULTS.originBurst, `${cold} requests to one origin in a cycle`);
    assert.deepEqual(budget.stats.waited, {}, 'no request waited');
    assert.deepEqual(budget.stats.exhausted, {}, 'no request was refused');
  } finally {
    await loop.stop();
    await cache.close();
    await fetcher.close();
  }
});
