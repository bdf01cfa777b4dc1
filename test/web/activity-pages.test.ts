/**
 * The dashboard reads every page of `/api/activity` (the API answers at most 1,000 endpoints a
 * page, 500 by default): with 1,200 endpoints chattering, the page's per-endpoint table counts
 * every one of them, not only the first page's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let browser: Browser;
let service: RunningService | undefined;
const ENDPOINTS = 1_200;
const endpoint = (i: number): string => `https://agent-${String(i).padStart(4, '0')}.example`;

before(async () => {
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
});

test('the per-endpoint activity counts every endpoint, across pages of /api/activity', async () => {
  const s = (service = await startService({
    port: 0,
    store: 'memory',
    sessions: { history: 'memory' },
    policy: { allow: [] },
    vocabulary: [],
    needs: [],
    logger: createLogger({ level: 'silent' }),
  }));
  for (let i = 0; i < ENDPOINTS; i++) s.events.emit({ type: 'card.result', endpoint: endpoint(i), outcome: 'hit', failures: 0, count: i + 1 });
  const first = (await (await fetch(`${s.url}/api/activity`)).json()) as { endpoints: unknown[]; nextAfter: string | null; endpointCount: number };
  assert.ok(first.endpoints.length < ENDPOINTS && first.nextAfter !== null && first.endpointCount === ENDPOINTS, 'the API pages them');

  const { page, problems } = await openPage(browser);
  const reads: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/activity') reads.push(new URL(r.url()).search);
  });
  await page.goto(`${s.url}/#/timeline`);
  const rows = page.locator('table.activity tbody tr');
  await until(() => rows.count(), (n) => n === ENDPOINTS, 'a row per endpoint');
  const last = endpoint(ENDPOINTS - 1);
  assert.match(await text(page.locator(`table.activity tbody tr[data-endpoint="${last}"]`)), new RegExp(`hit ${ENDPOINTS}\\b`), 'the last page’s endpoint with its count');
  assert.ok(
    reads.some((q) => q.includes('after=')),
    `later pages read with after= (${reads.join(' ')})`,
  );
  assert.deepEqual(problems, []);
});
