/**
 * One a2a-discovery instance discovers through another's published AI Catalog, end to end: real
 * A2A peers (ADK JS `toA2a`), instance A with static agents and `server.catalog` on, instance B
 * with only an AI Catalog source on A's `/.well-known/ai-catalog.json`. B publishes the same
 * agents under A's local names, never A's reviewed text as its own descriptions, revalidates A's
 * catalog with a 304 when nothing changed, follows A's next snapshot, and a chat turn on B reaches
 * the peer. And a card carried inline in a catalog is selected and spoken to like a fetched one;
 * and a signed catalog is followed by an instance that trusts its key, refused by one that does not.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { AiCatalogSource } from '../../packages/core/src/sources/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { startJsonServer } from '../helpers/json-server.js';
import { listSource, type ListSource } from '../helpers/list-source.js';

const vocabulary = [
  { tag: 'billing', description: 'Invoices and payments (B reviewed this).', keywords: ['invoice', 'charged'] },
  { tag: 'warranty', description: 'Warranty status (B reviewed this).', keywords: ['warranty', 'serial'] },
  { tag: 'returns', description: 'Returns (B reviewed this).', keywords: ['return'] },
];

let billing: RunningPeer;
let warranty: RunningPeer;
let returns: RunningPeer;
let a: RunningService;
let b: RunningService;
let partners: ListSource;

before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: invoice 4411 was charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startAdkPeer({ name: 'warranty', description: 'Warranty.', reply: 'warranty: serial 123 is covered until 2027', card: (port) => adkStyleCard(port, 'Warranty Agent', [{ id: 'status', tags: ['warranty'] }]) });
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', reply: 'returns: label sent', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'start', tags: ['returns'] }]) });
  const peers = [billing, warranty, returns].map((p) => new URL(p.baseUrl).origin);
  partners = listSource('partners');
  a = await startService({
    port: 0,
    policy: { allow: peers, allowLoopback: true },
    vocabulary: vocabulary.map((v) => ({ ...v, description: v.description.replace('B', 'A') })),
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'A: answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'A: answers warranty questions.', tags: ['warranty'] },
    ],
    extraSources: [partners],
    // max-age=0: B revalidates on every poll (a 304 while A's digest stands), and may fall back on A's last catalog.
    catalog: { enabled: true, cacheControl: 'max-age=0' },
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  b = await startService({
    port: 0,
    // B trusts A's catalog and the peers it lists: a catalog never widens B's allowlist.
    policy: { allow: [new URL(a.url).origin, ...peers], allowLoopback: true },
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    aiCatalogs: [{ id: 'upstream', catalogs: [`${a.url}/.well-known/ai-catalog.json`], pollIntervalMs: 1 }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await b?.close();
  await a?.close();
  await Promise.all([billing?.close(), warranty?.close(), returns?.close()]);
});

test("B's snapshot has A's agents under A's local names, B's reviewed descriptions, and their provenance", async () => {
  const snapshot = b.loop.current();
  assert.ok(snapshot, 'B published a snapshot');
  assert.deepEqual(snapshot.agents.map((x) => x.localName), ['billing_agent', 'warranty_agent']);
  for (const agent of snapshot.agents) {
    assert.match(agent.description, /B reviewed this/, "B's vocabulary, never A's text");
    assert.doesNotMatch(agent.description, /A: answers/);
  }
  const endpoints = await b.loop.status();
  // A's entry gives the card URL at its base's well-known path: that base is the endpoint.
  const w = endpoints.find((e) => e.baseUrl === warranty.baseUrl)!;
  assert.equal(w.state.verdict, 'selected');
  assert.deepEqual(w.sources, ['upstream']);
  const meta = w.proposals[0]!.metadata;
  assert.equal(meta.catalog, `${a.url}/.well-known/ai-catalog.json`);
  assert.equal(meta.displayName, 'warranty_agent');
  assert.equal(meta.description, 'A: answers warranty questions.', "A's text is B's provenance, shown, not used");
});

test('a chat turn on B reaches the peer A listed', async () => {
  const res = await fetch(`${b.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Is serial 123 under warranty?' }) });
  const body = (await res.json()) as { author: string; reply: string; digest: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.author, 'warranty_agent');
  assert.match(body.reply, /serial 123 is covered/);
  assert.equal(body.digest, b.loop.current()!.digest);
});

test("A's next snapshot reaches B through the catalog: nothing changed is a 304, a new agent is published", async () => {
  const source = b.loop.sources.find((s) => s.id === 'upstream') as AiCatalogSource;
  await b.loop.refreshNow();
  assert.equal(source.catalogs()[0]?.outcome, 'revalidated', 'an unchanged catalog is revalidated (the ETag is the digest)');

  partners.set([{ name: 'returns', baseUrl: returns.baseUrl, metadata: {} }]);
  const next = await a.loop.refreshNow();
  assert.ok(next?.agents.some((x) => x.localName === 'returns'), JSON.stringify(next?.agents.map((x) => x.localName)));
  const published = await b.loop.refreshNow();
  assert.deepEqual(published?.agents.map((x) => x.localName), ['billing_agent', 'returns', 'warranty_agent']);
  assert.equal(source.catalogs()[0]?.outcome, 'changed');
  const turn = await fetch(`${b.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'I want to return my headphones' }) });
  assert.equal(((await turn.json()) as { author: string }).author, 'returns');
});

test('a card carried inline in a catalog is selected and a chat turn reaches its peer; the card is never requested from the catalog host', async () => {
  const catalogHost = await startJsonServer();
  const card = (await (await fetch(returns.cardUrl)).json()) as Record<string, unknown>;
  catalogHost.routes.set('/.well-known/ai-catalog.json', {
    body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:127.0.0.1:agent:returns_desk', type: 'application/a2a-agent-card+json', data: card, displayName: 'Returns <i>desk</i>' }] },
    headers: { etag: '"inline-1"', 'cache-control': 'max-age=60' },
  });
  const c = await startService({
    port: 0,
    policy: { allow: [catalogHost.origin, new URL(returns.baseUrl).origin], allowLoopback: true },
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    aiCatalogs: [{ id: 'inline', catalogs: [`${catalogHost.origin}/.well-known/ai-catalog.json`] }],
    health: { enterAfter: 1 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  try {
    const snapshot = c.loop.current();
    assert.deepEqual(snapshot?.agents.map((x) => [x.localName, x.baseUrl]), [['returns_desk', `${catalogHost.origin}/.well-known/ai-catalog.json#card=urn:air:127.0.0.1:agent:returns_desk`]]);
    assert.match(snapshot!.agents[0]!.description, /B reviewed this/, 'the vocabulary, not the entry text');
    const res = await fetch(`${c.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'I want to return my headphones' }) });
    const body = (await res.json()) as { author: string; reply: string };
    assert.equal(body.author, 'returns_desk', JSON.stringify(body));
    assert.match(body.reply, /returns: label sent/);
    assert.deepEqual(catalogHost.requests.map((r) => r.path), ['/.well-known/ai-catalog.json'], 'one request, the catalog (fresh for 60 s): the inline card never went to the network');
  } finally {
    await c.close();
    await catalogHost.close();
  }
});

test('a signed catalog: an instance that requires signatures and trusts the publisher key follows it; one trusting another key publishes nothing from it', async () => {
  const publisher = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = (k: KeyObject): JWK => ({ ...k.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' }) as JWK;
  const kid = 'catalog-2026';
  const peers = [billing, warranty].map((p) => new URL(p.baseUrl).origin);
  const signed = await startService({
    port: 0,
    policy: { allow: peers, allowLoopback: true },
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'S: answers invoice questions.', tags: ['billing'] }],
    catalog: { enabled: true, cacheControl: 'max-age=0', signing: { key: publisher.privateKey, kid } },
    health: { enterAfter: 1 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  const reader = (key: KeyObject) =>
    startService({
      port: 0,
      policy: { allow: [new URL(signed.url).origin, ...peers], allowLoopback: true },
      vocabulary,
      needs: vocabulary.map((v) => ({ tag: v.tag })),
      signatures: { keys: [{ kid, jwk: jwk(key) }] },
      aiCatalogs: [{ id: 'upstream', catalogs: [`${signed.url}/.well-known/ai-catalog.json`], signatures: 'required' }],
      health: { enterAfter: 1 },
      loop: { cycleIntervalMs: 600_000, startupTimeoutMs: 5_000 },
      logger: createLogger({ level: 'silent' }),
    });
  const trusting = await reader(publisher.publicKey);
  const misled = await reader(stranger.publicKey);
  try {
    assert.deepEqual(trusting.loop.current()?.agents.map((x) => x.localName), ['billing_agent']);
    const upstream = trusting.loop.sources.find((x) => x.id === 'upstream') as AiCatalogSource;
    assert.equal(upstream.catalogs()[0]?.signature, 'verified');

    assert.deepEqual(misled.loop.current()?.agents ?? [], [], 'no agent from a catalog whose signature does not verify');
    const refused = misled.loop.sources.find((x) => x.id === 'upstream')!.current();
    assert.equal(refused.ok, false);
    assert.equal(refused.error?.code, 'ERR_SIGNATURE_INVALID');
  } finally {
    await Promise.all([trusting.close(), misled.close()]);
    await signed.close();
  }
});
