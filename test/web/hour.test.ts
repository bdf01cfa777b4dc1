/**
 * A page opened after an hour: the service runs end to end on a manual clock (its `clock`
 * option: the discovery loop, the card cache's freshness, the health tracker, the journal and the
 * event stamps all read it) against real loopback peers, through 65 minutes of model time with a
 * card change (a new skill: an alert and a snapshot), an outage (failures, removal, an alert) and
 * the recovery (the alert resolved, the agent back in a new snapshot), while discovery chatters
 * every minute. Chromium opens the dashboard only then: the timeline and *Latest* tell the whole
 * story, and the chatter is a rate strip, not marks.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { IMAGES, launchBrowser, openPage, screenshot, text, until } from './browser.js';

let browser: Browser;
let peers: FaultServer;
let service: RunningService;
const clock = new VirtualClock({ start: 1_000_000, wallStart: Date.now() - 66 * 60_000 });

before(async () => {
  browser = await launchBrowser();
  peers = await startFaultServer();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await peers?.close();
});

/** Model time passes a cycle (15 s) at a time: the loop's timers fire and its real requests complete. */
async function minutes(n: number): Promise<void> {
  for (let i = 0; i < n * 4; i++) {
    await clock.advance(15_000);
    // Real loopback requests made by the cycle: let them finish before time moves on.
    await new Promise((r) => setTimeout(r, 30));
    await clock.advance(0);
  }
}

test('a page opened after an hour of model time shows every snapshot, the alerts with their resolution, and the chatter as rates', async (t) => {
  const card = (port: number, name: string, skills: Array<{ id: string; tags: string[] }>) => adkStyleCard(port, name, skills);
  const billing: FaultEndpoint = peers.endpoint('billing', { cacheControl: 'max-age=60' });
  const returns: FaultEndpoint = peers.endpoint('returns', { cacheControl: 'max-age=60' });
  billing.setCard(card(peers.port, 'Billing', [{ id: 'invoices', tags: ['billing'] }]));
  returns.setCard(card(peers.port, 'Returns', [{ id: 'start-return', tags: ['returns'] }]));
  const started = startService({
    port: 0,
    clock,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [peers.origin], allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and charges.', keywords: ['invoice'] },
      { tag: 'returns', description: 'Returns.', keywords: ['return'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'returns' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers billing questions.', tags: ['billing'] },
      { name: 'returns_agent', url: returns.baseUrl, description: 'Handles returns.', tags: ['returns'] },
    ],
    sessions: { history: 'memory' },
    // A card stays usable 10 minutes past its freshness when its endpoint fails: then it is removed.
    cache: { minTtlMs: 0, maxStaleMs: 10 * 60_000 },
    loop: { cycleIntervalMs: 15_000 },
  });
  // The first cycle may wait on the clock.
  for (let i = 0; i < 50 && !(await Promise.race([started.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])); i++) await clock.advance(1_000);
  service = await started;

  const versions = async () => ((await (await fetch(`${service.url}/api/snapshots`)).json()) as { history: Array<{ version: number }> }).history.map((h) => h.version);
  await minutes(5);
  const first = await versions();
  assert.ok(first.length >= 1, 'a first snapshot');

  // Minute 5: returns gains a skill (a skills-changed alert, a new snapshot).
  returns.setCard(card(peers.port, 'Returns', [{ id: 'start-return', tags: ['returns'] }, { id: 'exchange', tags: ['returns'] }]));
  await minutes(15);
  // Minute 20: billing goes down for 20 minutes (failures, stale, removal: an alert).
  billing.set({ mode: 'status', status: 503 });
  await minutes(20);
  // Minute 40: it answers again (the alert resolved, billing back in a new snapshot).
  billing.set({ mode: 'ok' });
  await minutes(25);

  const all = await versions();
  t.diagnostic(`snapshots: ${all.join(', ')}`);
  assert.ok(all.length >= 4, `several snapshots over the hour: ${all.join(', ')}`);
  const journal = (await (await fetch(`${service.url}/api/journal?limit=1000&types=alert,alert.resolved`)).json()) as { events: Array<{ type: string; kind?: string; key?: string; at: number }> };
  const alerts = journal.events.filter((e) => e.type === 'alert');
  const resolutions = journal.events.filter((e) => e.type === 'alert.resolved');
  t.diagnostic(`alerts: ${alerts.map((a) => a.kind).join(', ')}; resolutions: ${resolutions.map((a) => a.kind).join(', ')}`);
  assert.ok(alerts.some((a) => a.kind === 'skills-changed'), 'the skills-changed alert');
  assert.ok(resolutions.length >= 1, 'an alert was resolved');
  const span = Math.max(...journal.events.map((e) => e.at)) - Math.min(...journal.events.map((e) => e.at));
  assert.ok(span >= 15 * 60_000, `the story spans the hour of model time (${Math.round(span / 60_000)} min)`);

  // Only now does a page open.
  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/timeline`);
  await page.locator('svg.timeline .mark[data-type="snapshot.published"]').first().waitFor();
  await until(() => page.locator('svg.timeline .mark[data-type="snapshot.published"]').count(), (n) => n === all.length, 'every snapshot on the timeline');
  for (const v of all) assert.equal(await page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: new RegExp(`^v${v}$`) }).count(), 1, `v${v} on the timeline`);
  assert.equal(await page.locator('svg.timeline .mark[data-type="alert"]').count(), alerts.length, 'every alert');
  assert.equal(await page.locator('svg.timeline .mark[data-type="alert.resolved"]').count(), resolutions.length, 'every resolution');
  assert.ok((await page.locator('svg.timeline line.alert-span.resolved').count()) >= 1, 'an alert runs to its resolution');
  const resolvedAlert = page.locator('svg.timeline .mark[data-type="alert"]').filter({ hasText: '' });
  let found = false;
  for (let i = 0; i < (await resolvedAlert.count()) && !found; i++) {
    await resolvedAlert.nth(i).focus();
    found = /resolved at \d\d:\d\d:\d\d, .* after it was raised/.test(await text(page.locator('#timeline-detail')));
  }
  assert.ok(found, 'an alert’s details give its resolution');

  // Latest: the snapshots and alerts, announced from the journal although the page saw none live.
  const latest = await text(page.locator('#live-region'));
  assert.match(latest, new RegExp(`Snapshot v${all.at(-1)} published`));
  assert.match(latest, /\d\d:\d\d:\d\d Alert repeated-failures/, 'the outage’s alert, with its time');
  assert.match(latest, /\d\d:\d\d:\d\d Resolved repeated-failures/, 'and its resolution');

  // The chatter: rates on the strip, never marks or rows.
  const chatterMarks = await page.locator('svg.timeline .mark[data-type="card.result"], svg.timeline .mark[data-type="card.fetch"]').count();
  const cardResults = await page.locator('svg.timeline .mark[data-type="card.result"]').evaluateAll((ms) => ms.length);
  assert.ok(chatterMarks === cardResults, 'no request marks');
  assert.ok(cardResults <= 6, `only card changes are marks (${cardResults})`);
  const strip = page.locator(`svg.timeline .lane[data-lane="${returns.baseUrl}"] .rate-strip`);
  await until(async () => Number(await strip.getAttribute('data-buckets').catch(() => '0')), (n) => n >= 30, 'the rate strip over the hour');
  const label = (await strip.getAttribute('aria-label')) ?? '';
  t.diagnostic(label);
  assert.match(label, /returns_agent: cache activity over the window in buckets of \d+ min: hits [\d.]+ per minute on average, at most [\d.]+; 304s [\d.]+ per minute on average/);
  assert.ok((await strip.locator('rect.rate-hits').count()) > 10, 'hit bars');
  const billingStrip = page.locator(`svg.timeline .lane[data-lane="${billing.baseUrl}"] .rate-strip`);
  assert.ok((await billingStrip.locator('rect.rate-failures').count()) >= 1, 'the outage shows as failure bars');
  await screenshot(page, 'dashboard-timeline-hour');
  assert.deepEqual(problems, []);
  t.diagnostic(`screenshot in ${IMAGES}`);
});
