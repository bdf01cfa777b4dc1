/**
 * Card security schemes honoured by the loop (issue 23): an agent whose card requires what the
 * configured credentials cannot present is not put into the snapshot; its verdict's reason names
 * what the card needs, and one alert says so once. Real peers: an @a2a-js/sdk 1.3 card requiring
 * OAuth 2.0 client credentials, an ADK (0.3) card requiring an API key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { OriginCredentials } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startApiKeyPeer, startOauth2Peer } from '../helpers/secured-peers.js';

let oauth: RunningPeer;
let keyed: RunningPeer;

before(async () => {
  oauth = await startOauth2Peer();
  keyed = await startApiKeyPeer();
});
after(async () => {
  await Promise.all([oauth?.close(), keyed?.close()]);
});

const origin = (p: RunningPeer): string => new URL(p.baseUrl).origin;

async function run(credentials: OriginCredentials | undefined) {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const hostPolicy = HostPolicy.from({ allow: [origin(oauth), origin(keyed)], allowLoopback: true });
  const fetcher = createCardFetcher({ policy: hostPolicy, totalTimeoutMs: 2_000, ...(credentials && { credentials }) });
  const cache = new CardCache({ fetcher, hostPolicy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
  const loop = new DiscoveryLoop({
    sources: [
      staticSource({
        id: 'config',
        agents: [
          { name: 'warranty_agent', cardUrl: oauth.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
          { name: 'billing_agent', url: keyed.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
        ],
      }),
    ],
    hostPolicy,
    cache,
    ...(credentials && { credentials }),
    select: {
      needs: [{ tag: 'warranty' }, { tag: 'billing' }],
      vocabulary: new TagVocabulary([{ tag: 'warranty', description: 'Warranty.' }, { tag: 'billing', description: 'Billing.' }]),
    },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  try {
    await loop.start();
    await loop.refreshNow();
    const names = loop.current()?.agents.map((a) => a.localName) ?? [];
    const status = await loop.status();
    const verdictOf = (p: RunningPeer) => status.find((s) => s.baseUrl === p.baseUrl)?.state;
    const alerts = events.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === 'unauthorized');
    return { names, verdictOf, alerts };
  } finally {
    await loop.stop();
    await cache.close();
    await fetcher.close();
  }
}

test('credentials that satisfy neither card: both are verdicts naming what each card needs, each alerted once', async () => {
  // A header for another purpose is configured: it satisfies neither scheme.
  const r = await run((o) => (o === origin(keyed) ? { 'x-tenant': 'acme' } : undefined));
  assert.deepEqual(r.names, []);
  assert.deepEqual(r.verdictOf(oauth), { ...r.verdictOf(oauth)!, verdict: 'excluded', reason: `unauthorized: needs oauth2 client credentials for ${origin(oauth)}` });
  assert.equal(r.verdictOf(keyed)?.reason, `unauthorized: needs an API key in header X-API-Key for ${origin(keyed)}`);
  assert.deepEqual(r.alerts.map((a) => a.endpoint).sort(), [oauth.baseUrl, keyed.baseUrl].sort(), 'one alert each across two cycles');
  assert.ok(r.alerts.every((a) => a.message.includes('unauthorized: needs')));
});

test('no credentials at all: nothing can be presented, so both requiring cards are left out', async () => {
  const r = await run(undefined);
  assert.deepEqual(r.names, []);
  assert.equal(r.verdictOf(oauth)?.verdict, 'excluded');
  assert.equal(r.verdictOf(keyed)?.verdict, 'excluded');
});

test('matching static headers (a bearer token obtained out of band, an API key): both agents are in the snapshot; no secret in any verdict or alert', async () => {
  const headers: Record<string, Record<string, string>> = { [origin(oauth)]: { authorization: 'Bearer sekrit-token-1' }, [origin(keyed)]: { 'X-API-Key': 'sekrit-key-2' } };
  const r = await run((o) => headers[o]);
  assert.deepEqual(r.names, ['billing_agent', 'warranty_agent']);
  assert.equal(r.alerts.length, 0);
  const text = JSON.stringify([r.verdictOf(oauth), r.verdictOf(keyed)]);
  assert.ok(!/sekrit/.test(text));
});
