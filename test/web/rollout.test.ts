/**
 * The Rollout view against a real service and a real A2A peer (@a2a-js/sdk 1.x) deployed
 * blue/green: the returns agent's new version drops a skill (a breaking change), so it rolls out by
 * steps (5 → 25 → 100 %). The page shows the rollout in progress — the staged agent with its
 * impact and reason, the step, the figures of both sides —; an operator holds it (after
 * confirming), sees a resume made elsewhere arrive live, rolls it back (a Cancel first changes
 * nothing) and finds it rolled back in the history and its change quarantined. The timeline draws
 * the decisions as marks, the Endpoints view shows each agent's call health beside its fetch
 * health. Checked with axe-core (every rule) and for horizontal overflow at 1366 and 390 px.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startVersionedPeer, type VersionedPeer } from '../helpers/versioned-peer.js';
import { waitFor } from '../helpers/wait-for.js';
import { expectNoAxeViolationsAllRules } from './axe.js';
import { launchBrowser, openPage, screenshot, text, until } from './browser.js';

let browser: Browser;
let peer: VersionedPeer;
let service: RunningService;
let page: Page;
let problems: string[];

/** Session owner secrets, by session id (a session's next turn presents it). */
const secrets = new Map<string, string>();

async function chat(sessionId: string): Promise<string> {
  const secret = secrets.get(sessionId);
  const res = await fetch(`${service.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) },
    body: JSON.stringify({ message: 'I want to return order 12', sessionId }),
  });
  const body = (await res.json()) as { digest?: string; sessionSecret?: string };
  if (body.sessionSecret !== undefined) secrets.set(sessionId, body.sessionSecret);
  assert.equal(res.status, 200, `a turn is answered (${JSON.stringify(body)})`);
  return body.digest ?? '';
}

interface RolloutJson {
  active: { candidate: string; status: string; share: number } | null;
  figures: { candidate: Record<string, { calls: number }>; baseline: Record<string, { calls: number }> } | null;
}

async function rollout(): Promise<RolloutJson> {
  return (await (await fetch(`${service.url}/api/rollout`)).json()) as RolloutJson;
}

async function noOverflow(what: string): Promise<void> {
  const { scroll, client } = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })')) as { scroll: number; client: number };
  assert.ok(scroll <= client, `${what}: the page is ${scroll} px wide in a ${client} px viewport`);
}

before(async () => {
  browser = await launchBrowser();
  peer = await startVersionedPeer({
    name: 'Returns Agent',
    prefix: 'returns',
    v1: { skills: [{ id: 'returns', tags: ['returns'] }, { id: 'refunds', tags: ['refunds'] }] },
    v2: { skills: [{ id: 'returns', tags: ['returns'] }] },
  });
  service = await startService({
    port: 0,
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns and refunds of orders.' }],
    needs: [{ tag: 'returns' }],
    static: [{ name: 'returns_agent', url: peer.baseUrl, description: 'Handles returns of orders.', tags: ['returns'] }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 100 },
    sessions: { maxSessions: 1_000 },
    limits: { maxSessionsPerClient: 1_000 },
    // A step holds a minute and 20 turns: nothing advances by itself while the test runs.
    rollout: { steps: [5, 25, 100], holdMs: 60_000, minTurns: 20, minSamples: 10 },
    logger: createLogger({ level: 'silent' }),
  });
  // The current version's turns first (the other side of the comparison), then the release.
  for (let i = 0; i < 12; i++) await chat(`warm-${i}`);
  peer.release();
  const { candidate } = await waitFor(async () => (await rollout()).active ?? undefined, 'the release starts a rollout', 10_000);
  // New sessions until a few turns have landed on each side (5 % of new sessions on the candidate).
  // Both sides: when the first new session lands on the candidate, its two turns alone reach 2 and
  // the current snapshot would have none yet (1 run in 20 failed that way).
  const turnsOn = (f: Awaited<ReturnType<typeof rollout>>['figures'], side: 'candidate' | 'baseline'): number => f?.[side]['*']?.calls ?? 0;
  for (let i = 0; i < 400; i++) {
    const { figures } = await rollout();
    if (turnsOn(figures, 'candidate') >= 2 && turnsOn(figures, 'baseline') >= 2) break;
    const digest = await chat(`s-${i}`);
    if (digest === candidate) await chat(`s-${i}`);
  }
  ({ page, problems } = await openPage(browser));
});

after(async () => {
  await browser?.close();
  await service?.close();
  await peer?.close();
});

test('the rollout in progress: the staged agent with its impact and reason, the step, the figures of both sides', async () => {
  await page.goto(`${service.url}/#/rollout`);
  const active = page.locator('#rollout-active');
  await active.waitFor();
  assert.equal(await active.getAttribute('data-status'), 'running');
  assert.match(await text(page.locator('.rollout-title')), /Rollout of returns_agent running/);
  const staged = page.locator('table.rollout-changes tr[data-agent="returns_agent"]');
  assert.match(await text(staged), /returns_agent breaking skill "refunds" removed/);
  // 5 → 25 → 100, the first one current.
  assert.deepEqual(await page.locator('ol.rollout-steps .step-share').allInnerTexts(), ['5 %', '25 %', '100 %']);
  assert.equal(await page.locator('ol.rollout-steps li[aria-current="step"] .step-share').innerText(), '5 %');
  assert.match(await text(page.locator('#rollout-progress')), /Step 1 of 3: 5 % of new sessions start on the candidate\. Held .* of 60 s \(.* left\) and \d+ of 20 turns on the candidate; then it advances to 25 %/);
  // Both sides, per staged agent and for all agents: the candidate has turns, the current more.
  const all = page.locator('table.rollout-figures tr[data-agent="*"]');
  await until(() => text(all), (t) => /^all agents \d+ 0 0 % \d+ ms \d+ 0 0 % \d+ ms$/.test(t), 'the figures of both sides for all agents');
  assert.match(await text(page.locator('table.rollout-figures tr[data-agent="returns_agent"]')), /^returns_agent \d+ 0 0 % \d+ ms \d+ 0 0 % \d+ ms$/);
  assert.match(await text(page.locator('#rollout-decisions')), /started 5 % of new sessions automatically, on the figures of real calls: returns_agent: skill "refunds" removed/);
  // The navigation says the share while it runs.
  assert.equal(await text(page.locator('#nav-rollout .count')), '5 %');
  await noOverflow('#/rollout at 1366 px');
  await expectNoAxeViolationsAllRules(page, '#/rollout at 1366 px');
  await screenshot(page, 'dashboard-rollout');

  await page.setViewportSize({ width: 390, height: 844 });
  await active.waitFor();
  await noOverflow('#/rollout at 390 px');
  await expectNoAxeViolationsAllRules(page, '#/rollout at 390 px');
  await page.setViewportSize({ width: 1366, height: 768 });
  assert.deepEqual(problems, []);
});

test('Hold asks first, then holds; a resume made elsewhere arrives live', async () => {
  await page.click('#rollout-hold');
  // The question, with Cancel focused: nothing is sent yet.
  assert.match(await text(page.locator('.confirm')), /Hold the rollout of returns_agent at 5 %\? Hold Cancel/);
  assert.equal(await page.evaluate('document.activeElement.id'), 'rollout-hold-cancel');
  assert.equal((await rollout()).active?.status, 'running');
  await expectNoAxeViolationsAllRules(page, '#/rollout asking to hold');
  await page.click('#rollout-hold-confirm');
  await page.locator('#rollout-active[data-status="held"]').waitFor();
  assert.match(await text(page.locator('#rollout-status')), /^Held: the share stays where it is until someone resumes/);
  assert.match(await text(page.locator('#rollout-progress')), /Held by an operator: the share stays until someone resumes it/);
  assert.match(await text(page.locator('#rollout-decisions li[data-action="held"]')), /held 5 % of new sessions by an anonymous caller \(loopback, no tokens\)$/);
  assert.equal((await rollout()).active?.status, 'held');
  await page.locator('#rollout-resume').waitFor();

  // Another operator resumes it through the API: the page follows without a reload.
  const res = await fetch(`${service.url}/api/rollout/resume`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 200);
  await page.locator('#rollout-active[data-status="running"]').waitFor();
  await page.locator('#rollout-decisions li[data-action="resumed"]').waitFor();
  assert.match(await text(page.locator('#live-region')), /Rollout of returns_agent resumed at 5 % of new sessions by an anonymous caller/);
  assert.deepEqual(problems, []);
});

test('Roll back: Cancel changes nothing; confirmed, the rollout is in the history, rolled back, and its change quarantined', async () => {
  await page.click('#rollout-rollback');
  assert.match(await text(page.locator('.confirm')), /Roll back returns_agent\? New sessions go back to v\d+/);
  await page.click('#rollout-rollback-cancel');
  assert.equal(await page.evaluate('document.activeElement.id'), 'rollout-rollback', 'focus returns to the button');
  assert.equal(await page.locator('.confirm').count(), 0);
  assert.equal((await rollout()).active?.status, 'running');

  await page.click('#rollout-rollback');
  await page.click('#rollout-rollback-confirm');
  await page.locator('#rollout-none').waitFor();
  assert.match(await text(page.locator('#rollout-status')), /^Rolled back: new sessions start on the current snapshot again/);
  assert.equal((await rollout()).active, null);
  const last = page.locator('table.rollout-history tbody tr').first();
  assert.equal(await last.getAttribute('data-status'), 'rolled-back');
  assert.match(await text(last), /returns_agent breaking: skill "refunds" removed/);
  assert.deepEqual(await last.locator('ol.decisions li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-action'))), ['rolled-back', 'resumed', 'held', 'started']);
  assert.match(await text(last.locator('li[data-action="rolled-back"]')), /rolled back 0 % of new sessions by an anonymous caller/);
  assert.match(await text(page.locator('ul.quarantined')), /returns_agent: card \S+ is kept out/);
  assert.equal(await page.locator('#nav-rollout .count').count(), 0, 'no share in the navigation once it ended');
  await noOverflow('#/rollout (ended) at 1366 px');
  await expectNoAxeViolationsAllRules(page, '#/rollout (ended) at 1366 px');
  await page.setViewportSize({ width: 390, height: 844 });
  await noOverflow('#/rollout (ended) at 390 px');
  await expectNoAxeViolationsAllRules(page, '#/rollout (ended) at 390 px');
  await page.setViewportSize({ width: 1366, height: 768 });
  assert.deepEqual(problems, []);
});

test('the timeline draws the decisions as marks; the Endpoints view shows call health beside fetch health', async () => {
  await page.goto(`${service.url}/#/timeline`);
  for (const type of ['rollout.started', 'rollout.held', 'rollout.resumed', 'rollout.rolled-back']) await page.locator(`svg.timeline .mark[data-type="${type}"]`).first().waitFor();
  const held = page.locator('svg.timeline .mark[data-type="rollout.held"]');
  assert.equal(await held.locator('text').textContent(), 'held');
  await held.focus();
  assert.match(await text(page.locator('#timeline-detail')), /held rollout of returns_agent held at 5 % of new sessions by an anonymous caller.*Rollout returns_agent: 5 % of new sessions on the candidate/);
  assert.equal(await page.locator('svg.timeline .mark[data-type="rollout.started"] text').textContent(), '▶ 5%');

  await page.goto(`${service.url}/#/endpoints`);
  const calls = page.locator(`table.endpoints tr[data-endpoint="${peer.baseUrl}"] .call-health`);
  await calls.locator('.tip-btn').waitFor();
  assert.match(await text(calls.locator('.tip-btn')), /^calls \d+ · 0 % failed · p95 \d+ ms$/);
  const tip = calls.locator('[role="tooltip"]');
  assert.equal(await tip.isVisible(), false, 'the explanation waits for hover or focus');
  await calls.locator('.tip-btn').focus();
  assert.equal(await tip.isVisible(), true);
  assert.match(await text(tip), /^Health from real calls: the orchestrator made \d+ A2A calls to returns_agent, the last .* ago; 0 failed \(0 %\)\. 95 % of the recent ones answered within \d+ ms\./);
  await noOverflow('#/endpoints at 1366 px');
  await page.setViewportSize({ width: 390, height: 844 });
  await noOverflow('#/endpoints at 390 px');
  await page.setViewportSize({ width: 1366, height: 768 });
  assert.deepEqual(problems, []);
});
