/**
 * The service announces its own AI Catalog (issue 26, ARD spec §6.1; ARD 0.91) when
 * `server.catalog` is on: a `Link: </.well-known/ard.json>; rel="ard", </.well-known/ai-catalog.json>;
 * rel="ai-catalog"` header on its pages and `/`, a `/robots.txt` with an `Agentmap:` line (the
 * absolute URL of `ard.json`) that disallows nothing, and its ARD registry listed in
 * the catalog as an `application/ai-registry+json` entry (`server.catalog.registryUrl`, default
 * `/api/registry/`). Off, none of it. The announcements read back with the source's own parsers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readAiCatalog, AI_CATALOG_MEDIA_TYPE } from '../../packages/core/src/catalog/index.js';
import { AI_REGISTRY_MEDIA_TYPE } from '../../packages/core/src/ard/wire.js';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { agentmapsInRobots, catalogLinksInHeader } from '../../packages/core/src/sources/catalog-announcements.js';
import { HostPolicy, createCardFetcher } from '../../packages/core/src/fetch/index.js';
import { aiCatalogSource } from '../../packages/core/src/sources/index.js';
import { startService, type RunningService, type ServiceOptions } from '../../packages/service/src/index.js';
import { startJsonServer } from '../helpers/json-server.js';
import { createTestCertificate } from '../helpers/tls.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkPeer, type RunningPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { request } from '../helpers/raw-http.js';

let billing: RunningPeer;
before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
});
after(async () => {
  await billing?.close();
});

function service(extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    port: 0,
    policy: { allow: [new URL(billing.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
    needs: [{ tag: 'billing' }],
    static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
}

describe('the service announces its catalog', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ catalog: { enabled: true, hostName: 'Example discovery' } });
  });
  after(async () => {
    await s?.close();
  });

  test('its root page and other pages carry the Link header; the link resolves to the catalog', async () => {
    for (const path of ['/', '/index.html', '/no-such-page']) {
      const r = await request(s.url, 'GET', path);
      const link = String(r.headers.link ?? '');
      assert.match(link, /<\/\.well-known\/ard\.json>; rel="ard"/, path);
      assert.match(link, /<\/\.well-known\/ai-catalog\.json>; rel="ai-catalog"/, path);
      assert.deepEqual(catalogLinksInHeader(link, `${s.url}/`), [`${s.url}/.well-known/ard.json`, `${s.url}/.well-known/ai-catalog.json`], `${path}: rel="ard" first`);
    }
    assert.equal((await request(s.url, 'GET', '/')).status, 200);
    const catalog = await request(s.url, 'GET', '/.well-known/ai-catalog.json');
    assert.equal(catalog.headers['content-type'], AI_CATALOG_MEDIA_TYPE);
  });

  test('robots.txt names the catalog in an Agentmap line and disallows nothing', async () => {
    const r = await request(s.url, 'GET', '/robots.txt');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    assert.deepEqual(agentmapsInRobots(r.body, `${s.url}/robots.txt`), [`${s.url}/.well-known/ard.json`]);
    assert.match(r.body, /^Agentmap: http:\/\/127\.0\.0\.1:\d+\/\.well-known\/ard\.json$/m, 'an absolute URL (ARD 0.91)');
    assert.doesNotMatch(r.body, /^\s*disallow\s*:\s*\S/im, 'nothing public is disallowed');
    assert.match(r.body, /^User-agent: \*$/m);
  });

  test('the catalog lists the ARD registry as an application/ai-registry+json entry, after the agents', async () => {
    const r = await request(s.url, 'GET', '/.well-known/ai-catalog.json');
    const read = readAiCatalog(Buffer.from(r.body));
    assert.ok(read.ok);
    const registry = read.catalog.entries.filter((e) => e.type === AI_REGISTRY_MEDIA_TYPE);
    assert.equal(registry.length, 1);
    assert.equal(registry[0]!.url, '/api/registry/', 'a path: resolved against the catalog URL, the registry API base');
    const base = new URL(registry[0]!.url!, `${s.url}/.well-known/ai-catalog.json`).href;
    assert.equal(base, `${s.url}/api/registry/`);
    // A reader of the catalog finds the search there (ARD §7: the entry's url is the API base).
    const search = await fetch(new URL('search', base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: { text: 'agent' }, federation: 'none' }) });
    assert.equal(search.status, 200);
    assert.ok(Array.isArray(((await search.json()) as { results: unknown[] }).results));
    assert.equal(registry[0]!.displayName, 'Example discovery registry');
    assert.equal(read.catalog.entries.at(-1), registry[0]);
    assert.equal(read.catalog.entries.length, s.loop.current()!.agents.length + 1);
  });
});

describe('server.catalog.registryUrl', () => {
  test('an absolute URL or another path of the service is listed as given; anything else is refused at its line', async () => {
    const s = await service({ catalog: { enabled: true, registryUrl: 'https://registry.example.com/ard/' } });
    try {
      const r = await request(s.url, 'GET', '/.well-known/ai-catalog.json');
      const read = readAiCatalog(Buffer.from(r.body));
      assert.ok(read.ok);
      assert.deepEqual(read.catalog.entries.filter((e) => e.type === AI_REGISTRY_MEDIA_TYPE).map((e) => e.url), ['https://registry.example.com/ard/']);
    } finally {
      await s.close();
    }
    const agent = 'allow: [https://billing.example.com]\nvocabulary: [{ tag: billing, description: Invoices. }]\nstatic:\n  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }\n';
    assert.equal(parseConfig(`${agent}server:\n  catalog: { enabled: true, registryUrl: /ard/ }\n`).server.catalog.registryUrl, '/ard/');
    assert.throws(
      () => parseConfig(`${agent}server:\n  catalog: { enabled: true, registryUrl: "//evil.example/" }\n`),
      (err: Error) => /server\.catalog\.registryUrl: must be a path of the service/.test(err.message),
    );
  });
});

describe('the catalog off: nothing announced', () => {
  test('no Link header, no robots.txt', async () => {
    const s = await service();
    try {
      const root = await request(s.url, 'GET', '/');
      assert.equal(root.headers.link, undefined);
      assert.equal((await request(s.url, 'GET', '/robots.txt')).status, 404);
    } finally {
      await s.close();
    }
  });
});

describe('a second instance discovers the first one\'s agents through a Link header alone', () => {
  test('a site (loopback TLS) with no well-known catalog and no robots.txt links to the first instance\'s catalog; the second instance admits its agents', async () => {
    const first = await service({ catalog: { enabled: true } });
    const tls = await createTestCertificate();
    const site = await startJsonServer({ tls, hostname: 'localhost' });
    const catalogUrl = `${first.url}/.well-known/ai-catalog.json`;
    site.routes.set('/', { body: '<!doctype html><title>Partner</title>', headers: { 'content-type': 'text/html', link: `<${catalogUrl}>; rel="ai-catalog"` } });
    const origins = [site.origin, new URL(first.url).origin, new URL(billing.baseUrl).origin];
    const policy = HostPolicy.from({ allow: origins, allowLoopback: true });
    // The service's own wellKnown.catalogFirst source, given a fetcher that trusts the test certificate.
    const fetcher = createCardFetcher({ policy, ca: tls.cert, maxBodyBytes: 1024 * 1024 });
    const partners = aiCatalogSource({ id: 'partners', domains: [new URL(site.origin).host], fetcher, hostPolicy: policy });
    let second: RunningService | undefined;
    try {
      second = await startService({
        port: 0,
        policy: { allow: origins, allowLoopback: true },
        vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
        needs: [{ tag: 'billing' }],
        extraSources: [partners],
        loop: { cycleIntervalMs: 600_000 },
        logger: createLogger({ level: 'silent' }),
      });
      // A cycle after the source's first refresh (the first snapshot may be published before it answers).
      const snapshot = (await second.loop.refreshNow()) ?? second.loop.current();
      const firstAgents = first.loop.current()!.agents;
      assert.ok(snapshot !== undefined);
      assert.deepEqual(snapshot.agents.map((a) => a.cardUrl ?? a.baseUrl), firstAgents.map((a) => a.cardUrl ?? a.baseUrl), 'the first instance\'s agents, by their card URLs');
      const report = partners.catalogs().find((r) => r.url === catalogUrl);
      assert.equal(report?.foundBy, 'link-header');
      assert.equal(report?.announcedBy, `${site.origin}/`);
      assert.equal(site.count('/robots.txt'), 0);
      assert.equal(site.count('/.well-known/ai-catalog.json'), 1, 'asked once, absent');
      // The source view (GET /api/sources) says how the catalog was found; the endpoint's proposal carries it too.
      const sources = JSON.parse((await request(second.url, 'GET', '/api/sources')).body) as { sources: Array<{ id: string; catalogs?: Array<Record<string, unknown>> }> };
      const shown = sources.sources.find((x) => x.id === 'partners')?.catalogs?.find((c) => c['url'] === catalogUrl);
      assert.deepEqual([shown?.['foundBy'], shown?.['announcedBy']], ['link-header', `${site.origin}/`]);
      assert.equal(partners.current().records[0]?.metadata['catalogFoundBy'], 'link-header');
    } finally {
      await second?.close();
      await partners.close();
      await fetcher.close();
      await site.close();
      await first.close();
    }
  });
});

describe('ARD 0.91: a second instance discovers the first one through /.well-known/ard.json alone', () => {
  test('a site (loopback TLS) serving the first instance\'s manifest at ard.json only (no ai-catalog.json, no announcements): the second instance admits its agents', async () => {
    const first = await service({ catalog: { enabled: true } });
    const tls = await createTestCertificate();
    const site = await startJsonServer({ tls, hostname: 'localhost' });
    // The first instance's manifest, as it serves it at ard.json; the site serves nothing else.
    const manifest = await request(first.url, 'GET', '/.well-known/ard.json');
    assert.equal(manifest.status, 200);
    site.routes.set('/.well-known/ard.json', { body: manifest.body, headers: { 'content-type': AI_CATALOG_MEDIA_TYPE } });
    const origins = [site.origin, new URL(first.url).origin, new URL(billing.baseUrl).origin];
    const policy = HostPolicy.from({ allow: origins, allowLoopback: true });
    const fetcher = createCardFetcher({ policy, ca: tls.cert, maxBodyBytes: 1024 * 1024 });
    const partners = aiCatalogSource({ id: 'partners', domains: [new URL(site.origin).host], fetcher, hostPolicy: policy });
    let second: RunningService | undefined;
    try {
      second = await startService({
        port: 0,
        policy: { allow: origins, allowLoopback: true },
        vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
        needs: [{ tag: 'billing' }],
        extraSources: [partners],
        loop: { cycleIntervalMs: 600_000 },
        logger: createLogger({ level: 'silent' }),
      });
      const snapshot = (await second.loop.refreshNow()) ?? second.loop.current();
      const firstAgents = first.loop.current()!.agents;
      assert.ok(snapshot !== undefined && firstAgents.length > 0);
      assert.deepEqual(snapshot.agents.map((a) => a.cardUrl ?? a.baseUrl), firstAgents.map((a) => a.cardUrl ?? a.baseUrl), 'the first instance\'s agents, by their card URLs');
      // The identifiers the first published travel with the agents (urn:air:, absolute).
      const published = (JSON.parse(manifest.body) as { entries: Array<{ identifier: string; type: string }> }).entries.filter((e) => e.type === 'application/a2a-agent-card+json');
      assert.deepEqual(snapshot.agents.map((a) => a.identifier), published.map((e) => e.identifier));
      assert.equal(site.count('/.well-known/ard.json'), 1);
      assert.equal(site.count('/.well-known/ai-catalog.json'), 0, 'the predecessor is not asked: ard.json answered');
      assert.equal(site.count('/') + site.count('/robots.txt'), 0, 'no announcement asked for');
      assert.ok(partners.catalogs().some((r) => r.url === `${site.origin}/.well-known/ard.json` && r.outcome !== 'failed'));
    } finally {
      await second?.close();
      await partners.close();
      await fetcher.close();
      await site.close();
      await first.close();
    }
  });
});

describe('ARD 0.91: the manifest the service publishes', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ catalog: { enabled: true, hostName: 'Example discovery' } });
  });
  after(async () => {
    await s?.close();
  });

  test('ard.json and ai-catalog.json: one document, one ETag and Cache-Control, the same conditional GET', async () => {
    const ard = await request(s.url, 'GET', '/.well-known/ard.json');
    const old = await request(s.url, 'GET', '/.well-known/ai-catalog.json');
    assert.equal(ard.status, 200);
    assert.equal(ard.headers['content-type'], AI_CATALOG_MEDIA_TYPE);
    assert.equal(ard.body, old.body, 'one builder, two paths');
    assert.equal(ard.headers.etag, old.headers.etag);
    assert.equal(ard.headers['cache-control'], old.headers['cache-control']);
    const etag = String(ard.headers.etag);
    assert.match(etag, /^"[0-9a-f]+"$/);
    for (const path of ['/.well-known/ard.json', '/.well-known/ai-catalog.json']) {
      const again = await request(s.url, 'GET', path, { 'if-none-match': etag });
      assert.equal(again.status, 304, path);
      assert.equal(again.headers.etag, etag, path);
    }
  });

  test('every entry carries type and mediaType (the same value) and an absolute urn:air: identifier the v0.9 tool\'s URN pattern accepts', async () => {
    const r = await request(s.url, 'GET', '/.well-known/ard.json');
    const doc = JSON.parse(r.body) as { entries: Array<Record<string, unknown>> };
    assert.ok(doc.entries.length >= 2, 'the agents and the registry');
    // The conformance tool's URN_REGEX (test/registry/fixtures/ard-conformance-test).
    const urn = /^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$/;
    for (const e of doc.entries) {
      assert.equal(typeof e['type'], 'string');
      assert.equal(e['mediaType'], e['type'], `${String(e['identifier'])}: mediaType as type`);
      assert.match(String(e['identifier']), urn);
    }
    const read = readAiCatalog(Buffer.from(r.body));
    assert.ok(read.ok, JSON.stringify(!read.ok && read.problems));
    assert.deepEqual(read.warnings, [], 'our own reader reads both members without a warning');
  });
});
