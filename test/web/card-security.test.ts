/**
 * Card security schemes and the chosen interface, shown where a card is shown (issue 23): a
 * service over two real peers, an @a2a-js/sdk 1.3 card requiring OAuth 2.0 client credentials on
 * an interface of tenant `acme`, and an ADK (0.3) card requiring an API key, which the
 * configuration's credentials present. The endpoint views, the inspector's answer and the card
 * view in Chromium (axe, all rules) show schemes, whether they can be satisfied, the chosen
 * interface and its tenant; the unsatisfiable agent is out of the snapshot with that reason; no
 * secret appears anywhere.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import type { EndpointStatus } from '../../packages/core/src/loop/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startV1CardServer } from '../helpers/a2a-peers.js';
import { oauth2Card, startApiKeyPeer } from '../helpers/secured-peers.js';
import { expectNoAxeViolations } from './axe.js';
import { launchBrowser, openPage, text, until } from './browser.js';

const SECRET = 'sekrit-partner-key-42';
let oauth: RunningPeer;
let keyed: RunningPeer;
let service: RunningService;
let browser: Browser;
const logs: string[] = [];

const origin = (p: RunningPeer): string => new URL(p.baseUrl).origin;

before(async () => {
  oauth = await startV1CardServer({
    card: (port) => ({ ...oauth2Card(port), supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' }] }),
  });
  keyed = await startApiKeyPeer();
  service = await startService({
    port: 0,
    policy: { allow: [origin(oauth), origin(keyed)], allowLoopback: true },
    credentials: (o) => (o === origin(keyed) ? { 'x-api-key': SECRET } : undefined),
    vocabulary: [
      { tag: 'warranty', description: 'Warranty status.' },
      { tag: 'billing', description: 'Invoices and payments.' },
    ],
    needs: [{ tag: 'warranty' }, { tag: 'billing' }],
    static: [
      { name: 'warranty_agent', cardUrl: oauth.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
      { name: 'billing_agent', url: keyed.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
    ],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'info', destination: { write: (line: string) => void logs.push(line) } as never }),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all([oauth?.close(), keyed?.close()]);
});

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await fetch(`${service.url}${path}`, init)).json()) as T;
}

test('the snapshot leaves out the agent whose card needs what the configuration cannot present; the endpoint views say why and show the chosen interface and tenant', async () => {
  assert.deepEqual(service.loop.current()?.agents.map((a) => a.localName), ['billing_agent']);
  const { endpoints } = await json<{ endpoints: EndpointStatus[] }>('/api/endpoints');
  const w = endpoints.find((e) => e.baseUrl === oauth.baseUrl)!;
  assert.equal(w.state.verdict, 'excluded');
  assert.equal(w.state.reason, `unauthorized: needs oauth2 client credentials for ${origin(oauth)}`);
  assert.equal(w.access?.chosenInterface?.tenant, 'acme');
  assert.equal(w.access?.security?.status, 'unsatisfiable');
  const b = endpoints.find((e) => e.baseUrl === keyed.baseUrl)!;
  assert.equal(b.state.verdict, 'selected');
  assert.equal(b.access?.security?.status, 'satisfied');
  assert.deepEqual(b.access?.security?.satisfiedBy, ['partnerKey']);
  assert.equal(b.access?.chosenInterface?.client, 'adk-0.3');
});

test('the inspector answers with the schemes, whether they can be satisfied, the chosen interface and its tenant — without sending or showing a credential', async () => {
  const post = (body: unknown) => json<InspectResult>('/api/inspect', { method: 'POST', headers: { 'content-type': 'application/json', origin: service.url }, body: JSON.stringify(body) });
  const w = await post({ url: oauth.baseUrl });
  assert.equal(w.report?.security?.status, 'unsatisfiable');
  assert.equal(w.report?.security?.message, `unauthorized: needs oauth2 client credentials for ${origin(oauth)}`);
  assert.deepEqual(w.report?.security?.schemes.map((s) => [s.name, s.type, s.presentable]), [['corpIdp', 'oauth2', false]]);
  assert.equal(w.report?.chosenInterface?.tenant, 'acme');
  assert.equal(w.report?.chosenInterface?.url, `${origin(oauth)}/a2a/jsonrpc`);
  const b = await post({ url: keyed.baseUrl });
  assert.equal(b.report?.security?.status, 'satisfied', b.report?.security?.message);
  assert.equal(b.report?.security?.credentialsConfigured, true);
  assert.ok(!JSON.stringify([w, b]).includes(SECRET));
});

test('the card view shows the chosen interface, its tenant, the schemes and whether each can be presented (Chromium, axe all rules); the endpoints view says it in a line', async () => {
  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/card?url=${encodeURIComponent(oauth.baseUrl)}`);
  await page.locator('#card-access').waitFor();
  assert.match(await text(page.locator('#card-interface')), new RegExp(`^JSONRPC ${origin(oauth)}/a2a/jsonrpc · A2A 1\\.0 · tenant acme$`));
  assert.equal(await text(page.locator('#card-tenant')), 'acme');
  assert.equal(await page.locator('#card-security').getAttribute('data-status'), 'unsatisfiable');
  assert.match(await text(page.locator('#card-security')), /^unauthorized unauthorized: needs oauth2 client credentials for http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(await text(page.locator('table.schemes tr[data-scheme="corpIdp"]')), 'corpIdp oauth2 client credentials no Tokens from the corporate IdP.');
  await expectNoAxeViolations(page, 'card view with security schemes');
  const all = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" ")).join(", ")))')) as string[];
  assert.deepEqual(all, [], 'axe, every rule');

  await page.selectOption('#card-endpoint', keyed.baseUrl);
  await until(() => page.locator('#card-security').getAttribute('data-status'), (s) => s === 'satisfied', 'the API key card satisfied');
  assert.match(await text(page.locator('#card-tenant')), /^none$/);
  assert.match(await text(page.locator('table.schemes tr[data-scheme="partnerKey"]')), /^partnerKey an API key in header X-API-Key yes Issued by the partner portal\.$/);

  await page.goto(`${service.url}/#/endpoints`);
  const row = page.locator(`table.endpoints tr[data-endpoint="${oauth.baseUrl}"]`);
  await row.waitFor();
  assert.match(await text(row.locator('.access')), /^JSONRPC · A2A 1\.0 · tenant acme credentials unauthorized$/);
  await expectNoAxeViolations(page, 'endpoints view with the access line');
  const all2 = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => v.id))')) as string[];
  assert.deepEqual(all2, []);
  assert.ok(!(await page.content()).includes(SECRET));
  assert.deepEqual(problems, []);
  await page.close();
  assert.ok(!logs.join('\n').includes(SECRET), 'no secret in a log line');
  const alerts = logs.filter((l) => l.includes('unauthorized: needs oauth2 client credentials'));
  assert.equal(alerts.length, 1, 'the log says it once');
});

test('the Inspect view shows the chosen interface, its tenant and whether the card\'s security can be satisfied (Chromium, axe all rules)', async () => {
  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/inspect?url=${encodeURIComponent(oauth.baseUrl)}`);
  await page.locator('#inspect-submit:not([disabled])').click();
  await page.locator('#inspect-access').waitFor();
  assert.match(await text(page.locator('#inspect-interface')), new RegExp(`^JSONRPC ${origin(oauth)}/a2a/jsonrpc · A2A 1\\.0 · tenant acme$`));
  assert.equal(await text(page.locator('#inspect-tenant')), 'acme');
  assert.equal(await page.locator('#inspect-security').getAttribute('data-status'), 'unsatisfiable');
  assert.match(await text(page.locator('#inspect-security')), /needs oauth2 client credentials for http:\/\/127\.0\.0\.1:\d+$/);
  await expectNoAxeViolations(page, 'inspect view with security schemes');
  const all = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => v.id))')) as string[];
  assert.deepEqual(all, [], 'axe, every rule');
  assert.ok(!(await page.content()).includes(SECRET));
  assert.deepEqual(problems, []);
  await page.close();
});
