/**
 * The OIDC provider is reached like any other peer (issue 37): its discovery document and JWKS go
 * through the guarded fetch, so a forbidden address is refused as discovery refuses it, the byte
 * cap holds on a document that arrives quickly and whole, the transport rule is the one rule
 * (`secureOrLoopback`), and a token without `exp` is never accepted. A real provider on loopback
 * (oauth2-mock-server) signs the tokens.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Server } from 'oauth2-mock-server';
import { PeopleAuth } from '../../packages/service/src/auth/people-auth.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

const AUDIENCE = 'a2a-discovery-api';
let provider: OAuth2Server;

before(async () => {
  provider = new OAuth2Server();
  await provider.issuer.keys.generate('RS256');
  await provider.start(0, '127.0.0.1');
});
after(() => provider?.stop());

/** A token signed by the provider's key, with `payload` as given (no `exp` unless it says so). */
function signed(payload: Record<string, unknown>): Promise<string> {
  return provider.issuer.buildToken({ scopesOrTransform: (_header, p) => {
    for (const key of Object.keys(p)) delete p[key];
    Object.assign(p, { iss: provider.issuer.url, aud: AUDIENCE, iat: Math.floor(Date.now() / 1000), ...payload });
  } });
}

function people(extra: Partial<ConstructorParameters<typeof PeopleAuth>[0]> = {}): PeopleAuth {
  return new PeopleAuth({ issuer: provider.issuer.url!, audience: AUDIENCE, roles: { 'a2a-admin': 'admin' }, allowLoopback: true, ...extra });
}

/** A loopback server answering every request with `body` at once, and counting the requests. */
async function documentServer(body: string): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('people auth: tokens', () => {
  test('a token without exp is refused, the same token with exp is accepted', async () => {
    const auth = people();
    try {
      const without = await auth.verify(await signed({ sub: 'user-ada', roles: ['a2a-admin'] }));
      assert.equal(without.ok, false);
      assert.match((without as { message: string }).message, /exp/);
      const withExp = await auth.verify(await signed({ sub: 'user-ada', roles: ['a2a-admin'], exp: Math.floor(Date.now() / 1000) + 600 }));
      assert.ok(withExp.ok, JSON.stringify(withExp));
    } finally {
      await auth.close();
    }
  });
});

describe('people auth: the provider is reached through the guarded fetch', () => {
  test('a provider host that resolves to a forbidden address (link-local, cloud metadata) is never connected to: 401, counted', async () => {
    let refused = 0;
    const resolved: string[] = [];
    const auth = people({
      issuer: 'http://localhost:8443/',
      // The host name answers with the cloud metadata address: the guard refuses it before any connection.
      resolve: async (host) => (resolved.push(host), [{ address: '169.254.169.254', family: 4 }]),
      onFetchRefused: () => refused++,
    });
    try {
      const result = await auth.verify(await signed({ sub: 'user-ada', exp: Math.floor(Date.now() / 1000) + 600 }));
      assert.equal(result.ok, false);
      assert.match((result as { message: string }).message, /keys could not be read/);
      assert.deepEqual(resolved, ['localhost']);
    } finally {
      await auth.close();
    }
    // Not a bounds refusal: the address guard said no.
    assert.equal(refused, 0);
  });

  test('a JWKS at another origin than the issuer and its configured JWKS URL is not fetched', async () => {
    const elsewhere = await documentServer('{"keys":[]}');
    const discovery = await documentServer(JSON.stringify({ issuer: provider.issuer.url, jwks_uri: `${elsewhere.url}/jwks` }));
    const auth = people({ issuer: provider.issuer.url!, jwksUrl: `${provider.issuer.url}/jwks` });
    try {
      // The configured JWKS is on the issuer's origin; nothing else is ever asked.
      const ok = await auth.verify(await signed({ sub: 'user-ada', roles: ['a2a-admin'], exp: Math.floor(Date.now() / 1000) + 600 }));
      assert.ok(ok.ok, JSON.stringify(ok));
      assert.equal(elsewhere.requests(), 0);
      assert.equal(discovery.requests(), 0);
    } finally {
      await auth.close();
      await elsewhere.close();
      await discovery.close();
    }
  });

  test('a JWKS one byte over maxBytes, sent at once and whole (no deadline involved), fails closed: 401, counted', async () => {
    const maxBytes = 4_096;
    const keys = provider.issuer.keys.toJSON(false);
    const body = JSON.stringify({ keys, padding: '' });
    const padded = body.replace('"padding":""', `"padding":"${'x'.repeat(maxBytes + 1 - body.length)}"`);
    assert.equal(Buffer.byteLength(padded), maxBytes + 1);
    const jwks = await documentServer(padded);
    let refused = 0;
    const auth = people({ jwksUrl: `${jwks.url}/jwks`, maxBytes, fetchTimeoutMs: 30_000, onFetchRefused: () => refused++ });
    try {
      const started = performance.now();
      const result = await auth.verify(await signed({ sub: 'user-ada', roles: ['a2a-admin'], exp: Math.floor(Date.now() / 1000) + 600 }));
      assert.equal(result.ok, false);
      assert.match((result as { message: string }).message, /keys could not be read/);
      assert.equal(refused, 1);
      assert.equal(jwks.requests(), 1);
      // Refused for its size, long before the 30 s deadline.
      assert.ok(performance.now() - started < 10_000);
    } finally {
      await auth.close();
      await jwks.close();
    }
    // The same keys within the cap are read.
    const fits = await documentServer(JSON.stringify({ keys }));
    const auth2 = people({ jwksUrl: `${fits.url}/jwks`, maxBytes });
    try {
      const ok = await auth2.verify(await signed({ sub: 'user-ada', roles: ['a2a-admin'], exp: Math.floor(Date.now() / 1000) + 600 }));
      assert.ok(ok.ok, JSON.stringify(ok));
    } finally {
      await auth2.close();
      await fits.close();
    }
  });

  test('plain http to a host that is not loopback is refused at construction, with or without allowLoopback', () => {
    for (const allowLoopback of [true, false]) {
      assert.throws(
        () => new PeopleAuth({ issuer: 'http://idp.example.com/', audience: AUDIENCE, roles: {}, allowLoopback }),
        (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && /server\.oidc\.issuer must be https: plain http is accepted only for a loopback host/.test(err.message),
      );
      assert.throws(
        () => new PeopleAuth({ issuer: 'https://idp.example.com/', jwksUrl: 'http://keys.example.com/jwks', audience: AUDIENCE, roles: {}, allowLoopback }),
        (err: unknown) => isDiscoveryError(err) && /server\.oidc\.jwksUrl must be https/.test(err.message),
      );
    }
    assert.throws(() => new PeopleAuth({ issuer: 'http://127.0.0.1:1/', audience: AUDIENCE, roles: {} }), /allowLoopback/);
  });
});
