/**
 * The workspace's lodash-es is vendor/lodash-es (docs/dependencies.md): every name lodash-es
 * exports, read from lodash's single CommonJS file. ADK must get lodash's own functions for every
 * name it imports, and load lodash-es as one module.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lodashEs from 'lodash-es';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The lodash the stand-in reads, resolved from its folder as it resolves it. */
const LODASH = 'lodash';
const lodash = createRequire(join(root, 'vendor/lodash-es/lodash.js'))(LODASH) as Record<string, unknown>;

/** The names ADK's ES build imports from lodash-es (`import { a, b } from "lodash-es"`). */
function namesAdkImports(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.isDirectory()) walk(path);
      else if (d.name.endsWith('.js')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/import\s*\{([^}]*)\}\s*from\s*["']lodash-es["']/g)) {
          for (const part of m[1]!.split(',')) {
            const name = part.trim().split(/\s+as\s+/)[0]!;
            if (name !== '') names.add(name);
          }
        }
      }
    }
  };
  walk(join(root, 'node_modules/@google/adk/dist/esm'));
  return names;
}

test("lodash-es resolves to the workspace's one-file stand-in, whose exports are lodash's own functions", () => {
  assert.equal(realpathSync(fileURLToPath(import.meta.resolve('lodash-es'))), join(root, 'vendor/lodash-es/lodash.js'));
  const exported = lodashEs as unknown as Record<string, unknown>;
  assert.equal(exported['default'], lodash, 'the default export is lodash');
  let functions = 0;
  for (const [name, value] of Object.entries(exported)) {
    if (name === 'default' || name === 'VERSION' || name === 'templateSettings') continue;
    assert.equal(typeof value, 'function', `${name} is a function`);
    const own = lodash[name] ?? (lodash['prototype'] as Record<string, unknown>)[name.replace(/^wrapper/, '').replace(/^./, (c) => c.toLowerCase())];
    if (own !== undefined) assert.equal(value, own, `${name} is lodash's`);
    functions++;
  }
  assert.ok(functions > 300, `lodash-es's whole surface (${functions} functions)`);
});

test('every name ADK imports from lodash-es is there, and behaves as lodash', async () => {
  const wanted = namesAdkImports();
  assert.ok(wanted.has('cloneDeep') && wanted.has('isEqual'), `ADK's imports were found: ${[...wanted].join(', ')}`);
  const exported = lodashEs as unknown as Record<string, unknown>;
  for (const name of wanted) assert.equal(exported[name], lodash[name], `ADK imports ${name}`);
  const original = { a: [1, { b: new Date(0) }], m: new Map([['k', { v: 1 }]]) };
  const copy = lodashEs.cloneDeep(original);
  assert.notEqual(copy.a[1], original.a[1], 'cloneDeep copies deeply');
  assert.ok(lodashEs.isEqual(copy, original), 'isEqual compares deeply');
  assert.equal(lodashEs.isEqual({ a: [1] }, { a: [2] }), false);
  assert.equal(lodashEs.isEmpty({}), true);
  // ADK itself loads with it: its tools and agents are built.
  const adk = await import('@google/adk');
  assert.equal(typeof adk.LlmAgent, 'function');
});
