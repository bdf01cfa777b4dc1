/**
 * Exactly one snapshot is "current", in every view, also when a later version repeats an earlier
 * digest (an agent leaves and the agent set is back as it was): the Snapshots history marks the
 * newest such version, and the Sessions view lists one root per digest (the same tree), named by
 * its newest version and saying which earlier version had the same agents.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { listSource } from '../helpers/list-source.js';
import { launchBrowser, openPage, text, until } from './browser.js';

let billing: RunningPeer;
let shipping: RunningPeer;
let service: RunningService;
let browser: Browser;
const partners = listSource('partners');

before(async () => {
  billing = await startV1CardServer({ card: (port) => v1Card(port, { name: 'Billing Agent', skills: [{ id: 'invoices', name: 'Invoices', description: 'Invoices.', tags: ['billing'] }] }) });
  shipping = await startV1CardServer({ card: (port) => v1Card(port, { name: 'Shipping Agent', skills: [{ id: 'track', name: 'Track', description: 'Tracks parcels.', tags: ['shipping'] }] }) });
  service = await startService({
    port: 0,
    // The 1.0 cards require a bearer token (v1Card): the service presents one to their origins.
    credentials: (origin) => ([billing, shipping].some((p) => new URL(p.baseUrl).origin === origin) ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [billing, shipping].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'shipping', description: 'Parcel tracking.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'shipping' }],
    static: [{ name: 'billing_agent', cardUrl: billing.cardUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
    extraSources: [partners],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all([billing?.close(), shipping?.close()]);
});

test('a repeated digest: one current snapshot in the history and one root per digest in Sessions', async () => {
  const v1 = service.loop.current()!;
  partners.set([{ name: 'shipping', baseUrl: shipping.baseUrl }]);
  const v2 = (await service.loop.refreshNow())!;
  assert.notEqual(v2.digest, v1.digest, 'shipping joined');
  partners.set([]);
  const v3 = (await service.loop.refreshNow())!;
  assert.equal(v3.digest, v1.digest, 'the agent set is back as it was: the same digest');
  assert.ok(v3.version > v2.version);

  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/snapshots`);
  await until(() => page.locator('table.history tbody tr[data-version]').count(), (n) => n === 3, 'three versions');
  const currentRows = page.locator('table.history tbody tr[data-version]', { has: page.locator('.badge', { hasText: /^current$/ }) });
  assert.equal(await currentRows.count(), 1, 'one current version in the history');
  assert.equal(await currentRows.getAttribute('data-version'), String(v3.version));

  await page.click('#nav-sessions');
  await until(() => page.locator('table.roots tbody tr[data-version]').count(), (n) => n === 2, 'one root per digest');
  const roots = page.locator('table.roots tbody tr[data-version]');
  assert.deepEqual(await roots.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-version'))), [String(v3.version), String(v2.version)]);
  assert.equal(await page.locator('table.roots td[data-root="current"]').count(), 1, 'one current root');
  assert.match(await text(roots.first()), new RegExp(`^v${v3.version} \\(same agents as v${v1.version}\\)`));
  assert.deepEqual(problems, []);
  await page.close();
});

test('POST /api/chat with snapshot: only a new session, only on a retained snapshot', async () => {
  const post = async (body: Record<string, unknown>, cookie = ''): Promise<{ status: number; json: Record<string, unknown>; cookie: string }> => {
    const res = await fetch(`${service.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie && { cookie }) }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown>, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
  };
  const unknown = await post({ message: 'hello', snapshot: 'f'.repeat(64) });
  assert.equal(unknown.status, 400);
  assert.match(String(unknown.json.message), /is not retained here/);
  const current = service.loop.current()!;
  // The peers here serve cards only: the turn reaches billing_agent, which answers 404, so the turn
  // is 502 agent-failed; the new session is made and pinned all the same.
  const first = await post({ message: 'hello' });
  assert.equal(first.status, 502, JSON.stringify(first.json));
  assert.equal(first.json.agent, 'billing_agent');
  assert.equal(first.json.digest, current.digest);
  const moved = await post({ message: 'again', sessionId: first.json.sessionId, snapshot: 'e'.repeat(64) }, first.cookie);
  assert.equal(moved.status, 400);
  assert.match(String(moved.json.message), /only a new session can start on another snapshot/);
});
