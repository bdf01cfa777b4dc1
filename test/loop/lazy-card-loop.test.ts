/**
 * The discovery loop over cache entries that hold their card model weakly (issue 29): a card no
 * snapshot holds is not built again by a cycle — neither by the per-cycle lookalike names nor by
 * a new evaluation after a revalidation (the loop reads the facts kept beside the model and keys
 * its memos on the card, not on the model object) — while the snapshot holds the selected card's
 * model, which the cache's entry answers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelSlot } from '../../packages/core/src/cache/cache-entries.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { cardFor, skillsFor } from '../helpers/cards.js';
import { useFaultFetcher } from '../helpers/fault-fetcher.js';
import { listSource } from '../helpers/list-source.js';
import { collect } from '../helpers/collect.js';


const faults = useFaultFetcher();

test('a cycle builds no model for a card no snapshot holds, with nothing due and after a revalidation; the snapshot and the entry share the selected model', async () => {
  const { fs, fetcher, hostPolicy } = faults;
  const chosen = fs.endpoint('chosen', { card: cardFor(fs, 'chosen', skillsFor('billing')), cacheControl: 'max-age=600' });
  const other = fs.endpoint('other', { card: cardFor(fs, 'other', skillsFor('other')), cacheControl: 'max-age=600' });
  const clock = new VirtualClock();
  const cache = new CardCache({ fetcher, hostPolicy, clock, random: () => 0, minTtlMs: 0, check: { allowLoopback: true } });
  const registry = listSource('registry');
  const loop = new DiscoveryLoop({
    sources: [registry],
    hostPolicy,
    cache,
    select: {
      needs: [{ tag: 'billing' }],
      vocabulary: new TagVocabulary([
        { tag: 'billing', description: 'Billing.' },
        { tag: 'other', description: 'Other.' },
      ]),
    },
    health: { enterAfter: 1, leaveAfter: 3 },
    clock,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  const unheld = async (what: string) => {
    const entry = (await cache.peek(other.baseUrl))!;
    assert.ok(modelSlot(entry) !== undefined, 'the entry holds its model through a slot');
    assert.equal(modelSlot(entry)!.ref.deref(), undefined, what);
  };
  try {
    registry.set([
      { name: 'chosen', baseUrl: chosen.baseUrl },
      { name: 'other', baseUrl: other.baseUrl },
    ]);
    await loop.start();
    const snapshot = await loop.refreshNow();
    assert.deepEqual(snapshot?.agents.map((a) => a.baseUrl), [chosen.baseUrl]);
    await collect();
    await unheld('nothing holds the unselected card: the collector took its model');
    // The published agent holds its model, and the entry answers that same object.
    assert.equal((await cache.peek(chosen.baseUrl))!.card, snapshot!.agents[0]!.card);

    await loop.refreshNow();
    await unheld('a cycle with nothing due built no model again');
    await cache.refresh(other.baseUrl);
    assert.equal((await cache.peek(other.baseUrl))!.lastOutcome, 'revalidated');
    const again = await loop.refreshNow();
    await unheld('an evaluation after a revalidation built no model again');
    assert.equal(again, snapshot, 'the same snapshot stands');
  } finally {
    await loop.stop();
    await cache.close();
  }
});
