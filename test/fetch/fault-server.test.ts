import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';

// The fault server is shared by later suites (cache, benchmarks): its modes must do what they say.
describe('fault server helper', () => {
  let server: FaultServer;
  let fetcher: CardFetcher;

  before(async () => {
    server = await startFaultServer();
    fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: [server.origin], allowLoopback: true }), maxConnectionsPerOrigin: 16 });
  });
  after(async () => {
    await fetcher.close();
    await server.close();
  });

  test('ok: strong ETag from the body, caching headers, 304 on match, new ETag after setCard', async () => {
    const ep = server.endpoint('ok', {
      card: { name: 'A' },
      cacheControl: 'max-age=300',
      age: 10,
      date: 'Mon, 01 Jan 2024 00:00:00 GMT',
      lastModified: 'Sun, 31 Dec 2023 00:00:00 GMT',
    });
    const first = await fetcher.fetch(ep.cardUrl);
    assert.equal(first.status, 200);
    assert.match(first.headers['etag'] ?? '', /^"[0-9a-f]{16}"$/);
    assert.equal(first.headers['cache-control'], 'max-age=300');
    assert.equal(first.headers['age'], '10');
    assert.equal(first.headers['date'], 'Mon, 01 Jan 2024 00:00:00 GMT');
    assert.equal(first.headers['last-modified'], 'Sun, 31 Dec 2023 00:00:00 GMT');
    const etag = first.headers['etag'] as string;
    assert.equal((await fetcher.fetch(ep.cardUrl, { headers: { 'if-none-match': `"other", ${etag}` } })).status, 304);
    ep.setCard({ name: 'B' });
    const changed = await fetcher.fetch(ep.cardUrl, { headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers['etag'], etag);
    assert.equal(ep.hits, 3);
    assert.equal(ep.requests.length, 3);
    ep.reset();
    assert.equal(ep.hits, 0);
  });

  test('etag-churn changes the ETag every time; etag-stuck answers 304 even after a change', async () => {
    const churn = server.endpoint('churn', { mode: 'etag-churn' });
    const e1 = (await fetcher.fetch(churn.cardUrl)).headers['etag'];
    const r2 = await fetcher.fetch(churn.cardUrl, { headers: { 'if-none-match': e1 as string } });
    assert.equal(r2.status, 200);
    assert.notEqual(r2.headers['etag'], e1);

    const stuck = server.endpoint('stuck', { mode: 'etag-stuck' });
    const first = await fetcher.fetch(stuck.cardUrl);
    stuck.setCard({ name: 'changed' });
    const again = await fetcher.fetch(stuck.cardUrl, { headers: { 'if-none-match': first.headers['etag'] as string } });
    assert.equal(again.status, 304);
  });

  test('status, malformed, legacy path, unknown ids and latency', async () => {
    const ep = server.endpoint('modes', { mode: 'status', status: 503, headers: { 'retry-after': '5' } });
    const res = await fetcher.fetch(ep.cardUrl);
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '5');
    ep.set({ mode: 'malformed' });
    const bad = await fetcher.fetch(ep.cardUrl);
    assert.throws(() => JSON.parse(bad.body.toString()), SyntaxError);
    ep.set({ mode: 'ok', latencyMs: 60 });
    const started = performance.now();
    const legacy = await fetcher.fetch(`${ep.baseUrl}.well-known/agent.json`);
    assert.equal(legacy.status, 200);
    assert.ok(performance.now() - started >= 55);
    assert.equal((await fetcher.fetch(`${server.origin}/nobody/.well-known/agent-card.json`)).status, 404);
  });

  test('serves 1,000 endpoints and 3,000 requests quickly', async () => {
    const endpoints = Array.from({ length: 1000 }, (_, i) => server.endpoint(`bulk-${i}`, { card: { name: `agent ${i}` }, cacheControl: 'max-age=60' }));
    const started = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < 3000; i = next++) {
        const ep = endpoints[i % endpoints.length];
        assert.ok(ep);
        const res = await fetcher.fetch(ep.cardUrl);
        assert.equal(res.status, 200);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const elapsed = performance.now() - started;
    assert.equal(endpoints.reduce((n, ep) => n + ep.hits, 0), 3000);
    assert.ok(elapsed < 10_000, `3,000 requests took ${Math.round(elapsed)} ms`);
  });
});
