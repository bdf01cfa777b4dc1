/**
 * The live state is honest: a page follows the event stream from where it actually stood when it
 * read the journal, so a fresh page never announces a reconnection that did not happen — even
 * when thousands of cache events (never journaled) passed since the last story event and the
 * stream's buffer no longer holds it. A restart of the service under another process id is said
 * as such and the page reads its lists again; events after it arrive live.
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

function options(replica: string, port = 0): ServiceOptions {
  return {
    port,
    store: `sqlite:${join(dir, 'state.db')}`,
    replica: { id: replica },
    sessions: { history: 'memory' },
    policy: { allow: [] },
    vocabulary: [],
    needs: [],
    logger: createLogger({ level: 'silent' }),
  };
}

function chatter(s: RunningService, n: number): void {
  for (let i = 0; i < n; i++) s.events.emit({ type: 'card.result', endpoint: A, outcome: 'hit', failures: 0 });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2ad-live-'));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a fresh page announces no reconnection; a restart is said once, and events after it arrive live', async () => {
  let s = (service = await startService(options('first')));
  s.events.emit({ type: 'snapshot.published', version: 21, digest: 'a'.repeat(64), agents: ['billing_agent'] });
  // Far more chatter than the stream's 1,000-event buffer: the last journaled event is long gone from it.
  chatter(s, 2_500);

  const { page, problems } = await openPage(browser);
  await page.goto(`${s.url}/#/endpoints`);
  const live = page.locator('#live-region');
  await until(() => text(live), (t) => /Snapshot v21 published/.test(t), 'the journal read on load');
  await until(() => text(page.locator('#connection')), (t) => t === 'Live', 'the stream live');
  // An event after the load arrives through the stream (so the stream really is followed) …
  s.events.emit({ type: 'snapshot.published', version: 22, digest: 'b'.repeat(64), previousDigest: 'a'.repeat(64), agents: ['billing_agent'] });
  await until(() => text(live), (t) => /Snapshot v22 published/.test(t), 'a live event');
  // … and nothing claims a reconnection or a gap.
  assert.doesNotMatch(await text(live), /Reconnected|gap|restarted/, 'no false notice on a fresh page');

  // The service restarts as another process (same port and store): the page says so once.
  const port = Number(new URL(s.url).port);
  await s.close();
  s = service = await startService(options('second', port));
  await until(() => text(live), (t) => /The service restarted or another replica answers now/.test(t), 'the restart said', 20_000);
  s.events.emit({ type: 'snapshot.published', version: 23, digest: 'c'.repeat(64), previousDigest: 'b'.repeat(64), agents: ['billing_agent'] });
  await until(() => text(live), (t) => /Snapshot v23 published/.test(t), 'a live event after the restart');
  const notices = (await text(live)).match(/restarted or another replica/g) ?? [];
  assert.equal(notices.length, 1, 'said once');
  assert.deepEqual(problems.filter((p) => !/request failed|ERR_CONNECTION_REFUSED|Failed to load resource/.test(p)), []);
});
