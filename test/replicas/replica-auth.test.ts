/**
 * Replicas authenticate each other, not a URL (issue 38, item 2), on one real PostgreSQL. Two
 * replicas share a replica key and a bearer token; the leader advertises a recording TCP relay in
 * front of it, the route every byte a follower sends to the leader takes.
 *
 * - A follower with the same key shows the leader's lists; what reached the leader carries the
 *   signed `x-a2ad-replica-auth` header and never the admin token (nor any `Authorization`).
 * - A leader URL planted in the row (http, another loopback port: a trap) is refused by the follower,
 *   whose `replica.leaderUrls` lists only the relay: the trap receives nothing, the follower answers
 *   503 saying why, counts it (`leader_url`) and raises an alert; the leader rewrites its row (holder
 *   and url) at its next heartbeat and the follower reads the leader again.
 * - A wrong key is refused by the leader (401, counted `replica_auth`); a replayed request too; a
 *   replica's signature admits nothing but the leader's lists; a server on an allowed URL that
 *   answers `servedBy: "evil"` unsigned is not shown.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { DiscoveryEvent } from '../../packages/core/src/index.js';
import type { ReplicaStatus } from '../../packages/store/src/index.js';
import { FollowerProxy } from '../../packages/service/src/replica/follower-proxy.js';
import { LeaderUrls, REPLICA_AUTH_HEADER, ReplicaAuth } from '../../packages/service/src/auth/replica-auth.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'replica-admin-token-7f3a9c';
const KEY = 'the-replicas-shared-key-0123456789abcdef';
const WRONG = 'not-the-replicas-key-0123456789abcdef00';
const SCHEMA = 'replica_auth';

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

/** A TCP relay on loopback to `target()`'s port that keeps every byte clients sent through it. */
async function startRecordingRelay(target: () => number): Promise<{ url: string; sent: () => string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const chunks: Buffer[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target(), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** An HTTP server that answers as a leader would, unsigned, and keeps every request's headers. */
async function startTrap(): Promise<{ url: string; seen: http.IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"endpoints":[],"servedBy":"evil"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('replicas authenticate each other with the replica key, not a URL', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let warranty: RunningV1Server;
  let relay: Awaited<ReturnType<typeof startRecordingRelay>>;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let a: RunningService | undefined;
  let b: RunningService | undefined;
  let db: PgClient;
  const alerts: DiscoveryEvent[] = [];

  const options = (id: string, o: { retryMs: number; pollMs: number; key?: string; advertiseUrl?: string; leaderUrls?: string[] }): ServiceOptions => ({
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
    storeOptions: { schema: SCHEMA },
    replica: {
      id,
      leaderRetryMs: o.retryMs,
      pollMs: o.pollMs,
      leaseMs: 2 * o.retryMs + 1_000,
      ...(o.key !== undefined && { key: o.key }),
      ...(o.advertiseUrl !== undefined && { advertiseUrl: o.advertiseUrl }),
      ...(o.leaderUrls !== undefined && { leaderUrls: o.leaderUrls }),
    },
  });
  const get = async (s: RunningService, path: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => {
    const res = await fetch(`${s.url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const metrics = async (s: RunningService) => (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();

  before(async () => {
    pg = await startPostgres();
    warranty = await startV1Server({ prefix: 'warranty' });
    relay = await startRecordingRelay(() => Number(new URL(a!.url).port));
    trap = await startTrap();
    // A heartbeats every second: a planted row lasts at most that long.
    a = await startService(options('replica-a', { retryMs: 1_000, pollMs: 1_000, key: KEY, advertiseUrl: relay.url }));
    await a.loop.refreshNow();
    // B polls the row often and only sends to the relay's origin.
    b = await startService(options('replica-b', { retryMs: 100, pollMs: 100, key: KEY, leaderUrls: [relay.url] }));
    b.events.subscribe((e) => {
      if (e.type === 'alert') alerts.push(e);
    });
    const u = new URL(pg.url);
    db = new Client({ host: u.hostname, port: Number(u.port), user: 'a2a', database: 'postgres' });
    await db.connect();
    await db.query(`SET search_path TO "${SCHEMA}"`);
  });

  after(async () => {
    await db?.end().catch(() => undefined);
    await b?.close();
    await a?.close();
    await relay?.close();
    await trap?.close();
    await warranty?.close();
    await pg?.close();
  });

  test('the same key: the leader’s lists, asked without the admin token', async () => {
    assert.equal(b!.replica()?.role, 'follower');
    assert.equal(b!.replica()?.leaderUrl, relay.url);
    for (const path of ['/api/endpoints', '/api/sources', '/api/activity?limit=5', `/api/endpoints/card?url=${encodeURIComponent(warranty.baseUrl)}`]) {
      const r = await get(b!, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.body.servedBy, 'replica-a', path);
    }
    const sent = relay.sent();
    assert.match(sent, new RegExp(`${REPLICA_AUTH_HEADER}: v1;replica=replica-b;`, 'i'), 'the follower signed its requests');
    assert.ok(!sent.includes(TOKEN), 'the admin token never reached the leader');
    assert.doesNotMatch(sent, /^authorization:/im, 'no Authorization header at all');
    assert.ok(!sent.includes(KEY), 'nor the key itself');
  });

  test('a planted leader URL receives nothing; the follower says why, counts and alerts; the leader rewrites its row', async () => {
    const before = relay.sent().length;
    // Someone with write access to the database points the followers at a trap.
    await waitFor(async () => {
      if (b!.replica()?.leaderUrl === trap.url) return true;
      await db.query('UPDATE a2ad_leader SET url = $1, holder = $2 WHERE id = 1', [trap.url, 'evil']);
      return undefined;
    }, 'the follower reads the planted row', 10_000);
    const r = await get(b!, '/api/endpoints');
    assert.equal(r.status, 503);
    assert.equal(r.body.leaderUnreachable, true);
    assert.match(String(r.body.message), new RegExp(`whose advertised URL ${trap.url}/? this replica does not send to: it is not one replica\\.leaderUrls allows`));
    assert.equal(r.body.servedBy, undefined);
    assert.equal(trap.seen.length, 0, 'the trap received no request at all');
    assert.match(await metrics(b!), /a2a_discovery_http_refusals_total\{reason="leader_url"\} [1-9]/);
    const alert = alerts.find((e) => e.type === 'alert' && e.kind === 'replica-leader-url-refused');
    assert.ok(alert, 'an alert for the dashboard and the journal');
    assert.match((alert as { message: string }).message, new RegExp(`the leader URL ${trap.url}/? read from the store was refused`));

    // The leader's next heartbeat writes its row again; the follower reads the leader again.
    await waitFor(async () => ((await db.query('SELECT holder, url FROM a2ad_leader WHERE id = 1')).rows[0]?.url === relay.url ? true : undefined), 'the leader rewrites its row', 10_000);
    const row = (await db.query('SELECT holder, url FROM a2ad_leader WHERE id = 1')).rows[0];
    assert.deepEqual(row, { holder: 'replica-a', url: relay.url });
    await waitFor(async () => ((await get(b!, '/api/endpoints')).status === 200 ? true : undefined), 'the follower shows the leader again', 10_000);
    assert.equal(a!.replica()?.role, 'leader', 'the leader kept leading');
    assert.ok(relay.sent().length > before);
    assert.equal(trap.seen.length, 0);
  });

  test('the leader refuses a wrong key, a replay and anything beyond its lists', async () => {
    const status = (): ReplicaStatus => ({ ...b!.replica()!, leaderUrl: relay.url });
    const wrong = new FollowerProxy({ status, auth: new ReplicaAuth({ key: WRONG, clock: { wallNow: () => Date.now() } }), leaderUrls: new LeaderUrls([relay.url]) });
    const refused = await wrong.answer('/api/endpoints', '');
    wrong.close();
    assert.equal(refused?.status, 503);
    assert.match(String(refused?.body.message), /refused this replica’s signature \(401: the replicas must share replica\.keyEnv or replica\.keyFile\)/);
    assert.match(await metrics(a!), /a2a_discovery_http_refusals_total\{reason="replica_auth"\} [1-9]/);

    // Signed by hand with the right key: once admitted, replayed refused.
    const auth = new ReplicaAuth({ key: KEY, clock: { wallNow: () => Date.now() } });
    const signed = auth.sign('GET', '/api/sources', 'replica-x')!;
    const first = await get(a!, '/api/sources', { [REPLICA_AUTH_HEADER]: signed.header });
    assert.equal(first.status, 200);
    const replay = await get(a!, '/api/sources', { [REPLICA_AUTH_HEADER]: signed.header });
    assert.equal(replay.status, 401);
    assert.match(String(replay.body.message), /nonce was seen before/);
    // A replica's signature admits the leader's lists only: not the snapshot, not a refresh.
    const other = auth.sign('GET', '/api/snapshot', 'replica-x')!;
    assert.equal((await get(a!, '/api/snapshot', { [REPLICA_AUTH_HEADER]: other.header })).status, 403);
    const post = await fetch(`${a!.url}/api/refresh`, { method: 'POST', headers: { [REPLICA_AUTH_HEADER]: auth.sign('POST', '/api/refresh', 'replica-x')!.header, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(post.status, 403);
  });

  test('a server on an allowed URL without the key cannot answer for the leader', async () => {
    const evil = new FollowerProxy({ status: () => ({ ...b!.replica()!, leaderUrl: trap.url }), auth: new ReplicaAuth({ key: KEY, clock: { wallNow: () => Date.now() } }), leaderUrls: new LeaderUrls([trap.url]) });
    const answer = await evil.answer('/api/endpoints', '');
    evil.close();
    assert.equal(answer?.status, 503);
    assert.match(String(answer?.body.message), /answered without a valid replica signature/);
    assert.equal(answer?.body.servedBy, undefined);
    // What it received is a signature of that one request, not a credential: no token, no key.
    assert.equal(trap.seen.length, 1);
    assert.equal(trap.seen[0]!.authorization, undefined);
    assert.ok(!JSON.stringify(trap.seen[0]).includes(KEY));
    trap.seen.length = 0;
  });

  test('without a replica key a follower does not ask, and names the setting', async () => {
    const noKey = new FollowerProxy({ status: () => ({ ...b!.replica()!, leaderUrl: relay.url }), leaderUrls: new LeaderUrls([relay.url]) });
    const answer = await noKey.answer('/api/endpoints', '');
    assert.equal(answer?.status, 503);
    assert.match(String(answer?.body.message), /no replica key is configured \(replica\.keyEnv or replica\.keyFile/);
  });
});
