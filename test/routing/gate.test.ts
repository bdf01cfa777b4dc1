/**
 * The routing gate on publication (#17), in the real loop against a loopback fault server: a
 * vocabulary change that makes two tags ambiguous drops accuracy below the threshold when the
 * warranty agent joins; the loop raises `routing-accuracy`, and with `gate: true` holds that
 * snapshot (like the mass-removal guard) while card updates of the current agents still go out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { AlertEvent, DiscoveryEvent, RoutingEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import type { RouteHints } from '../../packages/core/src/adk/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { casesFromVocabulary, evaluateRouting } from '../../packages/core/src/routing/index.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { listSource } from '../helpers/list-source.js';

let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;
before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 300 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

const vocabulary = [
  { tag: 'billing', description: 'Invoices.', keywords: ['invoice', 'charge'], examples: ['Why was I charged twice on my invoice?'] },
  { tag: 'returns', description: 'Returns.', keywords: ['return', 'label'], examples: ['Print my return label'] },
  { tag: 'warranty', description: 'Warranty.', keywords: ['warranty', 'serial'], examples: ['Is serial 123 under warranty?'] },
];
/** The reviewed vocabulary after a careless edit: returns and warranty now share their keywords. */
const ambiguous: RouteHints[] = vocabulary.map((v) => (v.tag === 'billing' ? v : { tag: v.tag, keywords: ['return', 'label', 'warranty', 'serial'] }));

let n = 0;
function peer(tag: string): FaultEndpoint {
  const id = `gate${++n}`;
  return fs.endpoint(id, { card: cardFor(fs, id, { skills: [{ id, name: id, description: 'x', tags: [tag] }] }), cacheControl: 'max-age=10' });
}

function harness(gate: boolean) {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
  const source = listSource('catalog');
  const routing = { hints: vocabulary as readonly RouteHints[] };
  const cases = casesFromVocabulary(vocabulary);
  const loop = new DiscoveryLoop({
    sources: [source],
    hostPolicy: policy,
    cache,
    clock,
    events: stream,
    select: { needs: vocabulary.map((v) => ({ tag: v.tag })), vocabulary: new TagVocabulary(vocabulary) },
    health: { enterAfter: 1 },
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
    routing: {
      gate,
      evaluate: async (candidate) => {
        const r = await evaluateRouting(candidate, { root: { kind: 'routed', hints: routing.hints }, cases, tags: vocabulary.map((v) => v.tag), minAccuracy: 0.9 });
        return { accuracy: r.accuracy, minAccuracy: r.minAccuracy, passed: r.passed, evaluated: r.evaluated };
      },
    },
  });
  const billing = peer('billing');
  const returns = peer('returns');
  const warranty = peer('warranty');
  const list = (...eps: Array<[string, FaultEndpoint]>) => source.set(eps.map(([name, ep]) => ({ name, baseUrl: ep.baseUrl })));
  return {
    loop,
    clock,
    events,
    routing,
    billing,
    list: {
      two: () => list(['billing-agent', billing], ['returns-agent', returns]),
      three: () => list(['billing-agent', billing], ['returns-agent', returns], ['warranty-agent', warranty]),
    },
    names: () => loop.current()?.agents.map((a) => a.localName) ?? [],
    alerts: () => events.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === 'routing-accuracy'),
    evaluations: () => events.filter((e): e is RoutingEvent => e.type === 'routing.evaluated'),
    stop: async () => {
      await loop.stop();
      await cache.close();
    },
  };
}

describe('the routing gate', () => {
  for (const gate of [false, true]) {
    test(`an ambiguous vocabulary drops accuracy below the threshold and alerts${gate ? ', and the gate holds the snapshot' : ''}`, async () => {
      const h = harness(gate);
      try {
        h.list.two();
        await h.loop.start();
        const v1 = h.loop.current()!;
        assert.deepEqual(h.names(), ['billing_agent', 'returns_agent']);
        assert.deepEqual(h.loop.routingOf(v1.digest), { accuracy: 1, minAccuracy: 0.9, passed: true, evaluated: 2 }, 'the warranty example is skipped: nobody serves it yet');
        assert.equal(h.alerts().length, 0);

        // The vocabulary is edited (a reload): returns and warranty become ambiguous; the warranty agent joins.
        h.routing.hints = ambiguous;
        h.loop.reevaluateRouting();
        h.list.three();
        await h.loop.refreshNow();
        const evaluation = h.evaluations().at(-1)!;
        assert.equal(evaluation.passed, false);
        assert.equal(evaluation.evaluated, 3);
        assert.ok(Math.abs(evaluation.accuracy - 2 / 3) < 1e-9, 'the warranty question now goes to returns_agent (tie, by name)');
        assert.equal(evaluation.held, gate);
        const [alert] = h.alerts();
        assert.ok(alert, 'routing-accuracy is raised');
        assert.match(alert.message, /routing accuracy of snapshot [0-9a-f]{12} is 66\.7% on 3 cases, below 90\.0%/);

        if (!gate) {
          assert.deepEqual(h.names(), ['billing_agent', 'returns_agent', 'warranty_agent'], 'without the gate it is published, with the alert');
          assert.equal(h.loop.routingOf(h.loop.current()!.digest)?.passed, false);
          await h.loop.refreshNow();
          assert.ok(h.loop.activeAlerts.includes('routing-accuracy'), 'the alert holds while the published snapshot routes badly');
          assert.equal(h.alerts().length, 1, 'raised once (edge-triggered)');
          return;
        }
        assert.equal(h.loop.current()!.digest, v1.digest, 'the gate keeps the current snapshot');
        assert.equal(h.loop.held, evaluation.digest);
        const held = h.events.filter((e) => e.type === 'snapshot.held');
        assert.equal(held.length, 1);
        assert.match((held[0] as { reason?: string }).reason ?? '', /routing accuracy 66\.7% is below 90\.0%/);

        // Unrelated changes are not frozen: a card update of a current agent goes out.
        h.billing.setCard(cardFor(fs, h.billing.id, { version: '2.0.0', skills: [{ id: 'x', name: 'x', description: 'x', tags: ['billing'] }] }));
        await h.clock.advance(11_000);
        await h.loop.refreshNow();
        const v2 = h.loop.current()!;
        assert.equal(v2.version, 2);
        assert.deepEqual(h.names(), ['billing_agent', 'returns_agent'], 'the routing stays as it was');
        assert.notEqual(v2.agents[0]!.canonicalSha256, v1.agents[0]!.canonicalSha256, "billing's new card is published");
        assert.ok(h.loop.held, 'the warranty change is still held');
        const heldNow = h.events.filter((e) => e.type === 'snapshot.held');
        assert.equal(heldNow.length, 2, 'one held event per held candidate: the candidate now carries the new billing card too');
        assert.equal((heldNow[1] as { digest: string }).digest, h.loop.held);
        assert.equal(h.evaluations().length, 3, 'v1, v1 again after the vocabulary change, the candidate; its routing is unchanged since: not evaluated again');
        assert.ok(h.loop.activeAlerts.includes('routing-accuracy'));

        // Fixing the vocabulary releases it at the next evaluation; confirming would too.
        h.routing.hints = vocabulary;
        h.loop.reevaluateRouting();
        await h.loop.refreshNow();
        assert.deepEqual(h.names(), ['billing_agent', 'returns_agent', 'warranty_agent']);
        assert.equal(h.loop.held, undefined);
        assert.equal(h.loop.routingOf(h.loop.current()!.digest)?.accuracy, 1);
      } finally {
        await h.stop();
      }
    });
  }

  test('an operator can confirm a held snapshot', async () => {
    const h = harness(true);
    try {
      h.list.two();
      await h.loop.start();
      h.routing.hints = ambiguous;
      h.loop.reevaluateRouting();
      h.list.three();
      await h.loop.refreshNow();
      assert.ok(h.loop.held);
      await h.loop.confirmRemovals();
      assert.deepEqual(h.names(), ['billing_agent', 'returns_agent', 'warranty_agent']);
    } finally {
      await h.stop();
    }
  });
});
