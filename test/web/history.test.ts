/**
 * The whole story, always, and an obvious connection state: a service on a SQLite store records
 * snapshots, an alert and its resolution, an admission and a refusal, then thousands of cache
 * hits (which push the story out of the 1,000-event buffer); it restarts, and a page opened after
 * the restart shows every story event from the journal, with the chatter as counts. Then the
 * service stops: the page says so across the whole page and marks its data as of its time; it
 * starts again on the same port and store, and the page resynchronises without a reload.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let browser: Browser;
let dir: string;
let service: RunningService | undefined;
const A = 'https://billing.example';
const B = 'https://evil.example';

function options(port = 0): ServiceOptions {
  return {
    port,
    store: `sqlite:${join(dir, 'state.db')}`,
    sessions: { history: 'memory' },
    policy: { allow: [] },
    vocabulary: [],
    needs: [],
    logger: createLogger({ level: 'silent' }),
  };
}

function chatter(s: RunningService, n: number): void {
  for (let i = 0; i < n; i++) s.events.emit({ type: 'card.result', endpoint: A, outcome: i % 3 === 0 ? 'revalidated' : 'hit', failures: 0 });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2ad-history-'));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a page opened after a restart shows every snapshot, alert with its resolution, admission and refusal; a dropped stream is obvious and resyncs without a reload', async () => {
  let s = await startService(options());
  s.events.emit({ type: 'endpoint.admitted', endpoint: A, sources: ['static'] });
  s.events.emit({ type: 'endpoint.refused', endpoint: B, sources: ['registry'], code: 'ERR_HOST_NOT_ALLOWED', reason: 'evil.example is not on the allowlist' });
  s.events.emit({ type: 'match.verdict', endpoint: A, verdict: 'selected', localName: 'billing_agent' });
  s.events.emit({ type: 'snapshot.published', version: 11, digest: 'a'.repeat(64), agents: ['billing_agent'] });
  chatter(s, 1_500);
  s.events.emit({ type: 'alert', kind: 'repeated-failures', key: `repeated-failures:${A}`, endpoint: A, message: `${A} failed 5 times in a row` });
  chatter(s, 1_500);
  s.events.emit({ type: 'alert.resolved', kind: 'repeated-failures', key: `repeated-failures:${A}`, endpoint: A, message: `${A} answers again`, raisedAt: Date.now() - 1000 });
  s.events.emit({ type: 'snapshot.published', version: 12, digest: 'b'.repeat(64), previousDigest: 'a'.repeat(64), agents: ['billing_agent'] });
  chatter(s, 1_500);
  await s.close();

  // Restarted: the buffer holds only what the new process saw — chatter.
  s = service = await startService(options());
  const port = Number(new URL(s.url).port);
  chatter(s, 1_200);
  const { page, problems } = await openPage(browser);
  await page.goto(`${s.url}/#/snapshots`);
  await page.evaluate('window.__marker = 7');
  const alerts = page.locator('table.alerts tbody tr[data-kind="repeated-failures"]');
  await alerts.waitFor();
  assert.match(await text(alerts), /failed 5 times.*resolved.*answers again/, 'the alert with its resolution');

  await page.click('#nav-timeline');
  await page.locator('svg.timeline').waitFor();
  // (Versions 11–13 stand for the story's snapshots; the service publishes its own empty ones too.)
  for (const v of [11, 12]) assert.equal(await page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: new RegExp(`^v${v}$`) }).count(), 1, `snapshot v${v}`);
  assert.equal(await page.locator('svg.timeline .mark[data-type="alert"]').count(), 1);
  assert.equal(await page.locator('svg.timeline .mark[data-type="alert.resolved"]').count(), 1);
  assert.equal(await page.locator('svg.timeline line.alert-span.resolved').count(), 1, 'the alert runs to its resolution');
  assert.match(await text(page.locator('table.events tr[data-type="endpoint.refused"]')), /refused.*ERR_HOST_NOT_ALLOWED/);
  assert.match(await text(page.locator('table.events tr[data-type="endpoint.admitted"]')), /admitted/);
  assert.equal(await page.locator('table.events tr[data-type="card.result"]').count(), 0, 'no chatter rows');
  assert.match(await text(page.locator('#timeline-count')), /back to the retention horizon/);
  // The chatter as counts: this process's per endpoint, the store's durable totals.
  await until(() => text(page.locator('table.activity')), (t) => /hit 800/.test(t) && /revalidated 400/.test(t), 'the per-endpoint counts since the restart');
  const activity = (await (await fetch(`${s.url}/api/activity`)).json()) as { totals: Record<string, number> };
  assert.equal(activity.totals['card.result.hit'], 3_000 + 800, 'durable totals across the restart');
  assert.equal(await page.locator('#connection-banner').count(), 0);

  // The stream drops: the whole page says so, the data is marked as of its time.
  await s.close();
  service = undefined;
  await page.locator('#connection-banner').waitFor();
  assert.match(await text(page.locator('#connection-banner')), /Connection to the service lost at \d\d:\d\d:\d\d.*as of \d\d:\d\d:\d\d/);
  assert.match(await text(page.locator('#as-of')), /Data as of \d\d:\d\d:\d\d \(not live\)/);
  assert.match(await page.locator('.shell').getAttribute('class') ?? '', /data-stale/);

  // Back on the same port and store; something happened meanwhile.
  s = service = await startService(options(port));
  s.events.emit({ type: 'snapshot.published', version: 13, digest: 'c'.repeat(64), previousDigest: 'b'.repeat(64), agents: ['billing_agent'] });
  await page.locator('#connection-banner').waitFor({ state: 'detached', timeout: 20_000 });
  await until(() => page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: /^v13$/ }).count(), (n) => n === 1, 'v13 after the reconnect');
  assert.equal(await page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: /^v11$/ }).count(), 1, 'the older story is still there');
  assert.equal(await text(page.locator('#connection')), 'Live');
  assert.equal(await page.evaluate('window.__marker'), 7, 'never reloaded');
  // Requests failed while the service was down, on purpose.
  assert.deepEqual(problems.filter((p) => !/request failed|ERR_CONNECTION_REFUSED|Failed to load resource/.test(p)), []);
});
