/**
 * The exact-origin policy (issue 37): the guarded connection's policy for a peer the deployment
 * names (a leader replica, the service a CLI reads). It admits one origin, http as written, and
 * judges addresses with the one address rule; the deployment fetch over it reaches loopback and
 * the private ranges, never the metadata address.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDeploymentFetch, exactOriginPolicy, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

describe('exactOriginPolicy', () => {
  const addresses = HostPolicy.from({ allow: [], allowLoopback: true, allowCidrs: ['10.0.0.0/8'] });
  const policy = exactOriginPolicy('http://10.0.3.7:7340', addresses);

  test('admits its one origin, over the scheme it names', () => {
    const verdict = policy.check('http://10.0.3.7:7340/api/sources?x=1');
    assert.ok(verdict.allowed);
    assert.equal(verdict.origin, 'http://10.0.3.7:7340');
  });

  test('refuses another origin: another host, port or scheme', () => {
    for (const url of ['http://10.0.3.8:7340/', 'http://10.0.3.7:7341/', 'https://10.0.3.7:7340/', 'http://evil.example/']) {
      const verdict = policy.check(url);
      assert.equal(verdict.allowed, false, url);
      assert.equal(!verdict.allowed && verdict.code, 'ERR_HOST_NOT_ALLOWED', url);
    }
  });

  test('refuses userinfo (authority confusion) and other schemes', () => {
    const userinfo = policy.check('http://admin:pw@10.0.3.7:7340/');
    assert.equal(userinfo.allowed, false);
    const file = exactOriginPolicy('file://x', addresses).check('file:///etc/passwd');
    assert.equal(file.allowed, false);
    assert.equal(!file.allowed && file.code, 'ERR_INSECURE_URL');
  });

  test('judges addresses with the rule it is given', () => {
    assert.equal(policy.isAddressAllowed('10.1.2.3'), true);
    assert.equal(policy.isAddressAllowed('127.0.0.1'), true);
    assert.equal(policy.isAddressAllowed('169.254.169.254'), false);
    assert.equal(policy.isAddressAllowed('192.168.1.1'), false);
  });
});

describe('createDeploymentFetch', () => {
  test('reads its origin on loopback; a request elsewhere is refused before any connection', async () => {
    let served = 0;
    const server = http.createServer((_req, res) => (served++, res.end('{"ok":true}')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const service = createDeploymentFetch({ origin, timeoutMs: 5_000, maxResponseBytes: 1_024 });
    try {
      assert.deepEqual(await (await service(`${origin}/api/snapshot`)).json(), { ok: true });
      await assert.rejects(service('http://127.0.0.2:1/api/snapshot'), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED');
      assert.equal(served, 1);
    } finally {
      await service.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
