/**
 * Catalog discovery paths (issue 26, ARD spec §6.1): a host without `/.well-known/ai-catalog.json`
 * that announces its catalog only by an HTTP `Link: rel="ai-catalog"` header, only by an HTML
 * `<link rel="ai-catalog">`, or only by a robots.txt `Agentmap:` line is found by the AI Catalog
 * source's host path (the service's `wellKnown.catalogFirst`), its agents admitted, the path
 * recorded; an announcement of a catalog on an origin the allowlist does not admit is refused
 * with its reason; oversized pages are bounded. The parsers are checked on their own too.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { aiCatalogSource } from '../../packages/core/src/sources/index.js';
import { agentmapsInRobots, catalogLinksInHeader, catalogLinksInHtml, HTML_SCAN_BYTES } from '../../packages/core/src/sources/catalog-announcements.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { createTestCertificate } from '../helpers/tls.js';

const A2A = 'application/a2a-agent-card+json';
const catalogOf = (name: string) => ({ specVersion: '1.0', entries: [{ identifier: `urn:air:localhost:agent:${name}`, type: A2A, url: `/agents/${name}.json` }] });
const html = (head: string, body = '<p>hello</p>') => `<!doctype html><html><head><title>Site</title>${head}</head><body>${body}</body></html>`;

describe('parsers of catalog announcements', () => {
  test('Link header: rel="ai-catalog" among other links, quoted and token forms, relative targets resolved, anchors skipped', () => {
    const base = 'https://a.example/';
    assert.deepEqual(catalogLinksInHeader('</style.css>; rel=preload; as=style, </c/one.json>; rel="ai-catalog"', base), ['https://a.example/c/one.json']);
    assert.deepEqual(catalogLinksInHeader('<https://a.example/x.json>; REL="alternate AI-Catalog"; type="application/ai-catalog+json"', base), ['https://a.example/x.json']);
    assert.deepEqual(catalogLinksInHeader('</two.json>;rel=ai-catalog,</three.json>;rel="ai-catalog"', base), ['https://a.example/two.json', 'https://a.example/three.json']);
    // Only the first rel counts; a link about another resource (anchor) is not about this page.
    assert.deepEqual(catalogLinksInHeader('</no.json>; rel=next; rel=ai-catalog, </other.json>; rel=ai-catalog; anchor="/elsewhere"', base), []);
    // A quoted comma does not split the link-value; a malformed field announces nothing (http-link-header reads all of it or none).
    assert.deepEqual(catalogLinksInHeader('</ok.json>; title="a, b"; rel="ai-catalog"', base), ['https://a.example/ok.json']);
    assert.deepEqual(catalogLinksInHeader('garbage, <; rel=ai-catalog, </ok.json>; rel="ai-catalog"', base), []);
    assert.deepEqual(catalogLinksInHeader('<javascript:alert(1)>; rel=ai-catalog', base), [], 'only http(s) targets');
  });

  test('HTML: <link rel="ai-catalog"> in the head, <base href> honoured, comments and scripts skipped, the body not read', () => {
    const base = 'https://a.example/';
    assert.deepEqual(catalogLinksInHtml(html('<link rel="stylesheet" href="/s.css"><LINK REL="ai-catalog" HREF="/c.json?a=1&amp;b=2">'), base), ['https://a.example/c.json?a=1&b=2']);
    assert.deepEqual(catalogLinksInHtml(html(`<base href="https://a.example/sub/"><link href=cat.json rel='ai-catalog alternate'>`), base), ['https://a.example/sub/cat.json']);
    assert.deepEqual(
      catalogLinksInHtml(html('<!-- <link rel="ai-catalog" href="/commented.json"> --><script>document.write(\'<link rel="ai-catalog" href="/scripted.json">\')</script>'), base),
      [],
    );
    assert.deepEqual(catalogLinksInHtml(html('', '<link rel="ai-catalog" href="/in-body.json">'), base), [], 'only the <head>');
    assert.deepEqual(catalogLinksInHtml(html('<SCRIPT>x = "</b>"</Script><link rel="ai-catalog" href="/after-script.json">'), base), ['https://a.example/after-script.json'], 'a raw-text element ends at its own end tag, any case');
    // Tolerant: no <head> tag at all, unclosed attributes, self-closing tags.
    assert.deepEqual(catalogLinksInHtml('<link rel=ai-catalog href="/bare.json"/><p>', base), ['https://a.example/bare.json']);
    assert.deepEqual(catalogLinksInHtml('<link rel="ai-catalog" href="/unterminated', base), []);
    // Bounded: a link past the first bytes scanned is not seen.
    const late = `<head><meta name="x" content="${'x'.repeat(HTML_SCAN_BYTES)}"><link rel="ai-catalog" href="/late.json"></head>`;
    assert.deepEqual(catalogLinksInHtml(late, base), []);
    assert.deepEqual(catalogLinksInHtml(late, base, 2 * HTML_SCAN_BYTES), ['https://a.example/late.json']);
  });

  test('robots.txt: Agentmap lines, case-insensitive field name, comments dropped, relative URLs resolved', () => {
    const text = 'User-agent: *\nDisallow: /private\n# Agentmap: https://a.example/commented.json\nAGENTMAP:https://a.example/c.json # ours\r\nagentmap: /relative.json\nSitemap: https://a.example/sitemap.xml\nAgentmap:\n';
    assert.deepEqual(agentmapsInRobots(text, 'https://a.example/robots.txt'), ['https://a.example/c.json', 'https://a.example/relative.json']);
  });
});

describe('AI Catalog source: a host announcing its catalog without a well-known one (loopback TLS)', () => {
  let site: JsonServer;
  let host: string;
  let policy: HostPolicy;
  let fetcher: CardFetcher;
  let cert: string;
  const sources: Array<{ close(): Promise<void> }> = [];
  const make = (f: CardFetcher = fetcher) => {
    const source = aiCatalogSource({ id: 'partners', domains: [host], fetcher: f, hostPolicy: policy });
    sources.push(source);
    return source;
  };

  before(async () => {
    const tls = await createTestCertificate();
    cert = tls.cert;
    site = await startJsonServer({ tls, hostname: 'localhost' });
    host = new URL(site.origin).host;
    policy = HostPolicy.from({ allow: [site.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy, ca: cert, maxBodyBytes: 256 * 1024 });
  });
  beforeEach(() => {
    site.routes.clear();
    site.requests.length = 0;
  });
  after(async () => {
    await Promise.all(sources.map((s) => s.close()));
    await fetcher.close();
    await site.close();
  });

  const expectFound = async (foundBy: string, announcedBy: string, catalogUrl: string) => {
    const source = make();
    const state = await source.refresh();
    assert.equal(state.ok, true);
    assert.deepEqual(state.records.map((r) => [r.name, r.baseUrl]), [['one', `https://${host}/agents/one.json`]], 'the announced catalog is read instead of proposing the host');
    assert.equal(state.records[0]!.metadata['catalogFoundBy'], foundBy);
    assert.equal(state.records[0]!.metadata['catalogAnnouncedBy'], announcedBy);
    const { admitted } = resolveEndpoints([state.records], policy);
    assert.deepEqual(admitted.map((a) => a.baseUrl), [`https://${host}/agents/one.json`], 'its agents are admitted');
    const report = source.catalogs().find((r) => r.url === catalogUrl);
    assert.equal(report?.foundBy, foundBy, 'the source view says how the catalog was found');
    assert.equal(report?.announcedBy, announcedBy);
    assert.equal(state.problems, undefined);
    return source;
  };

  test('announced only by a Link header on the root page', async () => {
    site.routes.set('/', { body: html(''), headers: { 'content-type': 'text/html; charset=utf-8', link: '</style.css>; rel=preload; as=style, </catalogs/main.json>; rel="ai-catalog"' } });
    site.routes.set('/catalogs/main.json', { body: catalogOf('one') });
    await expectFound('link-header', `https://${host}/`, `https://${host}/catalogs/main.json`);
    assert.equal(site.count('/robots.txt'), 0, 'robots.txt is not asked when the root page announced a catalog');
  });

  test('announced only by an HTML <link> in the root page', async () => {
    site.routes.set('/', { body: html('<link rel="ai-catalog" href="catalogs/page.json" type="application/ai-catalog+json">'), headers: { 'content-type': 'text/html' } });
    site.routes.set('/catalogs/page.json', { body: catalogOf('one') });
    await expectFound('html-link', `https://${host}/`, `https://${host}/catalogs/page.json`);
  });

  test('announced only by an Agentmap line in robots.txt (the root page is a 404)', async () => {
    site.routes.set('/robots.txt', { body: 'User-agent: *\nAllow: /\nagentmap: /agentmap/catalog.json\n', headers: { 'content-type': 'text/plain' } });
    site.routes.set('/agentmap/catalog.json', { body: catalogOf('one') });
    await expectFound('robots-agentmap', `https://${host}/robots.txt`, `https://${host}/agentmap/catalog.json`);
  });

  test('precedence: the well-known catalog first, then the Link header, then the HTML <link>, then robots.txt', async () => {
    site.routes.set('/', { body: html('<link rel="ai-catalog" href="/html.json">'), headers: { 'content-type': 'text/html', link: '</header.json>; rel="ai-catalog"' } });
    site.routes.set('/robots.txt', { body: 'Agentmap: /robots.json\n' });
    for (const p of ['/header.json', '/html.json', '/robots.json']) site.routes.set(p, { body: catalogOf('one') });
    await expectFound('link-header', `https://${host}/`, `https://${host}/header.json`);
    // A Link target that cannot be read: the next announcement is tried.
    site.routes.delete('/header.json');
    const source = make();
    const state = await source.refresh();
    assert.equal(state.records[0]?.metadata['catalogFoundBy'], 'html-link');
    assert.match(state.problems?.[0]?.message ?? '', /Link header \(rel="ai-catalog"\) announces the catalog https:\/\/localhost:\d+\/header\.json, which could not be read/);
    // A well-known catalog wins: the root page is not asked.
    site.routes.set('/.well-known/ai-catalog.json', { body: catalogOf('wk') });
    site.requests.length = 0;
    const wk = await make().refresh();
    assert.deepEqual(wk.records.map((r) => r.name), ['wk']);
    assert.equal(wk.records[0]!.metadata['catalogFoundBy'], undefined);
    assert.equal(site.count('/'), 0);
  });

  test('a catalog announced on another origin the allowlist does not admit is refused with its reason, never requested; the host is read for its card', async () => {
    site.routes.set('/', { body: html('<link rel="ai-catalog" href="https://catalogs.elsewhere.example/c.json">'), headers: { 'content-type': 'text/html', link: '<https://evil.example/c.json>; rel="ai-catalog"' } });
    const state = await make().refresh();
    assert.equal(state.ok, true);
    assert.deepEqual(state.records.map((r) => [r.name, r.baseUrl]), [[host, `https://${host}/`]]);
    const messages = (state.problems ?? []).map((p) => p.message);
    assert.equal(messages.length, 2);
    assert.match(messages[0]!, /^the Link header \(rel="ai-catalog"\) announces the catalog https:\/\/evil\.example\/c\.json, which the allowlist does not admit/);
    assert.match(messages[1]!, /^the HTML <link rel="ai-catalog"> announces the catalog https:\/\/catalogs\.elsewhere\.example\/c\.json, which the allowlist does not admit/);
    assert.equal(site.count('/robots.txt'), 1, 'nothing admitted on the page: robots.txt is asked');
  });

  test('an oversized root page and robots.txt are bounded by the catalog fetcher: not read, and said so', async () => {
    const big = 'x'.repeat(300 * 1024);
    site.routes.set('/', { body: html('<link rel="ai-catalog" href="/c.json">', big), headers: { 'content-type': 'text/html', link: '</c.json>; rel="ai-catalog"' } });
    site.routes.set('/robots.txt', { body: `Agentmap: /c.json\n# ${big}` });
    site.routes.set('/c.json', { body: catalogOf('one') });
    const state = await make().refresh();
    assert.deepEqual(state.records.map((r) => r.name), [host], 'neither announcement is read');
    const messages = (state.problems ?? []).map((p) => p.message).join('\n');
    assert.match(messages, /the root page could not be read for a catalog announcement: ERR_BODY_TOO_LARGE/);
    assert.match(messages, /robots.txt could not be read for an Agentmap line: ERR_BODY_TOO_LARGE/);
    assert.equal(site.count('/c.json'), 0);
  });

  test('a root page within the bound is scanned for <link> only in its first 64 KiB', async () => {
    const late = `<meta name="filler" content="${'x'.repeat(HTML_SCAN_BYTES)}"><link rel="ai-catalog" href="/c.json">`;
    site.routes.set('/', { body: html(late), headers: { 'content-type': 'text/html' } });
    site.routes.set('/c.json', { body: catalogOf('one') });
    const state = await make().refresh();
    assert.deepEqual(state.records.map((r) => r.name), [host]);
    assert.equal(site.count('/c.json'), 0);
  });
});
