/**
 * Two service instances on loopback federating with each other, each with its own peers and real
 * A2A agents (ADK JS `toA2a`). R1's ARD routes are not on this branch, so each instance's
 * `POST /search` is a **test-only route stub** (`startSearchRouteStub` below): a loopback server
 * that answers with the instance's snapshot agents matching the text as the local results and
 * hands them to the instance's own federation (`RunningService.federation`), exactly the hook
 * R1's route calls. Everything the federation does — which registries it knows (configured peers,
 * an AI Catalog's `application/ai-registry+json` entry), what it asks, how it merges — is the
 * service's own.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { ArdSearchRequest, ArdSearchResponse } from '../../packages/core/src/ard/wire.js';
import { AI_REGISTRY_MEDIA_TYPE } from '../../packages/core/src/ard/wire.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { cardEntry, startFakeArdRegistry, type FakeArdRegistry } from './fake-ard-registry.js';

/** The test-only stand-in for R1's `POST /search` route: local results from the snapshot, then `service.federation.federate`. */
interface SearchRouteStub {
  url: string;
  service?: RunningService;
  /** The bodies it received. */
  received: ArdSearchRequest[];
  close(): Promise<void>;
}

async function startSearchRouteStub(): Promise<SearchRouteStub> {
  const stub: SearchRouteStub = { url: '', received: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ArdSearchRequest;
        stub.received.push(request);
        const service = stub.service!;
        const text = (request.query.text ?? '').toLowerCase();
        const agents = service.loop.current()?.agents ?? [];
        const local: ArdSearchResponse = {
          results: agents
            .filter((a) => `${a.localName} ${a.description}`.toLowerCase().includes(text))
            .map((a) => cardEntry(`${a.baseUrl}#${a.localName}`, a.localName, a.cardUrl ?? a.baseUrl, { description: a.description })),
        };
        const answer = await service.federation.federate(request, local);
        const body = JSON.stringify(answer);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return stub;
}

let warranty: RunningPeer;
let returns: RunningPeer;
let stubA: SearchRouteStub;
let stubB: SearchRouteStub;
let announced: FakeArdRegistry;
let unlisted: FakeArdRegistry;
let dead: FakeArdRegistry;
let catalogHost: JsonServer;
let a: RunningService;
let b: RunningService;

const logger = createLogger({ level: 'silent' });
const vocabulary = [
  { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] },
  { tag: 'returns', description: 'Returns.', keywords: ['return'] },
];

before(async () => {
  warranty = await startAdkPeer({ name: 'warranty', description: 'Warranty.', card: (port) => adkStyleCard(port, 'Warranty Agent', [{ id: 'status', tags: ['warranty'] }]) });
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'start', tags: ['returns'] }]) });
  stubA = await startSearchRouteStub();
  stubB = await startSearchRouteStub();
  announced = await startFakeArdRegistry([cardEntry('urn:air:c:warranty-extended', 'Extended warranty agent', 'https://c.example/ext.json')]);
  unlisted = await startFakeArdRegistry([cardEntry('urn:air:evil:warranty', 'Warranty agent', 'https://evil.example/w.json')]);
  dead = await startFakeArdRegistry();
  dead.answer = () => ({ status: 503, body: { errorCode: 'INTERNAL_ERROR', message: 'down for maintenance' } });
  // B's AI Catalog source reads a catalog that announces registry C (and lists no card).
  catalogHost = await startJsonServer();
  catalogHost.routes.set('/.well-known/ai-catalog.json', {
    body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:c:registry', displayName: 'Registry C', type: AI_REGISTRY_MEDIA_TYPE, url: announced.url, description: 'C lists warranty agents.' }] },
  });
  const common = { port: 0, vocabulary, needs: vocabulary.map((v) => ({ tag: v.tag })), health: { enterAfter: 1 }, loop: { cycleIntervalMs: 600_000 }, logger } as const;
  a = await startService({
    ...common,
    policy: { allow: [new URL(warranty.baseUrl).origin, stubB.url, dead.url], allowLoopback: true },
    static: [{ name: 'warranty_agent', url: warranty.baseUrl, description: 'A: warranty questions.', tags: ['warranty'] }],
    registry: { peers: [{ url: stubB.url, name: 'B' }, { url: dead.url, name: 'dead' }], federation: { requestTimeoutMs: 2_000, timeoutMs: 4_000 } },
  });
  stubA.service = a;
  b = await startService({
    ...common,
    policy: { allow: [new URL(returns.baseUrl).origin, stubA.url, catalogHost.origin, announced.url], allowLoopback: true },
    static: [{ name: 'returns_agent', url: returns.baseUrl, description: 'B: returns and warranty claims.', tags: ['returns'] }],
    aiCatalogs: [{ id: 'catalogs', catalogs: [`${catalogHost.origin}/.well-known/ai-catalog.json`] }],
    // The unlisted registry is a configured peer, but not on B's allowlist.
    registry: { peers: [{ url: stubA.url, name: 'A' }, { url: unlisted.url, name: 'unlisted' }] },
  });
  stubB.service = b;
});

after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await Promise.all([stubA, stubB, announced, unlisted, dead, catalogHost, warranty, returns].map((x) => x?.close()));
});

async function search(stub: SearchRouteStub, request: ArdSearchRequest): Promise<ArdSearchResponse> {
  const res = await fetch(`${stub.url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  assert.equal(res.status, 200);
  return (await res.json()) as ArdSearchResponse;
}

test('referrals: each instance names the other; B also names the registry its AI Catalog announces, not the unlisted peer', async () => {
  const fromA = await search(stubA, { query: { text: 'warranty' }, federation: 'referrals' });
  assert.deepEqual(fromA.referrals?.map((r) => [r.displayName, r.url]), [['B', stubB.url], ['dead', dead.url]]);
  assert.deepEqual(fromA.results.map((r) => r.displayName), ['warranty_agent']);
  const fromB = await search(stubB, { query: { text: 'warranty' }, federation: 'referrals' });
  assert.deepEqual(fromB.referrals?.map((r) => [r.identifier, r.displayName, r.type, r.url]), [
    [stubA.url, 'A', AI_REGISTRY_MEDIA_TYPE, stubA.url],
    ['urn:air:c:registry', 'Registry C', AI_REGISTRY_MEDIA_TYPE, announced.url],
  ]);
  assert.equal(unlisted.requests.length, 0);
});

test('auto: an instance answers with both instances\' agents, each with the registry it came from; the failing peer is named, not fatal; no loop', async () => {
  const askedB = stubB.received.length;
  const askedA = stubA.received.length;
  const answer = await search(stubA, { query: { text: 'warranty' }, federation: 'auto' });
  assert.deepEqual(
    answer.results.map((r) => [r.displayName, r.source]),
    [
      ['warranty_agent', undefined],
      ['returns_agent', stubB.url],
    ],
  );
  assert.deepEqual(answer.federation?.registries.map((r) => [r.name, r.outcome]), [['B', 'answered'], ['dead', 'failed']]);
  assert.match(answer.federation!.registries[1]!.message!, /503/);
  // B was asked once with federation none, and did not ask A back.
  assert.deepEqual(stubB.received.slice(askedB), [{ query: { text: 'warranty' }, federation: 'none', pageSize: 10 }]);
  assert.equal(stubA.received.length - askedA, 1, 'only the original search reached A');
});

test('auto from B: its peer A and the announced registry C answer; the peer off the allowlist is refused, never asked', async () => {
  const answer = await search(stubB, { query: { text: 'warranty' } });
  assert.deepEqual(
    answer.results.map((r) => [r.displayName, r.source]),
    [
      ['returns_agent', undefined],
      ['warranty_agent', stubA.url],
      ['Extended warranty agent', announced.url],
    ],
  );
  assert.deepEqual(answer.federation?.registries.map((r) => [r.url, r.outcome]), [
    [stubA.url, 'answered'],
    [unlisted.url, 'refused'],
    [announced.url, 'answered'],
  ]);
  assert.equal(unlisted.requests.length, 0);
  const metrics = await (await fetch(`${b.url}/metrics`)).text();
  assert.match(metrics, /a2a_discovery_federation_requests_total\{outcome="refused"\} [1-9]/);
});

test('an instance whose sources.ard follows a registry converges after an add and a removal upstream, reading only the changes', async () => {
  const cardOf = (s: RunningService, name: string) => s.loop.current()!.agents.find((x) => x.localName === name)!.cardUrl!;
  // A fake ARD registry (R1's GET /agents is not on this branch) listing A's warranty agent.
  const upstream = await startFakeArdRegistry([cardEntry('urn:air:up:warranty', 'Warranty', cardOf(a, 'warranty_agent'))]);
  const d = await startService({
    port: 0,
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    health: { enterAfter: 1 },
    loop: { cycleIntervalMs: 600_000 },
    logger,
    policy: { allow: [upstream.url, new URL(warranty.baseUrl).origin, new URL(returns.baseUrl).origin], allowLoopback: true },
    ard: [{ id: 'upstream', url: upstream.url, pollIntervalMs: 1 }],
  });
  try {
    const names = () => d.loop.current()?.agents.map((x) => x.baseUrl).sort() ?? [];
    assert.deepEqual(names(), [warranty.baseUrl]);
    const full = upstream.requests.length;
    assert.ok(upstream.requests.every((r) => !r.path.includes('updated_since')), 'the first read is the full list');
    upstream.put(cardEntry('urn:air:up:returns', 'Returns', cardOf(b, 'returns_agent')));
    upstream.remove('urn:air:up:warranty');
    await d.loop.refreshNow();
    assert.deepEqual(names(), [returns.baseUrl]);
    const since = upstream.requests.slice(full);
    assert.ok(since.length >= 1);
    assert.ok(since.every((r) => r.path.startsWith('/agents?updated_since=')), `only the change feed after the first read: ${since.map((r) => r.path).join(', ')}`);
  } finally {
    await d.close();
    await upstream.close();
  }
});

test('an instance whose peers name itself (by a loopback name) never asks itself', async () => {
  // A free port, then a service on it whose peer is the same origin under another loopback name.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const self = `http://localhost:${port}`;
  const e = await startService({
    port,
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    loop: { cycleIntervalMs: 600_000 },
    logger,
    policy: { allow: [self, new URL(warranty.baseUrl).origin], allowLoopback: true },
    static: [{ name: 'warranty_agent', url: warranty.baseUrl, description: 'E: warranty.', tags: ['warranty'] }],
    registry: { peers: [{ url: self, name: 'me' }] },
  });
  try {
    const answer = await e.federation.federate({ query: { text: 'warranty' } }, { results: [] });
    assert.deepEqual(answer.federation?.registries, [{ url: self, name: 'me', outcome: 'refused', message: 'this registry itself' }]);
    const referrals = await e.federation.federate({ query: { text: 'warranty' }, federation: 'referrals' }, { results: [] });
    assert.deepEqual(referrals.referrals, []);
  } finally {
    await e.close();
  }
});
