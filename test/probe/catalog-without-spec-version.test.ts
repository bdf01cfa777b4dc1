/**
 * A catalog that lacks `specVersion` but is clearly a catalog (an `entries` array) is probed as an
 * AI Catalog and told that it lacks `specVersion` — not probed as an agent card and refused for a
 * missing `name`, `description`, … (issue 25, item 12).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAiCatalogDocument, probeAiCatalogDocument } from '../../packages/core/src/probe/index.js';
import { HostPolicy, createCardFetcher } from '../../packages/core/src/fetch/index.js';

const catalog = JSON.stringify({ entries: [{ identifier: 'urn:air:a.example.com:agent:x', displayName: 'x', type: 'application/a2a-agent-card+json', url: 'https://a.example.com/x.json' }] });

test('an entries array makes a catalog, with or without specVersion; an agent card is not one', () => {
  assert.equal(isAiCatalogDocument(catalog), true);
  assert.equal(isAiCatalogDocument(JSON.stringify({ specVersion: '1.0', entries: [] })), true);
  assert.equal(isAiCatalogDocument(JSON.stringify({ name: 'A', description: 'B', skills: [], entries: 'not a list' })), false);
  assert.equal(isAiCatalogDocument(JSON.stringify({ name: 'A', description: 'B', skills: [] })), false);
});

test('the report names the missing specVersion at its path', async () => {
  // Nothing is fetched: the document is refused before its entries are read.
  const policy = HostPolicy.from({ allow: ['https://a.example.com'] });
  const fetcher = createCardFetcher({ policy });
  const report = await probeAiCatalogDocument(catalog, { policy, fetcher });
  await fetcher.close();
  const root = report.documents[0]!;
  assert.equal(root.usable, false);
  assert.equal(root.stage, 'schema');
  assert.deepEqual(root.problems.map((p) => p.path), ['specVersion']);
  assert.match(root.problems[0]!.message, /is missing/);
});
