/**
 * The Search view against the service's real registry (no fake): a service admits real loopback
 * A2A peers (an ADK JS `toA2a` peer, A2A 0.3; an @a2a-js/sdk 1.x peer, A2A 1.0), indexes their
 * cards, and the page's query, facets and verified facts come from `/api/registry/*` as served.
 * (test/web/search.test.ts drives the page's every state against fixtures; this one proves the
 * page and the routes agree.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTwoAgentService, type TwoAgentService } from '../helpers/two-agent-service.js';
import { expectNoAxeViolationsAllRules } from './axe.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let env: TwoAgentService;
let browser: Browser;

before(async () => {
  env = await startTwoAgentService();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await env?.close();
});

test('a query on the page is answered by the real registry: the warranty agent with what the service verified, and facets from explore', async () => {
  await until(async () => env.service.loop.current()?.agents.length ?? 0, (n) => n === 2, 'both agents in the snapshot');
  const { page, problems } = await openPage(browser);
  await page.goto(`${env.service.url}/#/search`);
  await page.fill('#search-text', 'warranty');
  await page.click('#search-submit');
  const first = page.locator('.search-result').first();
  await first.waitFor();
  assert.equal(await page.locator('.search-result').count(), 1, 'only the warranty agent matches');
  const fact = (name: string) => text(first.locator(`[data-fact="${name}"] dd`));
  assert.equal(await fact('snapshot'), 'yes as warranty_agent');
  assert.match(await fact('verdict'), /^selected/);
  assert.equal(await fact('protocol'), 'A2A 1.0');
  assert.equal(await fact('provenance'), 'static (as “warranty_agent”)');
  assert.match(await text(first.locator('.search-source')), /From this registry/);
  assert.equal(await first.locator('a.search-card-link').getAttribute('href'), `#/card?url=${encodeURIComponent(env.warranty.baseUrl)}`);
  // Facets come from POST /api/registry/explore over the same matched set.
  assert.match(await text(page.locator('#search-side')), /warranty/);
  await expectNoAxeViolationsAllRules(page, 'search on the real registry');
  assert.deepEqual(problems, []);
  await page.close();
});
