import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type dns from 'node:dns';
import { HostPolicy, createCardFetcher, createGuardedLookup, type ResolvedAddress, type Resolver } from '../../src/fetch/index.js';
import { isDiscoveryError } from '../../src/errors.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

/** Calls a net-style lookup and returns what the callback received. */
function callLookup(lookup: ReturnType<typeof createGuardedLookup>, host: string, options: dns.LookupOptions): Promise<{ err: unknown; address: unknown; family: unknown }> {
  return new Promise((resolve) => {
    lookup(host, options, (err, address, family) => resolve({ err, address, family }));
  });
}

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });
/** TEST-NET-1 stands in for "a public address" (allowed via allowCidrs) so no test can reach the internet. */
const PUBLIC_STAND_IN = '192.0.2.10';

describe('createGuardedLookup', () => {
  const policy = HostPolicy.from({ allow: [], allowCidrs: ['192.0.2.0/24'] });

  test('answers in both callback shapes Node uses', async () => {
    const lookup = createGuardedLookup({ policy, resolve: async () => [v4(PUBLIC_STAND_IN), v6('2606:4700::1111')] });
    const all = await callLookup(lookup, 'agents.example.com', { all: true });
    assert.equal(all.err, null);
    assert.deepEqual(all.address, [
      { address: PUBLIC_STAND_IN, family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    const single = await callLookup(lookup, 'agents.example.com', {});
    assert.deepEqual([single.err, single.address, single.family], [null, PUBLIC_STAND_IN, 4]);
    const only6 = await callLookup(lookup, 'agents.example.com', { family: 6 });
    assert.deepEqual([only6.address, only6.family], ['2606:4700::1111', 6]);
  });

  test('fails the whole answer when ANY address is blocked (no Happy-Eyeballs pick)', async () => {
    for (const bad of ['127.0.0.1', '169.254.169.254', '::ffff:127.0.0.1', 'fd00:ec2::254', 'garbage']) {
      const lookup = createGuardedLookup({ policy, resolve: async () => [v4(PUBLIC_STAND_IN), { address: bad, family: bad.includes(':') ? 6 : 4 }] });
      for (const options of [{ all: true }, {}] as dns.LookupOptions[]) {
        const { err } = await callLookup(lookup, 'mixed.test', options);
        assert.ok(isDiscoveryError(err), bad);
        assert.equal(err.code, 'ERR_ADDRESS_BLOCKED');
        assert.equal(err.stage, 'address');
        assert.match(err.message, /mixed\.test/);
      }
    }
  });

  test('passes resolver failures and empty answers on as lookup errors', async () => {
    const failing = createGuardedLookup({ policy, resolve: () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nx.test'), { code: 'ENOTFOUND' })) });
    assert.equal(((await callLookup(failing, 'nx.test', { all: true })).err as NodeJS.ErrnoException).code, 'ENOTFOUND');
    const empty = createGuardedLookup({ policy, resolve: async () => [] });
    assert.equal(((await callLookup(empty, 'empty.test', {})).err as NodeJS.ErrnoException).code, 'ENOTFOUND');
  });
});

describe('T3: DNS rebinding', () => {
  let server: FaultServer;
  let cert: TestCertificate;

  before(async () => {
    cert = await createTestCertificate();
    server = await startFaultServer({ tls: cert, hostname: 'rebind.test' });
  });
  after(() => server.close());

  /** A resolver that answers "public" first and loopback afterwards, counting calls. */
  function rebindingResolver(): Resolver & { calls: number } {
    const resolver = Object.assign(
      async (_hostname: string): Promise<ResolvedAddress[]> => {
        resolver.calls++;
        return resolver.calls === 1 ? [v4(PUBLIC_STAND_IN)] : [v4('127.0.0.1')];
      },
      { calls: 0 },
    );
    return resolver;
  }

  test('an answer that turns to 127.0.0.1 after a "public" check never reaches the loopback server', async (t) => {
    const ep = server.endpoint('rebind');
    const policy = HostPolicy.from({ allow: [`https://rebind.test:${server.port}`], allowCidrs: ['192.0.2.0/24'] });
    const resolver = rebindingResolver();
    const fetcher = createCardFetcher({ policy, lookup: resolver, ca: cert.cert, totalTimeoutMs: 2000 });
    t.after(() => fetcher.close());

    // What a check-then-fetch design would do: resolve, judge, then let the client resolve again.
    const preCheck = await resolver('rebind.test');
    assert.ok(preCheck.every((a) => policy.isAddressAllowed(a.address)), 'the first answer looks public');

    const connectionsBefore = server.connections;
    await assert.rejects(fetcher.fetch(ep.cardUrl), (err: unknown) => {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_ADDRESS_BLOCKED');
      assert.equal(err.stage, 'address');
      assert.equal(err.url, ep.cardUrl);
      assert.match(err.message, /127\.0\.0\.1/);
      return true;
    });
    assert.equal(resolver.calls, 2, 'the fetcher resolved at connect time');
    assert.equal(ep.hits, 0);
    assert.equal(server.connections, connectionsBefore, 'no TCP connection was opened');
  });

  test('an answer mixing a public and a loopback address is refused as a whole', async (t) => {
    const ep = server.endpoint('mixed');
    const policy = HostPolicy.from({ allow: [`https://rebind.test:${server.port}`], allowCidrs: ['192.0.2.0/24'] });
    const fetcher = createCardFetcher({ policy, lookup: async () => [v4(PUBLIC_STAND_IN), v4('127.0.0.1')], ca: cert.cert, totalTimeoutMs: 2000 });
    t.after(() => fetcher.close());
    const connectionsBefore = server.connections;
    await assert.rejects(fetcher.fetch(ep.cardUrl), { code: 'ERR_ADDRESS_BLOCKED', stage: 'address' });
    assert.equal(ep.hits, 0);
    assert.equal(server.connections, connectionsBefore);
  });

  test('control: the same name and resolver succeed when the policy admits loopback', async (t) => {
    const ep = server.endpoint('control');
    const policy = HostPolicy.from({ allow: [`https://rebind.test:${server.port}`], allowCidrs: ['127.0.0.0/8'] });
    const fetcher = createCardFetcher({ policy, lookup: async () => [v4('127.0.0.1')], ca: cert.cert, totalTimeoutMs: 2000, recordRemoteAddress: true });
    t.after(() => fetcher.close());
    const res = await fetcher.fetch(ep.cardUrl);
    assert.equal(res.status, 200);
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.deepEqual(JSON.parse(res.body.toString()).name, 'control');
    assert.equal(ep.hits, 1);
  });
});
