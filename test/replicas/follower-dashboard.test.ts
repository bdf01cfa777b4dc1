/**
 * One truth on every replica (issue 25, item 1), in Chromium: two services on one real PostgreSQL.
 * Replica A leads and discovers two agents; replica B follows (it runs no cycle). B's Endpoints view
 * lists the same endpoints as A's (B answers the leader's lists, marked `servedBy`), and B's sidebar
 * says "Follower of replica-a · epoch N". A stops; B takes over, and its page announces it once
 * in "Latest" and says "Leader · epoch N+1"; the page of a third replica C, which hears none of B's
 * events, sees its leader change and says so ("Follower of replica-b") — or the other way round,
 * when C takes the lock first.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { expectNoAxeViolationsAllRules } from '../web/axe.js';
import { launchBrowser, openPage, screenshot, text, until } from '../web/browser.js';

describe('a follower replica’s dashboard shows the leader’s truth and says it follows', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let browser: Browser;
  let warranty: RunningV1Server;
  let billing: JsonServer;
  let a: RunningService | undefined;
  let b: RunningService | undefined;
  let c: RunningService | undefined;

  const options = (id: string): ServiceOptions => ({
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(warranty.baseUrl).origin, billing.origin], allowLoopback: true },
    vocabulary: [
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
      { tag: 'billing', description: 'Invoices.', keywords: ['invoice'] },
    ],
    needs: [{ tag: 'warranty' }],
    static: [
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
      { name: 'billing_agent', url: billing.origin, description: 'Answers invoice questions.', tags: ['billing'] },
    ],
    cache: { minTtlMs: 0, maxTtlMs: 1, backoffBaseMs: 1, backoffMaxMs: 1 },
    loop: { cycleIntervalMs: 600_000 },
    sessions: { history: 'memory' },
    store: pg.url,
    storeOptions: { schema: 'follower_dashboard' },
    // The replicas' shared key: the follower asks the leader's lists with it.
    replica: { id, key: 'follower-dashboard-replica-key-0123456789', leaderRetryMs: 200, pollMs: 500, leaseMs: 3_000 },
  });

  /** The base URLs the Endpoints view lists, sorted. */
  const listed = async (page: Page): Promise<string[]> =>
    ((await page.locator('tr[data-endpoint]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-endpoint') ?? ''))) as string[]).sort();

  before(async () => {
    pg = await startPostgres();
    warranty = await startV1Server({ prefix: 'warranty' });
    billing = await startJsonServer();
    billing.routes.set('/.well-known/agent-card.json', { body: cardFor(billing, 'billing', { url: `${billing.origin}/jsonrpc` }) });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await c?.close();
    await b?.close();
    await a?.close();
    await Promise.all([warranty?.close(), billing?.close()]);
    await pg?.close();
  });

  test('the follower lists the leader’s endpoints, says it follows, and announces its takeover', async () => {
    a = await startService(options('replica-a'));
    assert.equal(a.replica()?.role, 'leader');
    await a.loop.refreshNow();
    await a.flushStore();
    b = await startService(options('replica-b'));
    assert.equal(b.replica()?.role, 'follower');
    const digest = a.loop.current()?.digest;
    await until(async () => b!.loop.current()?.digest, (d) => d === digest, 'B adopts A’s snapshot');

    // The API: B answers the leader's lists, marked as such.
    const res = await fetch(`${b.url}/api/endpoints`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { endpoints: Array<{ baseUrl: string }>; servedBy?: string };
    assert.equal(body.servedBy, 'replica-a');
    assert.equal(body.endpoints.length, 2);

    const { page: onA, problems: problemsA } = await openPage(browser);
    await onA.goto(`${a.url}/#/endpoints`);
    await onA.locator('tr[data-endpoint]').nth(1).waitFor();
    const leaderList = await listed(onA);
    assert.equal(leaderList.length, 2);
    assert.match(await text(onA.locator('#replica-role')), /^Leader · epoch 1\b/);

    const { page: onB, problems: problemsB } = await openPage(browser);
    await onB.goto(`${b.url}/#/endpoints`);
    await onB.locator('tr[data-endpoint]').nth(1).waitFor();
    assert.deepEqual(await listed(onB), leaderList, 'the follower lists the leader’s endpoints');
    assert.match(await text(onB.locator('#replica-role')), /^Follower of replica-a · epoch 1\b/);
    assert.doesNotMatch(await text(onB.locator('main')), /No endpoints yet/);
    await onB.locator('#connection', { hasText: 'Live' }).waitFor();
    await screenshot(onB, 'dashboard-follower');
    c = await startService(options('replica-c'));
    assert.equal(c.replica()?.role, 'follower');
    const { page: onC, problems: problemsC } = await openPage(browser);
    await onC.goto(`${c.url}/#/endpoints`);
    await onC.locator('#replica-role', { hasText: 'Follower of replica-a' }).waitFor();
    await onC.locator('#connection', { hasText: 'Live' }).waitFor();
    await expectNoAxeViolationsAllRules(onB, 'a follower’s Endpoints view');

    // The leader stops: B or C takes over (whichever tries the lock first), and its page says so
    // once; the other's page, which hears none of the new leader's events, sees its leader change.
    // Until B or C leads, a follower has no leader to answer for: its API says so with a 503,
    // which the page shows, and which the browser logs as a failed load. Those 503s, and only
    // those, are expected between here and the moment each page knows the new leader.
    const beforeTakeover = { b: problemsB.length, c: problemsC.length };
    await onA.close();
    await a.close();
    a = undefined;
    const winner = await until(
      async () => (b!.replica()?.role === 'leader' ? 'b' : c!.replica()?.role === 'leader' ? 'c' : undefined),
      (w) => w !== undefined,
      'B or C takes over',
      20_000,
    );
    const [onLeader, onFollower, leaderId, followerId] = winner === 'b' ? [onB, onC, 'replica-b', 'replica-c'] : [onC, onB, 'replica-c', 'replica-b'];
    const [problemsLeader, problemsFollower, leaderBefore, followerBefore] =
      winner === 'b' ? [problemsB, problemsC, beforeTakeover.b, beforeTakeover.c] : [problemsC, problemsB, beforeTakeover.c, beforeTakeover.b];
    await onLeader.locator('#replica-role', { hasText: 'Leader · epoch 2' }).waitFor();
    const leaderKnown = problemsLeader.length;
    const latest = onLeader.locator('#live-region li', { hasText: /Takeover/ });
    await latest.first().waitFor().catch(async (err: unknown) => {
      throw new Error(`the new leader's page never announced its takeover; its live region says ${JSON.stringify(await onLeader.locator('#live-region li').allTextContents())}`, { cause: err });
    });
    assert.equal(await latest.count(), 1, 'the takeover is announced once');
    assert.match(await text(latest), new RegExp(`${leaderId} leads now \\(epoch 2\\)`));
    await until(() => listed(onLeader), (l) => l.length === 2, 'the new leader lists the endpoints');
    await onFollower.locator('#replica-role', { hasText: `Follower of ${leaderId} · epoch 2` }).waitFor({ timeout: 20_000 });
    const followerKnown = problemsFollower.length;
    const changed = onFollower.locator('#live-region li', { hasText: new RegExp(`${leaderId} leads now`) });
    await changed.first().waitFor();
    assert.equal(await changed.count(), 1, 'the change of leader is announced once');
    assert.match(await text(changed), new RegExp(`${leaderId} leads now \\(epoch 2\\); this replica \\(${followerId}\\) follows it`));
    await until(() => listed(onFollower), (l) => l.length === 2, 'the other follower lists the new leader’s endpoints');
    assert.deepEqual(problemsA, []);
    const leaderless = /^console error: Failed to load resource: the server responded with a status of 503 /;
    const unexpected = (problems: string[], from: number, to: number) => [...problems.slice(0, from), ...problems.slice(from, to).filter((p) => !leaderless.test(p)), ...problems.slice(to)];
    assert.deepEqual(unexpected(problemsLeader, leaderBefore, leaderKnown), []);
    assert.deepEqual(unexpected(problemsFollower, followerBefore, followerKnown), []);
  });
});
