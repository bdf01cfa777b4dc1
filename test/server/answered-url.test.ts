/**
 * The endpoint views say which URL answered (`cache.cardUrl`): a peer that serves its card only at
 * the A2A 0.2 path (`/.well-known/agent.json`) is listed with that URL, in `/api/endpoints` and on
 * the Endpoints page, so an operator sees the fallback the cache took.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { launchBrowser, openPage, text, until } from '../web/browser.js';

let legacy: JsonServer;
let current: JsonServer;
let service: RunningService;
let browser: Browser;

before(async () => {
  legacy = await startJsonServer();
  legacy.routes.set('/.well-known/agent.json', { body: cardFor(legacy, 'legacy', { protocolVersion: '0.2.5' }) });
  current = await startJsonServer();
  current.routes.set('/.well-known/agent-card.json', { body: cardFor(current, 'current') });
  service = await startService({
    port: 0,
    policy: { allow: [legacy.origin, current.origin], allowLoopback: true },
    vocabulary: [
      { tag: 'legacy', description: 'The old one.' },
      { tag: 'current', description: 'The new one.' },
    ],
    needs: [{ tag: 'legacy' }, { tag: 'current' }],
    static: [
      { name: 'legacy_agent', url: `${legacy.origin}/`, description: 'An A2A 0.2 peer.', tags: ['legacy'] },
      { name: 'current_agent', url: `${current.origin}/`, description: 'A current peer.', tags: ['current'] },
    ],
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all([legacy?.close(), current?.close()]);
});

test('/api/endpoints and the Endpoints page name the URL that answered, the 0.2 fallback included', async () => {
  const { endpoints } = (await (await fetch(`${service.url}/api/endpoints`)).json()) as { endpoints: Array<{ baseUrl: string; cache?: { cardUrl?: string } }> };
  const of = (origin: string) => endpoints.find((e) => e.baseUrl.startsWith(origin))?.cache?.cardUrl;
  assert.equal(of(legacy.origin), `${legacy.origin}/.well-known/agent.json`);
  assert.equal(of(current.origin), `${current.origin}/.well-known/agent-card.json`);

  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/endpoints`);
  const row = (origin: string) => page.locator(`table.endpoints tr[data-endpoint="${origin}/"]`);
  await until(() => text(row(legacy.origin).locator('.card-url')), (t) => t === 'from /.well-known/agent.json', 'the 0.2 path on the page');
  assert.equal(await text(row(current.origin).locator('.card-url')), 'from /.well-known/agent-card.json');
  assert.deepEqual(problems, []);
});
