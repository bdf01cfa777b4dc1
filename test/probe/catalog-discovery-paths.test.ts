/**
 * `probe <site root>` finds a site's AI Catalog where the site announces it (issue 26, ARD §6.1):
 * a `Link: rel="ai-catalog"` header, an HTML `<link rel="ai-catalog">`, a robots.txt `Agentmap:`
 * line — the catalog and its entries probed, with how it was found (`foundBy`, `announcedBy`) in
 * the report, the text and `--json`; an announcement on an origin not allowed is a warning of the
 * root's card report, never requested.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { probeTarget, renderAiCatalogProbe, type ProbeAiCatalogOptions } from '../../packages/core/src/probe/index.js';
import { cardFor } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

const A2A = 'application/a2a-agent-card+json';

describe('probe at a site root: the catalog the site announces', () => {
  let server: JsonServer;
  let fetcher: CardFetcher;
  let policy: HostPolicy;
  const options = (): ProbeAiCatalogOptions => ({ policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } });
  const site = () => {
    server.routes.set('/catalogs/main', { body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:localhost:agent:one', type: A2A, url: '/one.json' }] }, headers: { 'content-type': 'application/ai-catalog+json' } });
    server.routes.set('/one.json', { body: cardFor(server, 'one') });
  };

  before(async () => {
    server = await startJsonServer();
    policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy });
  });
  beforeEach(() => {
    server.routes.clear();
    server.requests.length = 0;
  });
  after(async () => {
    await fetcher.close();
    await server.close();
  });

  const expectCatalog = async (foundBy: string, announcedBy: string) => {
    const r = await probeTarget(`${server.origin}/`, options());
    assert.equal(r.kind, 'ai-catalog');
    if (r.kind !== 'ai-catalog') return;
    assert.equal(r.catalog.foundBy, foundBy);
    assert.equal(r.catalog.announcedBy, announcedBy);
    assert.equal(r.catalog.documents[0]?.url, `${server.origin}/catalogs/main`);
    assert.deepEqual(r.catalog.entries.map((e) => [e.identifier, e.verdict]), [['urn:air:localhost:agent:one', 'accepted']]);
    assert.equal(r.catalog.accepted, true);
    assert.ok(renderAiCatalogProbe(r.catalog).split('\n')[1]!.includes(`found by`), renderAiCatalogProbe(r.catalog));
  };

  test('by a Link header', async () => {
    site();
    server.routes.set('/', { body: '<!doctype html><title>x</title>', headers: { 'content-type': 'text/html', link: '</catalogs/main>; rel="ai-catalog"' } });
    await expectCatalog('link-header', `${server.origin}/`);
    assert.equal(server.count('/robots.txt'), 0);
  });

  test('by an HTML <link>', async () => {
    site();
    server.routes.set('/', { body: '<html><head><link rel="ai-catalog" href="catalogs/main"></head><body></body></html>', headers: { 'content-type': 'text/html; charset=utf-8' } });
    await expectCatalog('html-link', `${server.origin}/`);
  });

  test('by a robots.txt Agentmap line', async () => {
    site();
    server.routes.set('/robots.txt', { body: `User-agent: *\nAgentmap: ${server.origin}/catalogs/main\n`, headers: { 'content-type': 'text/plain' } });
    await expectCatalog('robots-agentmap', `${server.origin}/robots.txt`);
  });

  test('ARD 0.91: ard.json before ai-catalog.json; a Link rel="ard" before rel="ai-catalog", named so in the report and the text', async () => {
    site();
    const empty = { body: { specVersion: '1.0', entries: [] }, headers: { 'content-type': 'application/ai-catalog+json' } };
    server.routes.set('/.well-known/ard.json', empty);
    server.routes.set('/.well-known/ai-catalog.json', empty);
    const both = await probeTarget(`${server.origin}/`, options());
    assert.equal(both.kind === 'ai-catalog' && both.catalog.documents[0]?.url, `${server.origin}/.well-known/ard.json`);
    assert.equal(server.count('/.well-known/ai-catalog.json'), 0);
    // ard.json answers something that is not a catalog: its predecessor is still probed.
    server.routes.set('/.well-known/ard.json', { body: { hello: 'not a catalog' } });
    const old = await probeTarget(`${server.origin}/`, options());
    assert.equal(old.kind === 'ai-catalog' && old.catalog.documents[0]?.url, `${server.origin}/.well-known/ai-catalog.json`);
    // Neither: the announcement, rel="ard" preferred.
    server.routes.delete('/.well-known/ard.json');
    server.routes.delete('/.well-known/ai-catalog.json');
    server.routes.set('/', { body: '', headers: { 'content-type': 'text/html', link: '</nowhere.json>; rel="ai-catalog", </catalogs/main>; rel="ard"' } });
    const r = await probeTarget(`${server.origin}/`, options());
    assert.equal(r.kind === 'ai-catalog' && r.catalog.rel, 'ard');
    assert.equal(server.count('/nowhere.json'), 0);
    assert.match(r.kind === 'ai-catalog' ? renderAiCatalogProbe(r.catalog) : '', /found by the Link header \(rel="ard"\) of /);
  });

  test('the well-known catalog is found first, and said so', async () => {
    site();
    server.routes.set('/.well-known/ai-catalog.json', { body: { specVersion: '1.0', entries: [] }, headers: { 'content-type': 'application/ai-catalog+json' } });
    server.routes.set('/', { body: '', headers: { 'content-type': 'text/html', link: '</catalogs/main>; rel="ai-catalog"' } });
    const r = await probeTarget(`${server.origin}/`, options());
    assert.equal(r.kind === 'ai-catalog' && r.catalog.foundBy, 'well-known');
    assert.equal(server.count('/'), 0);
  });

  test('a catalog announced on an origin not allowed: the root card report warns, the catalog is never requested', async () => {
    server.routes.set('/', { body: '', headers: { 'content-type': 'text/html', link: '<https://catalogs.elsewhere.example/c.json>; rel="ai-catalog"' } });
    const r = await probeTarget(`${server.origin}/`, options());
    assert.equal(r.kind, 'card');
    if (r.kind !== 'card') return;
    assert.equal(r.report.stage, 'fetch');
    assert.match(r.report.warnings.map((w) => w.message).join('\n'), /Link header \(rel="ai-catalog"\) announces the catalog https:\/\/catalogs\.elsewhere\.example\/c\.json, which the allowlist does not admit/);
  });

  test('the CLI: --json carries foundBy and announcedBy; the text says how the catalog was found', async () => {
    site();
    server.routes.set('/', { body: '', headers: { 'content-type': 'text/html', link: '</catalogs/main>; rel="ai-catalog"' } });
    const json = await runCli(['probe', `${server.origin}/`, '--allow-loopback', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(report['kind'], 'ai-catalog');
    assert.equal(report['foundBy'], 'link-header');
    assert.equal(report['announcedBy'], `${server.origin}/`);
    const text = await runCli(['probe', `${server.origin}/`, '--allow-loopback']);
    assert.match(text.stdout, /^probe AI Catalog http:\/\/127\.0\.0\.1:\d+\/catalogs\/main\n {7}found by the Link header \(rel="ai-catalog"\) of http:\/\/127\.0\.0\.1:\d+\/\n/);
  });
});
