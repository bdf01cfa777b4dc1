/**
 * A follower answers the leader's lists through a bounded request (issue 25, item 1):
 * - on one real PostgreSQL with a bearer token: the follower's `/api/endpoints`, `/api/sources` and
 *   `/api/activity` are the leader's (`servedBy`), asked with a request signed by the replica key
 *   (test/replicas/replica-auth.test.ts: never the token); once the leader cannot be
 *   reached (a partition: the leader still holds the lock, so nobody takes over — a leader that
 *   stops steps down instead, docs/operations.md "Graceful drain") the follower says so: 503,
 *   `leaderUnreachable`, `Retry-After`, naming the leader and the epoch, never an empty list, and
 *   its page says so (not "0 endpoints");
 * - the proxy's bounds against loopback servers: a redirect (not
 *   followed), an answer over the body cap, a leader that never answers (the timeout), a port
 *   nobody listens on, and no advertised URL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { parseConfig } from '../../packages/core/src/config/parse-config.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/assembly/from-config.js';
import type { ReplicaStatus } from '../../packages/store/src/index.js';
import { FollowerProxy, defaultAdvertiseUrl } from '../../packages/service/src/replica/follower-proxy.js';
import { LeaderUrls, ReplicaAuth } from '../../packages/service/src/auth/replica-auth.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { expectNoAxeViolationsAllRules } from '../web/axe.js';
import { launchBrowser, openPage, text } from '../web/browser.js';

const TOKEN = 'replica-proxy-token-5c1e';
const KEY = 'replica-proxy-key-0123456789abcdef-5c1e';
const auth = () => new ReplicaAuth({ key: KEY, clock: { wallNow: () => Date.now() } });

/** A TCP relay on loopback to `target()`'s port: the route between replicas, which `close()` cuts (a partition). */
async function startRelay(target: () => number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target(), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const follower = (leaderUrl: string | null): ReplicaStatus => ({
  id: 'replica-b',
  role: 'follower',
  epoch: 3,
  connected: true,
  digest: undefined,
  storeDigest: undefined,
  inSync: true,
  lagMs: 0,
  adopted: 0,
  takeovers: 0,
  leader: 'replica-a',
  leaderUrl,
  refusesToLead: null,
});

describe('a follower answers the leader’s lists, asked with the replica key, and says when it cannot', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let warranty: RunningV1Server;
  let a: RunningService | undefined;
  let b: RunningService | undefined;
  let browser: Browser | undefined;
  let relay: Awaited<ReturnType<typeof startRelay>> | undefined;

  const options = (id: string, waitMs: number, advertiseUrl?: string): ServiceOptions => ({
    port: 0,
    token: TOKEN,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(warranty.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] }],
    needs: [{ tag: 'warranty' }],
    static: [{ name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] }],
    loop: { cycleIntervalMs: 600_000 },
    sessions: { history: 'memory' },
    store: pg.url,
    storeOptions: { schema: 'follower_proxy' },
    // B waits long before trying the lock again: it stays a follower once A is gone.
    replica: { id, key: KEY, leaderRetryMs: waitMs, pollMs: waitMs, leaseMs: 2 * waitMs + 1_000, ...(advertiseUrl !== undefined && { advertiseUrl }) },
  });
  const get = async (s: RunningService, path: string, token = TOKEN) => {
    const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    pg = await startPostgres();
    warranty = await startV1Server({ prefix: 'warranty' });
  });

  after(async () => {
    await browser?.close();
    await relay?.close().catch(() => undefined);
    await b?.close();
    await a?.close();
    await warranty?.close();
    await pg?.close();
  });

  test('the lists are the leader’s, then a clear 503 once the leader is unreachable', async () => {
    // The leader advertises the relay's address: the test cuts the route later.
    relay = await startRelay(() => Number(new URL(a!.url).port));
    a = await startService(options('replica-a', 200, relay.url));
    await a.loop.refreshNow();
    b = await startService(options('replica-b', 60_000));
    assert.equal(b.replica()?.role, 'follower');
    assert.equal(b.replica()?.leader, 'replica-a');
    assert.equal(b.replica()?.leaderUrl, relay.url, 'the leader advertised the URL it was given');

    const endpoints = await get(b, '/api/endpoints');
    assert.equal(endpoints.status, 200);
    assert.equal(endpoints.body.servedBy, 'replica-a');
    assert.deepEqual((endpoints.body.endpoints as Array<{ baseUrl: string }>).map((e) => e.baseUrl), [warranty.baseUrl]);
    const card = await get(b, `/api/endpoints/card?url=${encodeURIComponent(warranty.baseUrl)}`);
    assert.equal(card.status, 200, 'the card the leader’s cache holds');
    assert.equal(card.body.servedBy, 'replica-a');
    assert.equal(card.body.baseUrl, warranty.baseUrl);
    const sources = await get(b, '/api/sources');
    assert.equal(sources.status, 200);
    assert.equal(sources.body.servedBy, 'replica-a');
    const activity = await get(b, '/api/activity?limit=10');
    assert.equal(activity.status, 200);
    assert.equal(activity.body.servedBy, 'replica-a');
    assert.ok((activity.body.endpoints as unknown[]).length > 0, 'the leader’s cache activity');
    // The follower's own guard still asks for the token; its checks still apply.
    assert.equal((await get(b, '/api/endpoints', 'wrong')).status, 401);
    assert.equal((await get(b, '/api/activity?limit=x')).status, 400);
    // The leader answers a follower's request itself; its own sidebar data says it leads.
    assert.deepEqual((await get(a, '/api/snapshots')).body.replica, { id: 'replica-a', role: 'leader', epoch: b.replica()!.epoch, leader: 'replica-a' });
    assert.deepEqual((await get(b, '/api/snapshots')).body.replica, { id: 'replica-b', role: 'follower', epoch: b.replica()!.epoch, leader: 'replica-a' });
    assert.equal(((await get(b, '/readyz')).body.replica as { leader: string }).leader, 'replica-a');

    // A partition: the leader still leads (and holds the lock), but the follower cannot reach it.
    await relay.close();
    for (const path of ['/api/endpoints', '/api/sources', '/api/activity', `/api/endpoints/card?url=${encodeURIComponent(warranty.baseUrl)}`]) {
      const gone = await get(b, path);
      assert.equal(gone.status, 503, path);
      assert.equal(gone.body.leaderUnreachable, true);
      assert.equal(gone.body.error, 'leader-unreachable');
      assert.equal(gone.retryAfter, '2');
      assert.match(String(gone.body.message), /this replica \(replica-b\) follows replica-a \(epoch \d+\), which could not be reached/);
      assert.equal(gone.body.endpoints, undefined, 'no empty list passed off as the truth');
    }
    // Each refusal is counted.
    const metrics = await (await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    assert.match(metrics, /a2a_discovery_http_refusals_total\{reason="leader_unreachable"\} 4\b/);

    // The follower's page says the leader's lists cannot be shown, not "0 endpoints".
    browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.addInitScript(`sessionStorage.setItem('a2a-discovery.token', ${JSON.stringify(TOKEN)})`);
    await page.goto(`${b.url}/#/endpoints`);
    const alert = page.locator('#leader-unreachable');
    await alert.waitFor();
    assert.match(await text(alert), /The leader's lists cannot be shown\. this replica \(replica-b\) follows replica-a \(epoch \d+\), which could not be reached/);
    assert.match(await text(page.locator('#replica-role')), /^Follower of replica-a/);
    assert.doesNotMatch(await text(page.locator('main')), /No endpoints yet|\b0 endpoints/);
    await expectNoAxeViolationsAllRules(page, 'a follower whose leader is unreachable');
  });
});

describe('the follower proxy’s bounds', () => {
  let server: http.Server;
  let origin: string;
  const hanging: http.ServerResponse[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/moved/api/endpoints') res.writeHead(302, { location: `${origin}/elsewhere` }).end();
      else if (req.url === '/big/api/endpoints') {
        // Chunked, no length: the cap bites while reading.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        const more = (): void => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent < 64) res.once('drain', more);
          else res.end();
        };
        res.write('{"endpoints":"');
        more();
      } else if (req.url === '/slow/api/endpoints') hanging.push(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const ask = (leaderUrl: string | null, o: { maxBytes?: number; timeoutMs?: number } = {}) =>
    new FollowerProxy({ status: () => follower(leaderUrl), auth: auth(), ...o }).answer('/api/endpoints', '');

  test('a redirect is not followed, an answer over the cap and a leader that never answers are refused', async () => {
    const moved = await ask(`${origin}/moved/`);
    assert.equal(moved?.status, 503);
    assert.match(String(moved?.body.message), /answered with a redirect, which a follower does not follow/);
    const big = await ask(`${origin}/big`, { maxBytes: 256 * 1024 });
    assert.equal(big?.status, 503);
    assert.match(String(big?.body.message), /answered larger than 262144 bytes/);
    const slow = await ask(`${origin}/slow`, { timeoutMs: 300 });
    assert.equal(slow?.status, 503);
    assert.match(String(slow?.body.message), /did not answer within 300 ms/);
  });

  test('nobody listening, or no advertised URL: a clear 503, and a leader answers itself', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const down = await ask(`http://127.0.0.1:${port}`);
    assert.equal(down?.status, 503);
    assert.equal(down?.body.leaderUnreachable, true);
    assert.match(String(down?.body.message), /could not be reached \(ECONNREFUSED\)/);
    const none = await ask(null);
    assert.match(String(none?.body.message), /advertised no URL to reach it \(replica\.advertiseUrl\)/);
    const leading = new FollowerProxy({ status: () => ({ ...follower(origin), role: 'leader' }) });
    assert.equal(await leading.answer('/api/endpoints', ''), undefined);
  });
});

describe('the follower proxy goes through the guarded connection', () => {
  test('a leader URL at a forbidden address (cloud metadata, unspecified, link-local IPv6) is never connected to', async () => {
    // A trap on loopback: were any address routed here, the request (and its token) would be seen.
    let trapped = 0;
    const trap = http.createServer((_req, res) => (trapped++, res.end('{}')));
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as AddressInfo).port;
    try {
      const cases: Array<[string, ((host: string) => Promise<Array<{ address: string; family: 4 | 6 }>>) | undefined]> = [
        // A name planted in the leader row that resolves to the metadata address.
        [`https://leader.internal:${port}`, async () => [{ address: '169.254.169.254', family: 4 }]],
        // 0.0.0.0 is routed to this machine by the kernel: refused as a literal, before any socket.
        [`https://0.0.0.0:${port}`, undefined],
        [`https://[fe80::1]:${port}`, undefined],
      ];
      for (const [leaderUrl, resolve] of cases) {
        // Listed in replica.leaderUrls (https): the address guard still refuses them.
        const proxy = new FollowerProxy({ status: () => follower(leaderUrl), auth: auth(), leaderUrls: new LeaderUrls([new URL(leaderUrl).origin]), ...(resolve && { resolve }) });
        const answer = await proxy.answer('/api/endpoints', '');
        proxy.close();
        assert.equal(answer?.status, 503, leaderUrl);
        assert.match(String(answer?.body.message), /is at an address a follower never contacts/, leaderUrl);
      }
      assert.equal(trapped, 0);
      // The same trap at its loopback address is a leader a follower may ask (the guard is not merely
      // closed), but its unsigned answer is not shown.
      const unsigned = await new FollowerProxy({ status: () => follower(`http://127.0.0.1:${port}`), auth: auth() }).answer('/api/endpoints', '');
      assert.equal(unsigned?.status, 503);
      assert.match(String(unsigned?.body.message), /answered without a valid replica signature/);
      assert.equal(trapped, 1);
    } finally {
      trap.closeAllConnections();
      await new Promise<void>((r) => trap.close(() => r()));
    }
  });
});

test('replica.advertiseUrl: an http(s) URL, passed to the service; anything else refused with its path', () => {
  const base = 'allowLoopback: true\nallow: ["http://127.0.0.1:9"]\nstatic:\n  - { name: warranty_agent, url: "http://127.0.0.1:9/", description: Answers warranty questions., tags: [warranty] }\nvocabulary:\n  - { tag: warranty, description: Warranty status. }\n';
  const config = parseConfig(`${base}replica:\n  advertiseUrl: http://10.1.2.3:7340\n`);
  assert.equal(config.replica.advertiseUrl, 'http://10.1.2.3:7340');
  assert.equal(serviceOptionsFromConfig(config, { credentials: () => undefined, keys: [] }).replica?.advertiseUrl, 'http://10.1.2.3:7340');
  assert.equal(parseConfig(base).replica.advertiseUrl, undefined);
  assert.throws(
    () => parseConfig(`${base}replica:\n  advertiseUrl: ftp://10.1.2.3/\n`),
    (err: Error & { problems?: Array<{ path: string; message: string }> }) => {
      assert.deepEqual(
        err.problems?.map((p) => p.path),
        ['replica.advertiseUrl'],
      );
      assert.match(err.problems![0]!.message, /not an http\(s\) URL/);
      return true;
    },
  );
});

test('the default advertised URL: the listening one, or with a wildcard bind this machine’s external address', () => {
  const eth0 = { address: '10.0.3.17', netmask: '255.255.255.0', family: 'IPv4', mac: '00:00:00:00:00:01', internal: false, cidr: '10.0.3.17/24' } as const;
  const lo = { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' } as const;
  const v6 = { address: 'fd00::17', netmask: 'ffff::', family: 'IPv6', mac: '00:00:00:00:00:01', internal: false, cidr: 'fd00::17/64', scopeid: 0 } as const;
  assert.equal(defaultAdvertiseUrl('http://127.0.0.1:7340', { lo: [lo], eth0: [eth0] }), 'http://127.0.0.1:7340');
  assert.equal(defaultAdvertiseUrl('http://0.0.0.0:7340', { lo: [lo], eth0: [eth0] }), 'http://10.0.3.17:7340');
  assert.equal(defaultAdvertiseUrl('http://[::]:7340', { lo: [lo], eth0: [v6] }), 'http://[fd00::17]:7340');
  assert.equal(defaultAdvertiseUrl('http://0.0.0.0:7340', { lo: [lo] }), 'http://0.0.0.0:7340', 'nothing better known');
});
