/**
 * The library's layers, by the design's rule "a stage never imports a stage above it, and no two
 * modules import each other": every import under packages/core/src/ (`import type`, `export … from`
 * and `import()` included) goes to its own folder, a folder of its layer or one below, and no
 * folders import each other in a circle. Across packages, one direction too: the library imports
 * neither the store engines nor the service, and the store engines never import the service.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Bottom first. A unit is a folder under src/ or a file directly in it (`errors` is src/errors.ts,
 * `index` the library's root entry). Within one layer, imports are allowed but may not form a circle.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'text', 'version', 'local-name', 'rules', 'clock', 'telemetry', 'events'],
  ['card', 'fetch', 'auth', 'config', 'catalog', 'ard'],
  ['sources', 'cache', 'health', 'registry'],
  ['resolve', 'probe'],
  // The matcher comes after the resolver in the data flow: a selection names its admitted endpoint.
  ['match'],
  // A rollout stages snapshots and judges them on the health figures of real calls.
  ['snapshot', 'rollout', 'explorer'],
  ['loop', 'adk', 'routing'],
  // The entries: the public root, the sibling packages' internal one beside it, and the vocabulary's plain tables.
  ['index', 'internal', 'vocabulary'],
];

/**
 * Upward imports known and not yet mended, `<file> -> <file>` (paths under src/) with the reason.
 * Each must still exist (the test fails once one is gone): the list only shrinks.
 */
const KNOWN_UPWARD: Readonly<Record<string, string>> = {};

const HERE = fileURLToPath(import.meta.url);
const ROOT = resolve(dirname(HERE), '../..');
const SRC = join(ROOT, 'packages/core/src');

interface Import {
  from: string;
  to: string;
  line: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|cts)$/.test(d.name) && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import of every file under src/, as paths under src/ (the `.js` of NodeNext specifiers read as `.ts`). */
function imports(): Import[] {
  const out: Import[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    // The compiler's own import scanner: static and type-only imports, re-exports, import() and import('…') types.
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue; // a package
      if (ref.fileName.endsWith('.json')) continue; // data (package.json), not a module of a layer
      const target = resolve(dirname(file), ref.fileName).replace(/\.(m|c)?js$/, '.$1ts');
      out.push({ from: relative(SRC, file), to: relative(SRC, target), line: text.slice(0, ref.pos).split('\n').length });
    }
  }
  return out;
}

/** The unit of a path under src/: its first folder, or the file's name without extension. */
function unitOf(path: string): string {
  const parts = path.split(sep);
  return parts.length === 1 ? parts[0]!.replace(/\.[cm]?tsx?$/, '') : parts[0]!;
}

const layerOf = new Map(LAYERS.flatMap((units, i) => units.map((u) => [u, i] as const)));

test('every folder and top-level file under src/ has a layer', () => {
  const units = new Set(sourceFiles(SRC).map((f) => unitOf(relative(SRC, f))));
  const missing = [...units].filter((u) => !layerOf.has(u));
  assert.deepEqual(missing, [], `add these to LAYERS in ${relative(process.cwd(), HERE)}`);
});

test('no import under src/ goes to a higher layer (type-only imports included)', () => {
  const all = imports();
  const upward: string[] = [];
  const seen = new Set<string>();
  for (const i of all) {
    if (i.to.startsWith('..')) {
      upward.push(`${i.from}:${i.line} imports ${i.to}, outside src/`);
      continue;
    }
    const from = layerOf.get(unitOf(i.from));
    const to = layerOf.get(unitOf(i.to));
    if (from === undefined || to === undefined || to <= from) continue;
    const key = `${i.from} -> ${i.to}`;
    seen.add(key);
    if (KNOWN_UPWARD[key] === undefined) upward.push(`${i.from}:${i.line} (${unitOf(i.from)}, layer ${from}) imports ${i.to} (${unitOf(i.to)}, layer ${to})`);
  }
  assert.deepEqual(upward, [], 'a module imports one above its layer');
  const mended = Object.keys(KNOWN_UPWARD).filter((k) => !seen.has(k));
  assert.deepEqual(mended, [], 'mended: remove these from KNOWN_UPWARD');
});

test('the folders under src/ import each other in no circle', () => {
  const edges = new Map<string, Map<string, string>>();
  for (const i of imports()) {
    const a = unitOf(i.from);
    const b = unitOf(i.to);
    if (a === b || i.to.startsWith('..')) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${i.from}:${i.line}`);
  }
  // Depth-first search; a back edge closes a circle, reported with the import that makes each step.
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (u: string): void => {
    state.set(u, 'open');
    path.push(u);
    for (const v of edges.get(u)?.keys() ?? []) {
      if (state.get(v) === 'open') {
        const loop = [...path.slice(path.indexOf(v)), v];
        circles.push(loop.slice(0, -1).map((x, k) => `${x} -> ${loop[k + 1]} (${edges.get(x)!.get(loop[k + 1]!)})`).join(', '));
      } else if (state.get(v) === undefined) visit(v);
    }
    path.pop();
    state.set(u, 'done');
  };
  for (const u of [...edges.keys()].sort()) if (state.get(u) === undefined) visit(u);
  assert.deepEqual(circles, [], 'folders that import each other');
});

/** Every package a package's sources import by name (`a2a-discovery/adk` counts as `a2a-discovery`). */
function packagesImported(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sourceFiles(dir)) {
    for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const spec = ref.fileName;
      if (spec.startsWith('.') || spec.startsWith('node:')) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (!found.has(name)) found.set(name, relative(ROOT, file));
    }
  }
  return found;
}

test('the packages import one way: library <- store engines <- service', () => {
  const library = packagesImported(SRC);
  const store = packagesImported(join(ROOT, 'packages/store/src'));
  for (const name of ['@a2a-discovery/store', '@a2a-discovery/service']) assert.equal(library.get(name), undefined, `the library imports ${name}`);
  assert.equal(store.get('@a2a-discovery/service'), undefined, 'the store engines import the service');
  assert.ok(store.has('a2a-discovery'), 'the store engines build on the library by its name');
  // Every package a workspace's sources import is one its package.json declares.
  for (const dir of ['core', 'store', 'service']) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const declared = new Set([manifest.name as unknown as string, ...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const undeclared = [...packagesImported(join(ROOT, 'packages', dir, 'src'))].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    assert.deepEqual(undeclared, [], `packages/${dir} imports packages its package.json does not declare`);
  }
});
