import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type dns from 'node:dns';
import { HostPolicy, createCardFetcher, createGuardedLookup, type ResolvedAddress, type Resolver } from '../../packages/core/src/fetch/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
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

describe('deny by default: every IANA special-purpose block is refused at connect time', () => {
  const strict = HostPolicy.from({ allow: [] });
  // One address inside each block, and the block name the refusal gives.
  const cases: Array<[string, RegExp]> = [
    ['0.1.2.3', /this network/],
    ['10.1.2.3', /private-use/],
    ['100.100.100.200', /shared address space/],
    ['127.0.0.1', /loopback/],
    ['169.254.169.254', /link-local/],
    ['172.20.0.1', /private-use/],
    ['192.0.0.170', /IETF protocol assignments/],
    ['192.0.2.1', /TEST-NET-1/],
    ['192.31.196.1', /AS112-v4/],
    ['192.52.193.1', /AMT/],
    ['192.88.99.1', /6to4 relay/],
    ['192.168.1.1', /private-use/],
    ['192.175.48.1', /AS112 service/],
    ['198.18.0.1', /benchmarking/],
    ['198.51.100.1', /TEST-NET-2/],
    ['203.0.113.1', /TEST-NET-3/],
    ['224.0.0.1', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /broadcast/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['::7f00:1', /IPv4-compatible/],
    ['::a9fe:a9fe', /IPv4-compatible/],
    ['::a00:1', /IPv4-compatible/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:169.254.169.254', /link-local/],
    ['64:ff9b::a9fe:a9fe', /NAT64/],
    ['64:ff9b::808:808', /NAT64/],
    ['64:ff9b:1::1', /local-use NAT64/],
    ['100::1', /discard-only/],
    ['2001::1', /Teredo/],
    ['2001:2::1', /benchmarking/],
    ['2001:10::1', /ORCHID/],
    ['2001:20::1', /ORCHIDv2/],
    ['2001:1::1', /IETF protocol assignments/],
    ['2001:db8::1', /documentation/],
    ['2002:a9fe:a9fe::1', /6to4/],
    ['2620:4f:8000::1', /AS112 service/],
    ['3fff::1', /documentation/],
    ['5f00::1', /SRv6/],
    ['fd00:ec2::254', /unique local/],
    ['fe80::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['4000::1', /outside global unicast/],
  ];
  for (const [address, block] of cases) {
    test(`${address} is refused (${block.source})`, async () => {
      assert.equal(strict.isAddressAllowed(address), false);
      const lookup = createGuardedLookup({ policy: strict, resolve: async () => [{ address, family: address.includes(':') ? 6 : 4 }] });
      const { err } = await callLookup(lookup, 'special.test', { all: true });
      assert.ok(isDiscoveryError(err) && err.code === 'ERR_ADDRESS_BLOCKED', address);
      assert.match(err.message, block);
    });
  }

  test('public unicast addresses pass, IPv4-mapped ones by the address they carry', async () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8']) {
      assert.equal(strict.isAddressAllowed(address), true, address);
    }
  });

  test('allowCidrs still opens a listed special-purpose block, and only that one', () => {
    const cluster = HostPolicy.from({ allow: [], allowCidrs: ['10.0.0.0/8', 'fd00::/8'] });
    assert.equal(cluster.isAddressAllowed('10.1.2.3'), true);
    assert.equal(cluster.isAddressAllowed('fd00:ec2::254'), true);
    assert.equal(cluster.isAddressAllowed('::a00:1'), false, 'IPv4-compatible is not the IPv4 range');
    assert.equal(cluster.isAddressAllowed('172.16.0.1'), false);
  });
});
