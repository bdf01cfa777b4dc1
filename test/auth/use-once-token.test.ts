/**
 * `expires_in: 0` means "use once" (issue 38): a token the identity provider says expires at once
 * is sent with the one request that obtained it and never kept, so each call — sequential or
 * concurrent — asks for its own. A token response without `expires_in` keeps the documented
 * default lifetime (5 minutes): one token for many calls. Real parts on loopback:
 * oauth2-mock-server as the identity provider (counting token requests), an @a2a-js/sdk 1.x peer
 * verifying each token against its JWKS, the policy fetch between them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPeerCredentials } from '../../packages/core/src/auth/index.js';
import { createPolicyFetch } from '../../packages/core/src/adk/remote/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp, startSecured1x } from './secured-peers.js';
import type { RunningIdp, SecuredPeer } from './secured-peers.js';

describe('a token that expires at once is used once', () => {
  let idp: RunningIdp;
  let peer: SecuredPeer;
  before(async () => {
    idp = await startIdp();
    peer = await startSecured1x(idp);
  });
  after(async () => {
    idp.expiresIn = 3600;
    await peer?.close();
    await idp?.close();
  });

  async function calls(expiresIn: number | undefined, sequential: number, concurrent: number): Promise<{ tokenRequests: number; tokens: Set<string> }> {
    idp.expiresIn = expiresIn as number;
    const credentials = await createPeerCredentials(
      [{ type: 'oauth2' as const, origin: peer.origin, tokenUrl: idp.tokenUrl, clientId: CLIENT_ID, clientSecretEnv: 'S', audience: peer.origin }],
      { env: { S: CLIENT_SECRET }, allowLoopback: true },
    );
    const fetch = createPolicyFetch({ policy: HostPolicy.from({ allow: [peer.origin], allowLoopback: true }), credentials });
    const before = idp.tokenRequests;
    const logged = peer.log.length;
    const call = async (text: string): Promise<void> => {
      const res = await fetch(`${peer.baseUrl}a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: text, role: 'ROLE_USER', parts: [{ text }] } } }),
      });
      await res.arrayBuffer();
      assert.equal(res.status, 200);
    };
    try {
      for (let i = 0; i < sequential; i++) await call(`seq-${i}`);
      await Promise.all(Array.from({ length: concurrent }, (_, i) => call(`par-${i}`)));
    } finally {
      await fetch.close();
      await credentials.close();
    }
    const tokens = new Set(peer.log.slice(logged).filter((r) => r.method === 'POST').map((r) => r.authorization ?? ''));
    return { tokenRequests: idp.tokenRequests - before, tokens };
  }

  test('expires_in: 0 — five calls one after another and four at once: nine token requests, nine different tokens', async () => {
    const { tokenRequests, tokens } = await calls(0, 5, 4);
    assert.equal(tokenRequests, 9);
    assert.equal(tokens.size, 9);
  });

  test('no expires_in — the documented default lifetime: one token for all nine calls', async () => {
    const { tokenRequests, tokens } = await calls(undefined, 5, 4);
    assert.equal(tokenRequests, 1);
    assert.equal(tokens.size, 1);
  });

  test('expires_in: 3600 — one token for all nine calls', async () => {
    const { tokenRequests } = await calls(3600, 5, 4);
    assert.equal(tokenRequests, 1);
  });
});
