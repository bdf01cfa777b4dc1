/**
 * Fair pools (issue 38): a global pool (inspector slots, chat turns, event streams) is shared by
 * fair queuing across clients, so ten clients cannot hold it first-come against an eleventh; and a
 * client is what the operator says it is (client-identity.ts): person or token first, else the
 * remote network at the configured prefix, with `X-Forwarded-For` believed only from a trusted proxy.
 *
 * The pool and the identity rule are tested directly, then the service on loopback with clients on
 * 127.0.0.2 … 127.0.0.12 (all of 127/8 is loopback on Linux).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FairPool } from '../../packages/service/src/http/fair-pool.js';
import type { Admission, FairPoolLimits } from '../../packages/service/src/http/fair-pool.js';
import { clientIdentity } from '../../packages/service/src/http/client-identity.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { metric, requestJson } from '../helpers/raw-http.js';

const JSON_TYPE = { 'content-type': 'application/json' };

function pool(limits: Partial<FairPoolLimits>): FairPool {
  const l: FairPoolLimits = { capacity: 2, perClient: 1, queueLength: 8, waitMs: 5_000, ...limits };
  return new FairPool(() => l);
}

function granted(a: Admission): () => void {
  assert.ok(a.ok, `expected a slot, got ${a.ok ? '' : a.reason}`);
  return a.release;
}

describe('FairPool', () => {
  test('a freed slot goes to the client served longest ago, not to the one that queued first', async () => {
    const p = pool({ capacity: 1, perClient: 1 });
    const order: string[] = [];
    const wait = (client: string) => p.acquire(client).then((x) => (order.push(client), x));
    const a = granted(await wait('a'));
    const b = wait('b');
    a();
    const bDone = granted(await b);
    // a, just served, queues again before the victim v arrives: first-come would serve a again.
    const ra = wait('a');
    const v = wait('v');
    bDone();
    granted(await v)();
    granted(await ra)();
    assert.deepEqual(order, ['a', 'b', 'v', 'a']);
    assert.equal(p.running, 0);
    assert.equal(p.waiting, 0);
  });

  test('a client at its share while others wait is refused at once; one waiting request per client; the queue is bounded', async () => {
    const p = pool({ capacity: 2, perClient: 2, queueLength: 2 });
    const a1 = granted(await p.acquire('a'));
    // Alone, a may take the whole pool (its share is 2).
    const a2 = granted(await p.acquire('a'));
    assert.deepEqual(await p.acquire('a'), { ok: false, reason: 'per_client' });
    const b = p.acquire('b');
    // With b waiting, a's share is 1 and it holds 2: refused at once rather than queued.
    a1();
    const bGot = granted(await b);
    assert.deepEqual(await p.acquire('a'), { ok: false, reason: 'full' });
    const c = p.acquire('c');
    assert.deepEqual(await p.acquire('c'), { ok: false, reason: 'queue' }, 'one waiting request per client');
    const d = p.acquire('d');
    assert.deepEqual(await p.acquire('e'), { ok: false, reason: 'queue' }, 'queueLength reached');
    a2();
    bGot();
    granted(await c)();
    granted(await d)();
  });

  test('a wait ends at waitMs (timeout) or when the request goes away (aborted), and leaves nothing behind', async () => {
    const p = pool({ capacity: 1, waitMs: 50 });
    const a = granted(await p.acquire('a'));
    assert.deepEqual(await p.acquire('b'), { ok: false, reason: 'timeout' });
    const ac = new AbortController();
    const c = p.acquire('c', ac.signal);
    ac.abort();
    assert.deepEqual(await c, { ok: false, reason: 'aborted' });
    assert.equal(p.waiting, 0);
    a();
    a(); // a second release is a no-op
    assert.equal(p.running, 0);
    granted(await p.acquire('d'))();
  });

  test('admit (long-lived slots): a newcomer under its share preempts the oldest slot of the client holding the most', () => {
    const p = pool({ capacity: 4, perClient: 4 });
    const preempted: string[] = [];
    for (let i = 0; i < 4; i++) assert.ok(p.admit('hog', () => preempted.push(`hog${i}`)).ok);
    // Two clients: a share of 2; hog holds 4.
    assert.ok(p.admit('v', () => preempted.push('v')).ok);
    assert.deepEqual(preempted, ['hog0']);
    assert.equal(p.heldBy('hog'), 3);
    assert.ok(p.admit('v', () => preempted.push('v2')).ok);
    assert.deepEqual(preempted, ['hog0', 'hog1']);
    // v is at its share (2 of 4): refused, nobody preempted; hog reconnecting is refused too.
    assert.deepEqual(p.admit('v', () => undefined), { ok: false, reason: 'full' });
    assert.deepEqual(p.admit('hog', () => undefined), { ok: false, reason: 'full' });
    assert.equal(p.running, 4);
  });
});

describe('clientIdentity', () => {
  test('a person or the token is who they are; an address is its network at the configured prefix', () => {
    const id = clientIdentity({ ipv4Prefix: 24, ipv6Prefix: 64 });
    const anon = (remoteAddress: string, forwardedFor?: string) => id({ kind: 'anonymous', remoteAddress, forwardedFor });
    assert.equal(anon('192.0.2.7'), anon('192.0.2.200'));
    assert.notEqual(anon('192.0.2.7'), anon('192.0.3.7'));
    assert.equal(anon('::ffff:192.0.2.7'), anon('192.0.2.9'), 'an IPv4-mapped address is its IPv4 address');
    assert.equal(anon('2001:db8:1:2::1'), anon('2001:db8:1:2:ffff::9'), 'one /64 is one client');
    assert.notEqual(anon('2001:db8:1:2::1'), anon('2001:db8:1:3::1'));
    assert.equal(anon('2001:db8:1:2::1'), 'addr:2001:db8:1:2::/64');
    // A person is the same client from any address; two people differ; the token is one client per browser cookie.
    assert.equal(id({ kind: 'person', issuer: 'https://idp', sub: 'ann' }), id({ kind: 'person', issuer: 'https://idp', sub: 'ann' }));
    assert.notEqual(id({ kind: 'person', issuer: 'https://idp', sub: 'ann' }), id({ kind: 'person', issuer: 'https://idp', sub: 'bob' }));
    assert.notEqual(id({ kind: 'admin-token', clientId: 'x' }), id({ kind: 'admin-token', clientId: 'y' }));
    assert.equal(id({ kind: 'admin-token' }), 'token');
  });

  test('X-Forwarded-For is read only from a trusted proxy, and names the rightmost address that is not a proxy', () => {
    const id = clientIdentity({ trustedProxies: ['10.0.0.0/8', '192.0.2.1'] });
    const anon = (remoteAddress: string, forwardedFor?: string) => id({ kind: 'anonymous', remoteAddress, forwardedFor });
    // From an untrusted peer the header is ignored: a caller cannot pick its own identity.
    assert.equal(anon('198.51.100.9', '203.0.113.5'), 'addr:198.51.100.9/32');
    // From the proxy: the client it saw; spoofed entries to the left of it count for nothing.
    assert.equal(anon('10.1.2.3', '1.1.1.1, 203.0.113.5'), 'addr:203.0.113.5/32');
    assert.equal(anon('192.0.2.1', '203.0.113.5:4711, 10.9.9.9'), 'addr:203.0.113.5/32', 'proxies in the chain are skipped, ports dropped');
    assert.equal(anon('10.1.2.3', 'garbage, 203.0.113.5'), 'addr:203.0.113.5/32');
    assert.equal(anon('10.1.2.3', 'garbage'), 'addr:10.1.2.3/32', 'nothing usable: the proxy itself');
    assert.equal(anon('10.1.2.3'), 'addr:10.1.2.3/32');
  });
});


function service(extra: Partial<ServiceOptions>): Promise<RunningService> {
  return startService({ port: 0, policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }), ...extra });
}

const ATTACKERS = Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 2}`);
const VICTIM = '127.0.0.12';

describe('ten addresses cannot take a pool from an eleventh (service)', () => {
  // A peer that answers each card request after 100 ms: every inspection holds its slot a few
  // times that (one per request it makes). With ten clients looping, the eleventh waits its turn
  // among eleven (round robin: about eight turns a request).
  let peer: http.Server;
  let origin: string;
  let s: RunningService;
  before(async () => {
    peer = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(404, { 'content-type': 'application/json' }).end('{}'), 100).unref();
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    s = await service({
      policy: { allow: [origin], allowLoopback: true },
      limits: { maxInspections: 2, maxInspectionsPerClient: 1, maxStreams: 20, maxStreamsPerClient: 2, queueLength: 64, queueWaitMs: 10_000 },
    });
  });
  after(async () => {
    await s?.close();
    peer?.closeAllConnections();
    await new Promise<void>((r) => peer?.close(() => r()));
  });

  test('inspections: with ten clients looping, the eleventh is served within its share (no 429)', async () => {
    const inspect = (from: string, path: string) => requestJson(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, origin: s.url }, JSON.stringify({ url: `${origin}${path}` }), { from });
    let stop = false;
    let attackerServed = 0;
    const loops = ATTACKERS.map(async (from) => {
      while (!stop) if ((await inspect(from, '/a')).status === 200) attackerServed++;
    });
    // Let the attackers fill both slots and the queue.
    await new Promise((r) => setTimeout(r, 700));
    const victim: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < 3; i++) victim.push(await inspect(VICTIM, `/v${i}`));
    stop = true;
    await Promise.all(loops);
    for (const v of victim) assert.equal(v.status, 200, `the eleventh client was refused: ${v.body}`);
    assert.ok(attackerServed > 0, 'the attackers were served too');
  });

  test('event streams: ten clients holding every stream lose one to an eleventh, which is told apart from them', async () => {
    const refusedBefore = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="streams_fair_share"');
    const open: http.ClientRequest[] = [];
    const dropped: string[] = [];
    const openStream = (from: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const url = new URL(s.url);
        const req = http.get({ host: url.hostname, port: url.port, localAddress: from, path: '/api/stream', agent: false }, (res) => {
          resolve(res.statusCode ?? 0);
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            if (d.includes('event: dropped')) dropped.push(from);
          });
          res.on('error', () => undefined);
        });
        req.on('error', reject);
        open.push(req);
      });
    try {
      for (const from of ATTACKERS) for (let i = 0; i < 2; i++) assert.equal(await openStream(from), 200);
      // All 20 taken; an attacker's third is its per-client limit.
      assert.equal(await openStream(ATTACKERS[0]!), 503);
      assert.equal(await openStream(VICTIM), 200, 'the eleventh client gets a stream');
      // One attacker's oldest stream made room (share: 20 / 11 = 1; each attacker held 2).
      const deadline = Date.now() + 5_000;
      while (dropped.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(dropped.length, 1);
      assert.ok(ATTACKERS.includes(dropped[0]!));
      assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="streams_fair_share"'), refusedBefore + 1);
    } finally {
      for (const req of open) req.destroy();
    }
  });
});

describe('a client is its network (server.clients.ipv4Prefix)', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ clients: { ipv4Prefix: 24 }, limits: { maxStreams: 64, maxStreamsPerClient: 1 } });
  });
  after(() => s?.close());

  test('two addresses of one /24 share one client\'s streams; X-Forwarded-For from an untrusted peer changes nothing', async () => {
    const url = new URL(s.url);
    const open: http.ClientRequest[] = [];
    const stream = (from: string, headers: Record<string, string> = {}): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = http.get({ host: url.hostname, port: url.port, localAddress: from, path: '/api/stream', headers, agent: false }, (res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          res.on('error', () => undefined);
        });
        req.on('error', reject);
        open.push(req);
      });
    try {
      assert.equal(await stream('127.0.0.2'), 200);
      assert.equal(await stream('127.0.0.3'), 503, 'same /24: the one stream is taken');
      assert.equal(await stream('127.0.0.3', { 'x-forwarded-for': '203.0.113.9' }), 503, 'a forwarded address from a peer that is not a trusted proxy is ignored');
    } finally {
      for (const req of open) req.destroy();
    }
  });
});
