/**
 * The Inspect view in Chromium against a live service and real loopback peers: a URL, a pasted
 * card and a pasted catalog are judged stage by stage in the page under the service's allowlist
 * (a host outside it never sees a request), the result is announced in a live region, the form
 * works from the keyboard alone, and at 390×844 nothing is wider than the screen; axe-core finds
 * no violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { Answer } from '../cache/scripted-server.js';
import { startScriptedServer } from '../cache/scripted-server.js';
import { cardFor } from '../helpers/cards.js';
import { expectNoAxeViolations } from './axe.js';
import { focused, launchBrowser, openPage, screenshot, tabTo, text, until } from './browser.js';

type Scripted = Awaited<ReturnType<typeof startScriptedServer>>;

let browser: Browser;
let page: Page;
let problems: string[];
let s: RunningService;
let peer: Scripted;
let outside: Scripted;

before(async () => {
  [peer, outside] = await Promise.all([startScriptedServer(), startScriptedServer()]);
  peer.script((req, path): Answer => {
    if (path === '/billing/.well-known/agent-card.json') {
      if (req.headers['if-none-match'] === '"b1"') return { status: 304, headers: { etag: '"b1"' } };
      return { status: 200, headers: { etag: '"b1"', 'cache-control': 'max-age=300' }, body: cardFor(peer, 'billing') };
    }
    if (path === '/broken/.well-known/agent-card.json') return { status: 200, body: '{ "name": ' };
    return { status: 404 };
  });
  outside.script(() => ({ status: 200, body: cardFor(outside, 'x') }));
  [browser, s] = await Promise.all([
    launchBrowser(),
    // One endpoint discovered, so the endpoints table, the card view and the timeline can link to the inspector.
    startService({ port: 0, policy: { allow: [peer.origin], allowLoopback: true }, static: [{ name: 'billing', url: `${peer.origin}/billing/`, description: 'Billing.', tags: ['billing'] }], vocabulary: [{ tag: 'billing', description: 'Invoices and charges.' }], needs: [], logger: createLogger({ level: 'silent' }) }),
  ]);
  ({ page, problems } = await openPage(browser));
  await page.goto(`${s.url}/#/inspect`);
  await page.locator('#view-title', { hasText: 'Inspect' }).waitFor();
});

after(async () => {
  await browser?.close();
  await s?.close();
  await Promise.all([peer?.close(), outside?.close()]);
});

/** The stages of the first report on the page: `[stage, state]`. */
async function stages(scope = page.locator('#inspect-result .probe-report').first()): Promise<Array<[string, string]>> {
  return (await scope.locator('ol.probe-stages > li').evaluateAll((items) => items.map((li) => [li.getAttribute('data-stage'), li.getAttribute('data-state')]))) as Array<[string, string]>;
}

async function inspectInPage(kind: 'url' | 'card' | 'catalog', value: string): Promise<void> {
  await page.check(`#inspect-kind-${kind}`);
  await page.fill('#inspect-input', value);
  await page.click('#inspect-submit');
  await until(() => text(page.locator('#inspect-status')), (t) => t !== '' && !/Inspecting/.test(t), 'the inspection result');
}

describe('the Inspect view', () => {
  test('is in the navigation; a URL the allowlist admits passes every stage, with the HTTP caching it saw', async () => {
    assert.equal(await page.locator('#nav-inspect').getAttribute('aria-current'), 'page');
    await inspectInPage('url', `${peer.origin}/billing/`);
    // "Accepted" says what was checked and what was not (the needs are not run by an inspection).
    assert.match(await text(page.locator('#inspect-status')), /^Accepted: discovery would admit, fetch and cache this card; .*configured needs, which an inspection does not check\.$/);
    assert.deepEqual(await stages(), [
      ['source', 'passed'],
      ['address', 'passed'],
      ['fetch', 'passed'],
      ['parse', 'passed'],
      ['schema', 'passed'],
      ['policy', 'passed'],
      ['signature', 'passed'],
    ]);
    const fetchStage = await text(page.locator('li[data-stage="fetch"]'));
    assert.match(fetchStage, /HTTP 200; max-age 300 s; ETag "b1"; a conditional request got 304; the ETag is stable/);
    assert.match(fetchStage, /cache-control max-age=300/);
    assert.match(await text(page.locator('li[data-stage="address"]')), /Connected to 127\.0\.0\.1/);
    assert.match(await text(page.locator('.probe-report .probe-skills')), /billing tags: billing/);
    await screenshot(page, 'dashboard-inspect');
  });

  test('a URL outside the allowlist is refused at the source stage and the peer sees no request', async () => {
    outside.requests.length = 0;
    await inspectInPage('url', `${outside.origin}/`);
    assert.match(await text(page.locator('#inspect-status')), /Refused at stage source: .*not in the allowlist/);
    assert.deepEqual(await stages(), [
      ['source', 'failed'],
      ['address', 'not-reached'],
      ['fetch', 'not-reached'],
      ['parse', 'not-reached'],
      ['schema', 'not-reached'],
      ['policy', 'not-reached'],
      ['signature', 'not-reached'],
    ]);
    assert.equal(outside.requests.length, 0);
    // A problem about the whole request shows no "$" path.
    assert.equal(await page.locator('li[data-state="failed"] code.path').count(), 0);
  });

  test('a pasted card with problems fails at its stage, each problem with its JSON path', async () => {
    const broken = { ...cardFor(peer, 'b'), capabilities: undefined, skills: [{ id: 'b', name: 'b', description: 'B.' }] };
    await inspectInPage('card', JSON.stringify(broken, null, 2));
    // The status line names the path the list below names.
    assert.match(await text(page.locator('#inspect-status')), /^Refused at stage schema: at capabilities: required, must be an object$/);
    assert.deepEqual(await stages(), [
      ['parse', 'passed'],
      ['schema', 'failed'],
      ['policy', 'not-reached'],
      ['signature', 'not-reached'],
    ]);
    const failed = await text(page.locator('li[data-state="failed"]'));
    assert.match(failed, /capabilities required, must be an object/);
    assert.match(failed, /skills\[0\]\.tags required, must be an array of strings/);
    // The URL typed before is still there when switching back (the form keeps each kind's text).
    await page.check('#inspect-kind-url');
    assert.equal(await page.inputValue('#inspect-input'), `${outside.origin}/`);
  });

  test('a pasted catalog: one decision per entry', async () => {
    outside.requests.length = 0;
    const catalog = { agents: [{ name: 'billing', url: `${peer.origin}/billing/` }, { name: 'elsewhere', url: `${outside.origin}/` }, { name: 'broken', url: `${peer.origin}/broken/` }] };
    await inspectInPage('catalog', JSON.stringify(catalog));
    assert.match(await text(page.locator('#inspect-status')), /Catalog: 3 entries, 1 accepted, 2 refused/);
    const entries = page.locator('.catalog-entry');
    assert.equal(await entries.count(), 3);
    const verdicts = await entries.locator('.probe-report').evaluateAll((r) => r.map((x) => [x.getAttribute('data-accepted'), x.getAttribute('data-stage')]));
    assert.deepEqual(verdicts, [
      ['true', 'selected'],
      ['false', 'source'],
      ['false', 'parse'],
    ]);
    assert.match(await text(entries.nth(2)), /Refused at stage parse/);
    assert.equal(outside.requests.length, 0);
    await expectNoAxeViolations(page, 'inspect with a catalog report at 1366 px');
  });

  test('keyboard only: choose the kind with the arrow keys, type, Ctrl+Enter; the result is announced in a polite live region', async () => {
    await page.goto(`${s.url}/#/inspect`);
    await page.locator('#view-title', { hasText: 'Inspect' }).waitFor();
    await page.locator('#inspect-kind-url').focus();
    await page.keyboard.press('ArrowRight');
    assert.equal((await focused(page)).id, 'inspect-kind-card');
    assert.equal(await page.isChecked('#inspect-kind-card'), true);
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).id, 'inspect-input');
    // The card pasted earlier is kept; replace it.
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(JSON.stringify(cardFor(peer, 'billing')));
    await page.keyboard.press('Control+Enter');
    const status = page.locator('#inspect-status');
    assert.equal(await status.getAttribute('role'), 'status');
    assert.equal(await status.getAttribute('aria-live'), 'polite');
    await until(() => text(status), (t) => /Accepted/.test(t), 'the pasted card accepted');
    // The submit button is reachable by Tab too, and the labels name every control.
    await page.locator('#inspect-input').focus();
    assert.ok((await tabTo(page, 'inspect-submit', 5)) >= 1);
    assert.equal(await page.locator('label[for="inspect-input"]').count(), 1);
    assert.deepEqual(problems, []);
  });

  test('#/inspect?url= fills the URL field (a link from elsewhere in the dashboard)', async () => {
    await page.check('#inspect-kind-catalog');
    const target = `${peer.origin}/billing/.well-known/agent-card.json`;
    await page.evaluate(`location.hash = ${JSON.stringify(`#/inspect?url=${encodeURIComponent(target)}`)}`);
    await until(() => page.inputValue('#inspect-input'), (v) => v === target, 'the linked URL in the field');
    assert.equal(await page.isChecked('#inspect-kind-url'), true);
    await page.click('#inspect-submit');
    await until(() => text(page.locator('#inspect-status')), (t) => /Accepted/.test(t), 'the linked card URL accepted');
    assert.equal(await page.locator('#inspect-result .probe-source').innerText(), target);
  });

  test('"Inspect" on an endpoint\'s row, its card view and its timeline details opens the inspector with its URL; running it shows the stages', async () => {
    const base = `${peer.origin}/billing/`;
    await page.goto(`${s.url}/#/endpoints`);
    await page.reload();
    const row = page.locator(`table.endpoints tbody tr[data-endpoint="${base}"]`);
    await row.locator('a.inspect-link').click();
    await until(() => page.inputValue('#inspect-input'), (v) => v === base, 'the endpoint\'s URL in the field');
    assert.equal(await page.locator('#nav-inspect').getAttribute('aria-current'), 'page');
    assert.equal(await page.isChecked('#inspect-kind-url'), true);
    await page.click('#inspect-submit');
    await until(() => page.locator('#inspect-result .probe-source').allInnerTexts(), (t) => t[0] === `${base}.well-known/agent-card.json`, 'the report on the endpoint\'s card');
    assert.match(await text(page.locator('#inspect-status')), /Accepted/);
    assert.deepEqual(await stages(), ['source', 'address', 'fetch', 'parse', 'schema', 'policy', 'signature'].map((stage) => [stage, 'passed']));

    // The card view links to the same.
    await page.check('#inspect-kind-card');
    await page.evaluate(`location.hash = ${JSON.stringify(`#/card?url=${encodeURIComponent(base)}`)}`);
    await page.locator('#card-inspect').click();
    await until(() => page.inputValue('#inspect-input'), (v) => v === base, 'the URL from the card view');
    assert.equal(await page.isChecked('#inspect-kind-url'), true);

    // So do an endpoint event's details on the timeline.
    await page.fill('#inspect-input', '');
    await page.evaluate(`location.hash = '#/timeline'`);
    // By keyboard: marks of events a few milliseconds apart overlap, and a click may land on another.
    const mark = page.locator('svg.timeline .mark[data-type^="endpoint."]').first();
    await mark.focus();
    await mark.press('Enter');
    await page.locator('#timeline-inspect').click();
    await until(() => page.inputValue('#inspect-input'), (v) => v === base, 'the URL from the timeline');
    assert.deepEqual(problems, []);
  });

  test('at 390×844: nothing is wider than the screen, with a URL report and a catalog report shown', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${s.url}/#/inspect`);
      await page.locator('#view-title', { hasText: 'Inspect' }).waitFor();
      await inspectInPage('url', `${peer.origin}/billing/`);
      assert.equal((await stages()).length, 7);
      let width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 390, `the URL report is ${width} px wide at 390 px`);
      await inspectInPage('catalog', JSON.stringify({ agents: [{ name: 'elsewhere-with-a-rather-long-name', url: `${outside.origin}/a/very/long/path/that/should/wrap/inside/the/panel/` }] }));
      width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 390, `the catalog report is ${width} px wide at 390 px`);
      await expectNoAxeViolations(page, 'inspect at 390×844');
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
    assert.deepEqual(problems, []);
  });
});
