/**
 * People with their own identity and roles on the service's API (issue 23): a real OIDC provider
 * on loopback (oauth2-mock-server) issues JWTs through its token endpoint, its
 * `beforeTokenSigning` hook giving each person their roles; the service verifies them with jose
 * against the provider's JWKS (found through its discovery document).
 *
 * - every route × every kind of caller → 401, 403 or served (the table);
 * - sessions belong to the person (`sub`), from any client; an operator cannot end another
 *   person's session, an admin can;
 * - the journal names who refreshed, confirmed and ended; confirm publishes a held removal;
 * - a person's token never shows in a log line, event, journal row or API answer;
 * - the JWKS fetch is bounded: an endpoint that streams for ever fails closed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { requestJson } from '../helpers/raw-http.js';
import type { JsonReply as Reply } from '../helpers/raw-http.js';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import diagnostics from 'node:diagnostics_channel';
import { OAuth2Server } from 'oauth2-mock-server';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { PeopleAuth } from '../../packages/service/src/auth/people-auth.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/assembly/from-config.js';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { listSource } from '../helpers/list-source.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const AUDIENCE = 'a2a-discovery-api';
const ADMIN_TOKEN = 'static-admin-token-0123456789abcdef';

/** Who each test person is (the provider's user name → the roles claim it gets). */
const PEOPLE: Record<string, unknown> = {
  vera: ['a2a-viewer'],
  otto: 'openid a2a-operator', // a space-separated string, like `scope`
  olga: ['a2a-operator', 'unrelated'],
  ada: ['a2a-admin', 'a2a-viewer'],
  ursula: ['staff'], // no role this service knows
};

/** One request on a fresh connection (a new client: no cookie unless given); an event stream is read up to its headers. */
const send = (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> => requestJson(base, method, path, headers, body);

let provider: OAuth2Server;
/** Every token the provider issued (none may show anywhere). */
const issued: string[] = [];

/** A token for `user` from the provider's token endpoint; `shape` changes it for the negative cases. */
async function tokenFor(user: string, shape: 'good' | 'expired' | 'short' | 'wrong-audience' | 'wrong-issuer' = 'good'): Promise<string> {
  const res = await fetch(`${provider.issuer.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: `${user}|${shape}`, password: 'x', scope: 'openid' }),
  });
  assert.equal(res.status, 200);
  const token = ((await res.json()) as { access_token: string }).access_token;
  issued.push(token);
  return token;
}

before(async () => {
  provider = new OAuth2Server();
  await provider.issuer.keys.generate('RS256');
  await provider.start(0, '127.0.0.1');
  // The provider's hook: the person's subject, name and roles, and the negative shapes.
  provider.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: { body: Record<string, string> }) => {
    const [user = '', shape] = String(req.body.username).split('|');
    token.payload.sub = `user-${user}`;
    token.payload.name = user[0]!.toUpperCase() + user.slice(1);
    token.payload.roles = PEOPLE[user];
    token.payload.aud = shape === 'wrong-audience' ? 'some-other-api' : AUDIENCE;
    if (shape === 'expired') token.payload.exp = Math.floor(Date.now() / 1000) - 3_600;
    if (shape === 'short') token.payload.exp = Math.floor(Date.now() / 1000) + 2;
    if (shape === 'wrong-issuer') token.payload.iss = 'http://127.0.0.1:1/not-the-issuer';
  });
});
after(() => provider?.stop());

const logs: string[] = [];
function service(extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    port: 0,
    policy: { allow: [], allowLoopback: true },
    vocabulary: [],
    needs: [],
    token: ADMIN_TOKEN,
    oidc: {
      issuer: provider.issuer.url!,
      audience: AUDIENCE,
      roles: { 'a2a-viewer': 'viewer', 'a2a-operator': 'operator', 'a2a-admin': 'admin' },
      allowLoopback: true,
    },
    logger: createLogger({ level: 'debug', destination: new Writable({ write: (chunk: Buffer, _enc, cb) => (logs.push(chunk.toString()), cb()) }) }),
    ...extra,
  });
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('roles on every route', () => {
  let s: RunningService;
  before(async () => {
    s = await service();
  });
  after(() => s?.close());

  // Every route the API has (GET reads; POST/DELETE act).
  const ROUTES: ReadonlyArray<readonly [method: string, path: string, body?: string]> = [
    ['GET', '/metrics'],
    ['GET', '/api/whoami'],
    ['GET', '/api/snapshot'],
    ['GET', '/api/snapshots'],
    ['GET', '/api/snapshots/sha256-unknown'],
    ['GET', '/api/diff'],
    ['GET', '/api/endpoints'],
    ['GET', '/api/endpoints/card?url=http%3A%2F%2F127.0.0.1%3A9%2F'],
    ['GET', '/api/sources'],
    ['GET', '/api/sessions'],
    ['GET', '/api/events'],
    ['GET', '/api/journal'],
    ['GET', '/api/activity'],
    ['GET', '/api/stream'],
    ['GET', '/api/trace/defaults'],
    ['POST', '/api/refresh', '{}'],
    ['POST', '/api/inspect', '{"card":"{}"}'],
    ['POST', '/api/chat', '{"message":"hello"}'],
    ['POST', '/api/trace', '{}'],
    ['POST', '/api/sessions/s-unknown/upgrade', '{}'],
    ['DELETE', '/api/sessions/s-unknown'],
    // A body where none is read (or a malformed one) changes nothing: the role is checked before any body (issue 38).
    ['DELETE', '/api/sessions/s-unknown', '{"force":true}'],
    ['POST', '/api/refresh', 'not json'],
    ['POST', '/api/chat', '{"message":'],
    ['POST', '/api/snapshots/confirm', '['],
    ['POST', '/api/snapshots/confirm', '{}'],
    ['POST', '/api/config/reload', '{}'],
    ['POST', '/api/registry/search', '{"query":{"text":"billing"}}'],
    ['POST', '/api/registry/explore', '{"resultType":{"facets":[{"field":"type"}]}}'],
    ['GET', '/api/registry/agents'],
  ];
  // The trace explorer is a simulation on a virtual clock, the registry's search and explore are reads: a viewer may run them.
  const READ = (m: string, p = ''): boolean => m === 'GET' || p === '/api/trace' || p.startsWith('/api/registry/');
  const ADMIN_ONLY = (p: string): boolean => p === '/api/snapshots/confirm' || p === '/api/config/reload';
  type Expect = 'served' | 401 | 403;
  const CALLERS: ReadonlyArray<readonly [name: string, headers: () => Promise<Record<string, string>>, expect: (method: string, path: string) => Expect]> = [
    ['no token', () => Promise.resolve({}), () => 401],
    ['viewer', async () => bearer(await tokenFor('vera')), (m, p) => (READ(m, p) ? 'served' : 403)],
    ['operator', async () => bearer(await tokenFor('otto')), (_m, p) => (ADMIN_ONLY(p) ? 403 : 'served')],
    ['admin', async () => bearer(await tokenFor('ada')), () => 'served'],
    ['admin token', () => Promise.resolve(bearer(ADMIN_TOKEN)), () => 'served'],
    ['expired token', async () => bearer(await tokenFor('ada', 'expired')), () => 401],
    ['wrong audience', async () => bearer(await tokenFor('ada', 'wrong-audience')), () => 401],
    ['wrong issuer', async () => bearer(await tokenFor('ada', 'wrong-issuer')), () => 401],
    ['unknown role', async () => bearer(await tokenFor('ursula')), (_m, p) => (p === '/api/whoami' ? 'served' : 403)],
    ['not a JWT', () => Promise.resolve(bearer('not-a-jwt-and-not-the-admin-token')), () => 401],
  ];

  test('every route × every caller: 401 without a valid token, 403 without the role, served with it', async () => {
    const wrong: string[] = [];
    for (const [name, headersOf, expect] of CALLERS) {
      const headers = await headersOf();
      for (const [method, path, body] of ROUTES) {
        const r = await send(s.url, method, path, { ...headers, ...(body !== undefined && JSON_TYPE) }, body);
        const want = expect(method, path);
        // A 403 of the role check carries its challenge; a route's own 403 (a URL the policy refuses) is served.
        const got: Expect = r.status === 401 ? 401 : r.status === 403 && r.headers['www-authenticate'] !== undefined ? 403 : 'served';
        if (got !== want) wrong.push(`${name} ${method} ${path}: got ${r.status} (${r.body.slice(0, 160)}), want ${want}`);
        // RFC 6750: a 401 challenges; a 403 says the scope is insufficient.
        if (r.status === 401) assert.match(String(r.headers['www-authenticate']), /^Bearer realm="a2a-discovery"/, `${name} ${method} ${path}`);
        if (got === 403) assert.match(String(r.headers['www-authenticate']), /error="insufficient_scope"/, `${name} ${method} ${path}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('a 401 says why without echoing the token; an unknown role is a 403 that names the values the token had', async () => {
    const expired = await send(s.url, 'GET', '/api/snapshot', bearer(await tokenFor('ada', 'expired')));
    assert.equal(expired.status, 401);
    assert.match(String(expired.headers['www-authenticate']), /error="invalid_token", error_description="the token has expired"/);
    const aud = await send(s.url, 'GET', '/api/snapshot', bearer(await tokenFor('ada', 'wrong-audience')));
    assert.match(String(aud.json.message), /another audience/);
    const none = await send(s.url, 'GET', '/api/snapshot');
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="a2a-discovery"', 'no credentials: a bare challenge (RFC 6750 §3.1)');
    const unknown = await send(s.url, 'GET', '/api/snapshot', bearer(await tokenFor('ursula')));
    assert.equal(unknown.status, 403);
    assert.match(String(unknown.json.message), /user-ursula carries no role this service knows \(it has staff\); server\.oidc\.roles maps/);
    const viewer = await send(s.url, 'POST', '/api/refresh', { ...bearer(await tokenFor('vera')), ...JSON_TYPE }, '{}');
    assert.equal(viewer.status, 403);
    assert.equal(viewer.json.needed, 'operator');
    assert.equal(viewer.json.role, 'viewer');
  });

  test('GET /api/whoami says who is signed in and what they may do (the dashboard reads it)', async () => {
    const ada = await send(s.url, 'GET', '/api/whoami', bearer(await tokenFor('ada')));
    assert.deepEqual(ada.json, { kind: 'person', sub: 'user-ada', name: 'Ada', role: 'admin', can: { read: true, refresh: true, inspect: true, chat: true, trace: true, confirm: true, othersSessions: true } });
    const otto = await send(s.url, 'GET', '/api/whoami', bearer(await tokenFor('otto')));
    assert.equal(otto.json.role, 'operator', 'a space-separated roles string is read like scope');
    assert.deepEqual(otto.json.can, { read: true, refresh: true, inspect: true, chat: true, trace: true, confirm: false, othersSessions: false });
    const token = await send(s.url, 'GET', '/api/whoami', bearer(ADMIN_TOKEN));
    assert.equal(token.json.kind, 'admin-token');
    assert.equal(token.json.role, 'admin');
  });
});

describe('sessions belong to the person; who did what is journaled', () => {
  let s: RunningService;
  before(async () => {
    s = await service();
  });
  after(() => s?.close());

  const chat = async (token: string, body: Record<string, unknown>): Promise<Reply> => send(s.url, 'POST', '/api/chat', { ...bearer(token), ...JSON_TYPE }, JSON.stringify({ message: 'hello', ...body }));

  test('a session started with a person\'s token is theirs from another client; another operator gets the unknown-session answer; an admin may end it', async () => {
    const started = await chat(await tokenFor('otto'), {});
    assert.equal(started.status, 200, started.body);
    const id = String(started.json.sessionId);
    // A second client (fresh connection, no cookie, a new token for the same sub) continues it and lists it as its own.
    const again = await chat(await tokenFor('otto'), { sessionId: id });
    assert.equal(again.status, 200, again.body);
    const listed = await send(s.url, 'GET', '/api/sessions', bearer(await tokenFor('otto')));
    assert.deepEqual((listed.json.sessions as Array<{ sessionId: string; owned: boolean }>).map((x) => [x.sessionId, x.owned]), [[id, true]]);
    // Another operator: exactly the answer an unknown id gets, and not listed.
    const olga = await tokenFor('olga');
    const theirs = await send(s.url, 'DELETE', `/api/sessions/${id}`, bearer(olga));
    const unknown = await send(s.url, 'DELETE', '/api/sessions/s-never-was', bearer(olga));
    assert.equal(theirs.status, 404);
    assert.equal(theirs.body.replaceAll(id, 'ID'), unknown.body.replaceAll('s-never-was', 'ID'));
    assert.equal(((await send(s.url, 'GET', '/api/sessions', bearer(olga))).json.sessions as unknown[]).length, 0);
    assert.equal((await chat(olga, { sessionId: id })).status, 403, 'nor can she continue it');
    // An admin person may end it.
    const ended = await send(s.url, 'DELETE', `/api/sessions/${id}`, bearer(await tokenFor('ada')));
    assert.equal(ended.status, 200, ended.body);

    // The journal names who ended it.
    const journal = await send(s.url, 'GET', '/api/journal?types=api.action', bearer(await tokenFor('vera')));
    const actions = (journal.json.events as Array<{ action: string; actor: { kind: string; sub?: string; role?: string }; sessionId?: string }>).map((e) => [e.action, e.actor.sub ?? e.actor.kind, e.actor.role, e.sessionId]);
    assert.deepEqual(actions, [['session.end', 'user-ada', 'admin', id]]);
  });

  test('a person\'s session is still theirs after a restart on a durable store (their hashed identity is stored with the pin)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'people-'));
    const store = `sqlite:${join(dir, 'state.sqlite')}`;
    try {
      const first = await service({ store });
      let id: string;
      try {
        const started = await send(first.url, 'POST', '/api/chat', { ...bearer(await tokenFor('otto')), ...JSON_TYPE }, '{"message":"hello"}');
        assert.equal(started.status, 200, started.body);
        id = String(started.json.sessionId);
      } finally {
        await first.close();
      }
      const second = await service({ store });
      try {
        const olga = await send(second.url, 'POST', `/api/sessions/${id}/upgrade`, { ...bearer(await tokenFor('olga')), ...JSON_TYPE }, '{}');
        assert.equal(olga.status, 404, 'still not another operator\'s');
        const again = await send(second.url, 'POST', '/api/chat', { ...bearer(await tokenFor('otto')), ...JSON_TYPE }, JSON.stringify({ message: 'again', sessionId: id }));
        assert.equal(again.status, 200, again.body);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the journal names who refreshed (a person, the admin token)', async () => {
    assert.equal((await send(s.url, 'POST', '/api/refresh', { ...bearer(await tokenFor('otto')), ...JSON_TYPE }, '{}')).status, 200);
    assert.equal((await send(s.url, 'POST', '/api/refresh', { ...bearer(ADMIN_TOKEN), ...JSON_TYPE }, '{}')).status, 200);
    const journal = await send(s.url, 'GET', '/api/journal?types=api.action', bearer(ADMIN_TOKEN));
    const refreshes = (journal.json.events as Array<{ action: string; actor: { kind: string; sub?: string; name?: string; role?: string } }>).filter((e) => e.action === 'refresh');
    assert.deepEqual(
      refreshes.map((e) => e.actor),
      [
        { kind: 'person', sub: 'user-otto', name: 'Otto', role: 'operator' },
        { kind: 'admin-token', role: 'admin' },
      ],
    );
    // The log says it too, in words an operator greps for.
    assert.ok(logs.some((l) => l.includes('"msg":"refresh by Otto (operator)"')), 'a log line names the person');
    assert.ok(logs.some((l) => l.includes('"msg":"refresh by admin-token"')), 'a log line names the admin token');
  });
});

describe('POST /api/snapshots/confirm publishes the held removal (admin only)', () => {
  let peers: RunningPeer[] = [];
  let s: RunningService;
  const source = listSource('registry');
  const TAGS = ['billing', 'shipping', 'warranty'];
  before(async () => {
    peers = await Promise.all(TAGS.map((tag) => startV1CardServer({ card: (port) => v1Card(port, { name: `${tag} agent`, securitySchemes: undefined, securityRequirements: undefined, skills: [{ id: tag, name: tag, description: `Does ${tag}.`, tags: [tag] }] }) })));
    source.set(peers.map((p, i) => ({ name: `${TAGS[i]}_agent`, baseUrl: p.baseUrl })));
    s = await service({
      policy: { allow: peers.map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
      vocabulary: TAGS.map((tag) => ({ tag, description: `${tag}.` })),
      needs: TAGS.map((tag) => ({ tag })),
      extraSources: [source],
      loop: { cycleIntervalMs: 600_000 },
      cache: { minTtlMs: 0 },
      health: { enterAfter: 1 },
    });
  });
  after(async () => {
    await s?.close();
    await Promise.all(peers.map((p) => p.close()));
  });

  test('nothing held is 409; a held removal is confirmed by an admin, refused to an operator, and journaled with its actor', async () => {
    const admin = await tokenFor('ada');
    await send(s.url, 'POST', '/api/refresh', { ...bearer(admin), ...JSON_TYPE }, '{}');
    const before = s.loop.current();
    assert.equal(before?.agents.length, 3, `three agents published: ${(await send(s.url, 'GET', '/api/endpoints', bearer(admin))).body}`);
    const nothing = await send(s.url, 'POST', '/api/snapshots/confirm', { ...bearer(admin), ...JSON_TYPE }, '{}');
    assert.equal(nothing.status, 409);
    assert.equal(nothing.json.error, 'nothing-held');

    // The registry drops two of three: the guard holds the smaller snapshot.
    source.set([{ name: 'billing_agent', baseUrl: peers[0]!.baseUrl }]);
    await send(s.url, 'POST', '/api/refresh', { ...bearer(admin), ...JSON_TYPE }, '{}');
    const held = s.loop.held;
    assert.ok(held, 'the removal is held');
    assert.equal(s.loop.current(), before);
    const listed = await send(s.url, 'GET', '/api/snapshots', bearer(await tokenFor('vera')));
    assert.equal(listed.json.held, held);

    assert.equal((await send(s.url, 'POST', '/api/snapshots/confirm', { ...bearer(await tokenFor('otto')), ...JSON_TYPE }, '{}')).status, 403, 'an operator may not confirm');
    assert.equal(s.loop.held, held);

    const confirmed = await send(s.url, 'POST', '/api/snapshots/confirm', { ...bearer(admin), ...JSON_TYPE }, '{}');
    assert.equal(confirmed.status, 200, confirmed.body);
    assert.equal(confirmed.json.confirmed, held);
    assert.equal(confirmed.json.digest, s.loop.current()?.digest, 'the answer names the published snapshot');
    assert.deepEqual(s.loop.current()?.agents.map((a) => a.localName), ['billing_agent']);
    assert.equal(confirmed.json.held, null);

    const journal = await send(s.url, 'GET', '/api/journal?types=api.action', bearer(admin));
    const confirm = (journal.json.events as Array<{ action: string; actor: { sub?: string; role?: string }; digest?: string }>).find((e) => e.action === 'confirm');
    assert.deepEqual(confirm && { sub: confirm.actor.sub, role: confirm.actor.role, digest: confirm.digest }, { sub: 'user-ada', role: 'admin', digest: s.loop.current()?.digest });
  });
});

describe('a person\'s token is never shown', () => {
  test('no issued token appears in a log line, an event, a journal row or an API answer', async () => {
    const s = await service();
    const answers: string[] = [];
    try {
      const ada = await tokenFor('ada');
      const otto = await tokenFor('otto');
      for (const [token, method, path, body] of [
        [otto, 'POST', '/api/chat', '{"message":"hello"}'],
        [otto, 'POST', '/api/refresh', '{}'],
        [otto, 'POST', '/api/inspect', '{"card":"{}"}'],
        [ada, 'GET', '/api/whoami', undefined],
        [ada, 'GET', '/api/sessions', undefined],
        [await tokenFor('ada', 'expired'), 'GET', '/api/snapshot', undefined],
        [await tokenFor('ursula'), 'POST', '/api/refresh', '{}'],
        [ada, 'GET', '/api/events', undefined],
        [ada, 'GET', '/api/journal', undefined],
        [ada, 'GET', '/metrics', undefined],
      ] as const) {
        const r = await send(s.url, method, path, { ...bearer(token), ...(body !== undefined && JSON_TYPE) }, body);
        answers.push(JSON.stringify(r.headers), r.body);
      }
      const events = (await send(s.url, 'GET', '/api/events', bearer(ADMIN_TOKEN))).body;
      const everything = [...answers, events, ...logs].join('\n');
      assert.ok(everything.includes('user-otto'), 'the sweep saw the people (their sub)');
      for (const token of issued) {
        for (const part of [token, token.split('.')[2]!]) assert.ok(!everything.includes(part), 'a token (or its signature) was shown');
      }
    } finally {
      await s.close();
    }
  });
});

describe('an event stream lasts no longer than the token it was opened with', () => {
  test('at the token\'s exp the stream says so and ends; a stream opened with the admin token stays', async () => {
    const s = await service();
    try {
      const read = async (headers: Record<string, string>, forMs: number): Promise<{ text: string; ended: boolean }> => {
        const ac = new AbortController();
        const res = await fetch(`${s.url}/api/stream`, { headers, signal: ac.signal });
        assert.equal(res.status, 200);
        const reader = res.body!.getReader();
        let text = '';
        const deadline = Date.now() + forMs;
        for (;;) {
          const left = deadline - Date.now();
          if (left <= 0) break;
          const next = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(() => r(undefined), left))]);
          if (next === undefined) break;
          if (next.done) return { text, ended: true };
          text += Buffer.from(next.value).toString();
        }
        ac.abort();
        return { text, ended: false };
      };
      const [person, admin] = await Promise.all([read(bearer(await tokenFor('vera', 'short')), 8_000), read(bearer(ADMIN_TOKEN), 4_000)]);
      assert.ok(person.ended, 'the stream of the short-lived token ended');
      assert.match(person.text, /event: expired\ndata: \{"message":"the token this stream was opened with has expired; reconnect with a fresh one"\}/);
      assert.equal(admin.ended, false, 'the admin token has no exp: its stream stays');
    } finally {
      await s.close();
    }
  });
});

describe('the JWKS is fetched under bounds, only from its URL, and rotation works', () => {
  /** A JWKS endpoint that never stops sending (`mode: bytes`) or sends a byte a second (`drip`). */
  async function hostileJwks(mode: 'bytes' | 'drip'): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys":[');
      const timer = setInterval(() => res.write(mode === 'bytes' ? ' '.repeat(16_384) : ' '), mode === 'bytes' ? 1 : 1_000);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
      close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
    };
  }

  for (const mode of ['bytes', 'drip'] as const) {
    test(`a JWKS endpoint that streams for ever (${mode === 'bytes' ? 'past the byte cap' : 'past the deadline'}) fails closed: 401, counted`, { timeout: 30_000 }, async () => {
      const hostile = await hostileJwks(mode);
      const s = await service({ oidc: { issuer: provider.issuer.url!, audience: AUDIENCE, jwksUrl: hostile.url, roles: { 'a2a-admin': 'admin' }, allowLoopback: true, fetchTimeoutMs: 1_500, maxBytes: 65_536 } });
      try {
        const r = await send(s.url, 'GET', '/api/snapshot', bearer(await tokenFor('ada')));
        assert.equal(r.status, 401);
        assert.match(String(r.json.message), /keys could not be read/);
        const metrics = (await send(s.url, 'GET', '/metrics', bearer(ADMIN_TOKEN))).body;
        assert.match(metrics, /a2a_discovery_http_refusals_total\{reason="oidc_keys"\} [1-9]/);
      } finally {
        await s.close();
        await hostile.close();
      }
    });
  }

  // Last of the tests that verify tokens: the provider keeps the rotated key (and signs with its keys in turn).
  test('a rotated signing key is fetched again (the JWKS URL only), and an HS256 token made with the public key is refused', async () => {
    // Counted as undici announces them (the guarded fetch is undici's): every request sent to the provider.
    const jwksRequests: string[] = [];
    const onCreate = (message: unknown): void => {
      const { request } = message as { request: { origin?: unknown; path?: unknown } };
      // The test's own token requests (the global fetch, undici too) are not the service's.
      if (String(request.origin) === provider.issuer.url && request.path !== '/token') jwksRequests.push(`${String(request.origin)}${String(request.path)}`);
    };
    diagnostics.subscribe('undici:request:create', onCreate);
    after(() => diagnostics.unsubscribe('undici:request:create', onCreate));
    const people = new PeopleAuth({ issuer: provider.issuer.url!, audience: AUDIENCE, roles: { 'a2a-admin': 'admin' }, allowLoopback: true, cooldownMs: 0 });
    const first = await people.verify(await tokenFor('ada'));
    assert.ok(first.ok && first.person.role === 'admin');
    const rotated = await provider.issuer.keys.generate('ES256');
    const token = await provider.issuer.buildToken({ kid: rotated.kid, scopesOrTransform: (_h, p) => Object.assign(p, { sub: 'user-ada', aud: AUDIENCE, roles: ['a2a-admin'] }) });
    const second = await people.verify(token);
    assert.ok(second.ok, JSON.stringify(second));
    // Cached: tokens signed with keys it holds cost no fetch.
    assert.ok((await people.verify(await tokenFor('ada'))).ok);
    assert.ok((await people.verify(token)).ok);
    assert.deepEqual(jwksRequests, [`${provider.issuer.url}/.well-known/openid-configuration`, `${provider.issuer.url}/jwks`, `${provider.issuer.url}/jwks`]);

    // alg confusion: HS256 signed with the RSA public key's bytes as the secret; and alg none.
    const { SignJWT, exportSPKI, importJWK, UnsecuredJWT } = await import('jose');
    const rsa = provider.issuer.keys.toJSON(false)[0] as { kid: string };
    const spki = await exportSPKI((await importJWK(provider.issuer.keys.toJSON(false)[0] as never, 'RS256', { extractable: true })) as never);
    const claims = { sub: 'user-mallory', aud: AUDIENCE, iss: provider.issuer.url!, roles: ['a2a-admin'] };
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: rsa.kid }).setExpirationTime('1h').sign(new TextEncoder().encode(spki));
    assert.deepEqual(await people.verify(hs), { ok: false, message: 'the token is signed with an algorithm that is not accepted' });
    const none = new UnsecuredJWT(claims).setExpirationTime('1h').encode();
    assert.equal((await people.verify(none)).ok, false);
  });
});

describe('server.oidc in the configuration', () => {
  const AGENT = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;
  const OIDC = `  oidc:
    issuer: https://login.example.com/realms/ops
    audience: a2a-discovery
    rolesClaim: realm_access.roles
    roles: { discovery-viewer: viewer, discovery-operator: operator, discovery-admin: admin }
`;

  test('maps onto the service\'s options; people alone may guard a public bind; defaults filled in', async () => {
    const config = parseConfig(`${AGENT}server:\n  host: 0.0.0.0\n${OIDC}`, { file: 'test.yaml' });
    const o = serviceOptionsFromConfig(config, await resolveSecrets(config, {}));
    assert.deepEqual(o.oidc, {
      issuer: 'https://login.example.com/realms/ops',
      audience: 'a2a-discovery',
      rolesClaim: 'realm_access.roles',
      roles: { 'discovery-viewer': 'viewer', 'discovery-operator': 'operator', 'discovery-admin': 'admin' },
      clockToleranceMs: 30_000,
      cooldownMs: 30_000,
      fetchTimeoutMs: 5_000,
      maxBytes: 65_536,
      allowLoopback: false,
    });
  });

  test('an http issuer needs allowLoopback and a loopback address; a role outside the three is refused', () => {
    const problems = (text: string): string[] => {
      try {
        parseConfig(text, { file: 'test.yaml' });
        return [];
      } catch (err) {
        assert.ok(isDiscoveryError(err));
        return err.problems.map((p) => `${p.path}: ${p.message}`);
      }
    };
    const http = OIDC.replace('https://login.example.com/realms/ops', 'http://127.0.0.1:8080');
    assert.deepEqual(problems(`${AGENT}server:\n${http}`), ['server.oidc.issuer: must be https: plain http is accepted only for a loopback host with allowLoopback (development only); use https, got "http://127.0.0.1:8080"']);
    assert.deepEqual(problems(`${AGENT}allowLoopback: true\nserver:\n${http}`), []);
    assert.match(problems(`${AGENT}server:\n${OIDC.replace('admin }', 'root }')}`).join('\n'), /server\.oidc\.roles\.discovery-admin/);
  });
});
