import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchCard, TagVocabulary, type Need } from '../../packages/core/src/match/index.js';
import { entryFor, rawCard, type SkillSpec } from './fixtures.js';

const vocabulary = new TagVocabulary([
  { tag: 'warranty', description: 'Answers warranty questions.' },
  { tag: 'returns', description: 'Handles product returns.' },
  { tag: 'billing', description: 'Answers invoice questions.' },
]);

function card(skills: SkillSpec[], overrides: Record<string, unknown> = {}) {
  return entryFor('https://agents.example.com/', rawCard('https://agents.example.com', { skills, overrides })).card;
}

const textIn = (tag: string, outputModes: string[] = ['text/plain']): Need => ({ tag, inputModes: ['text/plain'], outputModes });

describe('matchCard', () => {
  test('a skill that lists no modes inherits the card defaults', () => {
    // Defaults: in text/plain, out text/plain + application/json.
    const c = card([{ id: 'status', tags: ['warranty'] }]);
    assert.deepEqual(matchCard(c, [textIn('warranty', ['application/json'])], vocabulary).satisfied, ['warranty']);
    // The same skill on a card whose defaults lack JSON output does not satisfy the JSON need.
    const narrow = card([{ id: 'status', tags: ['warranty'] }], { defaultOutputModes: ['text/plain'] });
    assert.deepEqual(matchCard(narrow, [textIn('warranty', ['application/json'])], vocabulary).satisfied, []);
  });

  test("a skill's own modes replace the defaults (they are not merged with them)", () => {
    const c = card([{ id: 'status', tags: ['warranty'], outputModes: ['text/plain'] }]);
    const m = matchCard(c, [textIn('warranty', ['application/json'])], vocabulary);
    assert.deepEqual(m.satisfied, []);
    assert.equal(m.reasons.length, 1);
    assert.match(m.reasons[0]!, /warranty/);
  });

  test('`text` and `text/plain` are the same mode, whichever side uses the short form', () => {
    const shortOnCard = card([{ id: 'status', tags: ['warranty'], inputModes: ['text'], outputModes: ['text'] }], {
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
    });
    assert.deepEqual(matchCard(shortOnCard, [textIn('warranty')], vocabulary).satisfied, ['warranty']);
    const longOnCard = card([{ id: 'status', tags: ['warranty'] }]);
    assert.deepEqual(matchCard(longOnCard, [{ tag: 'warranty', inputModes: ['text'], outputModes: ['text'] }], vocabulary).satisfied, ['warranty']);
  });

  test('a needed output mode the skill lacks is not satisfied, with a reason naming the tag', () => {
    const c = card([{ id: 'status', tags: ['warranty'], outputModes: ['text/plain'] }]);
    const m = matchCard(c, [textIn('warranty', ['image/png'])], vocabulary);
    assert.deepEqual(m.satisfied, []);
    assert.equal(m.reasons.length, 1);
    assert.match(m.reasons[0]!, /tagged warranty/);
    assert.match(m.reasons[0]!, /image\/png/);
  });

  test('one of several skills with the tag is enough', () => {
    const c = card([
      { id: 'status-text', tags: ['warranty'], outputModes: ['text/plain'] },
      { id: 'status-image', tags: ['warranty'], outputModes: ['image/*'] },
    ]);
    assert.deepEqual(matchCard(c, [textIn('warranty', ['image/png'])], vocabulary).satisfied, ['warranty']);
  });

  test('a mode needed from one skill and a tag from another do not combine', () => {
    // Tag on skill A, the needed output mode only on skill B (untagged): not a match.
    const c = card([
      { id: 'status', tags: ['warranty'], outputModes: ['text/plain'] },
      { id: 'render', tags: ['returns'], outputModes: ['image/png'] },
    ]);
    assert.deepEqual(matchCard(c, [textIn('warranty', ['image/png'])], vocabulary).satisfied, []);
  });

  test('tags outside the vocabulary are ignored and listed (sorted, once) in unknownTags', () => {
    const c = card([
      { id: 'refund', tags: ['refund', 'Warranty', 'warranty'] },
      { id: 'misc', tags: ['zz-misc', 'refund'] },
    ]);
    const m = matchCard(c, [textIn('refund'), textIn('warranty')], vocabulary);
    // `refund` is on the card and needed, but not reviewed: it never matches.
    assert.deepEqual(m.satisfied, ['warranty']);
    assert.deepEqual(m.unknownTags, ['Warranty', 'refund', 'zz-misc']);
  });

  test('a card with only unknown tags satisfies nothing and says why', () => {
    const c = card([{ id: 'refund', tags: ['refund'] }]);
    const m = matchCard(c, [textIn('refund')], vocabulary);
    assert.deepEqual(m.satisfied, []);
    assert.deepEqual(m.unknownTags, ['refund']);
    assert.match(m.reasons.join(' '), /no skill carries a tag of the reviewed vocabulary/);
  });

  test('required streaming refuses a card that does not advertise it, whatever its skills', () => {
    const noStream = card([{ id: 'status', tags: ['warranty'] }], { capabilities: { streaming: false } });
    const absent = card([{ id: 'status', tags: ['warranty'] }], { capabilities: {} });
    for (const c of [noStream, absent]) {
      const m = matchCard(c, [textIn('warranty')], vocabulary, { streaming: true });
      assert.deepEqual(m.satisfied, []);
      assert.match(m.reasons.join(' '), /streaming/);
      // Without the requirement the same card matches.
      assert.deepEqual(matchCard(c, [textIn('warranty')], vocabulary).satisfied, ['warranty']);
    }
    const streams = card([{ id: 'status', tags: ['warranty'] }]);
    assert.deepEqual(matchCard(streams, [textIn('warranty')], vocabulary, { streaming: true }).satisfied, ['warranty']);
  });

  test('required push notifications refuse a card without them', () => {
    const c = card([{ id: 'status', tags: ['warranty'] }]); // pushNotifications: false
    const m = matchCard(c, [textIn('warranty')], vocabulary, { pushNotifications: true });
    assert.deepEqual(m.satisfied, []);
    assert.match(m.reasons.join(' '), /push notifications/);
  });

  test('several needs: satisfied lists the met ones in need order; unmet ones with a tagged skill get a reason', () => {
    const c = card([
      { id: 'bill', tags: ['billing'] },
      { id: 'status', tags: ['warranty'], outputModes: ['text/plain'] },
      { id: 'ret', tags: ['returns'], inputModes: ['text/plain', 'image/*'] },
    ]);
    const needs: Need[] = [
      { tag: 'returns', inputModes: ['image/jpeg'], outputModes: ['text'] },
      textIn('warranty', ['application/json']),
      textIn('billing'),
    ];
    const m = matchCard(c, needs, vocabulary);
    assert.deepEqual(m.satisfied, ['returns', 'billing']);
    assert.equal(m.reasons.length, 1);
    assert.match(m.reasons[0]!, /warranty/);
  });

  test('needs whose tag no skill carries are simply unmet', () => {
    const c = card([{ id: 'status', tags: ['warranty'] }]);
    const m = matchCard(c, [textIn('billing'), textIn('returns')], vocabulary);
    assert.deepEqual(m.satisfied, []);
    assert.match(m.reasons.join(' '), /no need asks for warranty/);
  });

  test('a need without modes is met by the tag alone', () => {
    const c = card([{ id: 'status', tags: ['warranty'], inputModes: ['audio/wav'], outputModes: ['audio/wav'] }]);
    assert.deepEqual(matchCard(c, [{ tag: 'warranty' }], vocabulary).satisfied, ['warranty']);
  });
});

describe('TagVocabulary', () => {
  test('knows exactly its reviewed tags (case-sensitive)', () => {
    assert.deepEqual(vocabulary.tags, ['warranty', 'returns', 'billing']);
    assert.ok(vocabulary.has('warranty'));
    assert.ok(!vocabulary.has('Warranty'));
    assert.equal(vocabulary.get('billing')?.description, 'Answers invoice questions.');
    assert.equal(vocabulary.get('refund'), undefined);
  });
});
