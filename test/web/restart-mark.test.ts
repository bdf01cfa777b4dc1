/**
 * A restart is shown as a restart, and an alert open across it is listed once (issue 25, item 3):
 * a service on a SQLite store with a critical agent whose card server answers 500 raises
 * `critical-unavailable`; it restarts on the same store with the condition still there. A page
 * opened after the restart shows one restart mark across the timeline (with what it carried in
 * its details) and the alert once, still open, in the Snapshots view.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { launchBrowser, openPage, screenshot, text } from './browser.js';

let browser: Browser;
let dir: string;
let warranty: RunningV1Server;
let billing: JsonServer;
let service: RunningService | undefined;

function options(): ServiceOptions {
  return {
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(warranty.baseUrl).origin, billing.origin], allowLoopback: true },
    vocabulary: [
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
      { tag: 'billing', description: 'Invoices.', keywords: ['invoice'] },
    ],
    needs: [{ tag: 'warranty' }],
    static: [
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
      { name: 'billing_agent', url: billing.origin, description: 'Answers invoice questions.', tags: ['billing'], critical: true },
    ],
    cache: { minTtlMs: 0, maxTtlMs: 1, backoffBaseMs: 1, backoffMaxMs: 1 },
    loop: { cycleIntervalMs: 600_000 },
    sessions: { history: 'memory' },
    store: 'sqlite:state.sqlite',
    storeOptions: { dataDir: dir },
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2ad-restart-mark-'));
  warranty = await startV1Server({ prefix: 'warranty' });
  billing = await startJsonServer();
  billing.routes.set('/.well-known/agent-card.json', { status: 500, body: { error: 'down' } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all([warranty?.close(), billing?.close()]);
  await rm(dir, { recursive: true, force: true });
});

test('after a restart the timeline shows one restart mark, saying what it carried, and an alert open across it is listed once', async () => {
  const first = await startService(options());
  await first.loop.refreshNow();
  await first.close();

  const s = (service = await startService(options()));
  await s.loop.refreshNow();
  await s.loop.refreshNow();
  await s.flushStore();
  const { page, problems } = await openPage(browser);
  await page.goto(`${s.url}/#/snapshots`);
  const rows = page.locator('table.alerts tbody tr[data-kind="critical-unavailable"]');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 1, 'the alert is listed once');
  assert.match(await text(rows), /open/);

  await page.click('#nav-timeline');
  await page.locator('svg.timeline').waitFor();
  const starts = page.locator('svg.timeline .mark[data-type="service.started"]');
  assert.equal(await starts.count(), 2, 'the first start and the restart');
  const restart = starts.filter({ hasText: /^restart$/ });
  assert.equal(await restart.count(), 1, 'one restart mark');
  assert.equal(await page.locator('svg.timeline .mark[data-type="alert"][aria-label*="critical-unavailable"]').count(), 1, 'one alert mark');
  await restart.focus();
  await page.keyboard.press('Enter');
  assert.match(await text(page.locator('dl.kv')), /came back.*1 open alert carried over, not raised again/);
  await screenshot(page, 'dashboard-timeline-restart');
  assert.deepEqual(problems, []);
});
