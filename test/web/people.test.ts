/**
 * The dashboard with people (issue 23): a person pastes their own token (issued by a real OIDC
 * provider on loopback, oauth2-mock-server); the page says who is signed in and with which role,
 * disables what the role cannot do, and offers an admin "Confirm removal" on a held snapshot.
 * Accessible (axe, every rule) in both states.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { OAuth2Server } from 'oauth2-mock-server';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { listSource } from '../helpers/list-source.js';
import { launchBrowser, openPage, text, until } from './browser.js';
import { expectNoAxeViolationsAllRules } from './axe.js';

const AUDIENCE = 'a2a-discovery-api';
const TAGS = ['billing', 'shipping', 'warranty'];
let provider: OAuth2Server;
let browser: Browser;
let service: RunningService;
let peers: RunningPeer[] = [];
const source = listSource('registry');

async function tokenFor(user: string, roles: string[]): Promise<string> {
  return provider.issuer.buildToken({ scopesOrTransform: (_h, p) => Object.assign(p, { sub: `user-${user}`, name: user, aud: AUDIENCE, roles }) });
}

before(async () => {
  provider = new OAuth2Server();
  await provider.issuer.keys.generate('ES256');
  await provider.start(0, '127.0.0.1');
  peers = await Promise.all(TAGS.map((tag) => startV1CardServer({ card: (port) => v1Card(port, { name: `${tag} agent`, securitySchemes: undefined, securityRequirements: undefined, skills: [{ id: tag, name: tag, description: `Does ${tag}.`, tags: [tag] }] }) })));
  source.set(peers.map((p, i) => ({ name: `${TAGS[i]}_agent`, baseUrl: p.baseUrl })));
  service = await startService({
    port: 0,
    policy: { allow: peers.map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: TAGS.map((tag) => ({ tag, description: `${tag}.` })),
    needs: TAGS.map((tag) => ({ tag })),
    extraSources: [source],
    loop: { cycleIntervalMs: 600_000 },
    health: { enterAfter: 1 },
    oidc: { issuer: provider.issuer.url!, audience: AUDIENCE, roles: { viewers: 'viewer', admins: 'admin' }, allowLoopback: true },
    logger: createLogger({ level: 'silent' }),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all(peers.map((p) => p.close()));
  await provider?.stop();
});

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${service.url}/#/snapshots`);
  await page.locator('#token-input').waitFor();
  await page.fill('#token-input', token);
  await page.click('.token-form button[type=submit]');
  await until(() => text(page.locator('#connection')), (t) => t === 'Live', 'the stream to be live with the token');
}

test('a viewer is signed in by name and role; chat, inspect and confirm are not offered', async () => {
  const { page, problems } = await openPage(browser);
  await signIn(page, await tokenFor('Vera', ['viewers']));
  assert.equal(await text(page.locator('#signed-in')), 'Signed in as Vera (viewer)');
  await page.click('#nav-chat');
  await page.fill('#chat-message', 'hello');
  assert.equal(await page.locator('.chat-form button[type=submit]').isDisabled(), true, 'a viewer cannot chat');
  assert.match(await text(page.locator('.chat-form')), /needs the operator role/);
  await page.click('#nav-inspect');
  assert.match(await text(page.locator('#inspect-role')), /needs the operator role/);
  await expectNoAxeViolationsAllRules(page, '#/inspect as a viewer');
  assert.ok(problems.every((p) => /status of 401/.test(p)), problems.join('\n'));
  await page.close();
});

test('an admin confirms a held removal from the snapshot view; a viewer is told only an admin may', async () => {
  assert.equal(service.loop.current()?.agents.length, 3);
  source.set([{ name: 'billing_agent', baseUrl: peers[0]!.baseUrl }]);
  await service.loop.refreshNow();
  assert.ok(service.loop.held, 'the removal is held');

  const viewer = await openPage(browser);
  await signIn(viewer.page, await tokenFor('Vera', ['viewers']));
  await viewer.page.locator('#held-snapshot').waitFor();
  assert.match(await text(viewer.page.locator('#held-snapshot')), /Only an admin may confirm it/);
  assert.equal(await viewer.page.locator('#confirm-removal').count(), 0);
  await viewer.page.close();

  const { page, problems } = await openPage(browser);
  await signIn(page, await tokenFor('Ada', ['admins', 'viewers']));
  assert.equal(await text(page.locator('#signed-in')), 'Signed in as Ada (admin)');
  await page.locator('#confirm-removal').waitFor();
  await expectNoAxeViolationsAllRules(page, '#/snapshots with a held snapshot, as an admin');
  await page.click('#confirm-removal');
  await until(() => text(page.locator('#confirm-status')), (t) => /Removal confirmed: snapshot v\d+/.test(t), 'the confirmation');
  assert.deepEqual(service.loop.current()?.agents.map((a) => a.localName), ['billing_agent']);
  assert.equal(service.loop.held, undefined);
  await until(() => page.locator('#held-snapshot').count(), (n) => n === 0, 'the held panel to go');
  // The timeline says who confirmed it.
  await page.click('#nav-timeline');
  const action = page.locator('svg.timeline .mark[data-type="api.action"]').last();
  await action.waitFor();
  await action.focus();
  await until(() => text(page.locator('#timeline-detail')), (t) => /Ada \(user-Ada\), admin confirmed the held removal/.test(t), 'the confirmation with its actor in the timeline');
  assert.ok(problems.every((p) => /status of 401/.test(p)), problems.join('\n'));
  await page.close();
});
