/**
 * The seed's worked example, end to end, on a virtual clock with real loopback A2A endpoints:
 * a billing agent from static configuration (ADK JS `toA2a`, protocol 0.3) and specialists
 * discovered through Kubernetes labels — served by a FAKE Kubernetes API server (no cluster can
 * run here) — one of them an @a2a-js/sdk 1.x server speaking only A2A 1.0.
 *
 * 10:00 digest A: billing + returns. 10:05 a warranty agent appears through labels → B.
 * 10:20 the returns card gains a skill → C, with a skill-change alert. 10:30 the warranty
 * endpoint starts timing out: served stale, degraded, then left out after the failure
 * threshold → D. A session pinned to A keeps its snapshot throughout.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { kubernetesSource, staticSource } from '../../packages/core/src/sources/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { fakeService, startFakeKubeApi } from '../helpers/fake-kube-api.js';

const LABEL = 'a2a.example.com/agent';

let billing: RunningPeer;
let returns: RunningPeer & { card?: Record<string, unknown> };
let warranty: Awaited<ReturnType<typeof startV1CardServer>>;
let kube: FakeKubeApi;
let fetcher: CardFetcher;

before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', card: (port) => adkStyleCard(port, 'Support Agent', [{ id: 'start-return', tags: ['returns'] }]) });
  warranty = await startV1CardServer({ card: (port) => v1Card(port), maxAgeSeconds: 60 });
  kube = await startFakeKubeApi();
});

after(async () => {
  await fetcher?.close();
  await Promise.all([billing.close(), returns.close(), warranty.close(), kube.close()]);
});

function labelled(name: string, peer: RunningPeer) {
  return fakeService({ namespace: 'support', name, labels: { [LABEL]: 'true' }, annotations: { 'a2a-discovery/base-url': peer.baseUrl }, ports: [{ name: 'a2a', port: peer.port }] });
}

test('a morning of changes: A → B (warranty deployed) → C (returns gains a skill) → D (warranty times out); a session pinned to A keeps it', async () => {
  kube.apply(labelled('returns-agent', returns));

  const clock = new VirtualClock({ wallStart: Date.UTC(2026, 10, 30, 10, 0) });
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const hostPolicy = HostPolicy.from({ allow: [billing.baseUrl, returns.baseUrl, warranty.baseUrl].map((u) => new URL(u).origin), allowLoopback: true });
  // The warranty card requires a bearer token (v1Card): the loop is given what the fetcher presents.
  const credentials = (origin: string) => (origin === new URL(warranty.baseUrl).origin ? { authorization: 'Bearer warranty-token' } : undefined);
  fetcher = createCardFetcher({ policy: hostPolicy, totalTimeoutMs: 400, credentials });
  const cache = new CardCache({
    fetcher,
    hostPolicy,
    clock,
    events: stream,
    random: () => 0,
    defaultTtlMs: 60_000,
    minTtlMs: 0,
    backoffBaseMs: 5_000,
    backoffMaxMs: 5_000,
    // The warranty card may be served stale for 10 s past its expiry: by 10:30 it is past that,
    // so three failed fetches are enough for it to leave (a usable card would keep it in).
    maxStaleMs: 10_000,
    check: { allowLoopback: true },
  });
  const kc = new KubeConfig();
  kc.loadFromOptions(kube.kubeConfigOptions());
  const reviewedBilling = { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice and payment questions.', tags: ['billing'], critical: true };
  const loop = new DiscoveryLoop({
    credentials,
    sources: [
      staticSource({ agents: [reviewedBilling] }),
      kubernetesSource({ id: 'cluster', namespace: 'support', labelSelector: `${LABEL}=true`, kubeConfig: kc, scheme: 'http', clock, events: stream }),
    ],
    hostPolicy,
    cache,
    select: {
      needs: [
        { tag: 'billing', inputModes: ['text/plain'], outputModes: ['text/plain'] },
        { tag: 'returns', inputModes: ['text/plain'], outputModes: ['text/plain'] },
        { tag: 'warranty', inputModes: ['text/plain'], outputModes: ['text/plain'] },
      ],
      vocabulary: new TagVocabulary([
        { tag: 'billing', description: 'Invoices and payments.' },
        { tag: 'returns', description: 'Starts and tracks product returns.' },
        { tag: 'warranty', description: 'Warranty status and claims.' },
      ]),
    },
    health: { enterAfter: 2, leaveAfter: 3 },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000, // cycles are driven by the test
    resyncIntervalMs: 86_400_000,
  });

  const names = (s: Snapshot | undefined) => s?.agents.map((a) => a.localName) ?? [];
  try {
    // 10:00 — billing (static, enters on its first good card) and returns (discovered: two good observations).
    await loop.start();
    assert.equal(loop.ready, true);
    assert.ok(names(loop.current()).includes('billing_agent'), 'the static agent is usable after the first pass');
    await loop.refreshNow();
    const A = loop.current()!;
    assert.deepEqual(names(A), ['billing_agent', 'returns_agent']);
    const billingAgent = A.agents[0]!;
    assert.equal(billingAgent.description, 'Answers invoice and payment questions.', 'the reviewed description, never the card text');
    assert.equal(A.agents[1]!.description, 'Starts and tracks product returns.');
    assert.deepEqual(A.agents[1]!.sources, ['cluster']);
    loop.snapshots.retain(A.digest); // a session starts on A

    // 10:05 — the warranty team deploys, with the label.
    await clock.advanceTo(5 * 60_000);
    kube.apply(labelled('warranty-agent', warranty));
    await kube.waitFor(() => kube.requests.some((r) => r.watch), 'the watch to be open');
    await waitUntil(() => (loop.snapshots.current?.agents.length ?? 0) === 3 || events.some((e) => e.type === 'endpoint.admitted' && e.endpoint === warranty.baseUrl), 'warranty to be admitted');
    await loop.refreshNow();
    await loop.refreshNow();
    const B = loop.current()!;
    assert.deepEqual(names(B), ['billing_agent', 'returns_agent', 'warranty_agent']);
    assert.equal(B.agents[2]!.protocolVersion, '1.0', 'the warranty peer speaks only A2A 1.0');
    assert.equal(B.version, A.version + 1);

    // 10:20 — the returns team adds a skill to its card (same endpoint).
    await clock.advanceTo(20 * 60_000);
    (returns.card!.skills as unknown[]).push({ id: 'exchange', name: 'exchange', description: 'Exchanges an item.', tags: ['returns'] });
    await loop.refreshNow();
    const C = loop.current()!;
    assert.notEqual(C.digest, B.digest);
    assert.deepEqual(names(C), names(B));
    const skillAlert = events.find((e): e is AlertEvent => e.type === 'alert' && e.kind === 'skills-changed');
    assert.ok(skillAlert, 'an alert reports that a skill list changed');
    assert.match(skillAlert.message, /returns_agent: skills changed \(added exchange/);

    // 10:30 — the warranty card endpoint starts timing out.
    await clock.advanceTo(30 * 60_000);
    warranty.setHang(true);
    await loop.refreshNow();
    const stale = await cache.peek(warranty.baseUrl);
    assert.equal(stale?.stale, true, 'the card is served stale');
    assert.equal(stale?.lastError?.code, 'ERR_FETCH_TIMEOUT');
    assert.equal(loop.current()!.digest, C.digest, 'one failure degrades, it does not remove');
    const status = (await loop.status()).find((s) => s.baseUrl === warranty.baseUrl);
    assert.equal(status?.health?.state, 'degraded');

    await clock.advance(5_000);
    await loop.refreshNow();
    assert.equal(loop.current()!.digest, C.digest);
    await clock.advance(5_000);
    await loop.refreshNow();
    const D = loop.current()!;
    assert.deepEqual(names(D), ['billing_agent', 'returns_agent'], 'after three failures it leaves the next snapshot');
    assert.ok(events.some((e) => e.type === 'alert' && e.kind === 'repeated-failures' && e.endpoint === warranty.baseUrl));

    // The session pinned at 10:00 still resolves to A, unchanged.
    assert.equal(loop.snapshots.get(A.digest), A);
    assert.deepEqual(names(loop.snapshots.get(A.digest)), ['billing_agent', 'returns_agent']);
    assert.equal(loop.snapshots.get(B.digest), undefined, 'B was never pinned: evicted');
    const published = events.filter((e) => e.type === 'snapshot.published').map((e) => (e.type === 'snapshot.published' ? e.version : 0));
    assert.deepEqual(published, Array.from({ length: D.version }, (_, i) => i + 1), 'versions are consecutive, one per new digest');
    assert.deepEqual([B.version, C.version, D.version], [A.version + 1, A.version + 2, A.version + 3]);
  } finally {
    warranty.setHang(false);
    await loop.stop();
    await cache.close();
  }
});

async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
