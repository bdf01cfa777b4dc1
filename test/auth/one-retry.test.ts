/**
 * The 401 rule, measured at the peer (issue 37): against a peer that refuses every token, one call
 * costs exactly two requests (the request and one retry) and one token refresh — for a card
 * fetch, for an extended card through the card cache, and for an A2A call through the policy
 * fetch — also as the service makes it: a chat turn whose ADK 0.3 client sends `message/send`
 * (streaming off) or `message/stream` to a peer that refuses every token (issue 38). A provider that cannot mint a new credential (static headers) is not asked again: one
 * request. Real parts on loopback: oauth2-mock-server as the identity provider; the peer is a
 * plain node:http server that answers its public card and refuses everything else.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPeerCredentials } from '../../packages/core/src/auth/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { PeerCredentials } from '../../packages/core/src/fetch/index.js';
import { createPolicyFetch } from '../../packages/core/src/adk/remote/index.js';
import { startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp, startSecured0314 } from './secured-peers.js';
import type { RunningIdp } from './secured-peers.js';

interface RefusingPeer {
  origin: string;
  /** Requests other than the public card: `METHOD path authorization`. */
  readonly refused: string[];
  close(): Promise<void>;
}

/**
 * A peer whose public card (A2A 1.0, JSON-RPC, `extendedAgentCard: true`) is open and whose every
 * other request is answered 401 — except, with `accept`, a JSON-RPC POST bearing that token, which
 * gets the extended card (one more skill).
 */
async function startRefusingPeer(accept?: string): Promise<RefusingPeer> {
  const refused: string[] = [];
  let origin = '';
  const server = http.createServer((req, res) => {
    req.resume();
    const card = (extended: boolean) => ({
      name: 'Ledger Agent',
      description: 'Answers ledger questions.',
      version: '1.0.0',
      supportedInterfaces: [{ url: `${origin}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, extendedAgentCard: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'general', name: 'General', description: 'General questions.', tags: ['general'] }, ...(extended ? [{ id: 'billing-disputes', name: 'Billing', description: 'Billing disputes.', tags: ['billing'] }] : [])],
    });
    if (accept !== undefined && req.method === 'POST' && req.headers.authorization === `Bearer ${accept}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: card(true) }));
      return;
    }
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end(JSON.stringify(card(false)));
      return;
    }
    refused.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    const other = /^\/status\/(\d{3})$/.exec(req.url ?? '');
    if (other !== null) {
      res.writeHead(Number(other[1]), { 'content-type': 'application/json' });
      res.end('{"error":"refused"}');
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
    res.end('{"error":"invalid_token"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    refused,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('the 401 rule at the peer: two requests and one token refresh per call', () => {
  let idp: RunningIdp;
  let peer: RefusingPeer;
  let credentials: PeerCredentials;
  let policy: HostPolicy;

  before(async () => {
    idp = await startIdp();
    peer = await startRefusingPeer();
    policy = HostPolicy.from({ allow: [peer.origin], allowLoopback: true });
    credentials = await createPeerCredentials(
      [{ type: 'oauth2' as const, origin: peer.origin, tokenUrl: idp.tokenUrl, clientId: CLIENT_ID, clientSecretEnv: 'PEER_CLIENT_SECRET', audience: peer.origin }],
      { env: { PEER_CLIENT_SECRET: CLIENT_SECRET }, allowLoopback: true },
    );
    // A token in hand before measuring: what a call costs, not what the first token costs.
    await credentials.headers(peer.origin);
  });
  after(async () => {
    await credentials?.close();
    await peer?.close();
    await idp?.close();
  });

  /** What `call` cost at the peer and at the identity provider. */
  async function measure(call: () => Promise<void>): Promise<{ requests: string[]; refreshes: number }> {
    const refused = peer.refused.length;
    const tokens = idp.tokenRequests;
    await call();
    return { requests: peer.refused.slice(refused), refreshes: idp.tokenRequests - tokens };
  }

  test('a card fetch', async () => {
    const fetcher = createCardFetcher({ policy, credentials });
    try {
      const cost = await measure(async () => {
        const res = await fetcher.fetch(`${peer.origin}/protected/agent-card.json`);
        assert.equal(res.status, 401);
      });
      assert.equal(cost.requests.length, 2, cost.requests.join('\n'));
      assert.equal(cost.refreshes, 1);
      // The retry carried the refreshed token, not the refused one.
      assert.notEqual(cost.requests[0], cost.requests[1]);
    } finally {
      await fetcher.close();
    }
  });

  test('an extended card, through the card cache', async () => {
    const fetcher = createCardFetcher({ policy, credentials });
    const cache = new CardCache({ fetcher, hostPolicy: policy, clock: new VirtualClock(), random: () => 0, check: { allowLoopback: true }, extendedCards: { credentials } });
    try {
      const cost = await measure(async () => {
        const entry = await cache.get(`${peer.origin}/`);
        assert.equal(entry.extended?.accepted, undefined);
        assert.equal(entry.extended?.lastError?.status, 401);
      });
      assert.equal(cost.requests.length, 2, cost.requests.join('\n'));
      assert.ok(cost.requests.every((r) => r.startsWith('POST / ')));
      assert.equal(cost.refreshes, 1);
    } finally {
      await cache.close();
      await fetcher.close();
    }
  });

  test('an A2A call, through the policy fetch', async () => {
    const fetch = createPolicyFetch({ policy, credentials });
    try {
      const cost = await measure(async () => {
        const res = await fetch(`${peer.origin}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}' });
        await res.arrayBuffer();
        assert.equal(res.status, 401);
      });
      assert.equal(cost.requests.length, 2, cost.requests.join('\n'));
      assert.equal(cost.refreshes, 1);
    } finally {
      await fetch.close();
    }
  });

  test('a 403 (or any status but 401) is the answer: one request, no refresh, whoever asks', async () => {
    const fetcher = createCardFetcher({ policy, credentials });
    const fetch = createPolicyFetch({ policy, credentials });
    try {
      for (const status of [403, 404, 500]) {
        const card = await measure(async () => assert.equal((await fetcher.fetch(`${peer.origin}/status/${status}`)).status, status));
        assert.deepEqual([card.requests.length, card.refreshes], [1, 0], `card fetch, ${status}`);
        const a2a = await measure(async () => {
          const res = await fetch(`${peer.origin}/status/${status}`, { method: 'POST', body: '{}' });
          await res.arrayBuffer();
          assert.equal(res.status, status);
        });
        assert.deepEqual([a2a.requests.length, a2a.refreshes], [1, 0], `A2A call, ${status}`);
      }
    } finally {
      await fetcher.close();
      await fetch.close();
    }
  });

  test('a provider that cannot mint another credential (a static header) is not asked again: one request', async () => {
    const fixed = await createPeerCredentials([{ type: 'static' as const, origin: peer.origin, header: 'authorization', valueEnv: 'FIXED' }], { env: { FIXED: 'Bearer fixed-token-0123456789' } });
    const fetcher = createCardFetcher({ policy, credentials: fixed });
    const fetch = createPolicyFetch({ policy, credentials: fixed });
    try {
      const card = await measure(async () => assert.equal((await fetcher.fetch(`${peer.origin}/protected/agent-card.json`)).status, 401));
      assert.equal(card.requests.length, 1, card.requests.join('\n'));
      const a2a = await measure(async () => {
        const res = await fetch(`${peer.origin}/`, { method: 'POST', body: '{}' });
        await res.arrayBuffer();
        assert.equal(res.status, 401);
      });
      assert.equal(a2a.requests.length, 1, a2a.requests.join('\n'));
    } finally {
      await fetcher.close();
      await fetch.close();
      await fixed.close();
    }
  });
});

describe('an extended card belongs to the identity that obtained it', () => {
  test('after the credentials change to another identity, the card obtained under the first is no longer used, even when the new one is refused', async () => {
    const peer = await startRefusingPeer('token-of-client-a');
    // Credentials whose identity the operator changes (a reload to another client).
    let client: 'a' | 'b' = 'a';
    const credentials: PeerCredentials = {
      headers: async () => ({ authorization: `Bearer token-of-client-${client}` }),
      identity: () => `oauth2 client ${client}`,
      rejected: async () => false,
      schemes: () => [],
      close: async () => undefined,
    };
    const policy = HostPolicy.from({ allow: [peer.origin], allowLoopback: true });
    const clock = new VirtualClock();
    const fetcher = createCardFetcher({ policy, credentials });
    const cache = new CardCache({ fetcher, hostPolicy: policy, clock, random: () => 0, check: { allowLoopback: true }, extendedCards: { credentials } });
    try {
      const first = await cache.get(`${peer.origin}/`);
      assert.equal(first.extended?.identity, 'oauth2 client a');
      assert.ok(first.extended?.accepted?.card.skills.some((skill) => skill.id === 'billing-disputes'));
      client = 'b';
      await clock.advance(61_000);
      const second = await cache.get(`${peer.origin}/`);
      assert.equal(second.extended?.identity, 'oauth2 client b');
      assert.equal(second.extended?.lastError?.status, 401);
      assert.equal(second.extended?.accepted, undefined, "client a's extended card is not kept for client b");
    } finally {
      await cache.close();
      await fetcher.close();
      await peer.close();
    }
  });
});

describe('the 401 rule on a chat turn through the service (ADK 0.3 client, message/send and message/stream)', () => {
  for (const streaming of [false, true]) {
    test(`${streaming ? 'message/stream' : 'message/send'}: a peer refusing every token gets the request and one retry, after one token refresh; the turn reports the refusal`, async () => {
      const idp = await startIdp();
      const peer = await startSecured0314(idp);
      const credentials = await createPeerCredentials(
        [{ type: 'oauth2' as const, origin: peer.origin, tokenUrl: idp.tokenUrl, clientId: CLIENT_ID, clientSecretEnv: 'PEER_CLIENT_SECRET', audience: peer.origin }],
        { env: { PEER_CLIENT_SECRET: CLIENT_SECRET }, allowLoopback: true },
      );
      const service = await startService({
        port: 0,
        credentials,
        policy: { allow: [peer.origin], allowLoopback: true },
        vocabulary: [{ tag: 'warranty', description: 'Warranty status.' }],
        needs: [{ tag: 'warranty' }],
        static: [{ name: 'warranty_agent', url: peer.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'], streaming }],
        health: { enterAfter: 1 },
        cache: { minTtlMs: 0 },
        loop: { cycleIntervalMs: 600_000 },
        logger: createLogger({ level: 'silent' }),
      });
      const chat = async (message: string): Promise<{ status: number; json: Record<string, unknown> }> => {
        const res = await fetch(`${service.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      const method = streaming ? 'message/stream' : 'message/send';
      try {
        const ok = await chat('Is my warranty valid?');
        assert.equal(ok.json.reply, 'warranty: Is my warranty valid?', JSON.stringify(ok.json));
        const tokens = idp.tokenRequests;
        const logged = peer.log.length;
        peer.refuseAll = true;
        const refused = await chat('Is my warranty still valid?');
        const posts = peer.log.slice(logged).filter((r) => r.method === 'POST');
        assert.deepEqual(posts.map((r) => (r.body as { method?: string }).method), [method, method], 'the request and one retry');
        assert.deepEqual(posts[1]!.body, posts[0]!.body, 'the retry resends the same JSON-RPC body');
        assert.notEqual(posts[1]!.authorization, posts[0]!.authorization, 'the retry carries the refreshed token');
        assert.equal(idp.tokenRequests - tokens, 1, 'one token refresh');
        // The turn is not a reply: 502, no text, naming the agent and its 401.
        assert.equal(refused.status, 502, JSON.stringify(refused.json));
        assert.equal(refused.json.reply, '');
        assert.equal(refused.json.error, 'agent-failed');
        assert.equal(refused.json.agentStatus, 401);
        assert.match(String(refused.json.message), /^\w+ answered 401 /);
      } finally {
        await service.close();
        await credentials.close();
        await peer.close();
        await idp.close();
      }
    });
  }
});
