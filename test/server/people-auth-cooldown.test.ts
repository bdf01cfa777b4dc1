/**
 * A failing or hostile identity provider is not amplified (issue 38, item 5): the service reads
 * the provider's discovery document and JWKS one fetch at a time (concurrent tokens share it)
 * and, after ANY fetch, good or failed, not again before `cooldownMs` — however many tokens
 * arrive. Meanwhile the last good keys serve; with none, every token is refused at once (401)
 * without a new request. A `jwks_uri` the discovery document points at a forbidden address gets
 * no connection at all.
 *
 * Real parts on loopback: the provider is a node:http server serving a discovery document and a
 * JWKS of a real key pair (jose), each switchable to a failure — a 500, a document one byte over
 * the cap, an endless body, a redirect, an answer slower than the deadline — and counting the
 * requests each document gets. The cooldown runs on a VirtualClock: no timing is asserted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { JWK } from 'jose';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { PeopleAuth } from '../../packages/service/src/auth/people-auth.js';

const AUDIENCE = 'a2a-discovery-api';
const COOLDOWN_MS = 30_000;
const MAX_BYTES = 4_096;
const FETCH_TIMEOUT_MS = 400;

type Failure = '500' | 'oversized' | 'endless' | 'redirect' | 'slow';
const FAILURES: readonly Failure[] = ['500', 'oversized', 'endless', 'redirect', 'slow'];

interface Provider {
  readonly issuer: string;
  /** What each document answers: `ok`, or a failure. */
  discovery: 'ok' | Failure;
  jwks: 'ok' | Failure;
  /** Overrides the discovery document's `jwks_uri`. */
  jwksUri: string | undefined;
  /** Requests per path (`/.well-known/openid-configuration`, `/jwks`). */
  readonly requests: Map<string, number>;
  reset(): void;
  close(): Promise<void>;
}

let keys: { kid: string; publicJwk: JWK; sign(payload: Record<string, unknown>, kid?: string): Promise<string> };

before(async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'ES256', use: 'sig' };
  keys = {
    kid: 'key-1',
    publicJwk,
    sign: (payload, kid = 'key-1') => new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt().setExpirationTime('10m').sign(privateKey),
  };
});

/** The provider on loopback; its documents' behaviours are switched by the test. */
async function startProvider(): Promise<Provider> {
  const requests = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let issuer = '';
  const state = { discovery: 'ok' as 'ok' | Failure, jwks: 'ok' as 'ok' | Failure, jwksUri: undefined as string | undefined };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const mode = path === '/.well-known/openid-configuration' ? state.discovery : path === '/jwks' ? state.jwks : '500';
    const good = path === '/jwks' ? JSON.stringify({ keys: [keys.publicJwk] }) : JSON.stringify({ issuer, jwks_uri: state.jwksUri ?? `${issuer}/jwks` });
    switch (mode) {
      case 'ok':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(good);
        return;
      case '500':
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"down"}');
        return;
      case 'oversized': {
        // Valid JSON, one byte over the cap, sent at once and whole.
        const body = JSON.stringify({ keys: [keys.publicJwk], padding: '' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body.replace('"padding":""', `"padding":"${'x'.repeat(MAX_BYTES + 1 - body.length)}"`));
        return;
      }
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
        const timer = setInterval(() => res.write(' '.repeat(1_024)), 1);
        timers.add(timer);
        res.on('close', () => (clearInterval(timer), timers.delete(timer)));
        return;
      }
      case 'redirect':
        res.writeHead(302, { location: `${issuer}/elsewhere` });
        res.end();
        return;
      case 'slow': {
        // The headers come after the deadline.
        const timer = setTimeout(() => (res.writeHead(200, { 'content-type': 'application/json' }), res.end(good)), FETCH_TIMEOUT_MS * 10);
        timers.add(timer);
        res.on('close', () => (clearTimeout(timer), timers.delete(timer)));
        return;
      }
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    get discovery() {
      return state.discovery;
    },
    set discovery(v) {
      state.discovery = v;
    },
    get jwks() {
      return state.jwks;
    },
    set jwks(v) {
      state.jwks = v;
    },
    get jwksUri() {
      return state.jwksUri;
    },
    set jwksUri(v) {
      state.jwksUri = v;
    },
    requests,
    reset() {
      requests.clear();
      state.discovery = 'ok';
      state.jwks = 'ok';
      state.jwksUri = undefined;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let provider: Provider;
before(async () => {
  provider = await startProvider();
});
after(() => provider?.close());

function people(clock: VirtualClock, extra: Partial<ConstructorParameters<typeof PeopleAuth>[0]> = {}): PeopleAuth {
  return new PeopleAuth({ issuer: provider.issuer, audience: AUDIENCE, roles: { 'a2a-admin': 'admin' }, allowLoopback: true, cooldownMs: COOLDOWN_MS, fetchTimeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_BYTES, clock, ...extra });
}

function token(kid?: string): Promise<string> {
  return keys.sign({ iss: provider.issuer, aud: AUDIENCE, sub: 'user-ada', roles: ['a2a-admin'] }, kid);
}

const DISCOVERY = '/.well-known/openid-configuration';
const requestsTo = (path: string): number => provider.requests.get(path) ?? 0;

describe('a failing provider is asked at most once per cooldown, however many tokens arrive', () => {
  for (const document of ['discovery', 'jwks'] as const) {
    for (const failure of FAILURES) {
      test(`the ${document === 'discovery' ? 'discovery document' : 'JWKS'} fails (${failure}): 50 concurrent tokens, one fetch; 50 more in the cooldown, none; after it, one`, { timeout: 30_000 }, async () => {
        provider.reset();
        provider[document] = failure;
        const path = document === 'discovery' ? DISCOVERY : '/jwks';
        const clock = new VirtualClock();
        const auth = people(clock);
        try {
          const jwt = await token();
          const first = await Promise.all(Array.from({ length: 50 }, () => auth.verify(jwt)));
          for (const r of first) {
            assert.equal(r.ok, false);
            assert.match((r as { message: string }).message, /keys could not be read/);
          }
          assert.equal(requestsTo(path), 1, `${path}: one fetch for 50 concurrent tokens`);
          // Within the cooldown: refused at once, nothing asked (concurrently and one by one).
          await clock.advance(COOLDOWN_MS - 1);
          await Promise.all(Array.from({ length: 25 }, () => auth.verify(jwt)));
          for (let i = 0; i < 25; i++) assert.equal((await auth.verify(jwt)).ok, false);
          assert.equal(requestsTo(path), 1, `${path}: nothing within the cooldown`);
          // The cooldown has passed: one fetch again, shared; the provider has recovered.
          await clock.advance(1);
          provider[document] = 'ok';
          const later = await Promise.all(Array.from({ length: 50 }, () => auth.verify(jwt)));
          assert.ok(later.every((r) => r.ok), JSON.stringify(later[0]));
          assert.equal(requestsTo(path), 2);
          assert.ok(requestsTo('/jwks') <= 1 + (document === 'jwks' ? 1 : 0));
        } finally {
          await auth.close();
        }
      });
    }
  }
});

describe('the last good keys serve while the provider fails', () => {
  test('past their age the keys are asked for once per cooldown; meanwhile they verify tokens; an unknown key id costs nothing more', async () => {
    provider.reset();
    const clock = new VirtualClock();
    const auth = people(clock);
    try {
      const jwt = await token();
      assert.ok((await auth.verify(jwt)).ok);
      assert.deepEqual([requestsTo(DISCOVERY), requestsTo('/jwks')], [1, 1]);
      provider.jwks = '500';
      // An unknown key id after the cooldown: one fetch (it fails), and the token is refused.
      await clock.advance(COOLDOWN_MS);
      const unknown = await token('key-2');
      const refused = await Promise.all(Array.from({ length: 50 }, () => auth.verify(unknown)));
      assert.ok(refused.every((r) => !r.ok && /key the provider does not publish/.test(r.message)), JSON.stringify(refused[0]));
      assert.equal(requestsTo('/jwks'), 2);
      // Ten minutes on (past the keys' age): the held keys still serve, one fetch per cooldown.
      await clock.advance(10 * 60_000);
      const served = await Promise.all(Array.from({ length: 50 }, () => auth.verify(jwt)));
      assert.ok(served.every((r) => r.ok), JSON.stringify(served[0]));
      for (let i = 0; i < 20; i++) assert.ok((await auth.verify(jwt)).ok);
      for (let i = 0; i < 20; i++) assert.equal((await auth.verify(unknown)).ok, false);
      assert.equal(requestsTo('/jwks'), 3);
      assert.equal(requestsTo(DISCOVERY), 1, 'the jwks_uri is remembered');
    } finally {
      await auth.close();
    }
  });
});

describe('a jwks_uri at a forbidden address gets no connection', () => {
  /** A TCP listener counting connections, on loopback. */
  async function trap(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
    let connections = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      port: (server.address() as AddressInfo).port,
      connections: () => connections,
      close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))),
    };
  }

  test('a loopback issuer’s discovery document names a host that resolves to loopback: refused before any connection, then not asked again in the cooldown', async () => {
    const t = await trap();
    provider.reset();
    provider.jwksUri = `https://keys.attacker.test:${t.port}/jwks`;
    const resolved: string[] = [];
    const clock = new VirtualClock();
    // allowLoopback admits the loopback issuer; a name in its document is not a loopback host.
    const auth = people(clock, { resolve: async (host) => (resolved.push(host), [{ address: '127.0.0.1', family: 4 }]) });
    try {
      const jwt = await token();
      for (let i = 0; i < 52; i++) {
        const r = await auth.verify(jwt);
        assert.equal(r.ok, false);
        assert.match((r as { message: string }).message, /keys could not be read/);
      }
      await clock.advance(COOLDOWN_MS);
      assert.equal((await auth.verify(jwt)).ok, false);
      assert.equal(t.connections(), 0, 'no connection to the trap');
      // Asked once, then once more after the cooldown.
      assert.equal(requestsTo(DISCOVERY), 1);
      assert.equal(resolved.length, 2);
    } finally {
      await auth.close();
      await t.close();
    }
  });

  test('without allowLoopback a provider reached through allowCidrs cannot send the service to loopback either', async () => {
    const t = await trap();
    const clock = new VirtualClock();
    // An https issuer in a private range (never reached here: its address is refused too) — the configured JWKS URL names the trap.
    const auth = new PeopleAuth({ issuer: 'https://idp.internal.test/', jwksUrl: `https://127.0.0.1:${t.port}/jwks`, audience: AUDIENCE, roles: { 'a2a-admin': 'admin' }, allowCidrs: ['10.0.0.0/8'], cooldownMs: COOLDOWN_MS, fetchTimeoutMs: FETCH_TIMEOUT_MS, clock });
    try {
      const jwt = await token();
      for (let i = 0; i < 10; i++) assert.equal((await auth.verify(jwt)).ok, false);
      assert.equal(t.connections(), 0);
    } finally {
      await auth.close();
      await t.close();
    }
  });
});
