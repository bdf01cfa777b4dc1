/**
 * `POST /api/inspect` flags a card that looks like an agent discovery admitted from another origin
 * (the loop's `lookalikeOf`): the service admitted "billing" on one loopback origin; a card
 * "bіlling" (Cyrillic і) on another is flagged, by URL and pasted; the admitted agent itself is not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import { expectNoAxeViolationsAllRules } from '../web/axe.js';
import { launchBrowser, openPage, text } from '../web/browser.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { request } from '../helpers/raw-http.js';

const LOOKALIKE = 'b\u0456lling';

async function inspect(s: RunningService, body: unknown): Promise<InspectResult> {
  const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify(body));
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as InspectResult;
}

describe('POST /api/inspect: lookalikes of admitted agents', () => {
  let original: JsonServer;
  let later: JsonServer;
  let s: RunningService;
  before(async () => {
    [original, later] = await Promise.all([startJsonServer(), startJsonServer()]);
    original.routes.set('/.well-known/agent-card.json', { body: cardFor(original, 'billing', { name: 'billing' }) });
    later.routes.set('/.well-known/agent-card.json', { body: cardFor(later, 'billing', { name: LOOKALIKE }) });
    s = await startService({
      port: 0,
      policy: { allow: [original.origin, later.origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Billing.' }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: `${original.origin}/`, description: 'Answers invoices.', tags: ['billing'] }],
      loop: { cycleIntervalMs: 600_000 },
      logger: createLogger({ level: 'silent' }),
    });
  });
  after(async () => {
    await s?.close();
    await Promise.all([original?.close(), later?.close()]);
  });

  const reason = () => `name "${LOOKALIKE}" looks like "billing" of ${original.origin}: confusable characters`;

  test('a card on another origin is flagged, by URL and pasted', async () => {
    const byUrl = await inspect(s, { url: `${later.origin}/` });
    assert.equal(byUrl.report?.accepted, true);
    assert.deepEqual(byUrl.lookalike, { of: 'billing', origin: original.origin, reason: reason() });
    const pasted = await inspect(s, { card: JSON.stringify(cardFor(later, 'billing', { name: LOOKALIKE })) });
    assert.deepEqual(pasted.lookalike, { of: 'billing', origin: original.origin, reason: reason() });
  });

  test('the Inspect view says so first, plainly (Chromium, axe all rules)', async () => {
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openPage(browser);
      await page.goto(`${s.url}/#/inspect?url=${encodeURIComponent(`${later.origin}/`)}`);
      await page.locator('#inspect-submit:not([disabled])').click();
      const note = page.locator('#inspect-result .inspect-lookalike');
      await note.waitFor();
      assert.equal(await text(note), `⚠ Lookalike name: This card is confusingly like billing from ${original.origin} (${reason()}). Check its origin before trusting it.`);
      await expectNoAxeViolationsAllRules(page, 'inspect view with a lookalike');
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });

  test('the admitted agent itself is not a lookalike', async () => {
    const r = await inspect(s, { url: `${original.origin}/` });
    assert.equal(r.report?.accepted, true);
    assert.equal(r.lookalike, undefined);
  });
});
