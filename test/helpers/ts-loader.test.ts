/**
 * The test processes' TypeScript loader (test/helpers/ts-loader.mjs): what the suite relies on
 * from it, checked in processes of its own on files written under .tmp/ (inside the repository,
 * where its `.js`-to-`.ts` resolution applies).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const LOADER = new URL('./ts-loader.mjs', import.meta.url).href;
const dir = join(root, '.tmp', `ts-loader-${process.pid}`);
/** A cache of these processes' own: the suite's other files fill the shared one meanwhile. */
const cacheDir = join(dir, 'cache');

function run(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', LOADER, file], { cwd: root, env: { ...process.env, A2A_TEST_TS_CACHE: cacheDir }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, stdout, stderr });
    });
  });
}

before(() => mkdirSync(dir, { recursive: true }));
after(() => rmSync(dir, { recursive: true, force: true }));

test("package names reach the packages' sources, a relative .js import its .ts file, and node_modules stays node's", async () => {
  writeFileSync(join(dir, 'helper.ts'), 'export const answer: number = 42;\n');
  writeFileSync(
    join(dir, 'main.ts'),
    [
      "import { answer } from './helper.js';",
      "import { HostPolicy } from 'a2a-discovery';",
      "import { TreeFactory } from 'a2a-discovery/adk';",
      "import { Hono } from 'hono';",
      'console.log(JSON.stringify({',
      '  answer,',
      "  core: import.meta.resolve('a2a-discovery'),",
      "  adk: import.meta.resolve('a2a-discovery/adk'),",
      "  store: import.meta.resolve('@a2a-discovery/store'),",
      "  hono: import.meta.resolve('hono'),",
      "  kinds: [typeof HostPolicy.from, typeof TreeFactory, typeof new Hono().get],",
      '}));',
    ].join('\n'),
  );
  const { code, stdout, stderr } = await run(join(dir, 'main.ts'));
  assert.equal(code, 0, stderr);
  const out = JSON.parse(stdout) as Record<string, unknown>;
  assert.equal(out.answer, 42);
  assert.equal(out.core, new URL('packages/core/src/index.ts', `file://${root}`).href);
  assert.equal(out.adk, new URL('packages/core/src/adk/index.ts', `file://${root}`).href);
  assert.equal(out.store, new URL('packages/store/src/index.ts', `file://${root}`).href);
  assert.match(String(out.hono), /\/node_modules\/hono\/dist\/index\.js$/);
  assert.deepEqual(out.kinds, ['function', 'function', 'function']);
});

test("imports are kept or erased as tsc's verbatimModuleSyntax says, and a stack trace names the .ts line", async () => {
  writeFileSync(join(dir, 'only-types.ts'), "throw new Error('a type-only import loaded this module');\nexport interface Shape { readonly side: number }\n");
  writeFileSync(join(dir, 'side-effect.ts'), "console.log('side effect');\nexport const unused = 1;\n");
  writeFileSync(
    join(dir, 'throws.ts'),
    [
      "import type { Shape } from './only-types.js';",
      "import { unused } from './side-effect.js';",
      'interface Local {',
      '  readonly name: string;',
      '}',
      'class Box implements Local {',
      "  readonly name = 'box';",
      '  declare shape?: Shape;',
      '}',
      'console.log(JSON.stringify(Object.keys(new Box())));',
      'export function fail(): never {',
      "  throw new Error('at line twelve');",
      '}',
      'fail();',
    ].join('\n'),
  );
  const { code, stdout, stderr } = await run(join(dir, 'throws.ts'));
  assert.equal(code, 1);
  // An unused value import still runs its module (esbuild's default would drop it); a type-only one never does.
  assert.equal(stdout.trim(), 'side effect\n["name"]');
  assert.doesNotMatch(stderr, /type-only import/);
  assert.match(stderr, /Error: at line twelve/);
  assert.match(stderr, new RegExp(`${join(dir, 'throws.ts').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:12:9`), stderr);
});

test('a source changed since it was cached runs as it is now', async () => {
  const file = join(dir, 'changing.ts');
  const cachedBefore = new Set(existsSync(cacheDir) ? readdirSync(cacheDir) : []);
  writeFileSync(file, `const version: string = 'one ${process.pid}';\nconsole.log(version);\n`);
  assert.equal((await run(file)).stdout.trim(), `one ${process.pid}`);
  const written = readdirSync(cacheDir).filter((f) => !cachedBefore.has(f));
  assert.equal(written.length, 1, 'one cached transform for the new text');
  assert.equal((await run(file)).stdout.trim(), `one ${process.pid}`, 'and it is read back');
  writeFileSync(file, `const version: string = 'two ${process.pid}';\nconsole.log(version);\n`);
  assert.equal((await run(file)).stdout.trim(), `two ${process.pid}`);
});
