/**
 * The lookalike index's q-gram table (typed arrays, linear probing, backward-shift deletion)
 * answers what a `Map` of lists answers, through growth and through deletions that move the keys
 * of a probe run back: every key stays reachable, each key's ids stay in the order they were added.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GramTable, NO_IDS } from '../../packages/core/src/rules/gram-table.js';
import { seededRandom } from '../../packages/core/src/clock/index.js';

function idsOf(table: GramTable, key: number): number[] {
  const v = table.lookup(key);
  return v === NO_IDS ? [] : v >= 0 ? [v] : [...table.list(~v)];
}

for (const seed of [1, 2, 3]) {
  test(`random adds and removes agree with a Map of lists (seed ${seed})`, () => {
    const random = seededRandom(seed);
    // Few distinct keys, many of them colliding in a small table: long probe runs, wrapping around.
    const keys = Array.from({ length: 400 }, () => Math.floor(random() * 2 ** 30));
    const table = new GramTable(16);
    const model = new Map<number, number[]>();
    for (let step = 0; step < 20_000; step++) {
      const key = keys[Math.floor(random() * keys.length)]!;
      const id = Math.floor(random() * 50);
      if (random() < 0.55) {
        table.add(key, id);
        model.set(key, [...(model.get(key) ?? []), id]);
      } else {
        table.remove(key, id);
        const rest = (model.get(key) ?? []).filter((x) => x !== id);
        if (rest.length > 0) model.set(key, rest);
        else model.delete(key);
      }
      if (step % 1_000 === 999) {
        assert.equal(table.size, model.size, `keys held at step ${step}`);
        for (const k of keys) {
          assert.deepEqual(idsOf(table, k), model.get(k) ?? [], `ids of ${k} at step ${step}`);
          assert.equal(table.count(k), model.get(k)?.length ?? 0);
        }
      }
    }
  });
}

test('a table emptied of every key answers none and holds nothing; it fills again', () => {
  const table = new GramTable(16);
  for (let k = 0; k < 1_000; k++) table.add(k * 7919, k);
  assert.equal(table.size, 1_000);
  for (let k = 0; k < 1_000; k++) table.remove(k * 7919, k);
  assert.equal(table.size, 0);
  for (let k = 0; k < 1_000; k++) assert.equal(table.lookup(k * 7919), NO_IDS);
  table.add(5, 1);
  table.add(5, 2);
  assert.deepEqual(idsOf(table, 5), [1, 2]);
  table.remove(5, 1);
  assert.equal(table.lookup(5), 2, 'a key left with one id holds it in its slot');
});
