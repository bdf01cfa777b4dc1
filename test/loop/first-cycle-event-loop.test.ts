/**
 * The first cycle over a large fleet runs in slices (issue 43): the records resolved, every card
 * observed, the lookalikes found, the selection made and the snapshot's agents built between turns
 * of the event loop, so a service answers `/healthz` and its requests while a fresh process first
 * judges its fleet. In one piece, 10,000 endpoints held the loop 2.5 s and 100,000 for tens of
 * seconds: longer than a liveness probe waits. What the cycle publishes is unchanged: the paced
 * resolution and selection give exactly what the one-piece ones give. The endpoints' status, read
 * by the API and by the registry's index after each change, is built in slices too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { Pacer } from '../../packages/core/src/clock/pacer.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary, selectAgents } from '../../packages/core/src/match/index.js';
import type { Candidate } from '../../packages/core/src/match/index.js';
import { selectAgentsPaced } from '../../packages/core/src/match/select-agents.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { resolveEndpointsPaced } from '../../packages/core/src/resolve/resolve-endpoints.js';
import { cardFor, skillsFor } from '../helpers/cards.js';
import { entryFor, rawCard } from '../match/fixtures.js';
import { useFaultFetcher } from '../helpers/fault-fetcher.js';
import { listSource } from '../helpers/list-source.js';
import { LOOP_DELAY_BOUND_MS, controlDelayP99, loopDelayDuring } from '../server/loop-delay.js';

const faults = useFaultFetcher();

/** A fleet's size whose first evaluation in one piece holds the loop for about a second here. */
const FLEET = 5_000;

test(`the first cycle over ${FLEET.toLocaleString('en')} endpoints never delays the event loop past ${LOOP_DELAY_BOUND_MS} ms (p99), and publishes every agent`, async (t) => {
  const { fs, fetcher, hostPolicy } = faults;
  const records = Array.from({ length: FLEET }, (_, i) => {
    const id = `e${i}`;
    // Half the fleet fits the need: the other half is judged unsuitable, each with its verdict.
    const ep = fs.endpoint(id, { card: cardFor(fs, id, skillsFor(i % 2 === 0 ? 'billing' : 'shipping')), cacheControl: 'max-age=3600' });
    return { name: `fleet-agent-${id}`, baseUrl: ep.baseUrl };
  });
  const clock = new VirtualClock();
  const cache = new CardCache({ fetcher, hostPolicy, clock, random: () => 0, expiryJitter: 0, maxConcurrentFetches: 64, maxFetchesPerOrigin: 64, check: { allowLoopback: true } });
  const registry = listSource('registry');
  const verdicts = new Map<string, number>();
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy,
    cache,
    select: { needs: [{ tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'billing', description: 'Billing.' }, { tag: 'shipping', description: 'Shipping.' }]), maxAgents: FLEET },
    health: { enterAfter: 1, leaveAfter: 3 },
    clock,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  try {
    // The cards are in the cache first: the cycle measured is the evaluation, not the requests.
    await Promise.all(records.map((r) => cache.get(r.baseUrl)));
    registry.set(records);
    const control = await controlDelayP99();
    const started = performance.now();
    const { p99, max } = await loopDelayDuring(() => loop.start());
    const took = performance.now() - started;
    t.diagnostic(`first cycle over ${FLEET} endpoints in ${took.toFixed(0)} ms: event-loop delay p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms (control p99 ${control.toFixed(1)} ms)`);
    const snapshot = loop.current();
    assert.equal(snapshot?.agents.length, FLEET / 2, 'every billing agent is published');
    assert.equal(snapshot?.agents[0]?.localName, 'fleet_agent_e0');
    // The endpoints' status (the API's list, the registry's index) lets the loop turn too.
    let turned = false;
    setImmediate(() => (turned = true));
    const statuses = await loop.status();
    assert.ok(turned, `the status of ${FLEET} endpoints was built in one turn of the event loop`);
    for (const s of statuses) verdicts.set(s.state.verdict, (verdicts.get(s.state.verdict) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(verdicts), { selected: FLEET / 2, unsuitable: FLEET / 2 });
    assert.ok(p99 < LOOP_DELAY_BOUND_MS + control, `event-loop delay p99 ${p99.toFixed(1)} ms during the first cycle (bound ${LOOP_DELAY_BOUND_MS} ms + control ${control.toFixed(1)} ms)`);

    // Every card expires at once: the cycle starts a revalidation per endpoint, in slices too.
    const hits = fs.hits;
    await clock.advance(3_600_001);
    const wave = await loopDelayDuring(() => loop.refreshNow());
    t.diagnostic(`a wave of ${FLEET} revalidations: event-loop delay p99 ${wave.p99.toFixed(1)} ms, max ${wave.max.toFixed(1)} ms`);
    assert.equal(fs.hits - hits, FLEET, 'one conditional request per endpoint');
    assert.equal(wave.result, snapshot, 'the same cards: the snapshot stands');
    assert.ok(wave.p99 < LOOP_DELAY_BOUND_MS + control, `event-loop delay p99 ${wave.p99.toFixed(1)} ms during the wave (bound ${LOOP_DELAY_BOUND_MS} ms + control ${control.toFixed(1)} ms)`);
  } finally {
    await loop.stop();
    await cache.close();
  }
});

test('the resolution and the selection in slices give what they give in one piece: admissions, refusals, verdicts, names, alerts', async () => {
  const policy = HostPolicy.from({ allow: ['https://a.example', 'https://b.example'] });
  const record = (source: string, name: string, baseUrl: string) => Object.freeze({ source, name, baseUrl, metadata: Object.freeze({}) });
  // Duplicates across sources, a refused host, and names that collide once derived.
  const lists = [
    Array.from({ length: 700 }, (_, i) => record('registry', `agent-${i % 650}`, `https://${i % 3 === 0 ? 'b' : 'a'}.example/${i}/`)),
    Array.from({ length: 300 }, (_, i) => record('labels', `Agent ${i}`, i % 5 === 0 ? `https://evil.example/${i}/` : `https://a.example/${i * 2}/`)),
  ];
  // A pacer of 0 ms turns the loop at every step: the result is the same however it is sliced.
  const resolved = resolveEndpoints(lists, policy);
  assert.deepStrictEqual(await resolveEndpointsPaced(lists, policy, new Pacer(0)), resolved);
  assert.equal(resolved.admitted.length, 780, "700 + 240 - the 160 the labels share with the registry");
  assert.equal(resolved.refused.length, 60);

  const candidates: Candidate[] = resolved.admitted.map((endpoint, i) => ({
    endpoint,
    entry: entryFor(endpoint.baseUrl, rawCard(new URL(endpoint.baseUrl).origin, { skills: [{ id: `s${i}`, tags: i % 4 === 0 ? ['billing', 'mystery'] : i % 4 === 1 ? ['shipping'] : ['billing'] }] })),
  }));
  const options = { needs: [{ tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'billing', description: 'Billing.' }]), maxAgents: 500 };
  const whole = selectAgents(candidates, options);
  assert.deepStrictEqual(await selectAgentsPaced(candidates, options, new Pacer(0)), whole);
  assert.equal(whole.selected.length, 500, 'the cap');
  assert.ok(whole.alerts.some((a) => a.kind === 'unknown-tags') && whole.alerts.some((a) => a.kind === 'cap-reached'));
  assert.ok([...whole.verdicts.values()].some((v) => v.verdict === 'excluded' && v.cause === 'name'), 'derived names collide');
});
