/**
 * The endpoint verdict names the cause (issues 39 and 42), not only a count of failed fetches, in
 * the vocabulary of docs/vocabulary.md: a card fetched and refused reads `refused` with its cause
 * (an interface host the allowlist refuses and the allow entry that would admit it, a pin the
 * bytes do not match, 401, a redirect), never `pending` or "failed fetch"; a host the allowlist
 * refuses reads `refused` (allowlist); a peer that does not answer stays `pending` (unreachable);
 * a token request that failed names the token URL's origin and the status, no secret; an extended
 * card that was refused says why, and that the public card is used. Real loopback peers: an
 * @a2a-js/sdk 1.x card server, JSON servers answering 401 and a redirect, a token endpoint
 * answering 500, a closed port.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { oauth2ClientCredentials, staticHeaders } from '../../packages/core/src/auth/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
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

async function states(agents: Array<{ name: string; url: string }>, credentials?: CredentialsInput, more: { pins?: CardCacheOptions['pins']; allow?: string[] } = {}) {
  const clock = new VirtualClock();
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  const hostPolicy = HostPolicy.from({ allow: more.allow ?? agents.map((a) => origin(a.url)), allowLoopback: true });
  const fetcher = createCardFetcher({ policy: hostPolicy, totalTimeoutMs: 2_000, ...(credentials && { credentials }) });
  const cache = new CardCache({ fetcher, hostPolicy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true }, ...(credentials && { extendedCards: { credentials } }), ...(more.pins && { pins: more.pins }) });
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

test('a card whose interface host the allowlist refuses: refused (interface host), naming the host and the allow entry that admits it', async () => {
  const state = (await states([{ name: 'elsewhere', url: elsewhere.baseUrl }])).get('elsewhere')!;
  const host = `http://localhost:${elsewhere.port}`;
  assert.equal(state.verdict, 'refused');
  assert.equal(state.cause, 'interface-host');
  assert.equal(
    state.reason,
    `interface host refused: supportedInterfaces[0].url: the card's interface host is refused: ${host} is not in the allowlist; adding "${host}" to allow would admit it (1 refused card)`,
  );
  assert.doesNotMatch(state.reason, /failed fetch/, 'the fetch worked');
});

test('a card whose bytes differ from its publisher\'s pin: refused (refused by a pin), both digests named, never pending', async () => {
  const pins = { size: 1, pinFor: () => ({ sha256: '0'.repeat(64), from: 'the Trust Manifest of urn:air:example.com:agent:pay' }) };
  const state = (await states([{ name: 'pay', url: secured.baseUrl }], undefined, { pins })).get('pay')!;
  assert.equal(state.verdict, 'refused');
  assert.equal(state.cause, 'pin');
  assert.match(state.reason, /^refused by a pin: http:\/\/127\.0\.0\.1:\d+\/\.well-known\/agent-card\.json: the card's SHA-256 is [0-9a-f]{64}, but its publisher pinned 0{64} \(the Trust Manifest of urn:air:example\.com:agent:pay\); the card is refused \(1 refused card\)$/);
});

test('a card endpoint answering 401, one answering a redirect: refused (unauthorized, redirect refused), not failed fetches', async () => {
  const denied = await startJsonServer();
  const moved = await startJsonServer();
  try {
    denied.routes.set('/.well-known/agent-card.json', { status: 401, body: { error: 'unauthorized' } });
    moved.routes.set('/.well-known/agent-card.json', { status: 302, body: {}, headers: { location: 'https://evil.example/card.json' } });
    const all = await states([{ name: 'denied', url: `${denied.origin}/` }, { name: 'moved', url: `${moved.origin}/` }]);
    const d = all.get('denied')!;
    assert.equal(d.verdict, 'refused');
    assert.equal(d.cause, 'unauthorized');
    assert.match(d.reason, /^unauthorized: .*answered HTTP 401 \(the card endpoint wants credentials for this origin\).* \(1 refused request\)$/);
    const m = all.get('moved')!;
    assert.equal(m.verdict, 'refused');
    assert.equal(m.cause, 'redirect');
    assert.match(m.reason, /^redirect refused: refused redirect 302 from .* to "https:\/\/evil\.example\/card\.json"; redirects are never followed \(1 refused request\)$/);
    for (const s of [d, m]) assert.doesNotMatch(s.reason, /failed fetch|no usable card/);
  } finally {
    await Promise.all([denied.close(), moved.close()]);
  }
});

test('a host the allowlist does not name: refused (allowlist); a closed port: pending (unreachable), retried', async () => {
  const closed = await startJsonServer();
  const closedUrl = `${closed.origin}/`;
  await closed.close();
  const all = await states([{ name: 'outside', url: 'http://localhost:1/' }, { name: 'closed', url: closedUrl }], undefined, { allow: [closed.origin] });
  const outside = all.get('outside')!;
  assert.equal(outside.verdict, 'refused');
  assert.equal(outside.cause, 'allowlist');
  assert.match(outside.reason, /not in the allowlist/);
  const down = all.get('closed')!;
  assert.equal(down.verdict, 'pending');
  assert.equal(down.cause, 'unreachable');
  assert.match(down.reason, /^no usable card \(1 failed fetch\): /);
});

test('a token request that fails: the verdict names the token endpoint and its status, never the secret', async () => {
  const credentials = oauth2ClientCredentials({ origins: [origin(secured.baseUrl)], tokenUrl: `${idp.origin}/oauth2/token?tenant=acme`, clientId: 'discovery', clientSecret: SECRET, allowLoopback: true });
  idp.routes.set('/oauth2/token?tenant=acme', { status: 500, body: 'upstream exploded' });
  try {
    const state = (await states([{ name: 'secured', url: secured.baseUrl }], credentials)).get('secured')!;
    assert.equal(state.verdict, 'pending');
    assert.equal(state.cause, 'http-error', 'the token endpoint answered 500: retried, not refused');
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
