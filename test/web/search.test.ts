/**
 * The Search view in Chromium: a query shows results with what the registry verified about each,
 * a facet click narrows them, the next page shows the next results (none twice, the order kept),
 * a lookalike result shows its warning, referrals and federated results say where they come
 * from, the loading state is announced, an error answer (ARD error shape) shows its message, a 401
 * brings the token prompt, the page fits 390 px, and axe-core finds nothing with every rule.
 *
 * Every state of the page (federated results, referrals, lookalikes, errors, a slow answer) is
 * driven by a FAKE registry API: a loopback server that answers the three routes under
 * ARD_BASE from FIXTURES (shaped by packages/core/src/ard/wire.ts) and passes everything else
 * (the dashboard's files, `/api/*`, the event stream) to a real service.
 * test/web/search-live.test.ts runs the page against the service's real registry routes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
// @ts-expect-error -- plain JavaScript with JSDoc types, served to the browser as is
import { ARD_BASE } from '../../packages/service/web/lib/api.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { ArdExploreRequest, ArdExploreResponse, ArdReferral, ArdSearchRequest, ArdSearchResponse, ArdSearchResult, ArdVerified } from '../../packages/core/src/ard/wire.js';
import { VERIFIED_EXTENSION } from '../../packages/core/src/ard/wire.js';
import { expectNoAxeViolationsAllRules } from './axe.js';
import { focused, launchBrowser, openPage, screenshot, text, until } from './browser.js';

const A2A = 'application/a2a-agent-card+json';
const PEER_REGISTRY = 'https://registry.partner.example/ard';

/** A fixture: an entry, its relevance, and the facts only a filter reads (modes, provider). */
interface Fixture {
  entry: ArdSearchResult;
  provider: string;
  inputModes: string[];
  outputModes: string[];
  /** Only in `federation: auto` answers (another registry's result). */
  remote?: boolean;
}

function agent(n: number, name: string, o: { tags: string[]; description: string; score: number; verified?: Partial<ArdVerified>; provider?: string; remote?: boolean }): Fixture {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const endpoint = o.remote ? `https://agents.partner.example/${slug}` : `https://agents.acme.example/${slug}`;
  const verified: ArdVerified = {
    inSnapshot: true,
    localName: slug.replace(/-/g, '_'),
    verdict: 'selected',
    reason: 'covers the need "claims"',
    health: 'healthy',
    signature: 'verified',
    protocolVersion: '1.0',
    cardKind: 'public',
    provenance: [{ source: 'static' }],
    endpoint,
    cardChangedAt: '2026-11-30T10:00:00Z',
    ...o.verified,
  };
  return {
    entry: {
      identifier: `urn:air:${o.remote ? 'partner.example' : 'acme.example'}:agent:${slug}-${n}`,
      displayName: name,
      type: A2A,
      url: `${endpoint}/.well-known/agent-card.json`,
      description: o.description,
      tags: o.tags,
      score: o.score,
      ...(o.remote && { source: PEER_REGISTRY }),
      extensions: { [VERIFIED_EXTENSION]: verified },
    },
    provider: o.provider ?? 'Acme',
    inputModes: ['text/plain'],
    outputModes: ['text/plain', 'application/json'],
    ...(o.remote && { remote: true }),
  };
}

/** Twelve agents that match "claims" (two pages of ten), one that does not, one only another registry has. */
const FIXTURES: Fixture[] = [
  agent(1, 'Warranty claims', { tags: ['warranty', 'claims'], description: 'Files and tracks warranty claims for hardware.', score: 97 }),
  agent(2, 'Warranty Claims', {
    tags: ['warranty', 'claims'],
    description: 'Files warranty claims (a new agent from another origin).',
    score: 95,
    provider: 'Acme Ltd',
    verified: {
      inSnapshot: false,
      localName: undefined,
      verdict: 'excluded',
      reason: 'not needed: warranty_claims covers it',
      signature: 'unsigned',
      provenance: [{ source: 'catalog', name: 'Warranty Claims' }],
      lookalike: { of: 'Warranty claims', origin: 'https://agents.acme.example', reason: 'the same name but for letter case' },
    },
  }),
  agent(3, 'Claims triage', { tags: ['claims', 'triage'], description: 'Sorts incoming claims by urgency.', score: 90 }),
  agent(4, 'Insurance claims', { tags: ['insurance', 'claims'], description: 'Opens insurance claims.', score: 88, verified: { health: 'degraded', protocolVersion: '0.3' } }),
  agent(5, 'Warranty status', { tags: ['warranty'], description: 'Answers questions about claims already filed.', score: 84 }),
  agent(6, 'Refund claims', { tags: ['billing', 'claims'], description: 'Refund claims for orders.', score: 80 }),
  agent(7, 'Expense claims', { tags: ['billing', 'claims'], description: 'Expense claims for employees.', score: 77, verified: { health: 'unhealthy' } }),
  agent(8, 'Claims archive', { tags: ['claims'], description: 'Finds old claims.', score: 70 }),
  agent(9, 'Travel claims', { tags: ['travel', 'claims'], description: 'Travel claims and receipts.', score: 66 }),
  agent(10, 'Damage claims', { tags: ['claims'], description: 'Photos of damage attached to claims.', score: 61 }),
  agent(11, 'Warranty parts', { tags: ['warranty', 'parts'], description: 'Orders spare parts for warranty claims.', score: 55 }),
  agent(12, 'Claims statistics', { tags: ['reports', 'claims'], description: 'Counts claims by week.', score: 40 }),
  agent(13, 'Weather', { tags: ['weather'], description: 'Tomorrow’s weather.', score: 30 }),
  agent(14, 'Partner claims', { tags: ['claims'], description: 'A partner’s claims desk.', score: 64, remote: true, provider: 'Partner' }),
];

const REFERRALS: ArdReferral[] = [
  { identifier: 'urn:air:partner.example:registry:main', displayName: 'Partner registry', type: 'application/ai-registry+json', url: PEER_REGISTRY, description: 'Agents of partner.example.' },
];

/** The values a filter key or facet field reads from a fixture. */
function fieldValues(f: Fixture, field: string): string[] {
  const v = f.entry.extensions?.[VERIFIED_EXTENSION] as ArdVerified;
  switch (field) {
    case 'tags':
      return [...(f.entry.tags ?? [])];
    case 'verified.inputModes':
      return f.inputModes;
    case 'verified.outputModes':
      return f.outputModes;
    case 'verified.provider':
      return [f.provider];
    case 'verified.protocolVersion':
      return v.protocolVersion !== undefined ? [v.protocolVersion] : [];
    case 'verified.health':
      return v.health !== undefined ? [v.health] : [];
    case 'verified.signature':
      return v.signature !== undefined ? [v.signature] : [];
    case 'verified.source':
      return (v.provenance ?? []).map((p) => p.source);
    case 'verified.inSnapshot':
      return [String(v.inSnapshot)];
    default:
      return [];
  }
}

/** What the fake registry was asked, newest last. */
interface FakeRegistry {
  url: string;
  searches: ArdSearchRequest[];
  /** While set, a search for "slow" waits for it (a loading state without timing). */
  hold?: Promise<void>;
  close(): Promise<void>;
}

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** The matched set of a query: text (any word in name, description or tags) AND every filter (OR within a key). */
function matched(query: { text?: string; filter?: Record<string, unknown> } | undefined, federation: string): Fixture[] {
  const words = (query?.text ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return FIXTURES.filter((f) => {
    if (f.remote && federation !== 'auto') return false;
    const hay = `${f.entry.displayName} ${f.entry.description ?? ''} ${(f.entry.tags ?? []).join(' ')}`.toLowerCase();
    if (words.length > 0 && !words.some((w) => hay.includes(w))) return false;
    for (const [field, want] of Object.entries(query?.filter ?? {})) {
      const values = (Array.isArray(want) ? want : [want]).map(String);
      if (!fieldValues(f, field).some((x) => values.includes(x))) return false;
    }
    return true;
  }).sort((a, b) => (b.entry.score ?? 0) - (a.entry.score ?? 0) || a.entry.identifier.localeCompare(b.entry.identifier));
}

function search(req: ArdSearchRequest): ArdSearchResponse {
  const text = req.query?.text ?? '';
  if (text === 'crash') throw new HttpAnswer(500, { errorCode: 'INTERNAL_ERROR', message: 'the index is being rebuilt' });
  if (text === 'token') throw new HttpAnswer(401, { errorCode: 'UNAUTHENTICATED', message: 'a bearer token is required' });
  if (text.length > 40) throw new HttpAnswer(400, { errorCode: 'INVALID_ARGUMENT', message: 'query.text is longer than 40 characters' });
  const all = matched(req.query, req.federation ?? 'auto');
  const size = req.pageSize ?? 10;
  const offset = req.pageToken !== undefined ? Number(Buffer.from(req.pageToken, 'base64url').toString().replace(/^offset:/, '')) : 0;
  const page = all.slice(offset, offset + size);
  return {
    results: page.map((f) => f.entry),
    ...(req.federation === 'referrals' && { referrals: REFERRALS }),
    ...(offset + size < all.length && { pageToken: Buffer.from(`offset:${offset + size}`).toString('base64url') }),
  };
}

function explore(req: ArdExploreRequest): ArdExploreResponse {
  const all = matched(req.query, 'none');
  const facets: Record<string, { buckets: { value: string; count: number }[] }> = {};
  for (const { field, limit } of req.resultType.facets) {
    const counts = new Map<string, number>();
    for (const f of all) for (const v of new Set(fieldValues(f, field))) counts.set(v, (counts.get(v) ?? 0) + 1);
    facets[field] = { buckets: [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, limit ?? 20).map(([value, count]) => ({ value, count })) };
  }
  return { resultType: 'facets', facets };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A FAKE registry API on loopback: the ARD routes from FIXTURES, everything else passed to `upstream`. */
async function startFakeRegistry(upstream: string): Promise<FakeRegistry> {
  const target = new URL(upstream);
  const searches: ArdSearchRequest[] = [];
  const server: Server = createServer((req, res) => {
    const full = new URL(req.url ?? '/', 'http://x').pathname;
    // The page calls the registry under ARD_BASE (`/api/registry`); the fake answers those three routes.
    const path = full.startsWith(`${ARD_BASE}/`) ? full.slice(ARD_BASE.length) : full;
    const ard = full !== path && ((req.method === 'POST' && (path === '/search' || path === '/explore')) || (req.method === 'GET' && path === '/agents'));
    if (ard) {
      void (async () => {
        try {
          if (path === '/agents') return send(res, 200, { items: FIXTURES.filter((f) => !f.remote).map((f) => f.entry) });
          const body = await readBody(req);
          if (path === '/search') {
            searches.push(body as ArdSearchRequest);
            if ((body as ArdSearchRequest).query?.text === 'slow') await fake.hold;
            return send(res, 200, search(body as ArdSearchRequest));
          }
          return send(res, 200, explore(body as ArdExploreRequest));
        } catch (err) {
          if (err instanceof HttpAnswer) return send(res, err.status, err.body);
          return send(res, 400, { errorCode: 'INVALID_ARGUMENT', message: String(err) });
        }
      })();
      return;
    }
    const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      res.flushHeaders();
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeRegistry = {
    url: `http://127.0.0.1:${port}`,
    searches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** The only part to change when the real ARD routes land. */
async function setup(): Promise<{ base: string; fake: FakeRegistry; close(): Promise<void> }> {
  const service: RunningService = await startService({ port: 0, policy: { allow: [], allowLoopback: true }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
  const fake = await startFakeRegistry(service.url);
  return {
    base: fake.url,
    fake,
    close: async () => {
      await fake.close();
      await service.close();
    },
  };
}

let browser: Browser;
let page: Page;
let problems: string[];
let env: Awaited<ReturnType<typeof setup>>;

before(async () => {
  [browser, env] = await Promise.all([launchBrowser(), setup()]);
  ({ page, problems } = await openPage(browser));
  await page.goto(`${env.base}/#/search`);
  await page.locator('#view-title', { hasText: 'Search' }).waitFor();
});

after(async () => {
  await browser?.close();
  await env?.close();
});

const status = () => text(page.locator('#search-status'));
const shown = () => page.locator('.search-result').evaluateAll((els) => els.map((el) => el.getAttribute('data-identifier') ?? ''));
const ids = (fs: Fixture[]) => fs.map((f) => f.entry.identifier);

async function searchFor(query: string): Promise<void> {
  await page.fill('#search-text', query);
  await page.click('#search-submit');
  await until(
    async () => ({ status: await status(), errors: await page.locator('#search-error').count() }),
    (v) => v.errors > 0 || (v.status !== '' && v.status !== 'Searching…'),
    `the answer to "${query}"`,
  );
}

/** The browser logs every 4xx/5xx response as a console error: expected where the test asks for one. */
function unexpected(): string[] {
  return problems.filter((p) => !/Failed to load resource: the server responded with a status of (400|401|500)/.test(p));
}

describe('the Search view against a fake registry API', () => {
  test('the facets of the whole registry show before any query, with counts', async () => {
    const tags = page.locator('.search-facet[data-facet="tags"]');
    await tags.waitFor();
    assert.match(await text(tags.locator('button[data-value="claims"]')), /^claims 10 entries$/);
    assert.match(await text(page.locator('#search-start')), /Type what you are looking for/);
  });

  test('a query shows its results in relevance order with the verified facts of each', async () => {
    await searchFor('claims');
    assert.equal(await status(), '10 results on page 1, more on the next page.');
    const expected = ids(matched({ text: 'claims' }, 'none'));
    assert.equal(expected.length, 12);
    assert.deepEqual(await shown(), expected.slice(0, 10));
    const first = page.locator('.search-result').first();
    assert.equal(await text(first.locator('h3')), 'Warranty claims');
    assert.match(await text(first.locator('.search-score')), /^relevance 97$/);
    assert.match(await text(page.locator('#search-score-note')), /Relevance is not trust/);
    assert.match(await text(first.locator('.search-source')), /From this registry/);
    const fact = (name: string) => text(first.locator(`[data-fact="${name}"] dd`));
    assert.equal(await fact('snapshot'), 'yes as warranty_claims');
    assert.equal(await fact('verdict'), 'selected covers the need "claims"');
    assert.equal(await fact('health'), 'healthy');
    assert.equal(await fact('signature'), 'verified');
    assert.equal(await fact('protocol'), 'A2A 1.0');
    assert.match(await fact('card-kind'), /^public changed /);
    assert.equal(await fact('provenance'), 'static');
    assert.equal(await first.locator('[data-fact="provenance"] a').getAttribute('href'), '#/sources?source=static');
    assert.equal(await first.locator('a.search-card-link').getAttribute('href'), `#/card?url=${encodeURIComponent('https://agents.acme.example/warranty-claims')}`);
    assert.equal(env.fake.searches.at(-1)?.federation, 'none');
    await expectNoAxeViolationsAllRules(page, 'search results at 1366 px');
  });

  test('a lookalike result shows its warning, prominently, with whom it is like', async () => {
    const look = page.locator('.search-result[data-identifier="urn:air:acme.example:agent:warranty-claims-2"]');
    assert.equal(await look.getAttribute('class'), 'search-result panel search-result-lookalike');
    assert.equal(
      await text(look.locator('.search-lookalike')),
      '⚠ Lookalike name: this entry is confusingly like Warranty claims from https://agents.acme.example (the same name but for letter case). Check its origin before trusting it.',
    );
    assert.equal(await text(look.locator('[data-fact="snapshot"] dd')), 'no');
    assert.equal(await text(look.locator('[data-fact="signature"] dd')), 'unsigned');
    assert.equal(await page.locator('.search-lookalike').count(), 1, 'only the lookalike is flagged');
    await screenshot(page, 'dashboard-search');
  });

  test('next page shows the next results, none twice, in the same order; focus moves to the results', async () => {
    const expected = ids(matched({ text: 'claims' }, 'none'));
    const one = await shown();
    await page.click('#search-next');
    await until(status, (t) => t === '2 results on page 2, the last page.', 'page 2');
    const two = await shown();
    assert.deepEqual(two, expected.slice(10));
    assert.equal(two.filter((id) => one.includes(id)).length, 0, 'no result twice');
    assert.deepEqual([...one, ...two], expected, 'the order of page 1 continues');
    assert.equal((await focused(page)).id, 'search-results-h');
    assert.equal(await page.locator('#search-next').isDisabled(), true);
    await page.click('#search-prev');
    await until(status, (t) => t.endsWith('on page 1, more on the next page.'), 'page 1 again');
    assert.deepEqual(await shown(), one);
    assert.equal(env.fake.searches.at(-1)?.pageToken, undefined);
  });

  test('a facet click narrows the results (and the facets) to its value', async () => {
    const warranty = page.locator('.search-facet[data-facet="tags"] button[data-value="warranty"]');
    await until(() => text(warranty), (t) => /^warranty \d+ entries$/.test(t), 'the warranty facet of "claims"');
    const count = Number(/\d+/.exec(await text(warranty))?.[0]);
    await warranty.click();
    const expected = ids(matched({ text: 'claims', filter: { tags: ['warranty'] } }, 'none'));
    assert.equal(expected.length, count);
    await until(shown, (s) => JSON.stringify(s) === JSON.stringify(expected), 'the warranty results');
    assert.deepEqual(env.fake.searches.at(-1)?.query, { text: 'claims', filter: { tags: ['warranty'] } });
    assert.equal(await page.locator('.search-facet[data-facet="tags"] button[data-value="warranty"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.inputValue('#search-filter-tag'), 'warranty');
    await until(() => page.locator('.search-facet[data-facet="tags"] button[data-value="billing"]').count(), (n) => n === 0, 'the facets narrowed too');
    // The chip removes the filter again.
    await page.click('ul.search-active button');
    await until(shown, (s) => s.length === 10, 'all "claims" results again');
    assert.equal(await page.inputValue('#search-filter-tag'), '');
  });

  test('a filter (health, select) narrows; "referrals" lists other registries; "auto" says which result came from where', async () => {
    await page.selectOption('#search-filter-health', 'degraded');
    await page.click('#search-submit');
    await until(shown, (s) => JSON.stringify(s) === JSON.stringify(['urn:air:acme.example:agent:insurance-claims-4']), 'the degraded agent');
    assert.deepEqual(env.fake.searches.at(-1)?.query.filter, { 'verified.health': ['degraded'] });
    await page.selectOption('#search-filter-health', '');
    // A typed filter applies with Enter in its field.
    await page.fill('#search-filter-tag', 'billing, travel');
    await page.press('#search-filter-tag', 'Enter');
    await until(shown, (s) => s.length === 3, 'the billing and travel agents');
    assert.deepEqual(env.fake.searches.at(-1)?.query.filter, { tags: ['billing', 'travel'] });
    assert.deepEqual(await shown(), ids(matched({ text: 'claims', filter: { tags: ['billing', 'travel'] } }, 'none')));
    await page.fill('#search-filter-tag', '');

    await page.check('#search-federation-referrals');
    await page.click('#search-submit');
    await page.locator('#search-referrals').waitFor();
    assert.match(await text(page.locator('#search-referrals')), /Partner registry https:\/\/registry\.partner\.example\/ard/);
    assert.equal(env.fake.searches.at(-1)?.federation, 'referrals');

    await page.check('#search-federation-auto');
    await page.click('#search-submit');
    const remote = page.locator('.search-result[data-source="https://registry.partner.example/ard"]');
    await remote.waitFor();
    assert.match(await text(remote.locator('.search-source')), /From another registry: https:\/\/registry\.partner\.example\/ard/);
    assert.match(await text(remote.locator('.search-verified-by')), /As that registry says \(not verified here\)/);
    assert.equal(await remote.locator('a.search-card-link').count(), 0, 'no card view for a card this service did not fetch');
    assert.equal(await page.locator('#search-referrals').count(), 0);
    await page.check('#search-federation-none');
  });

  test('while a search is under way the page says so, in its live region, and the Search button waits', async () => {
    let release = () => {};
    env.fake.hold = new Promise<void>((resolve) => (release = resolve));
    try {
      await page.fill('#search-text', 'slow');
      await page.click('#search-submit');
      await until(status, (t) => t === 'Searching…', 'the loading state');
      assert.equal(await page.getAttribute('#search-status', 'role'), 'status');
      assert.equal(await page.locator('#search-submit').isDisabled(), true);
      assert.equal(await page.getAttribute('.search-main', 'aria-busy'), 'true');
    } finally {
      release();
      env.fake.hold = undefined;
    }
    await until(status, (t) => t === 'No agent matches “slow”.', 'the answer');
    assert.equal(await page.getAttribute('.search-main', 'aria-busy'), 'false');
  });

  test('an error answer shows the registry’s message and code; an empty answer says so', async () => {
    await searchFor('crash');
    await page.locator('#search-error').waitFor();
    assert.equal(await text(page.locator('#search-error p').first()), 'The search failed (HTTP 500, INTERNAL_ERROR): the index is being rebuilt');
    await searchFor('x'.repeat(41));
    await until(() => text(page.locator('#search-error p').first()), (t) => t.includes('HTTP 400'), 'the 400');
    assert.equal(await text(page.locator('#search-error p').first()), 'The search failed (HTTP 400, INVALID_ARGUMENT): query.text is longer than 40 characters');
    assert.match(await text(page.locator('#search-error')), /change the query or the filters/);
    await expectNoAxeViolationsAllRules(page, 'a failed search');
    await searchFor('zebra');
    assert.equal(await status(), 'No agent matches “zebra”.');
    assert.equal(await page.locator('#search-error').count(), 0);
    assert.deepEqual(unexpected(), []);
  });

  test('at 390 px: no sideways scroll, the filters fold behind a button, results are a list', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await searchFor('claims');
      assert.equal(await page.locator('#search-filters').isVisible(), false);
      assert.equal(await page.locator('#search-facets').isVisible(), false);
      await page.click('#search-filters-toggle');
      assert.equal(await page.getAttribute('#search-filters-toggle', 'aria-expanded'), 'true');
      await page.locator('#search-filter-tag').waitFor();
      await page.locator('.search-facet').first().waitFor();
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 390, `the Search view is ${width} px wide at 390 px`);
      const boxes = await page.locator('.search-result').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON() as { left: number; right: number }));
      assert.equal(boxes.length, 10);
      for (const b of boxes) assert.ok(b.left >= 0 && b.right <= 390, `a result inside the screen: ${b.left}–${b.right}`);
      await expectNoAxeViolationsAllRules(page, 'search at 390×844 with the filters open');
      await page.click('#search-filters-toggle');
      await screenshot(page, 'dashboard-search-phone');
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
  });

  test('a 401 brings the token prompt, as every view does', async () => {
    await page.fill('#search-text', 'token');
    await page.click('#search-submit');
    await page.locator('#token-input').waitFor();
    assert.match(await text(page.locator('#token-h')), /requires an API token/);
    // This loopback service needs none: connecting again shows the view.
    await page.click('.token-form button[type="submit"]');
    await page.locator('#view-title', { hasText: 'Search' }).waitFor();
    assert.deepEqual(unexpected(), []);
  });
});
