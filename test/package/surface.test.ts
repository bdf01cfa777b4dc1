/**
 * The root entry stays a user's API: the names `a2a-discovery` exports (values and types, as the
 * built declarations list them) stay under 150. Helpers the store and service share belong in
 * `a2a-discovery/internal`; names nothing outside the core uses are not exported.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import ts from 'typescript';
import { assertDistFresh } from '../helpers/dist.js';

before(assertDistFresh);

const MAX_ROOT_NAMES = 150;

function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  assert.ok(source, entry);
  const symbol = checker.getSymbolAtLocation(source);
  assert.ok(symbol, `${entry} is a module`);
  return checker.getExportsOfModule(symbol).map((s) => s.name);
}

test(`the root entry a2a-discovery exports fewer than ${MAX_ROOT_NAMES} names`, () => {
  const names = exportedNames(new URL('../../packages/core/dist/index.d.ts', import.meta.url).pathname);
  assert.ok(names.length > 50, `the count reads the built declarations (${names.length} names)`);
  assert.ok(names.length < MAX_ROOT_NAMES, `${names.length} names: move sibling-only helpers to a2a-discovery/internal`);
  for (const internal of ['deepFreeze', 'occurrences', 'isInlineCardKey', 'withSpan', 'ATTR', 'failureOf', 'inlineCardKey', 'DISCOVERY_CHANNEL']) {
    assert.equal(names.includes(internal), false, `${internal} is not public`);
  }
});

test('the internal entry holds what the store and service share, and none of it is public', () => {
  const root = new Set(exportedNames(new URL('../../packages/core/dist/index.d.ts', import.meta.url).pathname));
  const internal = exportedNames(new URL('../../packages/core/dist/internal.d.ts', import.meta.url).pathname);
  assert.ok(internal.includes('deepFreeze') && internal.includes('withSpan'), internal.join(', '));
  assert.deepEqual(internal.filter((n) => root.has(n)), []);
});
