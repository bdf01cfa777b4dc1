/**
 * No secret is ever shown (issue 23, "done means"): one `serve` process (the built CLI, log level
 * debug) with every kind of secret configured — an OAuth 2.0 client secret for a peer behind a
 * real IdP (oauth2-mock-server), a static bearer for a second peer, the service's admin token —
 * discovers both peers, answers chat turns through them, refreshes, and serves its dashboard to
 * Chromium. Then none of the secrets, and none of the access tokens the IdP issued, appears in:
 * serve's stdout and stderr, any `/api/*` answer, the journal, the event stream, `/metrics`, or
 * the page (its DOM and every response it received).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Browser } from 'playwright-core';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp, startSecured0314, startSecured1x, type RunningIdp, type SecuredPeer } from '../auth/secured-peers.js';
import { launchBrowser, openPage, text, until } from '../web/browser.js';

const ADMIN_TOKEN = 'admin-token-5d1c-never-shown';
let idp: RunningIdp;
let oauthPeer: SecuredPeer;
let bearerPeer: SecuredPeer;
let staticBearer: string;
let dir: string;
let serve: ServeProcess | undefined;
let base = '';
let browser: Browser;

async function tokenFromIdp(audience: string): Promise<string> {
  const res = await fetch(idp.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, audience }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

before(async () => {
  idp = await startIdp();
  oauthPeer = await startSecured1x(idp);
  bearerPeer = await startSecured0314(idp);
  staticBearer = await tokenFromIdp(bearerPeer.origin);
  dir = await mkdtemp(join(tmpdir(), 'secrets-'));
  const config = {
    server: { tokenEnv: 'A2AD_TEST_ADMIN_TOKEN' },
    allow: [oauthPeer.origin, bearerPeer.origin],
    allowLoopback: true,
    credentials: [
      { type: 'oauth2', origin: oauthPeer.origin, tokenUrl: idp.tokenUrl, clientId: CLIENT_ID, clientSecretEnv: 'A2AD_TEST_CLIENT_SECRET', audience: oauthPeer.origin },
      { origin: bearerPeer.origin, prefix: 'Bearer ', valueEnv: 'A2AD_TEST_STATIC_BEARER' },
    ],
    vocabulary: [
      { tag: 'billing', description: 'Billing questions.', keywords: ['invoice'] },
      { tag: 'warranty', description: 'Warranty questions.', keywords: ['warranty'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: oauthPeer.baseUrl, description: 'Answers billing questions.', tags: ['billing'] },
      { name: 'warranty_agent', url: bearerPeer.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
    dataDir: dir,
  };
  const file = join(dir, 'discovery.yaml');
  await writeFile(file, stringify(config));
  serve = await startServe({
    config: file,
    logLevel: 'debug',
    env: { ...process.env, A2AD_TEST_ADMIN_TOKEN: ADMIN_TOKEN, A2AD_TEST_CLIENT_SECRET: CLIENT_SECRET, A2AD_TEST_STATIC_BEARER: staticBearer },
  });
  base = serve.url;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await serve?.stop();
  await oauthPeer?.close();
  await bearerPeer?.close();
  await idp?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function api(path: string, init: RequestInit = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
  return { status: res.status, body: await res.text() };
}

/** Every secret of this configuration, and every token the IdP has issued so far. */
function secrets(): string[] {
  return [CLIENT_SECRET, ADMIN_TOKEN, staticBearer, ...idp.issued];
}

function assertNoSecret(where: string, haystack: string): void {
  for (const secret of secrets()) {
    assert.ok(!haystack.includes(secret), `${where} contains a secret (${secret.slice(0, 6)}…)`);
  }
}

test('no secret in any log line, API answer, journal row, event, metric or page', async () => {
  // Both peers admitted (the OAuth one through its IdP), and a chat turn answered by each.
  await until(
    async () => JSON.parse((await api('/api/snapshot')).body) as { agents?: Array<{ localName: string }> },
    (s) => (s.agents ?? []).length === 2,
    'both secured peers to be in the snapshot',
    30_000,
  );
  for (const message of ['where is my invoice?', 'is my warranty still valid?']) {
    const turn = await api('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) });
    assert.equal(turn.status, 200, turn.body);
  }
  assert.equal(oauthPeer.accepted.length, 1, 'the OAuth peer answered one turn');
  assert.equal(bearerPeer.accepted.length, 1, 'the static-bearer peer (A2A 0.3) answered one turn');
  assert.ok(idp.issued.length >= 2, 'the IdP issued the static bearer and at least one token for the service');
  assert.equal((await api('/api/refresh', { method: 'POST' })).status, 200);

  // Every read route of the API.
  const routes = ['/api/snapshot', '/api/snapshots', '/api/endpoints', '/api/sources', '/api/sessions', '/api/journal', '/api/activity', '/readyz', '/metrics'];
  const endpoints = JSON.parse((await api('/api/endpoints')).body) as { endpoints: Array<{ url: string }> };
  for (const e of endpoints.endpoints) routes.push(`/api/endpoints/card?url=${encodeURIComponent(e.url)}`);
  for (const route of routes) {
    const res = await api(route);
    assert.ok(res.status < 500, `${route}: ${res.status}`);
    assertNoSecret(route, res.body);
  }
  // The inspector reaching the OAuth peer's card.
  const inspected = await api('/api/inspect', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: oauthPeer.baseUrl }) });
  assertNoSecret('/api/inspect', inspected.body);

  // The event stream, replayed from the start.
  const ac = new AbortController();
  const stream = await fetch(`${base}/api/stream`, { headers: { ...auth, 'last-event-id': '0' }, signal: ac.signal });
  const reader = stream.body!.getReader();
  let events = '';
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline && events.length < 200_000) {
    const next = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))]);
    if (next === undefined || next.done) break;
    events += Buffer.from(next.value).toString();
  }
  ac.abort();
  assert.match(events, /snapshot/, 'the stream carried events');
  assertNoSecret('/api/stream', events);

  // The dashboard, every view, with every response the page received.
  const { page } = await openPage(browser);
  const bodies: string[] = [];
  page.on('response', (r) => {
    if (!r.url().endsWith('/api/stream')) void r.text().then((t) => bodies.push(t), () => undefined);
  });
  await page.goto(`${base}/#/endpoints`);
  await page.locator('#token-input').waitFor();
  await page.fill('#token-input', ADMIN_TOKEN);
  await page.click('.token-form button[type=submit]');
  await until(() => text(page.locator('#connection')), (t) => t === 'Live', 'the page to be live');
  for (const view of ['endpoints', 'sources', 'snapshots', 'sessions', 'timeline', 'chat', 'inspect']) {
    await page.goto(`${base}/#/${view}`);
    await page.waitForTimeout(300);
    assertNoSecret(`page #/${view}`, await page.content());
  }
  await page.close();
  assertNoSecret('page responses', bodies.join('\n'));

  // Finally the process's own output, at log level debug.
  const out = serve!.output();
  assert.equal(serve!.dropped, 0, 'all of serve\'s output was kept');
  assert.match(out, /debug|"level":20/i, 'serve logged at debug level');
  assertNoSecret('serve stdout/stderr', out);
});
