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
  assert.deepEqual(['changed', 'revalidated'].map((o) => journalOrCounter(card(o))), ['journal', 'card.result.revalidated']);
});
