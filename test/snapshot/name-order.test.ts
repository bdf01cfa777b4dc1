import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareLocalNames, sortByLocalName } from '../../packages/core/src/local-name.js';
import { buildSnapshot, snapshotDigest, type SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { Pacer, runPaced, runSteps, sortSteps } from '../../packages/core/src/clock/pacer.js';

/** The order every snapshot promises: code-unit order of the names, ties in input order. */
function expected<T extends { localName: string }>(items: readonly T[]): T[] {
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => compareLocalNames(a.item.localName, b.item.localName) || a.i - b.i)
    .map((x) => x.item);
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_';

/** Names from a few shared stems (as fleets name agents) and random tails, lengths 1 to 60, some repeated. */
const fleetNames = fc
  .array(
    fc.tuple(
      fc.constantFrom('', 'a', 'agent_', 'agent_billing_', 'zz', 'fleet_agent_0000_', 'x'.repeat(13)),
      fc.array(fc.constantFrom(...ALPHABET), { maxLength: 45 }).map((cs) => cs.join('')),
    ),
    { minLength: 0, maxLength: 400 },
  )
  .map((parts) => parts.map(([stem, tail]) => stem + tail).filter((n) => n.length > 0))
  .chain((names) => fc.shuffledSubarray([...names, ...names.slice(0, 20)], { minLength: names.length }));

describe('local names in code-unit order', () => {
  test('any list of local names sorts as a stable comparison sort does, at every length and shared stem', () => {
    fc.assert(
      fc.property(fleetNames, (names) => {
        const items = names.map((localName, i) => ({ localName, i }));
        assert.deepEqual(sortByLocalName(items), expected(items));
      }),
      { numRuns: 300 },
    );
  });

  test('names outside the local-name alphabet and names longer than 48 characters are sorted the same way', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 70 }), { minLength: 16, maxLength: 200 }), (names) => {
        const items = names.map((localName, i) => ({ localName, i }));
        assert.deepEqual(sortByLocalName(items), expected(items));
      }),
      { numRuns: 200 },
    );
    const long = Array.from({ length: 300 }, (_, i) => ({ localName: `${'q'.repeat(500)}${(i * 7919) % 300}`, i }));
    assert.deepEqual(sortByLocalName(long), expected(long));
  });

  test('a fleet of 50,000 names sorts as the comparison sort does, and the input is left as it was', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const items = Array.from({ length: 50_000 }, (_, i) => ({ localName: `agent_${next().toString(36)}_${(i % 977).toString(36)}`, i }));
    const before = items.slice();
    assert.deepEqual(sortByLocalName(items), expected(items));
    assert.deepEqual(items, before);
    const sorted = expected(items);
    assert.deepEqual(sortByLocalName(sorted), sorted, 'sorted input comes back as it is');
  });

  test("a snapshot's agents and digest do not depend on the order the agents arrive in", () => {
    const agent = (localName: string, i: number) =>
      ({ localName, canonicalSha256: String(i % 10).repeat(64), description: '', tags: [], critical: false, baseUrl: `https://a${i}.example/`, sources: ['config'] }) as unknown as SnapshotAgent;
    const agents = Array.from({ length: 2_000 }, (_, i) => agent(`agent_${((i * 7_919) % 2_000).toString(36)}_x`, i));
    const reversed = agents.slice().reverse();
    const a = buildSnapshot(agents, 1, 0);
    const b = buildSnapshot(reversed, 1, 0);
    assert.equal(a.digest, b.digest);
    assert.equal(snapshotDigest(reversed), a.digest);
    assert.deepEqual(
      a.agents.map((x) => x.localName),
      agents.map((x) => x.localName).sort(compareLocalNames),
    );
  });
});

describe('sorting in slices', () => {
  const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;

  test('any list sorts as a stable Array.prototype.sort does, across run and merge boundaries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 50 }), fc.constantFrom('random', 'sorted', 'reversed', 'runs'), (n, distinct, shape) => {
        const items = Array.from({ length: n }, (_, i) => {
          const key = shape === 'sorted' ? Math.floor((i * distinct) / Math.max(1, n)) : shape === 'reversed' ? distinct - Math.floor((i * distinct) / Math.max(1, n)) : shape === 'runs' ? (i % 5_000) % distinct : (i * 7_919 + 13) % distinct;
          return { key, i };
        });
        const expected = items.slice().sort(byKey);
        assert.deepEqual(runSteps(sortSteps(items, byKey)), expected);
      }),
      { numRuns: 40 },
    );
  });

  test('a large sort yields between slices, and a paced caller gets the same order', async () => {
    const items = Array.from({ length: 50_000 }, (_, i) => ({ key: (i * 7_919) % 1_000, i }));
    let yields = 0;
    const steps = sortSteps(items, byKey);
    let step = steps.next();
    while (step.done !== true) {
      yields++;
      step = steps.next();
    }
    assert.ok(yields >= 12, `${yields} yields: one per run of 4,096 at least`);
    assert.deepEqual(step.value, items.slice().sort(byKey));
    assert.deepEqual(await runPaced(sortSteps(items, byKey), new Pacer(0)), step.value);
  });
});
