/** What the journal keeps as history and what it only counts, AI Catalog reads included. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { journalOrCounter } from '../../packages/store/src/journal.js';

const read = (outcome: string): DiscoveryEvent =>
  ({ type: 'catalog.read', seq: 1, at: 0, source: 'c', url: 'https://a.example/c.json', outcome, depth: 1, entries: 1, cards: 1, nested: 0, ignored: 0 }) as DiscoveryEvent;

test('a catalog that changed, was rejected or refused is history; its 304s, unchanged reads, stale serving and failures are counted', () => {
  assert.deepEqual(
    ['changed', 'invalid', 'refused', 'revalidated', 'unchanged', 'stale', 'failed'].map((o) => journalOrCounter(read(o))),
    ['journal', 'journal', 'journal', 'catalog.read.revalidated', 'catalog.read.unchanged', 'catalog.read.stale', 'catalog.read.failed'],
  );
  const card = (outcome: string) => ({ type: 'card.result', seq: 1, at: 0, endpoint: 'e', outcome, failures: 0 }) as DiscoveryEvent;
  assert.deepEqual(
    ['changed', 'invalid', 'hit', 'revalidated', 'unchanged', 'stale', 'failed'].map((o) => journalOrCounter(card(o))),
    ['journal', 'journal', 'card.result.hit', 'card.result.revalidated', 'card.result.unchanged', 'card.result.stale', 'card.result.failed'],
  );
  // An outcome from a newer peer's journal: counted under its own name, never a property of Object.prototype.
  assert.deepEqual(['toString', 'later'].map((o) => journalOrCounter(card(o))), ['card.result.toString', 'card.result.later']);
});
