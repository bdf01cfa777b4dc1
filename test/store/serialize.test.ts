/** A snapshot stored and read back keeps what our own AI Catalog publishes from it; a cache entry's freshness reads over its entry. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { entryFromRow, entryToJson, freshnessToJson, joinSnapshot, splitSnapshot, splitSnapshotSteps } from '../../packages/store/src/serialize.js';
import { snapshotAgent } from '../helpers/cards.js';
import { entryFor, rawCard } from '../match/fixtures.js';

const billingEntry = entryFor('https://billing.example.com/', rawCard('https://billing.example.com'));

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

test('freshness written after an entry (a 304, a failure) reads over it, cleared fields included; freshness about other bytes, or older than the entry (a release without it wrote the entry since), is ignored', () => {
  const clock = new VirtualClock({ start: 0, wallStart: 1_767_225_600_000 });
  const stored = { ...billingEntry, etag: '"v1"', lastError: { code: 'ERR_FETCH_STATUS' as const, message: 'HTTP 503' }, failures: 2, stale: true, expiresAt: 1_000 };
  const text = entryToJson(stored, clock);
  const revalidated = { ...stored, etag: '"v2"', lastError: undefined, failures: 0, stale: false, lastOutcome: 'revalidated' as const, expiresAt: 60_000 };
  const fresh = freshnessToJson(revalidated, clock, 2_000);
  assert.ok(!fresh.includes('"body"') && !fresh.includes('"card"'), 'no card, no body');
  const back = entryFromRow(text, 1_000, fresh, clock);
  assert.deepEqual(back, { ...revalidated, card: back.card, warnings: back.warnings, lastError: undefined }, 'the revalidated entry');
  assert.equal(back.lastError, undefined);
  assert.equal(entryFromRow(text, 3_000, fresh, clock).etag, '"v1"', 'older than the entry: ignored');
  assert.equal(entryFromRow(text, 1_000, freshnessToJson({ ...revalidated, rawSha256: 'f'.repeat(64) }, clock, 2_000), clock).etag, '"v1"', 'other bytes: ignored');
});

test('a freshness write reads none of the card fields: an entry holding its card lazily does not unpack its text or build its model for a 304', () => {
  const clock = new VirtualClock();
  const revalidated = { ...billingEntry, etag: '"v2"', lastOutcome: 'revalidated' as const, expiresAt: 60_000 };
  const lazy = { ...revalidated } as Record<string, unknown>;
  delete lazy['card'];
  delete lazy['body'];
  const read: string[] = [];
  for (const k of ['body', 'card']) Object.defineProperty(lazy, k, { enumerable: true, get: () => read.push(k) });
  const fresh = freshnessToJson(lazy as unknown as typeof revalidated, clock, 2_000);
  assert.deepEqual(read, [], 'no card field was read');
  assert.equal(fresh, freshnessToJson(revalidated, clock, 2_000), 'the same write as for a plain entry');
});

test("a snapshot's split in slices is the same row as the list written at once, and a large one yields between slices", () => {
  const agents = Array.from({ length: 1_500 }, (_, i) => ({ ...snapshotAgent(`agent_${i.toString(36)}`, i % 2 === 0 ? ['billing'] : ['finance']), ...(i % 7 === 0 && { identifier: `urn:air:acme.com:agent:a${i}` }) }));
  const snapshot = buildSnapshot(agents, 4, 2_000);
  const steps = splitSnapshotSteps(snapshot);
  let yields = 0;
  let step = steps.next();
  while (step.done !== true) {
    yields++;
    step = steps.next();
  }
  assert.ok(yields >= 5, `${yields} yields for 1,500 agents`);
  const whole = JSON.stringify(snapshot.agents.map(({ card: _card, body: _body, ...rest }) => rest));
  assert.equal(step.value.agents, whole, 'the same JSON text as the list stringified at once');
  assert.deepEqual(step.value, splitSnapshot(snapshot));
  const byHash = new Map(step.value.cards.map((c) => [c.rawSha256, { card: JSON.parse(c.card) as never, body: c.body }]));
  const back = joinSnapshot({ digest: snapshot.digest, version: 4, createdAt: 2_000, agents: step.value.agents }, (h) => byHash.get(h));
  assert.deepEqual(back?.agents.map((a) => [a.localName, a.identifier, a.tags]), snapshot.agents.map((a) => [a.localName, a.identifier, a.tags]));
});
