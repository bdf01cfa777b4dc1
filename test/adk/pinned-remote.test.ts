/**
 * The whole chain over real loopback servers: discovery publishes snapshots, the tree factory
 * builds one checked tree per digest from cached cards, and sessions answer through the tree they
 * were pinned to. One tree mixes an ADK JS `toA2a` peer (A2A 0.3) and an @a2a-js/sdk 1.x peer
 * (A2A 1.0 only). The warranty peer is discovered through a FAKE Kubernetes API server (no cluster
 * runs here); models are scripted fakes (no model API runs here).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlmRequest } from '@google/adk';
import { KubeConfig } from '@kubernetes/client-node';
import type { PolicyFetch } from '../../packages/core/src/adk/index.js';
import { createPolicyFetch, SessionRunner, snapshotTreeBuilder, TreeFactory } from '../../packages/core/src/adk/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { kubernetesSource, staticSource } from '../../packages/core/src/sources/index.js';
import type { RootKind } from '../../packages/core/src/adk/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { ScriptedLlm, startAdkPeer } from '../helpers/a2a-peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { fakeService, startFakeKubeApi } from '../helpers/fake-kube-api.js';

const LABEL = 'a2a.example.com/agent';

let billing: RunningPeer;
let warranty: RunningV1Server;
let kube: FakeKubeApi;

before(async () => {
  billing = await startAdkPeer({
    name: 'billing',
    description: 'Billing.',
    reply: 'billing peer: invoice 4411 was charged once',
    card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]),
  });
  warranty = await startV1Server({ prefix: 'warranty peer' });
  kube = await startFakeKubeApi();
});

after(async () => {
  await Promise.all([billing.close(), warranty.close(), kube.close()]);
});

async function pipeline(root: RootKind) {
  const clock = new VirtualClock();
  const policy = HostPolicy.from({ allow: [new URL(billing.baseUrl).origin, new URL(warranty.baseUrl).origin], allowLoopback: true });
  const fetcher: CardFetcher = createCardFetcher({ policy });
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
  const kc = new KubeConfig();
  kc.loadFromOptions(kube.kubeConfigOptions());
  const policyFetch: PolicyFetch = createPolicyFetch({ policy });
  // The tree factory needs the loop's snapshot store, and the loop warms trees up before publishing.
  const loopRef: { trees?: TreeFactory } = {};
  const loop = new DiscoveryLoop({
    sources: [
      staticSource({ agents: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Invoices and payments.', tags: ['billing'], critical: true }] }),
      kubernetesSource({ id: 'cluster', namespace: 'support', labelSelector: `${LABEL}=true`, kubeConfig: kc, scheme: 'http', clock }),
    ],
    hostPolicy: policy,
    cache,
    select: {
      needs: [{ tag: 'billing' }, { tag: 'warranty', inputModes: ['text/plain'], outputModes: ['text/plain'] }],
      vocabulary: new TagVocabulary([
        { tag: 'billing', description: 'Invoices and payments.' },
        { tag: 'warranty', description: 'Warranty status and claims.' },
      ]),
    },
    health: { enterAfter: 1 },
    clock,
    cycleIntervalMs: 86_400_000,
    beforePublish: (next) => void loopRef.trees!.prepare(next),
  });
  const realTrees = new TreeFactory({ snapshots: loop.snapshots, buildRoot: snapshotTreeBuilder({ root, policy, fetchImpl: policyFetch }) });
  loopRef.trees = realTrees;
  const sessions = new SessionRunner({ trees: realTrees });
  return {
    loop,
    trees: realTrees,
    sessions,
    async close() {
      sessions.close();
      await loop.stop();
      await cache.close();
      await fetcher.close();
      await policyFetch.close();
      kube.remove('support', 'warranty-agent');
    },
  };
}

describe('sessions pinned to snapshots, over real A2A peers of both protocol versions', () => {
  test('routed root: A answers with billing only; B adds the 1.0 warranty peer; A keeps answering through A; A is evicted after its last session', async () => {
    const p = await pipeline({ kind: 'routed', hints: [{ tag: 'warranty', keywords: ['serial', 'guarantee'] }] });
    try {
      await p.loop.start();
      const A = p.loop.current()!;
      assert.deepEqual(A.agents.map((a) => a.localName), ['billing_agent']);
      const warrantyCallsBefore = warranty.requests;

      const first = await p.sessions.run('early', 'Why was invoice 4411 charged twice?');
      assert.equal(first.error, undefined, first.error);
      assert.equal(first.author, 'billing_agent');
      assert.equal(first.reply, 'billing peer: invoice 4411 was charged once');
      assert.equal(first.digest, A.digest);

      kube.apply(fakeService({ namespace: 'support', name: 'warranty-agent', labels: { [LABEL]: 'true' }, annotations: { 'a2a-discovery/base-url': warranty.baseUrl }, ports: [{ name: 'a2a', port: warranty.port }] }));
      await waitUntil(async () => (await p.loop.refreshNow())?.agents.length === 2, 'warranty to join');
      const B = p.loop.current()!;
      assert.deepEqual(B.agents.map((a) => [a.localName, a.protocolVersion]), [
        ['billing_agent', '0.3'],
        ['warranty_agent', '1.0'],
      ]);
      assert.equal(warranty.requests, warrantyCallsBefore, 'building B made no call to the peer');

      const late = await p.sessions.run('late', 'Is serial 123 still under guarantee?');
      assert.equal(late.error, undefined, late.error);
      assert.deepEqual([late.author, late.digest], ['warranty_agent', B.digest]);
      assert.equal(late.reply, 'warranty peer: Is serial 123 still under guarantee?');
      assert.equal(warranty.lastMetadata?.adk_session_id, undefined, 'ADK identifiers never reach the peer');

      const earlyAgain = await p.sessions.run('early', 'Is serial 123 still under guarantee?');
      assert.equal(earlyAgain.digest, A.digest, 'the early session stays on A');
      assert.equal(earlyAgain.author, 'billing_agent', "A's tree has no warranty agent");

      assert.deepEqual(new Set(p.trees.builtDigests), new Set([A.digest, B.digest]));
      await p.sessions.end('early');
      assert.deepEqual(p.trees.builtDigests, [B.digest], "A's root is evicted after its last session ends");
      assert.equal(p.loop.snapshots.get(A.digest), undefined);
    } finally {
      await p.close();
    }
  });

  test('model root: an LlmAgent with a scripted fake model transfers to the 1.0 peer; only reviewed text reaches its prompt', async () => {
    const prompts: string[] = [];
    const router = new ScriptedLlm((request: LlmRequest) => {
      prompts.push(JSON.stringify(request.config?.systemInstruction ?? ''));
      return 'unused';
    }, 'fake-router');
    // Emit a transfer instead of text: the fake routes to warranty_agent by name.
    router.generateContentAsync = async function* (request: LlmRequest) {
      prompts.push(JSON.stringify(request.config?.systemInstruction ?? ''));
      yield { content: { role: 'model', parts: [{ functionCall: { name: 'transfer_to_agent', args: { agentName: 'warranty_agent' } } }] }, turnComplete: true };
    };
    kube.apply(fakeService({ namespace: 'support', name: 'warranty-agent', labels: { [LABEL]: 'true' }, annotations: { 'a2a-discovery/base-url': warranty.baseUrl }, ports: [{ name: 'a2a', port: warranty.port }] }));
    const p = await pipeline({ kind: 'model', model: router });
    try {
      await p.loop.start();
      await waitUntil(async () => (await p.loop.refreshNow())?.agents.length === 2, 'both agents');
      const turn = await p.sessions.run('s', 'Is serial 9 under warranty?');
      assert.equal(turn.error, undefined, turn.error);
      assert.equal(turn.author, 'warranty_agent');
      assert.equal(turn.reply, 'warranty peer: Is serial 9 under warranty?');
      const prompt = prompts.join('\n');
      assert.match(prompt, /Warranty status and claims\./, 'the reviewed description is offered to the router');
      assert.doesNotMatch(prompt, /Looks up the warranty status of a serial number/, 'card text never reaches the prompt');
    } finally {
      await p.close();
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
