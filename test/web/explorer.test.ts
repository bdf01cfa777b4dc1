/**
 * The discovery-trace explorer page, driven through its controls in Chromium: every seed scenario
 * gives the seed's statistics in the page (and exactly what the library's `runTrace` gives),
 * playback steps and scrubs through the stages, a baseline shows what changed, and the whole page
 * works without a mouse.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { runDemo } from '../../src/demo/index.js';
import type { RunningDemo } from '../../src/demo/index.js';
import { DEFAULT_TRACE_INPUTS, runTrace } from '../../src/explorer/index.js';
import type { TraceInputs, TraceStats } from '../../src/explorer/index.js';
import { focused, launchBrowser, openPage, screenshot, tabTo, text, until } from './browser.js';

let browser: Browser;
let demo: RunningDemo;
let page: Page;
let problems: string[];

before(async () => {
  [browser, demo] = await Promise.all([launchBrowser(), runDemo({ speed: 20, port: 0, scenario: false, out: () => {} })]);
  ({ page, problems } = await openPage(browser));
  await page.goto(`${demo.url}/#/explorer`);
  await page.locator('#trace-results[data-state="ready"]').waitFor({ timeout: 10_000 });
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

const key = (inputs: TraceInputs): string => JSON.stringify(Object.fromEntries(Object.entries(inputs).sort(([a], [b]) => (a < b ? -1 : 1))));

/** Sets the controls through the form (from the defaults) and waits for the run of exactly these inputs. */
async function drive(patch: Partial<TraceInputs>): Promise<void> {
  await page.click('#x-defaults');
  if (patch.condition !== undefined) await page.selectOption('#x-condition', patch.condition);
  if (patch.credentials !== undefined) await page.setChecked('#x-credentials', patch.credentials);
  if (patch.maxAgeSeconds !== undefined) await page.fill('#x-max-age', String(patch.maxAgeSeconds));
  if (patch.publishV2AtSeconds === null) await page.uncheck('#x-publish-v2');
  else if (patch.publishV2AtSeconds !== undefined) await page.fill('#x-v2-at', String(patch.publishV2AtSeconds));
  if (patch.requireStreaming !== undefined) await page.setChecked('#x-require-streaming', patch.requireStreaming);
  if (patch.cardStreaming !== undefined) await page.setChecked('#x-card-streaming', patch.cardStreaming);
  if (patch.intervalSeconds !== undefined) await page.fill('#x-interval', String(patch.intervalSeconds));
  if (patch.rttMs !== undefined) await page.fill('#x-rtt', String(patch.rttMs));
  if (patch.attempts !== undefined) await page.fill('#x-attempts', String(patch.attempts));
  if (patch.staleOnError !== undefined) await page.setChecked('#x-stale', patch.staleOnError);
  if (patch.failFromSeconds !== undefined && patch.failFromSeconds !== null) {
    await page.check('#x-fail-from');
    await page.fill('#x-fail-at', String(patch.failFromSeconds));
  }
  if (patch.backoff !== undefined) await page.setChecked('#x-backoff', patch.backoff);
  await waitForRun({ ...DEFAULT_TRACE_INPUTS, ...patch });
}

async function waitForRun(inputs: TraceInputs): Promise<void> {
  const want = key(inputs);
  await until(
    async () => ({ state: await page.getAttribute('#trace-results', 'data-state'), inputs: await page.getAttribute('#trace-results', 'data-inputs') }),
    (r) => r.state === 'ready' && r.inputs === want,
    `the run of ${want}`,
  );
}

/** The statistics table, as the page shows it. */
async function pageStats(): Promise<Record<string, number>> {
  const cells = await page.locator('#trace-stats td[data-stat]').evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-stat'), td.textContent]));
  return Object.fromEntries(cells.map(([k, v]) => [String(k), Number(String(v).replace(/,/g, ''))]));
}

async function column(cell: string): Promise<string[]> {
  return page.locator(`#trace-attempts tbody tr ${cell}`).evaluateAll((tds) => tds.map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim()));
}

interface Scenario {
  name: string;
  patch: Partial<TraceInputs>;
  stats: Partial<TraceStats>;
  cards?: string[];
  statuses?: string[];
  rejectedAt?: string;
}

const HEALTHY = { networkFetches: 3, cacheHits: 2, notModified: 1, bytesTransferred: 2_400, accepted: 5, rejected: 0 };
const V1V2 = ['v1', 'v1', 'v2', 'v2', 'v2'];

const SCENARIOS: Scenario[] = [
  { name: 'healthy defaults', patch: {}, stats: HEALTHY, cards: V1V2, statuses: ['200', '—', '200', '—', '304'] },
  { name: '404: card not found', patch: { condition: 'not-found' }, stats: { networkFetches: 5, cacheHits: 0, rejected: 5, accepted: 0 }, statuses: Array(5).fill('404'), rejectedAt: 'fetch' },
  { name: '503: service unavailable', patch: { condition: 'unavailable' }, stats: { networkFetches: 5, rejected: 5, accepted: 0 }, statuses: Array(5).fill('503'), rejectedAt: 'fetch' },
  { name: '401 without credentials', patch: { condition: 'unauthorized' }, stats: { networkFetches: 5, rejected: 5 }, statuses: Array(5).fill('401'), rejectedAt: 'fetch' },
  { name: '401 with credentials supplied = healthy', patch: { condition: 'unauthorized', credentials: true }, stats: HEALTHY, cards: V1V2 },
  { name: 'malformed JSON', patch: { condition: 'malformed' }, stats: { networkFetches: 5, bytesTransferred: 6_000, rejected: 5 }, rejectedAt: 'parse' },
  { name: 'malformed JSON with max-age 30: unchanged', patch: { condition: 'malformed', maxAgeSeconds: 30 }, stats: { networkFetches: 5, bytesTransferred: 6_000, rejected: 5 }, rejectedAt: 'parse' },
  { name: 'non-HTTPS interface', patch: { condition: 'insecure' }, stats: { networkFetches: 5, bytesTransferred: 6_000, rejected: 5 }, rejectedAt: 'policy' },
  { name: 'client requires streaming, card lacks it', patch: { requireStreaming: true, cardStreaming: false }, stats: { networkFetches: 3, cacheHits: 2, rejected: 5, accepted: 0 }, cards: V1V2, rejectedAt: 'match' },
  { name: 'max-age 0', patch: { maxAgeSeconds: 0 }, stats: { networkFetches: 5, notModified: 3, accepted: 5 }, cards: V1V2, statuses: ['200', '304', '200', '304', '304'] },
  { name: 'max-age 30', patch: { maxAgeSeconds: 30 }, stats: { networkFetches: 1, cacheHits: 4, accepted: 5 }, cards: Array(5).fill('v1') },
  { name: 'no v2', patch: { publishV2AtSeconds: null }, stats: { networkFetches: 3, accepted: 5 }, cards: Array(5).fill('v1'), statuses: ['200', '—', '304', '—', '304'] },
  { name: 'interval 7 s and round trip 300 ms: as healthy', patch: { intervalSeconds: 7, rttMs: 300 }, stats: HEALTHY, cards: V1V2 },
];

describe('the explorer gives the seed’s numbers for every seed scenario', () => {
  for (const s of SCENARIOS) {
    test(s.name, async () => {
      await drive(s.patch);
      const stats = await pageStats();
      for (const [k, v] of Object.entries(s.stats)) assert.equal(stats[k], v, `${k} in the page`);
      // Every statistic is exactly what the library produces for these inputs.
      const library = await runTrace(s.patch);
      assert.deepEqual(stats, { ...library.stats });
      assert.equal(await text(page.locator('#trace-summary')), `${library.summary}.`);
      if (s.cards) assert.deepEqual(await column('td[data-card]'), s.cards);
      if (s.statuses) assert.deepEqual(await column('td:nth-of-type(3)'), s.statuses);
      if (s.rejectedAt) assert.deepEqual(await column('.reject-stage'), Array(5).fill(`at ${s.rejectedAt}`));
    });
  }

  test('stale-on-error with "fail from time T" (beyond the model)', async () => {
    await drive({ condition: 'unavailable', failFromSeconds: 11, staleOnError: true });
    const stats = await pageStats();
    assert.equal(stats.accepted, 5);
    assert.equal(stats.staleSelections, 3);
    assert.deepEqual(await column('td[data-card]'), ['v1', 'v1', 'v1 (stale)', 'v1 (stale)', 'v1 (stale)']);
  });
});

describe('playback, inspection and the baseline', () => {
  test('restart, next event and previous event step through the stages', async () => {
    await drive({});
    assert.equal(await text(page.locator('#pb-position')), '26', 'a new run is shown to its end');
    await page.click('#pb-restart');
    assert.equal(await text(page.locator('#pb-position')), '0');
    assert.match(await text(page.locator('.moment')), /Before the first attempt/);
    await page.click('#pb-next');
    assert.equal(await text(page.locator('#pb-position')), '1');
    assert.match(await text(page.locator('#moment-message')), /Attempt 1: discovery looks up https:\/\/orders\.example\.com\//);
    await page.click('#pb-next');
    assert.match(await text(page.locator('#moment-message')), /GET https:\/\/orders\.example\.com\/\.well-known\/agent-card\.json/);
    assert.equal(await page.getAttribute('.stage[data-stage="request"]', 'aria-current'), 'step', 'the request stage is the active one');
    assert.match(await text(page.locator('.stage[data-stage="validation"]')), /Not reached yet/);
    for (let i = 0; i < 4; i++) await page.click('#pb-next');
    assert.equal(await text(page.locator('#pb-position')), '6');
    assert.match(await text(page.locator('.stage[data-stage="validation"]')), /validation\.passed/);
    await page.click('#pb-prev');
    assert.equal(await text(page.locator('#pb-position')), '5');
    assert.equal(await page.locator('#trace-events tr.current').getAttribute('data-seq'), '5', 'the event list marks the inspected step');
  });

  test('scrubbing the timeline changes the inspected moment', async () => {
    await page.locator('#pb-scrub').fill('12100');
    await until(() => text(page.locator('.moment h2')), (t) => /attempt 3 at 12\.1 s/.test(t), 'attempt 3 at 12.1 s');
    assert.match(await text(page.locator('.stage[data-stage="cache"]')), /Stored card v2/);
    assert.match(await text(page.locator('#trace-attempts tr.row-selected')), /^3/);
    await screenshot(page, 'explorer');
    await page.locator('#pb-scrub').fill('6000');
    await until(() => text(page.locator('.moment h2')), (t) => /attempt 2 at 6 s/.test(t), 'attempt 2 at 6 s');
    assert.match(await text(page.locator('.stage[data-stage="cache"]')), /Fresh cached card v1 used without a request/);
    assert.match(await text(page.locator('.stage[data-stage="request"]')), /Not involved in this attempt/);
  });

  test('play advances on model time; pause stops', async () => {
    await page.click('#pb-restart');
    await page.selectOption('#pb-speed', '8');
    await page.click('#pb-play');
    await until(async () => Number(await text(page.locator('#pb-position'))), (n) => n >= 8, 'playback to pass event 8', 5_000);
    await page.click('#pb-pause');
    const at = await text(page.locator('#pb-position'));
    await page.waitForTimeout(300);
    assert.equal(await text(page.locator('#pb-position')), at, 'paused');
  });

  test('capture a baseline, change a control, see what changed', async () => {
    await drive({});
    await page.click('#baseline-capture');
    await page.fill('#x-max-age', '30');
    await waitForRun({ ...DEFAULT_TRACE_INPUTS, maxAgeSeconds: 30 });
    const changes = page.locator('#baseline-changes');
    assert.match(await text(changes), /Decisions changed/);
    assert.match(await text(changes.locator('tr[data-stat-change="networkFetches"]')), /Network fetches 3 1 −2/);
    assert.match(await text(changes), /control maxAgeSeconds: 10 → 30/);
    assert.match(await text(changes), /attempt 3 cardVersion: "v2" → "v1"/);
    // The statistics table shows the baseline column too.
    assert.match(await text(page.locator('#trace-stats')), /Baseline/);
    // Back to the baseline's inputs: nothing changed.
    await page.fill('#x-max-age', '10');
    await waitForRun({ ...DEFAULT_TRACE_INPUTS });
    assert.match(await text(changes), /Nothing changed against the baseline/);
    await page.click('#baseline-clear');
    assert.equal(await text(changes), '');
  });

  test('an invalid control says why and keeps the last run', async () => {
    const before = problems.length;
    await page.fill('#x-attempts', '');
    await until(() => page.getAttribute('#trace-results', 'data-state'), (s) => s === 'error', 'the error state');
    assert.equal(await page.getAttribute('#x-attempts', 'aria-invalid'), 'true');
    await page.fill('#x-attempts', '500');
    await until(() => text(page.locator('#x-attempts-err')), (t) => /between 1 and 100/.test(t), 'the library’s range message');
    await page.fill('#x-attempts', '5');
    await waitForRun({ ...DEFAULT_TRACE_INPUTS });
    // The refused run is a 400 from the API: expected here, and nothing else.
    const added = problems.splice(before);
    assert.ok(added.every((p) => /status of 400/.test(p)), added.join('\n'));
  });
});

describe('keyboard only', () => {
  test('a fresh page: Tab reaches the skip link, the nav and the explorer’s controls with a visible focus ring; the run is driven from the keyboard', async () => {
    const { page: kb, problems: kbProblems } = await openPage(browser);
    try {
      await kb.goto(`${demo.url}/`);
      await kb.locator('#view-title', { hasText: 'Endpoints' }).waitFor();
      await kb.keyboard.press('Tab');
      const first = await focused(kb);
      assert.match(first.text, /Skip to content/);
      assert.notEqual(first.outline, 'none');
      await tabTo(kb, 'nav-explorer', 10);
      const link = await focused(kb);
      assert.notEqual(link.outline, 'none');
      assert.ok(link.outlineWidth >= 2);
      await kb.keyboard.press('Enter');
      await kb.locator('#trace-results[data-state="ready"]').waitFor();
      await until(() => focused(kb), (f) => f.id === 'view-title', 'focus on the explorer heading');

      // Condition by keyboard: the select changes with the arrow keys.
      await tabTo(kb, 'x-condition', 10);
      assert.notEqual((await focused(kb)).outline, 'none');
      await kb.keyboard.press('ArrowDown');
      await until(() => kb.inputValue('#x-condition'), (v) => v === 'not-found', 'the 404 condition');
      await until(() => kb.getAttribute('#trace-results', 'data-inputs'), (v) => v !== null && v.includes('"condition":"not-found"'), 'the 404 run');
      await until(() => text(kb.locator('#trace-stats td[data-stat="rejected"]')), (t) => t === '5', '5 rejected');

      // Back to healthy, then a checkbox with Space and a number typed in.
      await kb.keyboard.press('ArrowUp');
      await tabTo(kb, 'x-max-age', 10);
      await kb.keyboard.press('Control+A');
      await kb.keyboard.type('30');
      await until(() => text(kb.locator('#trace-stats td[data-stat="networkFetches"]')), (t) => t === '1', '1 network fetch with max-age 30');

      // Playback from the keyboard.
      await tabTo(kb, 'pb-restart', 40);
      await kb.keyboard.press('Enter');
      assert.equal(await text(kb.locator('#pb-position')), '0');
      await kb.keyboard.press('Shift+Tab');
      assert.equal((await focused(kb)).id, 'pb-next');
      await kb.keyboard.press('Enter');
      await kb.keyboard.press('Space');
      assert.equal(await text(kb.locator('#pb-position')), '2');
      await tabTo(kb, 'pb-scrub', 10);
      await kb.keyboard.press('End');
      await until(() => text(kb.locator('#pb-position')), (t) => t === '19', 'the last event (19 with max-age 30)');
      await tabTo(kb, 'baseline-capture', 20);
      assert.notEqual((await focused(kb)).outline, 'none');
      await kb.keyboard.press('Enter');
      await until(() => text(kb.locator('.baseline')), (t) => /Baseline: 1 network fetch/.test(t), 'the captured baseline');
      assert.deepEqual(kbProblems, []);
    } finally {
      await kb.close();
    }
  });

  test('no script error, failed request or CSP violation on the way', () => {
    assert.deepEqual(problems, []);
  });
});
