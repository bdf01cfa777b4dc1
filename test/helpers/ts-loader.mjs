// @ts-check
/**
 * The TypeScript loader of `npm test`'s processes (scripts/run-tests.mjs loads it into every test
 * file's process, in place of tsx): runs the sources and the tests from TypeScript, with the root
 * tsconfig's `paths` (the package names reach the packages' `src/`), as `--import tsx` does.
 *
 * Why not tsx there: on Node 20 every loader hook runs on a separate thread, and each module's
 * resolution and loading is a round trip to it. The service's 1,510 modules took 2.5 s of CPU to
 * load through tsx against 1.35 s without hooks; through this loader they take 2.0 s. It does
 * less per module (test/helpers/ts-loader-hooks.mjs):
 * - only a `.ts` file is transformed (esbuild, the version tsx runs, cached on disk by content);
 * - a relative `.js` import of a file of this repository that is a `.ts` file resolves to it, and
 *   a package name the tsconfig's `paths` map resolves to its source; every other specifier is
 *   node's own resolution;
 * - an ES module node resolved (most of node_modules) is read synchronously, once, instead of
 *   through node's asynchronous file reads on the hooks thread.
 * On 37 files of test/server, two at a time: 135 → 115 s of CPU, 91 → 82 s (docs/benchmarks.md,
 * "Issue 43: the suite's loader").
 *
 * What it does not do that tsx does: CommonJS `.ts` files (`require` of TypeScript), `.tsx`,
 * `.mts`/`.cts`, and specifiers without an extension; the repository has none of them (tsc's
 * NodeNext resolution refuses the last). Source maps are inline and enabled, so a stack trace
 * names the `.ts` line. `A2A_TEST_LOADER=tsx npm test` runs the suite through tsx instead.
 *
 * The cache is `$TMPDIR/a2a-discovery-ts-<uid>/` (`A2A_TEST_TS_CACHE` names another directory):
 * one file per source text (and esbuild version and options), written atomically, so concurrent
 * test processes share it; a failed write only costs the next process a transform. Like tsx's, it
 * is never pruned: delete it at will.
 */
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const rootUrl = new URL('../../', import.meta.url).href;

/**
 * A tsconfig file's JSON: its lines that are only a `//` comment are dropped (the root tsconfig's
 * comments are such lines); anything else that is not JSON is an error that names the file.
 * @param {string} name
 * @returns {{ extends?: string, compilerOptions?: Record<string, unknown> }}
 */
function tsconfig(name) {
  const path = fileURLToPath(new URL(name, rootUrl));
  const text = readFileSync(path, 'utf8').replace(/^\s*\/\/.*$/gm, '');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`test/helpers/ts-loader.mjs reads ${path} as JSON with whole-line // comments only: ${/** @type {Error} */ (err).message}`, { cause: err });
  }
}

const root = tsconfig('tsconfig.json');
const base = root.extends ? tsconfig(root.extends) : {};
const options = { ...base.compilerOptions, ...root.compilerOptions };
/** The compiler options that change esbuild's output (tsx passes the same). */
const EMIT_OPTIONS = ['target', 'verbatimModuleSyntax', 'useDefineForClassFields', 'experimentalDecorators', 'emitDecoratorMetadata', 'preserveValueImports', 'importsNotUsedAsValues', 'jsx'];
const emit = Object.fromEntries(EMIT_OPTIONS.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));

process.setSourceMapsEnabled(true);
register(new URL('./ts-loader-hooks.mjs', import.meta.url), {
  data: {
    rootUrl,
    paths: options['paths'] ?? {},
    compilerOptions: emit,
    cacheDir: process.env['A2A_TEST_TS_CACHE'] || join(tmpdir(), `a2a-discovery-ts-${process.getuid?.() ?? 'user'}`),
  },
});
