/**
 * The Inspect view with AI Catalogs in Chromium: a catalog URL and a pasted catalog show each
 * document's stages and each entry's decision (type, version, Trust Manifest) with the card's
 * own stages; the result is announced; nothing is wider than a phone screen; axe-core finds no
 * violation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { expectNoAxeViolations } from './axe.js';
import { launchBrowser, openPage, text, until } from './browser.js';

const A2A = 'application/a2a-agent-card+json';

let browser: Browser;
let page: Page;
let problems: string[];
let s: RunningService;
let peer: JsonServer;

before(async () => {
  peer = await startJsonServer();
  peer.routes.set('/agents/billing.json', { body: cardFor(peer, 'billing') });
  peer.routes.set('/.well-known/ai-catalog.json', {
    headers: { 'content-type': 'application/ai-catalog+json' },
    body: {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:example.com:agent:billing', type: A2A, version: '1.0.0', url: '/agents/billing.json', displayName: 'Billing' },
        { identifier: 'urn:air:example.com:agent:billing', type: A2A, version: '0.9.0', url: '/agents/billing-old.json' },
        { identifier: 'urn:air:example.com:agent:broken', type: A2A, data: { name: 'Broken' } },
        { identifier: 'urn:air:example.com:mcp:files', type: 'application/mcp-server-card+json', url: '/mcp/files' },
      ],
    },
  });
  [browser, s] = await Promise.all([launchBrowser(), startService({ port: 0, policy: { allow: [peer.origin], allowLoopback: true }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) })]);
  ({ page, problems } = await openPage(browser));
  await page.goto(`${s.url}/#/inspect`);
  await page.locator('#view-title', { hasText: 'Inspect' }).waitFor();
});

after(async () => {
  await browser?.close();
  await s?.close();
  await peer?.close();
});

async function inspectInPage(kind: 'url' | 'catalog', value: string): Promise<void> {
  await page.check(`#inspect-kind-${kind}`);
  await page.fill('#inspect-input', value);
  await page.click('#inspect-submit');
  await until(() => text(page.locator('#inspect-status')), (t) => t !== '' && !/Inspecting/.test(t), 'the inspection result');
}

describe('the Inspect view with an AI Catalog', () => {
  test('a catalog URL: the document stages, then every entry with its decision and its card report', async () => {
    await inspectInPage('url', `${peer.origin}/.well-known/ai-catalog.json`);
    assert.match(await text(page.locator('#inspect-status')), /AI Catalog: 4 entries, 1 accepted, 1 refused, 1 superseded, 1 ignored/);
    const doc = page.locator('.ai-catalog-document').first();
    const docStages = await doc.locator(':scope > ol.probe-stages > li').evaluateAll((items) => items.map((li) => [li.getAttribute('data-stage'), li.getAttribute('data-state')]));
    assert.deepEqual(docStages, ['source', 'address', 'fetch', 'parse', 'schema', 'signature'].map((stage) => [stage, 'passed']));
    const entries = page.locator('.ai-catalog-entry');
    assert.deepEqual(await entries.evaluateAll((items) => items.map((li) => li.getAttribute('data-verdict'))), ['accepted', 'superseded', 'refused', 'ignored']);
    assert.match(await text(entries.nth(0)), /1\.0\.0: chosen — the newest semantic version, over 0\.9\.0/);
    assert.equal(await entries.nth(0).locator('.probe-report').getAttribute('data-stage'), 'selected');
    assert.match(await text(entries.nth(1)), /superseded/);
    assert.equal(await entries.nth(2).locator('.probe-report').getAttribute('data-stage'), 'schema');
    assert.match(await text(entries.nth(3)), /Not an A2A agent card/);
    await expectNoAxeViolations(page, 'inspect with an AI Catalog report at 1366 px');
    assert.equal(peer.count('/mcp/files'), 0);
  });

  test('a pasted catalog that is not usable says where, at 390 px without overflow', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await inspectInPage('catalog', JSON.stringify({ specVersion: '3.0', entries: [] }));
      assert.match(await text(page.locator('#inspect-status')), /The AI Catalog is not usable: refused at stage schema/);
      const failed = page.locator('.ai-catalog-document li[data-state="failed"]');
      assert.equal(await failed.getAttribute('data-stage'), 'schema');
      assert.match(await text(failed), /specVersion "3\.0" is a major version this consumer does not read/);
      await inspectInPage('url', `${peer.origin}/.well-known/ai-catalog.json`);
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 390, `the AI Catalog report is ${width} px wide at 390 px`);
      await expectNoAxeViolations(page, 'inspect with an AI Catalog report at 390×844');
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
    assert.deepEqual(problems, []);
  });

  test("an answer cut at the service's bounds says so, with each bound that bit", async () => {
    const small = await startService({ port: 0, policy: { allow: [peer.origin], allowLoopback: true }, vocabulary: [], needs: [], limits: { inspectMaxEntries: 2 }, logger: createLogger({ level: 'silent' }) });
    try {
      await page.goto(`${small.url}/#/inspect`);
      await page.locator('#view-title', { hasText: 'Inspect' }).waitFor();
      await inspectInPage('url', `${peer.origin}/.well-known/ai-catalog.json`);
      const notice = page.locator('.notice', { hasText: 'truncated' });
      assert.match(await text(notice), /This answer is truncated/);
      assert.match(await text(notice.locator('li').first()), /at most 2 entries are read/);
      await expectNoAxeViolations(page, 'a truncated inspection');
    } finally {
      await page.goto(`${s.url}/#/inspect`);
      await small.close();
    }
    assert.deepEqual(problems, []);
  });
});
