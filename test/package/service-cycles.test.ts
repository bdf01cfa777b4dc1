/**
 * The service's modules import each other in no circle (issue 40): every relative import of every
 * file under packages/service/src/ (`import type`, `export … from` and `import()` included, read
 * with the compiler's own scanner) is an edge between files, and the graph has no strongly
 * connected component of more than one file, nor a file importing itself. And no folder is a
 * flat room of everything: at most 16 modules each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'packages/service/src');

/**
 * Circles known and not yet mended (the files of each, sorted, joined by ` `), with the reason.
 * Each must still exist (the test fails once one is gone): the list only shrinks.
 */
const KNOWN_CIRCLES: Readonly<Record<string, string>> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|cts)$/.test(d.name) && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** File -> the files it imports (paths under src/). */
function importGraph(src: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(src)) {
    const from = relative(src, file);
    const to = new Set<string>();
    for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!ref.fileName.startsWith('.') || ref.fileName.endsWith('.json')) continue;
      to.add(relative(src, resolve(dirname(file), ref.fileName).replace(/\.(m|c)?js$/, '.$1ts')));
    }
    graph.set(from, to);
  }
  return graph;
}

/** The circles of a graph: its strongly connected components of more than one node, and self-loops (Tarjan). */
function circles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v) === true) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

test('the circle finder finds a circle, through type-only imports too', () => {
  const graph = new Map([
    ['a.ts', new Set(['b.ts'])],
    ['b.ts', new Set(['c.ts'])],
    ['c.ts', new Set(['a.ts'])],
    ['d.ts', new Set(['a.ts', 'd.ts'])],
  ]);
  assert.deepEqual(circles(graph), [['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  assert.deepEqual(circles(new Map([['a.ts', new Set(['b.ts'])], ['b.ts', new Set<string>()]])), []);
  // The scanner sees `import type`.
  const refs = ts.preProcessFile("import type { X } from './x.js';\nexport type { Y } from './y.js';", true, true).importedFiles.map((r) => r.fileName);
  assert.deepEqual(refs, ['./x.js', './y.js']);
});

test('no modules under packages/service/src/ import each other in a circle (type-only imports included)', () => {
  const graph = importGraph(SRC);
  assert.ok(graph.size > 50, `read ${graph.size} files under ${SRC}`);
  const found = circles(graph).map((c) => c.join(' '));
  assert.deepEqual(found.filter((c) => KNOWN_CIRCLES[c] === undefined), [], 'modules that import each other (each line is one circle)');
  assert.deepEqual(Object.keys(KNOWN_CIRCLES).filter((c) => !found.includes(c)), [], 'mended: remove these from KNOWN_CIRCLES');
});

test('no folder under packages/service/src/ holds more than 16 modules: the folders show the architecture', () => {
  const crowded = (dir: string): string[] => {
    const entries = readdirSync(dir, { withFileTypes: true });
    const modules = entries.filter((d) => d.isFile() && d.name.endsWith('.ts')).length;
    const own = modules > 16 ? [`${relative(SRC, dir) || '.'}: ${modules}`] : [];
    return [...own, ...entries.filter((d) => d.isDirectory()).flatMap((d) => crowded(join(dir, d.name)))];
  };
  assert.deepEqual(crowded(SRC), [], 'split the folder by job');
});
