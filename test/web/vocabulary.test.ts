/**
 * The dashboard speaks the vocabulary of docs/vocabulary.md (issue 42), in Chromium at 1366 px
 * and on a 390 px touch screen, against a real service: a real ADK JS peer (selected, critical),
 * a card endpoint answering 401, a host the allowlist does not name and a closed port.
 *
 * - A card fetched and refused reads `refused` with its cause badge ("unauthorized"), never
 *   `pending` or "failed fetch"; the allowlist's refusal and an unreachable peer name theirs.
 * - Every badge explains itself in the table's words: on hover, on keyboard focus (Escape hides
 *   it) and on a tap on the phone, where the explanation stays inside the screen.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Locator, Page } from 'playwright-core';
import type { RunningService } from '../../packages/service/src/index.js';
// @ts-expect-error — plain JS module of the dashboard, checked by its own JSDoc
import { BADGES, CAUSES, HEALTH, VERDICTS } from '../../packages/service/web/lib/vocabulary.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startVerdictFleet } from '../helpers/verdict-fleet.js';
import type { VerdictFleet } from '../helpers/verdict-fleet.js';
import { launchBrowser, openPage, screenshot, text } from './browser.js';

let browser: Browser;
let fleet: VerdictFleet;
let billing: RunningPeer;
let denied: JsonServer;
let service: RunningService;

before(async () => {
  fleet = await startVerdictFleet();
  ({ service, billing, denied } = fleet);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await fleet?.close();
});

/** The explanation a badge button points at (`aria-describedby`). */
function tipOf(page: Page, button: Locator): Promise<Locator> {
  return button.getAttribute('aria-describedby').then((id) => {
    assert.ok(id, 'the badge names its explanation');
    return page.locator(`[id="${id}"][role="tooltip"]`);
  });
}

const row = (page: Page, url: string): Locator => page.locator(`tr[data-endpoint="${url}"]`);

test('at 1366 px: refused with its cause, never pending; every badge explains itself on hover and on focus, Escape hides it', async () => {
  const { page, problems } = await openPage(browser);
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${service.url}/#/endpoints`);
  const hr = row(page, `${denied.origin}/`);
  await hr.waitFor();

  // The 401: refused, its cause in words, no "pending" and no "failed fetch" anywhere in the verdict.
  const verdictCell = hr.locator('td[data-verdict]');
  assert.equal(await verdictCell.getAttribute('data-verdict'), 'refused');
  assert.equal(await text(hr.locator('.cause[data-cause="unauthorized"] .tip-btn')), CAUSES['unauthorized']!.label);
  assert.doesNotMatch(await text(verdictCell), /pending|failed fetch/);
  assert.equal(await row(page, 'http://localhost:1/').locator('.cause').getAttribute('data-cause'), 'allowlist');
  const fresh = page.locator('tr[data-endpoint]', { has: page.locator('.cause[data-cause="unreachable"]') });
  assert.equal(await fresh.locator('td[data-verdict]').getAttribute('data-verdict'), 'pending');

  // Hover: the verdict badge says what "refused" means.
  const verdict = verdictCell.locator('.tip-btn').first();
  const verdictTip = await tipOf(page, verdict);
  assert.equal(await verdictTip.isVisible(), false, 'hidden until asked');
  await verdict.hover();
  await verdictTip.waitFor({ state: 'visible' });
  assert.equal(await text(verdictTip), VERDICTS['refused']);

  // Focus (the keyboard's way): the cause explains itself; Escape hides it while focus stays.
  const cause = hr.locator('.cause .tip-btn');
  const causeTip = await tipOf(page, cause);
  await page.mouse.move(0, 0);
  await cause.focus();
  await causeTip.waitFor({ state: 'visible' });
  assert.equal(await text(causeTip), CAUSES['unauthorized']!.meaning);
  await page.keyboard.press('Escape');
  await causeTip.waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate('document.activeElement?.className'), await cause.getAttribute('class'), 'focus stays on the badge');

  // The selected, critical agent: its health, critical chip, cache outcome and verdict badges all explain themselves.
  const ok = row(page, billing.baseUrl);
  const expected: Array<[Locator, string]> = [
    [ok.locator('td.health > .tip-wrap .tip-btn').first(), HEALTH['healthy']!],
    [ok.locator('.chip-critical'), BADGES['critical']!],
    [ok.locator('td[data-verdict] .tip-btn').first(), VERDICTS['selected']!],
    [ok.locator('td:nth-child(3) .tip-btn').first(), BADGES['200 changed']!],
  ];
  for (const [badge, words] of expected) {
    const tip = await tipOf(page, badge);
    await badge.focus();
    await tip.waitFor({ state: 'visible' });
    assert.equal(await text(tip), words);
  }
  await screenshot(page, 'dashboard-vocabulary');
  assert.deepEqual(problems, []);
});

test('at 390 px on a touch screen: a tap on a badge shows its explanation inside the screen; a second tap hides it', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  try {
    await page.goto(`${service.url}/#/endpoints`);
    const hr = row(page, `${denied.origin}/`);
    await hr.waitFor();
    const cause = hr.locator('.cause .tip-btn');
    await cause.scrollIntoViewIfNeeded();
    await cause.tap();
    const tip = await tipOf(page, cause);
    await tip.waitFor({ state: 'visible' });
    assert.equal(await text(tip), CAUSES['unauthorized']!.meaning);
    const box = (await tip.boundingBox())!;
    const width = (await page.evaluate('document.documentElement.clientWidth')) as number;
    assert.ok(box.x >= 0 && box.x + box.width <= width, `the explanation is inside the screen: ${box.x}–${box.x + box.width} of ${width}`);
    assert.equal(await cause.getAttribute('aria-expanded'), 'true');
    await cause.tap();
    assert.equal(await cause.getAttribute('aria-expanded'), 'false');
    await screenshot(page, 'dashboard-vocabulary-phone');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
