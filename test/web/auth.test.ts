/**
 * The dashboard against a service with a bearer token: the page asks for it when the API answers
 * 401, keeps it in sessionStorage (never in a URL), and then loads the lists and follows the
 * event stream with it (fetch + a stream parser, since EventSource cannot send headers).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { launchBrowser, openPage, text, until } from './browser.js';

const TOKEN = 'dashboard-test-token-7f3a';
let browser: Browser;
let service: RunningService;

before(async () => {
  // Started one after the other, so a browser that fails to launch leaves no service running.
  service = await startService({ port: 0, token: TOKEN, policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
});

test('the page asks for the token on 401, then loads and goes live with it', async () => {
  const { page, problems } = await openPage(browser);
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`${service.url}/#/endpoints`);
  await page.locator('#token-input').waitFor();
  assert.equal(await text(page.locator('#connection')), 'Token required');
  // Without the token the page shows no figures it does not have (not "0 endpoints", not "No snapshot yet").
  assert.equal(await page.locator('.tiles').count(), 0, 'no endpoint tiles behind the prompt');
  assert.doesNotMatch(await text(page.locator('.side-status')), /No snapshot yet/);

  await page.fill('#token-input', 'wrong-token');
  await page.click('.token-form button[type=submit]');
  await until(() => text(page.locator('#connection')), (t) => t === 'Token required', 'the wrong token to be refused');
  await page.locator('#token-input').waitFor();

  await page.fill('#token-input', TOKEN);
  await page.click('.token-form button[type=submit]');
  await until(() => text(page.locator('#connection')), (t) => t === 'Live', 'the stream to be live with the token');
  assert.equal(await page.locator('#token-input').count(), 0, 'the prompt is gone');
  assert.match(await text(page.locator('table.endpoints')), /No endpoints yet/);
  assert.equal(await page.evaluate("sessionStorage.getItem('a2a-discovery.token')"), TOKEN);
  assert.ok(requests.every((u) => !u.includes(TOKEN)), 'the token never travels in a URL');

  // The explorer's API calls carry it too.
  await page.click('#nav-explorer');
  await page.locator('#trace-results[data-state="ready"]').waitFor();
  assert.equal(await text(page.locator('#trace-stats td[data-stat="networkFetches"]')), '3');
  // Two 401s were expected (no token, then the wrong one); nothing else went wrong.
  assert.ok(problems.every((p) => /status of 401/.test(p)), problems.join('\n'));
  await page.close();
});
