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

  test('HTML: <link rel="ai-catalog"> in the head, <base href> honoured, comments and scripts skipped, the body not read', async () => {
    const base = 'https://a.example/';
    assert.deepEqual(await catalogLinksInHtml(html('<link rel="stylesheet" href="/s.css"><LINK REL="ai-catalog" HREF="/c.json?a=1&amp;b=2">'), base), ['https://a.example/c.json?a=1&b=2']);
    assert.deepEqual(await catalogLinksInHtml(html(`<base href="https://a.example/sub/"><link href=cat.json rel='ai-catalog alternate'>`), base), ['https://a.example/sub/cat.json']);
    assert.deepEqual(
      await catalogLinksInHtml(html('<!-- <link rel="ai-catalog" href="/commented.json"> --><script>document.write(\'<link rel="ai-catalog" href="/scripted.json">\')</script>'), base),
      [],
    );
    assert.deepEqual(await catalogLinksInHtml(html('', '<link rel="ai-catalog" href="/in-body.json">'), base), [], 'only the <head>');
    assert.deepEqual(await catalogLinksInHtml(html('<SCRIPT>x = "</b>"</Script><link rel="ai-catalog" href="/after-script.json">'), base), ['https://a.example/after-script.json'], 'a raw-text element ends at its own end tag, any case');
    // Tolerant: no <head> tag at all, unclosed attributes, self-closing tags.
    assert.deepEqual(await catalogLinksInHtml('<link rel=ai-catalog href="/bare.json"/><p>', base), ['https://a.example/bare.json']);
    assert.deepEqual(await catalogLinksInHtml('<link rel="ai-catalog" href="/unterminated', base), []);
    // Bounded: a link past the first bytes scanned is not seen.
    const late = `<head><meta name="x" content="${'x'.repeat(HTML_SCAN_BYTES)}"><link rel="ai-catalog" href="/late.json"></head>`;
    assert.deepEqual(await catalogLinksInHtml(late, base), []);
    assert.deepEqual(await catalogLinksInHtml(late, base, 2 * HTML_SCAN_BYTES), ['https://a.example/late.json']);
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

  test('ARD 0.91: /.well-known/ard.json first; its predecessor ai-catalog.json only when ard.json is absent; neither: the announcements', async () => {
    site.routes.set('/.well-known/ard.json', { body: catalogOf('ard') });
    site.routes.set('/.well-known/ai-catalog.json', { body: catalogOf('predecessor') });
    site.routes.set('/', { body: html(''), headers: { 'content-type': 'text/html', link: '</header.json>; rel="ard"' } });
    const both = await make().refresh();
    assert.deepEqual(both.records.map((r) => r.name), ['ard'], 'ard.json wins over ai-catalog.json');
    assert.equal(both.records[0]!.metadata['catalogFoundBy'], undefined, 'a well-known path: not an announcement');
    assert.equal(site.count('/.well-known/ai-catalog.json'), 0, 'the predecessor is not asked when ard.json answers');
    assert.equal(site.count('/'), 0);

    site.routes.delete('/.well-known/ard.json');
    site.requests.length = 0;
    const source = make();
    const old = await source.refresh();
    assert.deepEqual(old.records.map((r) => r.name), ['predecessor'], 'a host that only serves ai-catalog.json is still read');
    assert.equal(old.problems, undefined, 'an absent ard.json is not a problem');
    assert.deepEqual([site.count('/.well-known/ard.json'), site.count('/.well-known/ai-catalog.json'), site.count('/')], [1, 1, 0]);
    assert.ok(source.catalogs().some((r) => r.url === `https://${host}/.well-known/ai-catalog.json` && r.outcome !== 'failed'));

    site.routes.delete('/.well-known/ai-catalog.json');
    site.routes.set('/header.json', { body: catalogOf('announced') });
    site.requests.length = 0;
    const announced = await make().refresh();
    assert.deepEqual(announced.records.map((r) => r.name), ['announced']);
    assert.equal(announced.records[0]!.metadata['catalogFoundBy'], 'link-header');
    assert.deepEqual([site.count('/.well-known/ard.json'), site.count('/.well-known/ai-catalog.json'), site.count('/')], [1, 1, 1], 'each well-known path once, then the root page');
  });

  test('ARD 0.91: an absent ard.json does not count against maxCatalogs (a host costs one document, as before)', async () => {
    site.routes.set('/.well-known/ai-catalog.json', { body: catalogOf('predecessor') });
    const source = aiCatalogSource({ id: 'partners', domains: [host], fetcher, hostPolicy: policy, maxCatalogs: 1 });
    sources.push(source);
    const state = await source.refresh();
    assert.deepEqual(state.records.map((r) => r.name), ['predecessor']);
    assert.equal(state.problems, undefined);
  });

  test('ARD 0.91: an ard.json that fails otherwise than absent (a 500, a refused document) is a problem; the predecessor is read', async () => {
    site.routes.set('/.well-known/ard.json', { status: 500, body: { error: 'down' } });
    site.routes.set('/.well-known/ai-catalog.json', { body: catalogOf('predecessor') });
    const state = await make().refresh();
    assert.deepEqual(state.records.map((r) => r.name), ['predecessor']);
    assert.equal(state.problems?.length, 1);
    assert.equal(state.problems![0]!.path, `https://${host}/.well-known/ard.json`);
    assert.match(state.problems![0]!.message, /^the ARD manifest could not be read \(.*500.*\); its predecessor https:\/\/localhost:\d+\/\.well-known\/ai-catalog\.json is read instead$/);
    // A manifest with a relative identifier is refused as a whole, with its JSON path; the predecessor still serves.
    site.routes.set('/.well-known/ard.json', { body: { specVersion: '1.0', entries: [{ identifier: 'agents/one', type: 'application/a2a-agent-card+json', url: '/one.json' }] } });
    const refused = await make().refresh();
    assert.deepEqual(refused.records.map((r) => r.name), ['predecessor']);
    assert.match(refused.problems?.map((p) => p.message).join('\n') ?? '', /the ARD manifest could not be read .*entries\[0\]\.identifier/s);
  });

  test('ARD 0.91: a Link rel="ard" is preferred over rel="ai-catalog", whatever their order; in HTML too', async () => {
    site.routes.set('/', { body: html(''), headers: { 'content-type': 'text/html', link: '</old.json>; rel="ai-catalog", </new.json>; rel="ard"' } });
    site.routes.set('/old.json', { body: catalogOf('old') });
    site.routes.set('/new.json', { body: catalogOf('one') });
    await expectFound('link-header', `https://${host}/`, `https://${host}/new.json`);
    assert.equal(site.count('/old.json'), 0, 'the rel="ai-catalog" target is not read when the rel="ard" one is');
    // The problem names the relation that announced the catalog.
    site.routes.delete('/new.json');
    const state = await make().refresh();
    assert.deepEqual(state.records.map((r) => r.name), ['old'], 'rel="ard" unreadable: rel="ai-catalog" next');
    assert.match(state.problems?.[0]?.message ?? '', /^the Link header \(rel="ard"\) announces the catalog https:\/\/localhost:\d+\/new\.json, which could not be read/);
    // HTML: the same preference.
    site.routes.set('/', { body: html('<link rel="ai-catalog" href="/old.json"><link rel="ard" href="/page.json">'), headers: { 'content-type': 'text/html' } });
    site.routes.set('/page.json', { body: catalogOf('one') });
    await expectFound('html-link', `https://${host}/`, `https://${host}/page.json`);
    assert.deepEqual(await catalogLinksInHtml(html('<link rel="ai-catalog" href="/a.json"><link rel="ard" href="/b.json">'), 'https://a.example/'), ['https://a.example/b.json', 'https://a.example/a.json']);
    assert.deepEqual(catalogLinksInHeader('</a.json>; rel="ai-catalog", </b.json>; rel=ARD', 'https://a.example/'), ['https://a.example/b.json', 'https://a.example/a.json']);
  });

  test('ARD 0.91: a robots.txt Agentmap naming ard.json is found when the root page announces nothing', async () => {
    site.routes.set('/robots.txt', { body: `User-agent: *\nAgentmap: https://${host}/catalogs/ard.json\n` });
    site.routes.set('/catalogs/ard.json', { body: catalogOf('one') });
    await expectFound('robots-agentmap', `https://${host}/robots.txt`, `https://${host}/catalogs/ard.json`);
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
