/**
 * Accessibility and width of every dashboard view, with real data: the demo's peers and service
 * play the morning of changes (snapshots, an alert and its resolution, a removed endpoint, a
 * chat turn), then each view — endpoints (with an endpoint's Proposed by open), sources, timeline,
 * snapshots, rollout, sessions, chat, card, inspect (with a report) — is checked
 * by axe-core with every rule (WCAG A, AA and AAA — 7:1 text contrast —, best practices and
 * experimental rules) at 1366×768 and at 390×844, and at 390 px nothing is wider
 * than the screen. The trace explorer is checked the same way.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { runDemo } from '../../packages/service/src/demo/index.js';
import type { RunningDemo } from '../../packages/service/src/demo/index.js';
import { expectNoAxeViolationsAllRules } from './axe.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let browser: Browser;
let demo: RunningDemo;
let billing = '';

const VIEWS = ['endpoints', 'search', 'sources', 'timeline', 'snapshots', 'rollout', 'sessions', 'chat', 'card', 'inspect'] as const;
const SIZES = [
  { name: '1366 px', viewport: { width: 1366, height: 768 } },
  { name: '390×844', viewport: { width: 390, height: 844 } },
] as const;

before(async () => {
  browser = await launchBrowser();
  demo = await runDemo({ speed: 10, port: 0, out: () => {} });
  await demo.scenarioDone;
  const { endpoints } = (await (await fetch(`${demo.url}/api/endpoints`)).json()) as { endpoints: Array<{ baseUrl: string; names: string[] }> };
  billing = endpoints.find((e) => e.names.some((n) => /billing/i.test(n)))?.baseUrl ?? '';
  assert.notEqual(billing, '', 'the billing endpoint is known');
  // A chat turn, so the chat view has a transcript (kept by the page across views).
  const chat = await fetch(`${demo.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'I want to return my headphones' }) });
  assert.equal(chat.status, 200);
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

/** Opens the view and waits until its data is on the page. */
async function open(page: Page, view: (typeof VIEWS)[number] | 'explorer'): Promise<void> {
  // The Search view opens with a query run (`?q=`), so results, facts and facets are checked too.
  const hash = view === 'card' || view === 'inspect' ? `#/${view}?url=${encodeURIComponent(billing)}` : view === 'search' ? '#/search?q=billing' : `#/${view}`;
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  const ready: Record<string, string> = {
    endpoints: 'table.endpoints tbody tr[data-endpoint]',
    search: '.search-result',
    sources: 'section.source-panel',
    timeline: 'svg.timeline .mark[data-type="snapshot.published"]',
    snapshots: 'table.alerts tbody tr[data-seq]',
    rollout: '#rollout-active, #rollout-none, #rollout-off',
    sessions: 'table.roots tbody tr[data-version]',
    chat: '#chat-message',
    card: 'ol.json li',
    inspect: '#inspect-input',
    explorer: '#view-title',
  };
  const narrow = (page.viewportSize()?.width ?? 1366) <= 640;
  // On a phone the timeline is a list of buttons instead of marks on an axis.
  if (view === 'timeline' && narrow) ready.timeline = '.timeline-list .tl-item';
  await page.locator(ready[view]!).first().waitFor();
  if (view === 'endpoints') {
    // One endpoint's provenance open, so the Proposed by block is checked too.
    const details = page.locator('table.endpoints details.proposed-by').first();
    if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
    await details.locator('li.proposal').first().waitFor();
  }
  if (view === 'snapshots') await page.locator('.diff').waitFor();
  if (view === 'timeline') {
    // A mark chosen, so its details panel is checked too.
    if (narrow) await page.locator('.timeline-list .tl-item', { hasText: /^\S+ · alerts/ }).first().click();
    else await page.locator('svg.timeline .mark[data-type="alert"]').first().focus();
    await page.locator('#timeline-detail dl').waitFor();
  }
  if (view === 'inspect') {
    // The billing endpoint inspected, so its report (stages, headers, skills) is checked too.
    await page.click('#inspect-submit');
    await page.locator('#inspect-result .probe-report').waitFor({ timeout: 15_000 });
  }
  if (view === 'chat') {
    // Send one message from the page, so the transcript has a turn rendered by this page.
    await page.fill('#chat-message', 'Is serial 123 under warranty?');
    await page.click('.chat-form button[type=submit]');
    await until(() => text(page.locator('.transcript-log')), (t) => /Answered by/.test(t), 'the chat answer', 15_000);
  }
  await page.waitForTimeout(100);
}

for (const size of SIZES) {
  describe(`every dashboard view passes axe-core at ${size.name}`, () => {
    let page: Page;
    let problems: string[];
    before(async () => {
      ({ page, problems } = await openPage(browser));
      await page.setViewportSize(size.viewport);
      await page.goto(`${demo.url}/#/endpoints`);
    });
    after(() => page?.close());

    for (const view of VIEWS) {
      test(`${view}`, async () => {
        await open(page, view);
        await expectNoAxeViolationsAllRules(page, `#/${view} at ${size.name}`);
        if (size.viewport.width === 390) {
          const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
          assert.ok(width <= 390, `#/${view} is ${width} px wide at 390 px`);
          // The navigation is collapsed behind Menu, and open it passes too.
          assert.equal(await page.locator('#nav-toggle').getAttribute('aria-expanded'), 'false');
          if (view === 'endpoints') {
            await page.click('#nav-toggle');
            await expectNoAxeViolationsAllRules(page, `#/${view} at ${size.name} with the menu open`);
            await page.click('#nav-toggle');
          }
        }
      });
    }

    test('explorer', async () => {
      await open(page, 'explorer');
      await page.locator('table.trace-events tbody tr').first().waitFor();
      await expectNoAxeViolationsAllRules(page, `#/explorer at ${size.name}`);
      if (size.viewport.width === 390) {
        const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width <= 390, `#/explorer is ${width} px wide at 390 px`);
      }
    });

    test('no script error, failed request or CSP violation', () => {
      assert.deepEqual(problems, []);
    });
  });
}
