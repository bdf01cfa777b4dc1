/**
 * Lookalike names (AI Catalog, "Identifier Typosquatting"; UTS #39 confusables): the rule's table
 * (confusable characters, edit distance relative to length, separators, same origin never,
 * unrelated names and numbered series never), first arrival wins, the `urn:air` identifier's
 * publisher and name, the index's answers equal to comparing every pair, and a bounded number of
 * comparisons at 10,000 admitted names.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { GramTable, identifierName, LookalikeIndex, lookalikesAmong } from '../../packages/core/src/rules/lookalike.js';

/** The reason the second name is flagged against the first (other origin), or undefined. */
function flag(original: string, later: string): string | undefined {
  const found = lookalikesAmong([
    { key: 'https://first.example/', origin: 'https://first.example', names: [original] },
    { key: 'https://second.example/', origin: 'https://second.example', names: [later] },
  ]).get('https://second.example/');
  return found?.reason;
}

const TABLE: ReadonlyArray<[string, string, string | undefined]> = [
  // Confusable characters (the skeleton): Cyrillic а and і, fullwidth, digits and ASCII lookalikes.
  ['paypal', 'p\u0430ypal', 'confusable characters'],
  ['billing', 'b\u0456lling', 'confusable characters'],
  ['paypal', '\uff50\uff41\uff59\uff50\uff41\uff4c', 'the same name'],
  ['paypal', 'paypa1', 'confusable characters'],
  ['paypal', 'PAYPAI', 'confusable characters'],
  ['modern', 'modem', 'confusable characters'],
  ['billing', 'bi\u200blling', 'confusable characters'],
  // Separators and case.
  ['acme-agent', 'acme_agent', 'the same name but for separators'],
  ['Acme Agent', 'acme.agent', 'the same name but for separators'],
  ['Billing', 'billing', 'the same name'],
  // Edit distance, relative to length.
  ['billing', 'biling', '1 edit apart'],
  ['warranty-agent', 'warrenty-agant', '2 edits apart'],
  ['acme.com:finance', 'acme.com:financ', '1 edit apart'],
  // Not lookalikes: unrelated, too far for the length (a transposition is 2 edits), too short, numbered or lettered series.
  ['billing', 'shipping', undefined],
  ['warranty-agent', 'warrenty-agnet', undefined],
  ['pay', 'pan', undefined],
  ['ai', 'ai', undefined],
  ['agent-1', 'agent-2', undefined],
  ['billing v1', 'billing v2', undefined],
  ['Agent a', 'Agent b', undefined],
  ['a.example.com', 'b.example.com', undefined],
  ['warranty', 'warranties', undefined],
];

describe('the rule', () => {
  for (const [original, later, reason] of TABLE) {
    test(`${JSON.stringify(later)} after ${JSON.stringify(original)}: ${reason ?? 'not a lookalike'}`, () => {
      const got = flag(original, later);
      if (reason === undefined) assert.equal(got, undefined);
      else assert.equal(got, `name ${JSON.stringify(later)} looks like ${JSON.stringify(original)} of https://first.example: ${reason}`);
    });
  }

  test('the same origin is never a lookalike of itself', () => {
    const found = lookalikesAmong([
      { key: 'https://pay.example/a', origin: 'https://pay.example', names: ['paypal'] },
      { key: 'https://pay.example/b', origin: 'https://pay.example', names: ['p\u0430ypal'] },
    ]);
    assert.equal(found.size, 0);
  });

  test('the first to arrive is the original: the later one is flagged, against the earliest', () => {
    const index = new LookalikeIndex();
    index.set({ key: 'https://a.example/', origin: 'https://a.example', names: ['billing'] });
    index.set({ key: 'https://b.example/', origin: 'https://b.example', names: ['biling'] });
    index.set({ key: 'https://c.example/', origin: 'https://c.example', names: ['b\u0456lling'] });
    assert.equal(index.find('https://a.example/'), undefined);
    assert.deepEqual(
      { ...index.find('https://c.example/') },
      { key: 'https://a.example/', name: 'b\u0456lling', of: 'billing', origin: 'https://a.example', reason: 'name "b\u0456lling" looks like "billing" of https://a.example: confusable characters' },
    );
    // The original leaves: the next one in arrival order is the original now.
    index.delete('https://a.example/');
    assert.equal(index.find('https://b.example/'), undefined);
    assert.equal(index.find('https://c.example/')?.origin, 'https://b.example');
    // Names change in place: the place in the arrival order stays.
    assert.equal(index.set({ key: 'https://b.example/', origin: 'https://b.example', names: ['biling', 'billing-agent'] }), true);
    assert.equal(index.set({ key: 'https://b.example/', origin: 'https://b.example', names: ['biling', 'billing-agent'] }), false);
    assert.equal(index.find('https://c.example/')?.origin, 'https://b.example');
  });

  test('an AI Catalog identifier compares by publisher and name', () => {
    assert.equal(identifierName('urn:air:acme.com:agent:finance'), 'acme.com:finance');
    assert.equal(identifierName('urn:air:ACME.com:finance:agent:payments'), 'acme.com:payments');
    assert.equal(identifierName('https://acme.com/agents/finance'), undefined);
    // The spec's own example of a typosquatted identifier.
    assert.equal(flag(identifierName('urn:air:acme.com:agent:finance')!, identifierName('urn:air:acme.com:agent:financ')!), 'name "acme.com:financ" looks like "acme.com:finance" of https://first.example: 1 edit apart');
    assert.match(flag(identifierName('urn:air:acme.com:agent:finance')!, identifierName('urn:air:acrne.com:agent:finance')!) ?? '', /confusable characters$/);
  });
});

describe('the index finds what comparing every pair finds', () => {
  // The index compares a name only with the names its q-gram filter lets through: it must answer
  // exactly what comparing the name with every earlier one does (the earliest from another origin).
  for (const seed0 of [1, 2, 3]) {
    test(`600 names, a third of them edits of earlier ones (seed ${seed0})`, () => {
      let seed = seed0;
      const random = (): number => {
        seed = (seed * 16807) % 2147483647;
        return seed / 2147483647;
      };
      const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
      const alphabet = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
      const word = (n: number): string => Array.from({ length: n }, () => pick(alphabet)).join('');
      const names: string[] = [];
      for (let i = 0; i < 600; i++) {
        const r = random();
        if (r < 0.4 && names.length > 0) {
          // An earlier name with 1 to 3 edits: inserted, deleted or changed characters, a Cyrillic а, a separator.
          let s = pick(names);
          for (let e = 1 + Math.floor(random() * 3); e > 0; e--) {
            const at = Math.floor(random() * (s.length + 1));
            const op = Math.floor(random() * 5);
            if (op === 0) s = s.slice(0, at) + pick(alphabet) + s.slice(at);
            else if (op === 1) s = s.slice(0, at) + s.slice(at + 1);
            else if (op === 2) s = s.slice(0, at) + pick(alphabet) + s.slice(at + 1);
            else if (op === 3) s = s.replace('a', '\u0430');
            else s = s.replace(' ', '_');
          }
          names.push(s);
          // Numbered series, big enough to be posted by series.
        } else if (r < 0.6) names.push(`${pick(['agent', 'billing', 'fleet agent'])} ${Math.floor(random() * 50)}`);
        else names.push(`${word(2 + Math.floor(random() * 14))}${pick(['', ' agent', '-assistant', ' bot', ` ${word(3)}`])}`);
      }
      const entries = names.map((n, i) => ({ key: String(i), origin: `https://h${i % 7}.example`, names: random() < 0.2 ? [n, pick(names)] : [n] }));
      const found = lookalikesAmong(entries);
      // Every pair of names, each pair in an index of its own: the earliest agent of another origin with a name like one of this agent's.
      const alike = (a: string, b: string): boolean => {
        const pair = new LookalikeIndex();
        pair.set({ key: 'a', origin: 'https://a.example', names: [a] });
        pair.set({ key: 'b', origin: 'https://b.example', names: [b] });
        return pair.find('b') !== undefined;
      };
      let flagged = 0;
      for (let i = 0; i < entries.length; i++) {
        let expected: string | undefined;
        for (let j = 0; j < i && expected === undefined; j++) {
          if (entries[j]!.origin === entries[i]!.origin) continue;
          if (entries[i]!.names.some((a) => entries[j]!.names.some((b) => alike(b, a)))) expected = entries[j]!.key;
        }
        if (expected !== undefined) flagged++;
        assert.equal(found.get(String(i))?.key, expected, `names ${JSON.stringify(entries[i]!.names)}`);
      }
      assert.ok(flagged > 100, `${flagged} lookalikes among the 600`);
    });
  }
});

describe('agents leaving and renamed', () => {
  // A fleet where many names share q-grams (long lists, whose removals are left in place until an
  // eighth of the list is gone), a big numbered series (posted by series), random words and
  // planted edits; then agents leave, are renamed and arrive, in rounds. After each round every
  // agent held is judged as an index that never held the ones that left would judge it: the same
  // agents set in the same arrival order into a fresh index.
  for (const seed0 of [4, 5]) {
    test(`3,000 agents, four rounds of leaving, renaming and arriving (seed ${seed0})`, () => {
      let seed = seed0;
      const random = (): number => {
        seed = (seed * 16807) % 2147483647;
        return seed / 2147483647;
      };
      const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
      const hex = (i: number): string => createHash('sha256').update(`${seed0} ${i}`).digest('hex').slice(0, 12);
      const word = (n: number): string => Array.from({ length: n }, () => pick([...'abcdefghijklmnopqrstuvwxyz'])).join('');
      const earlier: string[] = [];
      let next = 0;
      const nameOf = (): string => {
        const r = random();
        const name =
          r < 0.3
            ? `Agent ${hex(next)}`
            : r < 0.5
              ? `fleet-agent-e${next}`
              : // The same few names from many origins: long lists under one skeleton.
                r < 0.6
                ? pick(['Billing Assistant', 'billing-assistant', 'Вilling Assistant'])
                : r < 0.75 || earlier.length === 0
                  ? `${word(4 + Math.floor(random() * 10))} agent`
                  : `${pick(earlier)}${pick(['x', 's', '2'])}`;
        earlier.push(name);
        return name;
      };
      const arrive = (): { key: string; origin: string; names: string[] } => {
        const i = next++;
        return { key: `https://h${i % 13}.example/${i}`, origin: `https://h${i % 13}.example`, names: [nameOf()] };
      };
      const index = new LookalikeIndex();
      const held = new Map<string, { key: string; origin: string; names: string[] }>();
      const set = (e: { key: string; origin: string; names: string[] }): void => {
        index.set(e);
        held.set(e.key, e);
      };
      for (let i = 0; i < 3_000; i++) set(arrive());
      let flagged = 0;
      for (let round = 0; round < 4; round++) {
        for (const key of [...held.keys()]) {
          const r = random();
          if (r < 0.3) {
            assert.equal(index.delete(key), true);
            held.delete(key);
          } else if (r < 0.4) set({ ...held.get(key)!, names: [nameOf()] });
        }
        for (let i = 0; i < 400; i++) set(arrive());
        // The fresh index, in the arrival order the index keeps (a renamed agent keeps its place).
        const fresh = new LookalikeIndex();
        const order = [...index.keys()];
        assert.deepEqual(new Set(order), new Set(held.keys()));
        for (const key of order) fresh.set(held.get(key)!);
        for (const key of order) {
          const found = index.find(key);
          assert.deepEqual(found, fresh.find(key), `round ${round}: ${JSON.stringify(held.get(key)!.names)}`);
          if (found !== undefined) flagged++;
        }
        // The inspector's question, as the fresh index answers it: an agent not held, or one from
        // an origin held (judged in its own place when it goes by one of that origin's names).
        for (let i = 0; i < 60; i++) {
          const asked = { origin: i % 3 === 0 ? 'https://asked.example' : `https://h${i % 13}.example`, names: [i % 2 === 0 ? `${pick(earlier)}z` : pick(earlier)] };
          assert.deepEqual(index.judge(asked), fresh.judge(asked));
        }
      }
      assert.ok(flagged > 200, `${flagged} lookalikes over the rounds`);
    });
  }

  test('the first of 100 agents going by one name leaves: nothing is judged against it, though its posting waits in the long list', () => {
    const index = new LookalikeIndex();
    const key = (i: number): string => `https://h${i}.example/`;
    for (let i = 0; i < 100; i++) index.set({ key: key(i), origin: `https://h${i}.example`, names: ['Billing Assistant'] });
    assert.equal(index.find(key(1))?.key, key(0));
    assert.equal(index.delete(key(0)), true);
    // The original is gone: the next is the original now, and the one after it looks like it.
    assert.equal(index.find(key(1)), undefined);
    assert.equal(index.find(key(2))?.key, key(1));
    // Its postings are still in the lists (one dead of 100 in each), until an eighth of a list is.
    const one = new LookalikeIndex();
    one.set({ key: key(0), origin: 'https://h0.example', names: ['Billing Assistant'] });
    assert.equal(index.postings, 100 * one.postings);
    // Asked from the origin that left, the name is judged as a newcomer's, against those held.
    assert.equal(index.judge({ origin: 'https://h0.example', names: ['Billing Assistant'] })?.key, key(1));
  });

  test("an agent leaving reads its own lists' postings, not the fleet's: 4,000 agents named `Agent <hex>` leave one by one", () => {
    const index = new LookalikeIndex();
    const n = 4_000;
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const key = `https://h${i % 64}.example/${i}`;
      keys.push(key);
      index.set({ key, origin: `https://h${i % 64}.example`, names: [`Agent ${createHash('sha256').update(String(i)).digest('hex').slice(0, 12)}`, `fleet-agent-e${i}`] });
    }
    const peak = index.listBytes;
    for (const key of keys.slice(0, (n * 7) / 8)) index.delete(key);
    // The memory of the lists goes with them: a quarter full, the lists are packed smaller.
    assert.ok(index.listBytes < peak / 2, `${index.listBytes} of ${peak} B reserved with an eighth of the agents left`);
    for (const key of keys.slice((n * 7) / 8)) index.delete(key);
    assert.equal(index.listBytes, new LookalikeIndex().listBytes);
    // Each name is posted under q-grams every other name has (`age`, `gen`, `flee`…, n postings
    // each): compacting those lists at each removal read about 60,000 postings per agent here.
    // Left in place until an eighth of a list is gone, they cost about eight reads per posting.
    assert.ok(index.swept < 1_000 * n, `${index.swept} postings read for ${n} removals`);
    assert.deepEqual([...index.keys()], []);
    // And none of them is held any longer: every list they were in was compacted, or dropped.
    assert.equal(index.postings, 0);
    // Nothing of them is left to find: a name like one of theirs is not a lookalike now.
    index.set({ key: 'https://new.example/', origin: 'https://new.example', names: ['fleet-agent-e17x'] });
    assert.equal(index.find('https://new.example/'), undefined);
    // And the index works as new: names like those that left (the same q-grams, lists made again) are found.
    const again = `Agent ${createHash('sha256').update('17').digest('hex').slice(0, 12)}`;
    index.set({ key: 'https://a.example/', origin: 'https://a.example', names: [again] });
    index.set({ key: 'https://b.example/', origin: 'https://b.example', names: [`${again.slice(0, -1)}x`] });
    assert.equal(index.find('https://b.example/')?.key, 'https://a.example/');
    index.set({ key: 'https://c.example/', origin: 'https://c.example', names: [`fleet-agent-e${n - 1}`] });
    index.set({ key: 'https://d.example/', origin: 'https://d.example', names: [`flet-agent-e${n - 1}`] });
    assert.equal(index.find('https://d.example/')?.key, 'https://c.example/');
    // No lookup visited a list that was not there (a key left behind would count none, or another's).
    assert.ok(Number.isFinite(index.visits), `visits ${index.visits}`);
  });
});

describe('bounded memory', () => {
  test('a fleet that empties and comes back is judged as by a new index (no list of the old fleet is left under a key)', () => {
    const index = new LookalikeIndex();
    // Pairs of agents sharing a word nobody else has, after one every agent has: each pair makes
    // lists of its own, the last pair's last (numbered highest). Every agent leaves, the last pair
    // last, and the last list it frees is its word's last q-gram.
    const word = (j: number): string => createHash('sha256').update(`w${j}`).digest('hex').replace(/\d/g, '').slice(0, 8);
    const pairs = 40;
    for (let j = 0; j < pairs; j++) {
      for (const side of [0, 1]) index.set({ key: `k${j}-${side}`, origin: `https://p${j}-${side}.example`, names: [`agent ${word(j)}`] });
    }
    for (let j = 0; j < pairs; j++) for (const side of [0, 1]) index.delete(`k${j}-${side}`);
    assert.equal(index.postings, 0);
    // They come back, each second one a letter off the first.
    const fresh = new LookalikeIndex();
    for (let j = 0; j < pairs; j++) {
      for (const [side, name] of [`agent ${word(j)}`, `agenx ${word(j)}`].entries()) {
        for (const ix of [index, fresh]) ix.set({ key: `k${j}-${side}`, origin: `https://p${j}-${side}.example`, names: [name] });
      }
    }
    for (let j = 0; j < pairs; j++) {
      assert.equal(fresh.find(`k${j}-1`)?.key, `k${j}-0`);
      assert.equal(index.find(`k${j}-1`)?.key, `k${j}-0`, `pair ${j}`);
    }
    assert.equal(index.listBytes, fresh.listBytes);
    // And they leave again without a trace.
    for (let j = 0; j < pairs; j++) for (const side of [0, 1]) index.delete(`k${j}-${side}`);
    assert.equal(index.postings, 0);
    assert.equal(index.listBytes, new LookalikeIndex().listBytes);
  });

  test('a fleet of a steady size that keeps changing holds its lists in steady memory', () => {
    const name = (i: number): string => `Agent ${createHash('sha256').update(String(i)).digest('hex').slice(0, 12)}`;
    const add = (index: LookalikeIndex, i: number): void => {
      index.set({ key: `https://h${i % 64}.example/${i}`, origin: `https://h${i % 64}.example`, names: [name(i), `fleet-agent-${i.toString(36)}`] });
    };
    const size = 2_000;
    const rounds = 40;
    const index = new LookalikeIndex();
    for (let i = 0; i < size; i++) add(index, i);
    // Each round a quarter of the fleet leaves, and as many newcomers arrive.
    for (let round = 1; round <= rounds; round++) {
      for (let i = (round - 1) * 500; i < round * 500; i++) index.delete(`https://h${i % 64}.example/${i}`);
      for (let i = size + (round - 1) * 500; i < size + round * 500; i++) add(index, i);
    }
    // Against an index given the same agents once.
    const fresh = new LookalikeIndex();
    for (let i = rounds * 500; i < size + rounds * 500; i++) add(fresh, i);
    assert.equal([...index.keys()].length, size);
    assert.ok(index.listBytes <= 2 * fresh.listBytes, `${index.listBytes} B reserved after ${rounds} rounds, ${fresh.listBytes} B for the same agents given once`);
  });
});

describe('bounded cost', () => {
  test('10,000 admitted names: each lookup compares a handful of names, not all', () => {
    // A seeded generator (mulberry32): random words, a quarter with a common word after them.
    let seed = 42;
    const random = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const suffixes = ['', ' agent', '-assistant', ' bot'];
    const names: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      let word = '';
      const length = 5 + Math.floor(random() * 8);
      for (let j = 0; j < length; j++) word += 'abcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 26)];
      names.push(word + suffixes[Math.floor(random() * suffixes.length)]);
    }
    // Planted lookalikes of earlier names, which must be found.
    names[9_000] = names[10].replace(/a/g, '\u0430');
    names[9_001] = `${names[20]}x`;
    const index = new LookalikeIndex();
    const flagged = new Set<number>();
    for (let i = 0; i < names.length; i++) {
      index.set({ key: String(i), origin: `https://h${i}.example`, names: [names[i]!] });
      if (index.find(String(i)) !== undefined) flagged.add(i);
    }
    assert.ok(flagged.has(9_000) && flagged.has(9_001), 'the planted lookalikes are found');
    const allPairs = (names.length * (names.length - 1)) / 2;
    // Measured: about 270,000 comparisons (edit distances of two short skeletons, a few hundred
    // nanoseconds each) and 680,000 postings visited for the 10,000 lookups (all pairs:
    // 49,995,000). A visit is a count: a lookup takes one q-gram more where that at most doubles
    // its visits, and compares only the names posted under two of them (a fleet named
    // `Agent <12 hex digits>`: 58 comparisons a lookup at 100,000 names before, 4 after).
    assert.ok(index.comparisons < 50 * names.length, `${index.comparisons} comparisons for ${names.length} lookups (all pairs: ${allPairs})`);
    assert.ok(index.visits < 100 * names.length, `${index.visits} postings visited for ${names.length} lookups (all pairs: ${allPairs})`);
  });

  test('a hostile name of 100,000 characters posts no q-gram and costs no lookup its length, and is still found under the same skeleton', () => {
    const index = new LookalikeIndex();
    const long = `billing ${'x'.repeat(100_000)}`;
    index.set({ key: 'https://a.example/', origin: 'https://a.example', names: ['billing-agent'] });
    index.set({ key: 'https://b.example/', origin: 'https://b.example', names: [long] });
    index.set({ key: 'https://c.example/', origin: 'https://c.example', names: [long.replace('billing', 'bi11ing')] });
    assert.equal(index.find('https://b.example/'), undefined);
    assert.equal(index.find('https://c.example/')?.key, 'https://b.example/');
    // Only the equal skeletons were compared: no posting of a q-gram was visited.
    assert.equal(index.visits, 0);
    index.set({ key: 'https://d.example/', origin: 'https://d.example', names: ['biling-agent'] });
    assert.equal(index.find('https://d.example/')?.key, 'https://a.example/');
  });

  test('a name at the longest q-grammed length (256) is found by names 1 to 3 characters longer (a longer name held is compared only with its own skeleton)', () => {
    let seed = 9;
    const letter = (): string => {
      seed = (seed * 16807) % 2147483647;
      return 'abcdefghijklmnopqrstuvwxyz'[seed % 26]!;
    };
    const long = Array.from({ length: 256 }, letter).join('');
    for (const extra of [1, 2, 3]) {
      const longer = `${long.slice(0, 100)}${'q'.repeat(extra)}${long.slice(100)}`;
      const index = new LookalikeIndex();
      index.set({ key: 'a', origin: 'https://a.example', names: [long] });
      index.set({ key: 'b', origin: 'https://b.example', names: [longer] });
      assert.equal(index.find('b')?.reason.endsWith(`${extra} ${extra === 1 ? 'edit' : 'edits'} apart`), true, `${longer.length} characters`);
    }
  });

  test('fleets named alike (a common word, or a numbered series): a lookup visits few names, not every one, and a planted lookalike is still found', () => {
    const hex = (i: number): string => createHash('sha256').update(String(i)).digest('hex').slice(0, 12);
    for (const [what, nameOf] of [
      ['Agent <hex>', (i: number) => `Agent ${hex(i)}`],
      ['fleet-agent-e<n>', (i: number) => `fleet-agent-e${i}`],
    ] as const) {
      const n = 4_000;
      const index = new LookalikeIndex();
      const flagged: number[] = [];
      for (let i = 0; i < n; i++) {
        // A lookalike planted late: one edit from an early name, on another origin.
        const name = i === n - 1 ? `${nameOf(7)}x` : nameOf(i);
        index.set({ key: String(i), origin: `https://h${i % 64}.example`, names: [name] });
        if (index.find(String(i)) !== undefined) flagged.push(i);
      }
      assert.deepEqual(flagged, [n - 1], `${what}: only the planted lookalike is flagged`);
      // Before: every lookup visited the postings of the common segments, n each (16,000,000 here).
      assert.ok(index.visits < 200 * n, `${what}: ${index.visits} postings visited for ${n} lookups`);
    }
  });
});

describe('the q-gram key table', () => {
  test('answers as a Map does through growth, runs that wrap past its end, deletes inside runs, and shrinking', () => {
    for (const seed of [1, 2, 3]) {
      let x = seed * 0x9e3779b1;
      const random = (): number => {
        x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5;
        return (x >>> 0) / 2 ** 32;
      };
      const table = new GramTable();
      const model = new Map<number, number>();
      // Keys whose home slots are the last of the smallest table (runs wrap to its start), and random ones.
      const key = (): number => (random() < 0.6 ? 1_020 + (random() < 0.5 ? 3 : 0) + 1_024 * Math.floor(random() * 400) : Math.floor(random() * 2 ** 30));
      const check = (k: number): void => assert.equal(table.get(k), model.get(k), `seed ${seed}, key ${k}`);
      for (let op = 0; op < 30_000; op++) {
        // Grow to about 1,500 keys, then shrink to a handful: the table doubles and halves.
        const growing = op < 15_000;
        const k = random() < 0.5 && model.size > 0 ? [...model.keys()][Math.floor(random() * model.size)]! : key();
        if (random() < (growing ? 0.35 : 0.75)) {
          assert.equal(table.delete(k), model.delete(k));
        } else {
          table.set(k, op);
          model.set(k, op);
        }
        check(k);
        if (op % 500 === 0) {
          for (const held of model.keys()) check(held);
          for (let i = 0; i < 20; i++) check(key());
          assert.equal(table.size, model.size);
        }
      }
      for (const held of [...model.keys()]) {
        assert.equal(table.delete(held), true);
        for (const rest of model.keys()) if (rest !== held) check(rest);
        model.delete(held);
      }
      assert.equal(table.size, 0);
    }
  });
});
