/**
 * The service with a peer behind OAuth 2.0 client credentials, from the YAML configuration:
 * discovery fetches the peer's protected card with a token from a real IdP (oauth2-mock-server),
 * `a2a_discovery_peer_token_requests_total{origin,outcome}` counts the token requests, no log
 * line carries the token or the client secret, and stopping the service closes the provider.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { metric } from '../helpers/raw-http.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp, startSecured1x } from './secured-peers.js';
import type { RunningIdp, SecuredPeer } from './secured-peers.js';

describe('the service and a peer behind OAuth 2.0', () => {
  let idp: RunningIdp;
  let peer: SecuredPeer;
  before(async () => {
    idp = await startIdp();
    peer = await startSecured1x(idp, { protectCard: true });
  });
  after(async () => {
    await Promise.all([idp.close(), peer.close()]);
  });

  test('the protected card is fetched with a token; the metric counts it; logs hold no secret; close() ends the provider', async () => {
    const config = parseConfig(`allowLoopback: true
allow: ["${peer.origin}"]
vocabulary: [{ tag: billing, description: Invoices. }]
needs: [{ tag: billing }]
static:
  - { name: billing_agent, url: "${peer.baseUrl}", description: Answers invoices., tags: [billing] }
credentials:
  - type: oauth2
    origin: "${peer.origin}"
    tokenUrl: ${idp.tokenUrl}
    clientId: ${CLIENT_ID}
    clientSecretEnv: BILLING_CLIENT_SECRET
    audience: "${peer.origin}"
`);
    const secrets = await resolveSecrets(config, { BILLING_CLIENT_SECRET: CLIENT_SECRET });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const s = await startService({
      port: 0,
      policy: { allow: config.allow, allowLoopback: true },
      vocabulary: config.vocabulary,
      needs: config.needs,
      static: config.static,
      credentials: secrets.credentials,
      peerTokenRequests: secrets.tokenRequests,
      loop: { cycleIntervalMs: 600_000 },
      logger: createLogger({ level: 'trace', destination: sink }),
    });
    let closed = false;
    try {
      for (let i = 0; i < 100 && s.loop.current()?.agents.length !== 1; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(s.loop.current()?.agents.length, 1, 'the agent behind the protected card was selected');
      const card = peer.log.find((r) => r.path === '/.well-known/agent-card.json' && r.authorization !== undefined);
      assert.match(card?.authorization ?? '', /^Bearer ey/);
      assert.equal(await metric(s.url, 'a2a_discovery_peer_token_requests_total', `origin="${peer.origin}",outcome="issued"`), 1);
      await s.close();
      closed = true;
    } finally {
      if (!closed) await s.close();
    }
    await assert.rejects(secrets.credentials.headers(peer.origin), /closed/);
    const log = lines.join('');
    assert.ok(log.length > 0);
    assert.ok(!log.includes(CLIENT_SECRET), 'the client secret is in a log line');
    for (const token of idp.issued) assert.ok(!log.includes(token), 'a token is in a log line');
  });
});
