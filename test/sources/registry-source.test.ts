import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registrySource, simpleCatalogAdapter, type RegistryAdapter, type SourceState } from '../../packages/core/src/sources/index.js';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { EventStream, type AlertEvent, type DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { startJsonServer } from '../helpers/json-server.js';

const startCatalogServer = startJsonServer;

describe('registry source against a loopback catalog server', () => {
  let server: Awaited<ReturnType<typeof startCatalogServer>>;
  let fetcher: CardFetcher;
  let events: EventStream;
  let seen: DiscoveryEvent[];
  const sources: Array<{ close(): Promise<void> }> = [];
  const make = (options: Partial<Parameters<typeof registrySource>[0]> = {}) => {
    const source = registrySource({ id: 'catalog', url: `${server.origin}/agents`, fetcher, events, ...options });
    sources.push(source);
    return source;
  };
  const alerts = (kind: string) => seen.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === kind);

  before(async () => {
    server = await startCatalogServer();
    // localhost is allowlisted too, so the cross-origin test shows the source refusing, not the fetcher.
    fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: [server.origin, `http://localhost:${server.port}`], allowLoopback: true }) });
  });
  beforeEach(() => {
    server.routes.clear();
    server.requests.length = 0;
    events = new EventStream();
    seen = [];
    events.subscribe((e) => seen.push(e));
  });
  after(async () => {
    await Promise.all(sources.map((s) => s.close()));
    await fetcher.close();
    await server.close();
  });

  function threePages(): void {
    server.routes.set('/agents', {
      body: { agents: [{ name: 'billing', url: 'https://billing.example.com/', tags: ['billing', 'invoices'] }], next: `${server.origin}/agents?page=2` },
    });
    server.routes.set('/agents?page=2', { body: { agents: [{ name: 'weather', url: 'https://weather.example.com/a2a' }], next: '/agents?page=3' } });
    server.routes.set('/agents?page=3', { body: { agents: [{ name: 'travel', url: 'https://travel.example.com/', tags: [] }], next: null } });
  }

  test('pages over 3 pages (absolute and relative next), in catalog order, with headers sent', async () => {
    threePages();
    const source = make({ headers: { 'x-api-key': 'k1' } });
    assert.equal(source.kind, 'registry');
    assert.equal(source.pollIntervalMs, 300_000);
    assert.equal(source.current().synced, false);
    const notified: SourceState[] = [];
    source.subscribe((s) => notified.push(s));
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.equal(state.synced, true);
    assert.ok(typeof state.updatedAt === 'number');
    assert.deepEqual(state.records, [
      { name: 'billing', baseUrl: 'https://billing.example.com/', source: 'catalog', metadata: { registry: 'simple', tags: 'billing,invoices' } },
      { name: 'weather', baseUrl: 'https://weather.example.com/a2a', source: 'catalog', metadata: { registry: 'simple' } },
      { name: 'travel', baseUrl: 'https://travel.example.com/', source: 'catalog', metadata: { registry: 'simple' } },
    ]);
    assert.deepEqual(
      server.requests.map((r) => r.path),
      ['/agents', '/agents?page=2', '/agents?page=3'],
    );
    assert.ok(server.requests.every((r) => r.headers['x-api-key'] === 'k1'));
    assert.equal(notified.length, 1);

    // Same catalog again: no notification; a change: one notification.
    await source.refresh();
    assert.equal(notified.length, 1);
    server.routes.set('/agents?page=3', { body: { agents: [] } });
    const changed = await source.refresh();
    assert.equal(changed.records.length, 2);
    assert.equal(notified.length, 2);
    assert.equal(alerts('source-error').length, 0);
  });

  test('a failing page keeps the last good list, sets error and alerts; the list is never emptied by a failure', async () => {
    threePages();
    const source = make();
    const good = await source.refresh();
    assert.equal(good.records.length, 3);
    let notified = 0;
    source.subscribe(() => notified++);

    server.routes.set('/agents?page=2', { status: 503, body: 'busy' });
    const failed = await source.refresh();
    assert.equal(failed.ok, false);
    assert.equal(failed.records, good.records, 'the previous good list, unchanged');
    assert.equal(failed.synced, true);
    assert.equal(failed.updatedAt, good.updatedAt);
    assert.equal(failed.error?.code, 'ERR_FETCH_STATUS');
    assert.equal(failed.error?.status, 503);
    assert.match(failed.error?.message ?? '', /page=2 answered 503/);
    assert.equal(notified, 0);
    const [alert] = alerts('source-error');
    assert.ok(alert);
    assert.equal(alert.detail?.['source'], 'catalog');
    assert.equal(alert.detail?.['code'], 'ERR_FETCH_STATUS');
    assert.equal(alert.detail?.['kept'], 3);

    // Page 1 unreachable entirely (404), then the network itself: still the same list.
    server.routes.delete('/agents');
    assert.equal((await source.refresh()).records, good.records);
    const offlineFetcher = createCardFetcher({ policy: HostPolicy.from({ allow: ['http://127.0.0.1:1'], allowLoopback: true }) });
    const offline = registrySource({ id: 'offline', url: 'http://127.0.0.1:1/agents', fetcher: offlineFetcher });
    const offState = await offline.refresh();
    assert.equal(offState.ok, false);
    assert.equal(offState.error?.code, 'ERR_FETCH_NETWORK');
    assert.equal(offState.records.length, 0);
    assert.equal(offState.synced, false);
    await offline.close();
    await offlineFetcher.close();

    // Recovery replaces the list and clears the error.
    threePages();
    const recovered = await source.refresh();
    assert.equal(recovered.ok, true);
    assert.equal(recovered.error, undefined);
  });

  test('a next page on another origin is refused before it is fetched', async () => {
    server.routes.set('/agents', { body: { agents: [{ name: 'a', url: 'https://a.example.com/' }], next: `http://localhost:${server.port}/agents?page=2` } });
    server.routes.set('/agents?page=2', { body: { agents: [] } });
    const state = await make().refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_HOST_NOT_ALLOWED');
    assert.match(state.error?.message ?? '', /refused next page http:\/\/localhost:\d+\/agents\?page=2 on another origin/);
    assert.deepEqual(state.records, []);
    assert.deepEqual(
      server.requests.map((r) => r.path),
      ['/agents'],
    );
  });

  test('malformed JSON and wrong shapes are reported with what was wrong', async () => {
    threePages();
    const source = make();
    await source.refresh();

    server.routes.set('/agents?page=2', { body: '{"agents": [ {"name": "x", ' });
    let state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_CARD_MALFORMED');
    assert.equal(state.error?.stage, 'source');
    assert.match(state.error?.message ?? '', /registry page http:\/\/127\.0\.0\.1:\d+\/agents\?page=2: not valid JSON/);
    assert.equal(state.records.length, 3);

    server.routes.set('/agents?page=2', {
      body: { agents: [{ name: '', url: 'https://x.example/' }, { name: 'y', url: 42, tags: 'a' }, { name: 'z', url: 'https://z.example/', tags: ['ok', 'a,b'] }, 7], next: 5 },
    });
    state = await source.refresh();
    assert.equal(state.error?.code, 'ERR_CARD_INVALID');
    assert.deepEqual(
      state.error?.problems.map((p) => p.path),
      ['agents[0].name', 'agents[1].url', 'agents[1].tags', 'agents[2].tags[1]', 'agents[3]', 'next'],
    );
    assert.match(state.error?.message ?? '', /agents\[0\]\.name: must be a non-empty string/);
    assert.equal(state.records.length, 3);

    server.routes.set('/agents?page=2', { body: [1, 2] });
    state = await source.refresh();
    assert.equal(state.error?.code, 'ERR_CARD_INVALID');
    assert.match(state.error?.message ?? '', /must be an object with an "agents" array, got an array/);
    assert.equal(state.records.length, 3);
    assert.equal(alerts('source-error').length, 1, 'edge-triggered: one alert while the source keeps failing');
    assert.equal(alerts('source-error')[0]?.key, 'source-error:catalog');
    assert.equal(seen.filter((e) => e.type === 'alert.resolved').length, 0);

    threePages();
    assert.equal((await source.refresh()).ok, true);
    const resolved = seen.filter((e) => e.type === 'alert.resolved');
    assert.deepEqual(
      resolved.map((e) => (e.type === 'alert.resolved' ? [e.kind, e.key] : [])),
      [['source-error', 'source-error:catalog']],
      'a good list resolves it',
    );
    server.routes.set('/agents?page=2', { status: 503, body: 'busy' });
    await source.refresh();
    assert.equal(alerts('source-error').length, 2, 'the next failure raises it again');
  });

  test('an entry with a syntactically impossible URL is dropped with a reported problem; the rest are kept', async () => {
    server.routes.set('/agents', {
      body: { agents: [{ name: 'ok', url: 'https://ok.example.com/' }, { name: 'rel', url: '/relative' }, { name: 'mail', url: 'mailto:x@example.com' }] },
    });
    const source = make();
    const state = await source.refresh();
    assert.equal(state.ok, true);
    assert.deepEqual(
      state.records.map((r) => r.name),
      ['ok'],
    );
    assert.deepEqual(
      state.problems?.map((p) => p.path),
      ['pages[0].records[1].url', 'pages[0].records[2].url'],
    );
    assert.match(state.problems?.[0]?.message ?? '', /"\/relative" is not an absolute URL/);
    assert.equal(alerts('source-problem').length, 2);
    await source.refresh();
    assert.equal(alerts('source-problem').length, 2, 'the same problems are alerted once');
  });

  test('paging is bounded: more than maxPages, or a loop, fails the refresh', async () => {
    server.routes.set('/agents', { body: { agents: [], next: '/agents?page=2' } });
    server.routes.set('/agents?page=2', { body: { agents: [], next: '/agents?page=3' } });
    server.routes.set('/agents?page=3', { body: { agents: [], next: '/agents' } });
    let state = await make({ maxPages: 2 }).refresh();
    assert.equal(state.error?.code, 'ERR_CARD_TOO_LARGE');
    assert.match(state.error?.message ?? '', /more than maxPages=2 pages/);
    state = await make().refresh();
    assert.equal(state.error?.code, 'ERR_CARD_INVALID');
    assert.match(state.error?.message ?? '', /already read \(a paging loop\)/);
  });

  test('the fetcher allowlist applies to the catalog itself', async () => {
    const source = make({ url: 'http://127.0.0.2:9/agents' });
    const state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_HOST_NOT_ALLOWED');
  });

  test('concurrent refreshes share one read; close() stops further I/O', async () => {
    threePages();
    const source = make();
    const [a, b] = await Promise.all([source.refresh(), source.refresh()]);
    assert.equal(a, b);
    assert.equal(server.requests.length, 3);
    await source.close();
    await source.refresh();
    assert.equal(server.requests.length, 3);
  });

  test('a custom adapter plugs in: firstPage and parse, its errors wrapped', async () => {
    server.routes.set('/v1/list?pageSize=2', { body: { items: [{ id: 'x', endpoint: 'https://x.example/' }], nextPageToken: 't2' } });
    server.routes.set('/v1/list?pageSize=2&pageToken=t2', { body: { items: [{ id: 'y', endpoint: 'https://y.example/' }] } });
    const adapter: RegistryAdapter = {
      name: 'token-paged',
      firstPage: (url) => `${url}?pageSize=2`,
      parse(body, pageUrl) {
        const doc = JSON.parse(body.toString()) as { items: Array<{ id: string; endpoint: string }>; nextPageToken?: string };
        const next = new URL(pageUrl);
        next.searchParams.set('pageToken', doc.nextPageToken ?? '');
        return { records: doc.items.map((i) => ({ name: i.id, url: i.endpoint })), ...(doc.nextPageToken !== undefined && { next: next.href }) };
      },
    };
    const source = make({ url: `${server.origin}/v1/list`, adapter });
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(
      state.records.map((r) => [r.name, r.metadata['registry']]),
      [
        ['x', 'token-paged'],
        ['y', 'token-paged'],
      ],
    );
    server.routes.set('/v1/list?pageSize=2', { body: 'not json' });
    const failed = await source.refresh();
    assert.equal(failed.error?.code, 'ERR_CARD_INVALID');
    assert.match(failed.error?.message ?? '', /registry adapter parse failed/);
    assert.ok(failed.error?.cause instanceof SyntaxError);
    assert.equal(failed.records.length, 2);
  });

  test('options are validated at construction, every problem listed', () => {
    try {
      registrySource({ id: 'bad id', url: 'ftp://x', fetcher: {} as CardFetcher, adapter: {} as RegistryAdapter, maxPages: 0, headers: { a: 1 as unknown as string } });
      assert.fail('expected ERR_CONFIG_INVALID');
    } catch (err) {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_CONFIG_INVALID');
      assert.deepEqual(
        err.problems.map((p) => p.path),
        ['id', 'url', 'fetcher', 'adapter', 'maxPages', 'headers["a"]'],
      );
    }
  });

  test('simpleCatalogAdapter resolves a relative next against the page', () => {
    const page = simpleCatalogAdapter.parse(Buffer.from(JSON.stringify({ agents: [{ name: 'a', url: 'https://a.example/', tags: ['t'] }], next: '?page=2' })), 'https://r.example/agents?page=1');
    assert.deepEqual(page, { records: [{ name: 'a', url: 'https://a.example/', tags: ['t'] }], next: 'https://r.example/agents?page=2' });
    assert.equal(simpleCatalogAdapter.firstPage('https://r.example/agents'), 'https://r.example/agents');
  });
});
