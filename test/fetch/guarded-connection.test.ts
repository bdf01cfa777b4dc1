/**
 * The guarded connection (packages/core/src/fetch/guarded-connection.ts), one test per check, each run
 * against both of its callers: the card fetcher and the policy fetch handed to the A2A clients.
 * Every test fails when its check is removed from the module; the controls show that the same
 * setup succeeds once the policy allows the address, so the refusal is the check's doing.
 *
 * All on loopback: the connect-time test resolves a name to `0.0.0.0`, which the kernel connects
 * to 127.0.0.1, the only way a real socket's peer differs from the address the lookup judged.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPolicyFetch } from '../../packages/core/src/adk/remote/policy-fetch.js';
import { isDiscoveryError, type DiscoveryError, type DiscoveryErrorCode } from '../../packages/core/src/errors.js';
import { createCardFetcher, HostPolicy, type HostPolicyOptions, type Resolver } from '../../packages/core/src/fetch/index.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

interface Client {
  /** One GET; resolves with the status, rejects with the caller's DiscoveryError. */
  get(url: string): Promise<number>;
  close(): Promise<void>;
}

interface ClientOptions {
  policy: HostPolicy;
  resolve?: Resolver;
  ca?: string;
}

/** The two callers of the guarded connection, behind one small interface. */
const CALLERS: ReadonlyArray<{ name: string; open(o: ClientOptions): Client }> = [
  {
    name: 'card fetcher',
    open(o) {
      const fetcher = createCardFetcher({ policy: o.policy, ...(o.resolve && { lookup: o.resolve }), ...(o.ca !== undefined && { ca: o.ca }) });
      return { get: async (url) => (await fetcher.fetch(url)).status, close: () => fetcher.close() };
    },
  },
  {
    name: 'policy fetch',
    open(o) {
      const policyFetch = createPolicyFetch({ policy: o.policy, ...(o.resolve && { resolve: o.resolve }), ...(o.ca !== undefined && { ca: o.ca }) });
      return {
        async get(url) {
          const res = await policyFetch(url);
          await res.arrayBuffer();
          return res.status;
        },
        close: () => policyFetch.close(),
      };
    },
  },
];

async function rejection(promise: Promise<unknown>, code: DiscoveryErrorCode): Promise<DiscoveryError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isDiscoveryError(err), `expected a DiscoveryError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the request succeeded`);
}

/** A resolver from a fixed table that counts its lookups. */
function tableResolver(table: Record<string, string>): Resolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (host: string) => {
    lookups.push(host);
    const address = table[host];
    if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? (6 as const) : (4 as const) }];
  };
  return Object.assign(resolve, { lookups });
}

describe('the guarded connection, for both callers', () => {
  let cert: TestCertificate;
  /** HTTPS on 127.0.0.1, certificate for rebind.test and 127.0.0.1 (trusted through `ca`). */
  let tlsServer: FaultServer;
  /** Plain HTTP on 127.0.0.1 (the development exemption). */
  let plain: FaultServer;
  const open: Client[] = [];
  const client = (caller: (typeof CALLERS)[number], options: Omit<ClientOptions, 'policy'> & { policy: HostPolicyOptions }): Client => {
    const c = caller.open({ ...options, policy: HostPolicy.from(options.policy) });
    open.push(c);
    return c;
  };

  before(async () => {
    cert = await createTestCertificate();
    tlsServer = await startFaultServer({ tls: cert, hostname: 'rebind.test' });
    plain = await startFaultServer();
  });
  after(async () => {
    await Promise.all(open.map((c) => c.close()));
    await tlsServer.close();
    await plain.close();
  });

  for (const caller of CALLERS) {
    const id = caller.name.replace(/ /g, '-');

    test(`[${caller.name}] allowlist verdict: a URL outside the allowlist is refused before any lookup or connection`, async () => {
      const ep = tlsServer.endpoint(`${id}-verdict`);
      const resolve = tableResolver({ 'rebind.test': '127.0.0.1', 'other.test': '127.0.0.1' });
      const c = client(caller, { policy: { allow: [`https://other.test:${tlsServer.port}`], allowCidrs: ['127.0.0.1/32'] }, resolve, ca: cert.cert });
      const connections = tlsServer.connections;
      const err = await rejection(c.get(ep.cardUrl), 'ERR_HOST_NOT_ALLOWED');
      assert.equal(err.stage, 'resolve');
      assert.deepEqual(resolve.lookups, []);
      assert.equal(tlsServer.connections, connections, 'no connection was opened');
      assert.equal(ep.hits, 0);
    });

    test(`[${caller.name}] IP literal: a blocked literal is refused before any connection`, async () => {
      const ep = tlsServer.endpoint(`${id}-literal`);
      const url = `https://127.0.0.1:${tlsServer.port}/${id}-literal/.well-known/agent-card.json`;
      const connections = tlsServer.connections;
      // Allowlisted, https, but 127.0.0.1 is not an allowed address without the exemption.
      const strict = client(caller, { policy: { allow: [`https://127.0.0.1:${tlsServer.port}`] }, ca: cert.cert });
      const err = await rejection(strict.get(url), 'ERR_ADDRESS_BLOCKED');
      assert.equal(err.stage, 'address');
      assert.match(err.message, /^address 127\.0\.0\.1 is blocked/);
      assert.equal(tlsServer.connections, connections, 'refused before a TCP connection, not by the peer check after one');
      assert.equal(ep.hits, 0);

      // Control: the same request with the address allowed reaches the server.
      const open = client(caller, { policy: { allow: [`https://127.0.0.1:${tlsServer.port}`], allowCidrs: ['127.0.0.1/32'] }, ca: cert.cert });
      assert.equal(await open.get(url), 200);
      assert.equal(ep.hits, 1);
    });

    test(`[${caller.name}] guarded lookup: a name resolving to a blocked address is refused before any connection`, async () => {
      const ep = tlsServer.endpoint(`${id}-lookup`);
      const resolve = tableResolver({ 'rebind.test': '127.0.0.1' });
      const connections = tlsServer.connections;
      const c = client(caller, { policy: { allow: [`https://rebind.test:${tlsServer.port}`] }, resolve, ca: cert.cert });
      const err = await rejection(c.get(ep.cardUrl), 'ERR_ADDRESS_BLOCKED');
      assert.match(err.message, /rebind\.test resolved to blocked address 127\.0\.0\.1/);
      assert.deepEqual(resolve.lookups, ['rebind.test']);
      assert.equal(tlsServer.connections, connections, 'refused in the lookup, not by the peer check after a connection');
      assert.equal(ep.hits, 0);
    });

    test(`[${caller.name}] connect-time peer check: a lookup answer that lands on a blocked peer is refused before any request`, async () => {
      const ep = tlsServer.endpoint(`${id}-peer`);
      // 0.0.0.0 is opened by allowCidrs, so the lookup passes it; the kernel connects it to
      // 127.0.0.1, which the policy does not allow. Only the peer check sees that.
      const resolve = tableResolver({ 'rebind.test': '0.0.0.0' });
      const c = client(caller, { policy: { allow: [`https://rebind.test:${tlsServer.port}`], allowCidrs: ['0.0.0.0/32'] }, resolve, ca: cert.cert });
      const err = await rejection(c.get(ep.cardUrl), 'ERR_ADDRESS_BLOCKED');
      assert.equal(err.stage, 'address');
      assert.match(err.message, /connected peer address 127\.0\.0\.1 of rebind\.test is blocked/);
      assert.deepEqual(resolve.lookups, ['rebind.test'], 'the lookup ran and passed');
      assert.equal(ep.hits, 0, 'no request was sent over the refused socket');

      // Control: with the peer's address allowed too, the same route reaches the server.
      const open = client(caller, { policy: { allow: [`https://rebind.test:${tlsServer.port}`], allowCidrs: ['0.0.0.0/32', '127.0.0.1/32'] }, resolve, ca: cert.cert });
      assert.equal(await open.get(ep.cardUrl), 200);
      assert.equal(ep.hits, 1);
    });

    test(`[${caller.name}] redirect refusal: a 3xx is an error naming its Location, and it is never followed`, async () => {
      const target = plain.endpoint(`${id}-target`);
      const ep = plain.endpoint(`${id}-redirect`, { mode: 'redirect', location: target.cardUrl });
      const c = client(caller, { policy: { allow: [plain.origin], allowLoopback: true } });
      for (const status of [301, 302, 303, 307, 308]) {
        ep.set({ mode: 'redirect', location: target.cardUrl, status });
        const err = await rejection(c.get(ep.cardUrl), 'ERR_REDIRECT_REFUSED');
        assert.equal(err.status, status);
        assert.equal(err.stage, 'fetch');
        assert.ok(err.message.includes(JSON.stringify(target.cardUrl)), err.message);
      }
      assert.equal(target.hits, 0, 'the allowlisted target was never requested');
    });

    test(`[${caller.name}] TLS: a private CA is trusted only through ca, and verification stays on`, async () => {
      const ep = tlsServer.endpoint(`${id}-tls`);
      const resolve = tableResolver({ 'rebind.test': '127.0.0.1' });
      const policy = { allow: [`https://rebind.test:${tlsServer.port}`], allowLoopback: true };
      const err = await rejection(client(caller, { policy, resolve }).get(ep.cardUrl), 'ERR_FETCH_NETWORK');
      assert.match(err.message, /certificate|self[- ]signed/i);
      assert.equal(ep.hits, 0);
      assert.equal(await client(caller, { policy, resolve, ca: cert.cert }).get(ep.cardUrl), 200);
      assert.equal(ep.hits, 1);
    });
  }
});
