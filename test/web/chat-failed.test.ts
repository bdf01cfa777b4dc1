/**
 * The dashboard's chat shows which agent a failed turn called and what it answered (issue 39):
 * `warranty_agent` (@a2a-js/sdk 1.x on loopback) answers 401 to every JSON-RPC call; the service
 * answers the turn 502 `agent-failed`, and the page names the agent and its 401, then continues
 * the same session (answered by `billing_agent`, ADK JS `toA2a`).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import type { RunningService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startRefusingWarrantyService } from '../helpers/two-agent-service.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let env: Awaited<ReturnType<typeof startRefusingWarrantyService>>;
let service: RunningService;
let warranty: RunningV1Server;
let browser: Browser;

before(async () => {
  env = await startRefusingWarrantyService();
  ({ service, warranty } = env);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await env?.close();
});

test('a failed turn names the agent and its 401; the same session continues', async () => {
  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/chat`);
  await page.fill('#chat-message', 'Is serial 123 under warranty?');
  await page.click('.chat-form button[type=submit]');
  const turn = page.locator('.transcript li.turn').first();
  await until(() => turn.locator('.failed-agent').count(), (n) => n === 1, 'the failed turn', 15_000);
  assert.equal(await text(turn.locator('.failed-agent')), 'warranty_agent');
  assert.equal(await text(turn.locator('.reply .error')), `warranty_agent answered 401 Unauthorized at ${warranty.rpcUrl}`);
  const sessionId = await page.inputValue('#chat-session');
  assert.match(sessionId, /^s-/, 'the page keeps the session the failed turn started');

  await page.fill('#chat-message', 'Where is my invoice?');
  await page.click('.chat-form button[type=submit]');
  const second = page.locator('.transcript li.turn').nth(1);
  await until(() => text(second.locator('.reply')), (t) => /Answered by/.test(t), 'the second answer', 15_000);
  assert.equal(await text(second.locator('.author')), 'billing_agent');
  assert.equal(await page.inputValue('#chat-session'), sessionId, 'the same session');
  // The browser reports the 502 itself as a failed resource load; nothing else went wrong.
  assert.deepEqual(problems.filter((p) => !/502/.test(p)), []);
  await page.close();
});
