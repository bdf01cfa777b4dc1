/**
 * Peers behind OAuth 2.0 client credentials, with real parts on loopback: oauth2-mock-server as
 * the identity provider, an @a2a-js/sdk 1.3 peer and an @a2a-js/sdk 0.3.14 peer that verify the
 * bearer JWT with jose against the IdP's JWKS, reached by chat turns through ADK trees (a
 * RoutedAgent over our remote agents) and by discovery's card fetcher.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { request } from 'undici';
import { InMemoryRunner, RoutedAgent, isFinalResponse } from '@google/adk';
import type { BaseAgent, Event } from '@google/adk';
import { createPeerCredentials } from '../../packages/core/src/auth/index.js';
import { parseAgentCard } from '../../packages/core/src/card/index.js';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { PeerCredentials } from '../../packages/core/src/fetch/index.js';
import { createPolicyFetch, remoteAgentFor } from '../../packages/core/src/adk/remote/index.js';
import type { PolicyFetch } from '../../packages/core/src/adk/remote/index.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp, startPlainServer, startSecured0314, startSecured1x } from './secured-peers.js';
import type { PlainServer, RunningIdp, SecuredPeer } from './secured-peers.js';

type Content = NonNullable<Event['content']>;

function textOf(content: Content | undefined): string {
  return (content?.parts ?? []).map((p) => p.text ?? '').join('');
}

async function cardOf(url: string): Promise<AgentCardModel> {
  const res = await request(url, { headers: { 'a2a-version': '1.0' } });
  const r = parseAgentCard(Buffer.from(await res.body.arrayBuffer()), { allowLoopback: true, sourceUrl: url });
  assert.equal(r.ok, true, JSON.stringify(r.problems));
  return r.card as AgentCardModel;
}

async function runTurn(runner: InMemoryRunner, sessionId: string, text: string): Promise<Event[]> {
  const events: Event[] = [];
  for await (const ev of runner.runAsync({ userId: 'u', sessionId, newMessage: { role: 'user', parts: [{ text }] } })) events.push(ev);
  return events;
}

function finalText(events: Event[], author: string): string {
  const finals = events.filter((e) => e.author === author && isFinalResponse(e) && e.content !== undefined);
  assert.ok(finals.length > 0, `no final event from ${author}: ${JSON.stringify(events.map((e) => ({ a: e.author, t: textOf(e.content), err: e.errorMessage })))}`);
  return textOf(finals.at(-1)!.content);
}

function oauthEntry(idp: RunningIdp, origin: string, extra: Record<string, unknown> = {}) {
  return { type: 'oauth2' as const, origin, tokenUrl: idp.tokenUrl, clientId: CLIENT_ID, clientSecretEnv: 'PEER_CLIENT_SECRET', audience: origin, ...extra };
}

const ENV = { PEER_CLIENT_SECRET: CLIENT_SECRET };
/** The IdP is on http loopback: allowed for token requests only with allowLoopback. */
const OPTS = { env: ENV, allowLoopback: true };

describe('peers behind OAuth 2.0 client credentials', () => {
  let idp: RunningIdp;
  let billing: SecuredPeer;
  let warranty: SecuredPeer;
  let other: PlainServer;
  let policy: HostPolicy;
  let billingCard: AgentCardModel;
  let warrantyCard: AgentCardModel;

  before(async () => {
    idp = await startIdp();
    billing = await startSecured1x(idp);
    warranty = await startSecured0314(idp);
    other = await startPlainServer();
    policy = HostPolicy.from({ allow: [billing.origin, warranty.origin, other.origin], allowLoopback: true });
    billingCard = await cardOf(billing.cardUrl);
    warrantyCard = await cardOf(warranty.cardUrl);
  });
  after(async () => {
    await Promise.all([idp.close(), billing.close(), warranty.close(), other.close()]);
  });

  /** A tree of both peers over one policy fetch with `credentials`, and its runner. */
  function tree(credentials: PeerCredentials): { runner: InMemoryRunner; fetch: PolicyFetch } {
    const fetch = createPolicyFetch({ policy, credentials });
    const agents = [
      remoteAgentFor({ name: 'billing', description: 'Billing questions.', card: billingCard, policy, fetchImpl: fetch }),
      remoteAgentFor({ name: 'warranty', description: 'Warranty questions.', card: warrantyCard, policy, fetchImpl: fetch }),
    ];
    const router = (_a: Readonly<Record<string, BaseAgent>>, ctx: { userContent?: Content }): string => (/warranty/i.test(textOf(ctx.userContent)) ? 'warranty' : 'billing');
    const root = new RoutedAgent({ name: 'support', agents, router });
    return { runner: new InMemoryRunner({ agent: root, appName: 'auth_app' }), fetch };
  }

  test('chat turns reach a 1.x and a 0.3 peer that demand the tokens; without credentials both answer 401', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin), oauthEntry(idp, warranty.origin, { auth: 'post', scopes: ['agents.chat'] })], OPTS);
    const { runner, fetch } = tree(credentials);
    await runner.sessionService.createSession({ appName: 'auth_app', userId: 'u', sessionId: 's1' });
    await runner.sessionService.createSession({ appName: 'auth_app', userId: 'u', sessionId: 's2' });
    try {
      assert.equal(finalText(await runTurn(runner, 's1', 'Why was I charged twice?'), 'billing'), 'billing: Why was I charged twice?');
      assert.equal(finalText(await runTurn(runner, 's2', 'Is my warranty valid?'), 'warranty'), 'warranty: Is my warranty valid?');
    } finally {
      await fetch.close();
      await credentials.close();
    }
    // Each peer got its own token (audience = its origin), obtained with the client's secret.
    const billingAuth = billing.log.filter((r) => r.method === 'POST').at(-1)!.authorization!;
    const warrantyAuth = warranty.log.filter((r) => r.method === 'POST').at(-1)!.authorization!;
    assert.match(billingAuth, /^Bearer ey/);
    assert.notEqual(billingAuth, warrantyAuth);

    // The same tree without credentials: the peers refuse.
    const none = createPolicyFetch({ policy });
    try {
      const res = await none(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 401);
    } finally {
      await none.close();
    }
  });

  test('1,000 chat turns cost one token request', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], OPTS);
    const { runner, fetch } = tree(credentials);
    const before = idp.tokenRequests;
    try {
      // 20 sessions × 50 turns, the sessions concurrently: the first turns race for the token.
      await Promise.all(
        Array.from({ length: 20 }, async (_, s) => {
          await runner.sessionService.createSession({ appName: 'auth_app', userId: 'u', sessionId: `bulk-${s}` });
          for (let t = 0; t < 50; t++) assert.equal(finalText(await runTurn(runner, `bulk-${s}`, `invoice ${s}-${t}`), 'billing'), `billing: invoice ${s}-${t}`);
        }),
      );
    } finally {
      await fetch.close();
      await credentials.close();
    }
    assert.equal(idp.tokenRequests - before, 1);
  });

  test('on a manual clock: no new token before expiry, exactly one after it', async () => {
    const clock = new VirtualClock();
    idp.expiresIn = 600;
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], { ...OPTS, clock });
    const fetch = createPolicyFetch({ policy, credentials });
    const call = async (text: string): Promise<number> => {
      const res = await fetch(`${billing.baseUrl}a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: text, role: 'ROLE_USER', parts: [{ text }] } } }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const before = idp.tokenRequests;
    try {
      assert.equal(await call('one'), 200);
      // 600 s lifetime, refreshed min(60 s, 10 %) = 60 s before: 539 s later the token still serves.
      await clock.advance(539_000);
      assert.equal(await call('two'), 200);
      assert.equal(idp.tokenRequests - before, 1);
      await clock.advance(2_000);
      await Promise.all([call('three'), call('four'), call('five')]);
      assert.equal(idp.tokenRequests - before, 2, 'exactly one new token request past the refresh point');
      await clock.advance(300_000);
      assert.equal(await call('six'), 200);
      assert.equal(idp.tokenRequests - before, 2);
    } finally {
      idp.expiresIn = 3600;
      await fetch.close();
      await credentials.close();
    }
  });

  test('a 401 from a peer that rotated its tokens: one refresh, one retry that resends the body; a second 401 is the answer', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, warranty.origin), oauthEntry(idp, billing.origin)], OPTS);
    const { runner, fetch } = tree(credentials);
    await runner.sessionService.createSession({ appName: 'auth_app', userId: 'u', sessionId: 'rot' });
    try {
      assert.equal(finalText(await runTurn(runner, 'rot', 'warranty one'), 'warranty'), 'warranty: warranty one');
      const tokens = idp.tokenRequests;
      const refused = warranty.refused;
      const accepted = warranty.accepted.length;
      warranty.rotate();
      assert.equal(finalText(await runTurn(runner, 'rot', 'warranty two'), 'warranty'), 'warranty: warranty two');
      assert.equal(idp.tokenRequests - tokens, 1, 'one refresh');
      assert.equal(warranty.refused - refused, 1, 'one 401');
      assert.equal(warranty.accepted.length - accepted, 1, 'one retry, accepted');
      // The retried POST carried the same JSON-RPC body as the refused one.
      const posts = warranty.log.filter((r) => r.method === 'POST').slice(-2);
      assert.deepEqual(posts[1]!.body, posts[0]!.body);
      assert.notEqual(posts[1]!.authorization, posts[0]!.authorization);

      // A streamed request body is resent whole on the retry.
      billing.rotate();
      const streamed = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
          controller.enqueue(new TextEncoder().encode('"id":"streamed"}'));
          controller.close();
        },
      });
      const viaStream = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: streamed, duplex: 'half' } as RequestInit);
      await viaStream.arrayBuffer();
      assert.equal(viaStream.status, 200);
      assert.deepEqual(billing.accepted.at(-1), { jsonrpc: '2.0', id: 'streamed' });

      // A peer that refuses every token: one refresh, one retry, then its 401 is the answer.
      const warm = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0"}' });
      await warm.arrayBuffer();
      const calls = billing.log.length;
      const before = idp.tokenRequests;
      billing.refuseAll = true;
      const res = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0"}' });
      await res.arrayBuffer();
      assert.equal(res.status, 401);
      assert.equal(billing.log.length - calls, 2, 'the request and one retry');
      assert.equal(idp.tokenRequests - before, 1, 'one refresh');
    } finally {
      billing.refuseAll = false;
      await fetch.close();
      await credentials.close();
    }
  });

  test('concurrent requests on a fresh provider: one token request (single flight)', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], OPTS);
    const before = idp.tokenRequests;
    try {
      const all = await Promise.all(Array.from({ length: 1000 }, () => credentials.headers(billing.origin)));
      assert.equal(new Set(all.map((h) => h?.authorization)).size, 1);
      assert.equal(idp.tokenRequests - before, 1);
    } finally {
      await credentials.close();
    }
  });

  test('many requests refused together after a rotation: one refresh, each retried once', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], OPTS);
    const fetch = createPolicyFetch({ policy, credentials });
    const send = async (i: number): Promise<number> => {
      const res = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: i }) });
      await res.arrayBuffer();
      return res.status;
    };
    try {
      assert.equal(await send(0), 200);
      billing.rotate();
      const tokens = idp.tokenRequests;
      const refused = billing.refused;
      const statuses = await Promise.all(Array.from({ length: 50 }, (_, i) => send(i + 1)));
      assert.deepEqual(new Set(statuses), new Set([200]));
      assert.equal(idp.tokenRequests - tokens, 1, 'one refresh for 50 refused requests');
      assert.equal(billing.refused - refused, 50, 'each refused once, then retried with the new token');
    } finally {
      await fetch.close();
      await credentials.close();
    }
  });

  test('the token is never sent to a second origin (request log), by the policy fetch or the card fetcher', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], OPTS);
    const fetch = createPolicyFetch({ policy, credentials });
    const cards = createCardFetcher({ policy, credentials });
    try {
      const a = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await a.arrayBuffer();
      const b = await fetch(`${other.baseUrl}a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await b.arrayBuffer();
      await cards.fetch(`${other.baseUrl}.well-known/agent-card.json`);
      await cards.fetch(billing.cardUrl);
    } finally {
      await fetch.close();
      await cards.close();
      await credentials.close();
    }
    assert.ok(other.log.length >= 2);
    assert.deepEqual(other.log.map((r) => r.authorization), other.log.map(() => undefined));
    assert.match(billing.log.at(-1)!.authorization ?? '', /^Bearer /);
    // The IdP never saw a peer's token, nor a peer the client secret.
    for (const r of [...billing.log, ...warranty.log, ...other.log]) assert.ok(!(r.authorization ?? '').includes(Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')));
  });

  test('discovery: a card behind the tokens is fetched; after a rotation one refresh and one retry', async () => {
    const secured = await startSecured1x(idp, { protectCard: true });
    const p = HostPolicy.from({ allow: [secured.origin], allowLoopback: true });
    const credentials = await createPeerCredentials([oauthEntry(idp, secured.origin)], OPTS);
    const cards = createCardFetcher({ policy: p, credentials });
    const bare = createCardFetcher({ policy: p });
    try {
      assert.equal((await bare.fetch(secured.cardUrl)).status, 401);
      assert.equal((await cards.fetch(secured.cardUrl)).status, 200);
      const tokens = idp.tokenRequests;
      secured.rotate();
      const res = await cards.fetch(secured.cardUrl);
      assert.equal(res.status, 200);
      assert.equal(idp.tokenRequests - tokens, 1);
      assert.equal(secured.log.slice(-2).map((r) => r.path).join(' '), '/.well-known/agent-card.json /.well-known/agent-card.json');

      // Discovery's POST (the extended card call) after another rotation: its body is sent again.
      secured.rotate();
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetExtendedAgentCard', params: {} });
      const post = await cards.fetch(`${secured.baseUrl}a2a/jsonrpc`, { method: 'POST', body });
      assert.notEqual(post.status, 401);
      const [refused, retried] = secured.log.slice(-2);
      assert.deepEqual([refused?.method, retried?.method], ['POST', 'POST']);
      assert.deepEqual(retried?.body, JSON.parse(body));
      assert.deepEqual(refused?.body, JSON.parse(body));
    } finally {
      await Promise.all([cards.close(), bare.close(), credentials.close()]);
      await secured.close();
    }
  });

  test('secrets stay out of errors: a wrong client secret, a refused token endpoint', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], { env: { PEER_CLIENT_SECRET: 'wrong-secret-value-xyz' }, allowLoopback: true });
    const fetch = createPolicyFetch({ policy, credentials });
    try {
      const err = await fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', body: '{}' }).then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e as Error,
      );
      const everything = `${err.message}\n${inspect(err, { depth: 10 })}\n${JSON.stringify(err)}`;
      assert.match(err.message, /oauth2 client "discovery-bot" at http:\/\/127\.0\.0\.1:\d+\/token: the token endpoint answered 401 \(invalid_client\)/);
      assert.ok(!everything.includes('wrong-secret-value-xyz'));
      assert.ok(!everything.includes(CLIENT_SECRET));
      // Backed off: the next call does not ask the IdP again.
      const tokens = idp.tokenRequests;
      await assert.rejects(fetch(`${billing.baseUrl}a2a/jsonrpc`, { method: 'POST', body: '{}' }), /not retried for \d+ s/);
      assert.equal(idp.tokenRequests, tokens);
    } finally {
      await fetch.close();
      await credentials.close();
    }
    for (const token of idp.issued) assert.ok(!inspect(credentials, { depth: 10 }).includes(token));
  });

  test('the identity label and schemes, per origin', async () => {
    const credentials = await createPeerCredentials([oauthEntry(idp, billing.origin)], OPTS);
    assert.equal(credentials.identity(billing.origin), `oauth2 client "discovery-bot" at ${idp.tokenUrl}`);
    assert.equal(credentials.identity(other.origin), undefined);
    assert.deepEqual(credentials.schemes(billing.origin), [{ type: 'oauth2', flow: 'clientCredentials' }, { type: 'http', scheme: 'bearer' }]);
    assert.equal(await credentials.headers(other.origin), undefined);
    assert.equal(await credentials.rejected(other.origin), false);
    await credentials.close();
  });

  test('issuer: the token endpoint discovered from the IdP metadata', async () => {
    const credentials = await createPeerCredentials([{ type: 'oauth2', origin: billing.origin, issuer: idp.issuer, clientId: CLIENT_ID, clientSecretEnv: 'S', audience: billing.origin }], { env: { S: CLIENT_SECRET }, allowLoopback: true });
    const log = idp.log.length;
    try {
      assert.match((await credentials.headers(billing.origin))!['authorization']!, /^Bearer ey/);
    } finally {
      await credentials.close();
    }
    assert.deepEqual(idp.log.slice(log).map((r) => `${r.method} ${r.path}`), ['GET /.well-known/openid-configuration', 'POST /token']);
  });
});
