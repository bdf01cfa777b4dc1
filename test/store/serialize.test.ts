/** A snapshot stored and read back keeps what our own AI Catalog publishes from it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import { joinSnapshot, splitSnapshot } from '../../packages/store/src/serialize.js';
import { snapshotAgent } from '../helpers/cards.js';

test("an agent's urn:air: identifier survives the store (a restart, another replica), outside the digest", () => {
  const withId = { ...snapshotAgent('finance_agent', ['finance']), identifier: 'urn:air:acme.com:agent:finance' };
  const snapshot = buildSnapshot([withId, snapshotAgent('billing_agent')], 3, 1_000);
  assert.equal(snapshot.digest, buildSnapshot([snapshotAgent('finance_agent', ['finance']), snapshotAgent('billing_agent')], 3, 1_000).digest, 'not part of the digest');
  const { agents, cards } = splitSnapshot(snapshot);
  const byHash = new Map(cards.map((c) => [c.rawSha256, { card: JSON.parse(c.card) as never, body: c.body }]));
  const back = joinSnapshot({ digest: snapshot.digest, version: 3, createdAt: 1_000, agents }, (h) => byHash.get(h));
  assert.equal(back?.agents.find((a) => a.localName === 'finance_agent')?.identifier, 'urn:air:acme.com:agent:finance');
  assert.equal(back?.agents.find((a) => a.localName === 'billing_agent')?.identifier, undefined);
});
