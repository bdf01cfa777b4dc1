import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalMode, effectiveModes, modesCover } from '../../packages/core/src/card/index.js';

test('short forms published by ADK compare equal to their media types', () => {
  assert.equal(canonicalMode('text'), 'text/plain');
  assert.equal(canonicalMode('Text/Plain; charset=utf-8'), 'text/plain');
  assert.equal(canonicalMode('data'), 'application/json');
  assert.equal(canonicalMode('json'), 'application/json');
  assert.equal(canonicalMode('image'), 'image/*');
  assert.equal(canonicalMode('application/vnd.a2a+json'), 'application/vnd.a2a+json');
  assert.equal(canonicalMode('plain text'), undefined);
  assert.equal(canonicalMode('text/'), undefined);
});

test('modesCover compares canonical types, with wildcards both ways', () => {
  assert.equal(modesCover(['text'], ['text/plain']), true);
  assert.equal(modesCover(['text/plain'], ['text']), true);
  assert.equal(modesCover(['text/plain'], ['text/plain', 'application/json']), false);
  assert.equal(modesCover(['image/*'], ['image/png']), true);
  assert.equal(modesCover(['image/png'], ['image']), true);
  assert.equal(modesCover(['*/*'], ['audio/ogg']), true);
  assert.equal(modesCover(['text/plain'], ['nonsense']), false, 'an unknown needed mode never matches');
  assert.equal(modesCover(['text/plain'], []), true);
});

test('a skill without modes inherits the card defaults', () => {
  assert.deepEqual(effectiveModes(undefined, ['text']), ['text']);
  assert.deepEqual(effectiveModes([], ['text']), ['text']);
  assert.deepEqual(effectiveModes(['image/png'], ['text']), ['image/png']);
});
