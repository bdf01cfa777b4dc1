/**
 * The endpoint verdict names the cause (issue 39), not only a count of failed fetches: a card
 * whose interface host the allowlist refuses (and the allowlist key that would admit it), a
 * token request that failed (the token URL's origin and the status, no secret), an extended card
 * that was refused (why, and that the public card is used). Real loopback peers: an @a2a-js/sdk
 * 1.x card server, a token endpoint answering 500, a peer refusing the extended card with 401.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { oauth2ClientCredentials, staticHeaders } from '../../packages/core/src/auth/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CredentialsInput } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { oauth2Card } from '../helpers/secured-peers.js';

let elsewhere: RunningPeer;
let secured: RunningPeer;
let idp: JsonServer;
let extended: JsonServer;
const SECRET = 'client-secret-9d2e';

before(async () => {
  // Its card names its interface at `localhost`, a host the allowlist (127.0.0.1) does not name.
  elsewhere = await startV1CardServer({ card: (port) => v1Card(port, { supportedInterfaces: [{ url: `http://localhost:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], securitySchemes: {}, securityRequirements: [] }) });
  secured = await startV1CardServer({ card: (port) => oauth2Card(port) });
  idp = await startJsonServer();
  extended = await startJsonServer();
  const card = v1Card(extended.port, { name: 'Ledger Agent', securitySchemes: {}, securityRequirements: [], capabilities: { streaming: false, extendedAgentCard: true } });
  extended.routes.set('/.well-known/agent-card.json', { body: card, headers: { 'cache-control': 'max-age=300' } });
  extended.routes.set('/a2a/jsonrpc', { status: 401, body: { error: 'refused' } });
});
after(async () => {
  await Promise.all([elsewhere?.close(), secured?.close(), idp?.close(), extended?.close()]);
});

const origin = (url: string): string => new URL(url).origin;

async function states(agents: Array<{ name: string; url: string }>, credentials?: CredentialsInput) {
  const clock = new VirtualClock();
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  const hostPolicy = HostPolicy.from({ allow: agents.map((a) => origin(a.url)), allowLoopback: true });
  const fetcher = createCardFetcher({ policy: hostPolicy, totalTimeoutMs: 2_000, ...(credentials && { credentials }) });
  const cache = new CardCache({ fetcher, hostPolicy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true }, ...(credentials && { extendedCards: { credentials } }) });
  const loop = new DiscoveryLoop({
    sources: [staticSource({ id: 'config', agents: agents.map((a) => ({ ...a, description: 'Answers questions.', tags: ['warranty'] })) })],
    hostPolicy,
    cache,
    ...(credentials && { credentials }),
    select: { needs: [{ tag: 'warranty' }], vocabulary: new TagVocabulary([{ tag: 'warranty', description: 'Warranty.' }]) },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  try {
    await loop.start();
    await loop.refreshNow();
    return new Map((await loop.status()).map((s) => [s.names[0]!, s.state]));
  } finally {
    await loop.stop();
    await cache.close();
    await fetcher.close();
  }
}

test('a card whose interface host the allowlist refuses: the verdict says the card was refused, names the host and the allow entry that admits it', async () => {
  const state = (await states([{ name: 'elsewhere', url: elsewhere.baseUrl }])).get('elsewhere')!;
  const host = `http://localhost:${elsewhere.port}`;
  assert.equal(state.verdict, 'pending');
  assert.equal(
    state.reason,
    `no usable card (1 refused card): supportedInterfaces[0].url: the card's interface host is refused: ${host} is not in the allowlist; adding "${host}" to allow would admit it`,
  );
  assert.doesNotMatch(state.reason, /failed fetch/, 'the fetch worked');
});

test('a token request that fails: the verdict names the token endpoint and its status, never the secret', async () => {
  const credentials = oauth2ClientCredentials({ origins: [origin(secured.baseUrl)], tokenUrl: `${idp.origin}/oauth2/token?tenant=acme`, clientId: 'discovery', clientSecret: SECRET, allowLoopback: true });
  idp.routes.set('/oauth2/token?tenant=acme', { status: 500, body: 'upstream exploded' });
  try {
    const state = (await states([{ name: 'secured', url: secured.baseUrl }], credentials)).get('secured')!;
    assert.equal(state.verdict, 'pending');
    assert.match(state.reason, /^no usable card \(1 failed fetch\): credentials provider failed for http:\/\/127\.0\.0\.1:\d+: /);
    // The token URL, its query value redacted; the status; no secret and no body text.
    assert.ok(state.reason.includes(`oauth2 client "discovery" at ${idp.origin}/oauth2/token?tenant=REDACTED: the token endpoint answered 500`), state.reason);
    assert.ok(!state.reason.includes(SECRET) && !state.reason.includes('acme') && !state.reason.includes('exploded'), state.reason);
  } finally {
    await credentials.close();
  }
});

test('an extended card the peer refuses: the selected verdict says why, and that the public card is used', async () => {
  const credentials = staticHeaders({ origins: [extended.origin], headers: { authorization: 'Bearer xt' } });
  const state = (await states([{ name: 'ledger', url: `${extended.origin}/` }], credentials)).get('ledger')!;
  assert.equal(state.verdict, 'selected');
  assert.equal(
    state.reason,
    `in snapshot v1; its extended card could not be used (for static authorization header for ${extended.origin}: extended card: ${extended.origin}/a2a/jsonrpc (GetExtendedAgentCard) answered HTTP 401: the credentials for this origin were refused; the public card is used)`,
  );
});
