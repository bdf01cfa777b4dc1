/**
 * The dashboard on a phone (390 × 844, touch): no view scrolls sideways, and the timeline is a
 * vertical list of full-width buttons (44 px touch targets at least) instead of a time axis too
 * small to read or tap; tapping one opens its details right under it. The demo plays its morning
 * of changes first, so every view has something to show.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { runDemo } from '../../packages/service/src/demo/index.js';
import type { RunningDemo } from '../../packages/service/src/demo/index.js';
import { launchBrowser, screenshot, text, until } from './browser.js';

let browser: Browser;
let demo: RunningDemo;
let page: Page;
const problems: string[] = [];

before(async () => {
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  page = await context.newPage();
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  demo = await runDemo({ speed: 10, port: 0, out: () => {} });
  await demo.scenarioDone;
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

test('no view scrolls sideways at 390 px, and the top bar is one row (no empty band under it)', async () => {
  for (const view of ['endpoints', 'search', 'sources', 'timeline', 'snapshots', 'rollout', 'sessions', 'chat', 'card', 'inspect', 'explorer']) {
    await page.goto(`${demo.url}/#/${view}`);
    await page.locator('#view-title').waitFor();
    const { scroll, client, bar } = (await page.evaluate(
      "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth, bar: document.querySelector('.sidebar').getBoundingClientRect().height })",
    )) as { scroll: number; client: number; bar: number };
    assert.ok(scroll <= client, `#/${view}: the page is ${scroll} px wide in a ${client} px viewport`);
    // The top bar is its one row (brand and Menu): no dark band under it on a short page.
    assert.ok(bar < 90, `#/${view}: the top bar is ${bar} px tall`);
  }
  assert.deepEqual(problems, []);
});

test('the timeline is a list of tappable events, newest first; a tap opens its details under it', async () => {
  await page.goto(`${demo.url}/#/timeline`);
  const items = page.locator('.timeline-list .tl-item');
  await until(() => items.count(), (n) => n >= 10, 'the morning as a list');
  assert.equal(await page.locator('svg.timeline').count(), 0, 'no time axis on a phone');
  const boxes = await items.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON() as { height: number; left: number; right: number }));
  for (const b of boxes) {
    assert.ok(b.height >= 44, `a touch target of ${b.height} px`);
    assert.ok(b.left >= 0 && b.right <= 390, `inside the screen: ${b.left}–${b.right}`);
  }
  const times = await page.locator('.timeline-list time').evaluateAll((ts) => ts.map((t) => Date.parse(t.getAttribute('datetime') ?? '')));
  assert.deepEqual([...times].sort((a, b) => b - a), times, 'newest first');

  const published = items.filter({ hasText: /snapshot v5/ }).first();
  await published.tap();
  assert.equal(await published.getAttribute('aria-pressed'), 'true');
  const detail = page.locator('.timeline-list li:has(.tl-item[aria-pressed="true"]) > #timeline-detail');
  await detail.waitFor();
  assert.match(await text(detail), /v5/);
  const gap = await page.evaluate(`(() => {
    const b = document.querySelector('.tl-item[aria-pressed="true"]').getBoundingClientRect();
    const d = document.getElementById('timeline-detail').getBoundingClientRect();
    return d.top - b.bottom;
  })()`);
  assert.ok((gap as number) >= 0 && (gap as number) < 40, `the details sit right under the tapped item (${String(gap)} px)`);
  await screenshot(page, 'dashboard-timeline-phone');
  assert.deepEqual(problems, []);
});
