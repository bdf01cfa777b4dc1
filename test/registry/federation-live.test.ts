/**
 * Registries federating for real (issue 26, "done means"): two service instances on loopback,
 * each with its own real A2A agent (ADK JS `toA2a`), each configured with the other's registry
 * API (`/api/registry/`) as a peer, answer a `federation: "auto"` search through their real
 * `POST /api/registry/search` routes with both instances' agents, each result naming the registry
 * it came from, without asking each other in a loop; and a third instance whose `sources.ard`
 * follows the first one's real change feed (`GET /api/registry/agents?updated_since=…`) converges
 * after an agent leaves upstream. (federation-services.test.ts pins the federation's every rule
 * through a recording stand-in for the search route.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { ArdSearchRequest, ArdSearchResponse } from '../../packages/core/src/ard/wire.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { listSource } from '../helpers/list-source.js';

const logger = createLogger({ level: 'silent' });
const vocabulary = [
  { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] },
  { tag: 'returns', description: 'Returns.', keywords: ['return'] },
];
const common = { vocabulary, needs: vocabulary.map((v) => ({ tag: v.tag })), health: { enterAfter: 1 }, loop: { cycleIntervalMs: 600_000 }, logger } as const;

let warranty: RunningPeer;
let returns: RunningPeer;
let a: RunningService;
let b: RunningService;
const aAgents = listSource('partners');
let aRegistry: string;
let bRegistry: string;

/** A free loopback port (each instance must know the other's URL before either listens). */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

before(async () => {
  warranty = await startAdkPeer({ name: 'warranty', description: 'Warranty.', card: (port) => adkStyleCard(port, 'Warranty Agent', [{ id: 'status', tags: ['warranty'] }]) });
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'start', tags: ['returns'] }]) });
  const [pa, pb] = [await freePort(), await freePort()];
  aRegistry = `http://127.0.0.1:${pa}/api/registry/`;
  bRegistry = `http://127.0.0.1:${pb}/api/registry/`;
  aAgents.set([{ name: 'warranty_agent', baseUrl: warranty.baseUrl }]);
  a = await startService({
    ...common,
    port: pa,
    policy: { allow: [new URL(warranty.baseUrl).origin, new URL(returns.baseUrl).origin, new URL(bRegistry).origin], allowLoopback: true },
    extraSources: [aAgents],
    registry: { peers: [{ url: bRegistry, name: 'B' }] },
  });
  b = await startService({
    ...common,
    port: pb,
    policy: { allow: [new URL(returns.baseUrl).origin, new URL(aRegistry).origin], allowLoopback: true },
    static: [{ name: 'returns_agent', url: returns.baseUrl, description: 'B: returns.', tags: ['returns'] }],
    registry: { peers: [{ url: aRegistry, name: 'A' }] },
  });
});

after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await Promise.all([warranty?.close(), returns?.close()]);
});

/** A search; the federation report, which ARD's SearchResponse has no member for, read from its header. */
async function search(s: RunningService, request: ArdSearchRequest): Promise<ArdSearchResponse> {
  const res = await fetch(`${s.url}/api/registry/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  assert.equal(res.status, 200);
  const body = (await res.json()) as ArdSearchResponse;
  assert.deepEqual(Object.keys(body).filter((k) => !['results', 'referrals', 'pageToken'].includes(k)), [], 'no member ARD does not define');
  const report = res.headers.get('a2a-discovery-federation');
  return report === null ? body : { ...body, federation: JSON.parse(report) as ArdSearchResponse['federation'] };
}

/** What `a2a_discovery_federation_requests_total` counts on a service, every outcome together. */
async function federationRequests(s: RunningService): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return [...text.matchAll(/^a2a_discovery_federation_requests_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

test('auto: each instance answers with both instances\' agents, naming the registry each came from, and neither asks the other back', async () => {
  const bAsked = await federationRequests(b);
  const fromA = await search(a, { query: { text: 'agent' }, federation: 'auto' });
  // `source`: the registry's API base (a trailing slash aside); our own results name ours.
  const base = (url: string | undefined) => url?.replace(/\/$/, '');
  const seen = fromA.results.map((r) => [r.displayName, base(r.source)]);
  assert.deepEqual(seen, [
    ['warranty_agent', base(aRegistry)],
    ['returns_agent', base(bRegistry)],
  ]);
  assert.deepEqual(fromA.federation?.registries.map((r) => [r.name, r.outcome]), [['B', 'answered']]);
  assert.equal(await federationRequests(b), bAsked, 'B answered A with federation none: it asked nobody');

  const fromB = await search(b, { query: { text: 'agent' }, federation: 'auto' });
  assert.deepEqual(
    fromB.results.map((r) => [r.displayName, base(r.source)]),
    [
      ['returns_agent', base(bRegistry)],
      ['warranty_agent', base(aRegistry)],
    ],
  );
  const referrals = await search(a, { query: { text: 'agent' }, federation: 'referrals' });
  assert.deepEqual(referrals.referrals?.map((r) => base(r.url)), [base(bRegistry)]);
  assert.deepEqual(referrals.results.map((r) => r.displayName), ['warranty_agent'], 'referrals: only our own results');
});

test('an instance whose sources.ard follows another one\'s change feed converges after an agent leaves upstream', async () => {
  const mirror = await startService({
    ...common,
    port: 0,
    policy: { allow: [new URL(aRegistry).origin, new URL(warranty.baseUrl).origin, new URL(returns.baseUrl).origin], allowLoopback: true },
    ard: [{ id: 'upstream', url: aRegistry, pollIntervalMs: 1 }],
  });
  try {
    const agents = () => mirror.loop.current()?.agents.map((x) => x.baseUrl).sort() ?? [];
    await mirror.loop.refreshNow(); // its first cycle, settled
    assert.deepEqual(agents(), [warranty.baseUrl], 'the mirror admitted what A lists');
    // Upstream, the warranty agent leaves and the returns agent comes.
    aAgents.set([{ name: 'returns_agent', baseUrl: returns.baseUrl }]);
    await a.loop.refreshNow();
    // A's index follows its loop's events (one sync per burst); the mirror reads the feed on each
    // refresh. Converged within a bounded number of refreshes.
    for (let i = 0; i < 50 && agents().join() !== returns.baseUrl; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await mirror.loop.refreshNow();
    }
    assert.deepEqual(agents(), [returns.baseUrl], 'the mirror followed: one agent left, one came');
    const sources = (await (await fetch(`${mirror.url}/api/sources`)).json()) as { sources: Array<{ id: string; problems?: unknown[] }> };
    assert.deepEqual(sources.sources.find((x) => x.id === 'upstream')?.problems ?? [], []);
  } finally {
    await mirror.close();
  }
});
