#!/usr/bin/env node
// @ts-check
/**
 * `npm test`'s runner (after `pretest`: the test dependencies and the build): node's test runner
 * over every `test/**\/*.test.ts`, or the files given (`npm test -- test/cache/card-cache.test.ts`),
 * from source through tsx, with the repository's reporter (test/helpers/reporter.mjs).
 *
 * - **Concurrency**: `A2A_TEST_CONCURRENCY`, default as many files at a time as the machine has
 *   cores (at least two). Each file starts its own servers on ports the OS picks, its own
 *   PostgreSQL and its own DNS servers, so files never share state. On two cores, three at a time
 *   ran a third of the suite 11 % faster but the whole suite no faster (10 min 59 s against
 *   10 min 58 s: the slowest files then ran 40–50 % longer), so the default stays at the cores
 *   (docs/benchmarks.md, "Issue 43: the suite" and "… the suite's own overhead").
 * - **Order**: the slowest files first (the list below, from the reporter's "slowest files" of a
 *   whole run), then the rest by path, so no long file starts last and runs alone at the end.
 * - **The loader**: every test process runs the TypeScript through test/helpers/ts-loader.mjs, a
 *   loader that does less per module than tsx on Node 20's hooks thread (7–14 % less CPU);
 *   `A2A_TEST_LOADER=tsx` runs it through tsx.
 * - **The harness's promise tracking**: every test process loads test/helpers/lean-harness.mjs,
 *   which keeps node's harness from tracking each promise (11–16 % of the suite's CPU; an
 *   unhandled rejection still fails the run, charged to its file: see there).
 *
 * The exit code is the test runner's.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The slowest files of a whole run, slowest first (docs/benchmarks.md, "Issue 43: the suite's loader, …"). */
const SLOW_FIRST = [
  'test/web/explorer.test.ts',
  'test/loop/chaos.test.ts',
  'test/demo/demo.test.ts',
  'test/cli/backup.test.ts',
  'test/web/a11y.test.ts',
  'test/interop/frameworks.test.ts',
  'test/interop/servers.test.ts',
  'test/web/dashboard.test.ts',
  'test/replicas/rolling-upgrade.test.ts',
  'test/docs/examples.test.ts',
];

/** @param {string} dir @returns {string[]} */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const given = process.argv.slice(2);
const all = given.length > 0 ? given : testFiles(join(root, 'test')).sort();
const files = [...SLOW_FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !SLOW_FIRST.includes(f))];
const concurrency = Number(process.env['A2A_TEST_CONCURRENCY'] ?? Math.max(2, availableParallelism()));
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`A2A_TEST_CONCURRENCY must be a whole number of files at a time, 1 or more: ${process.env['A2A_TEST_CONCURRENCY']}`);
  process.exit(2);
}

/** The TypeScript loader: the repository's own (test/helpers/ts-loader.mjs says why), or tsx with `A2A_TEST_LOADER=tsx`. */
const loaderChoice = process.env['A2A_TEST_LOADER'];
if (loaderChoice !== undefined && loaderChoice !== 'tsx' && loaderChoice !== 'ts-loader') {
  console.error(`A2A_TEST_LOADER must be tsx or ts-loader (the default): ${loaderChoice}`);
  process.exit(2);
}
const loader = loaderChoice === 'tsx' ? 'tsx' : pathToFileURL(join(root, 'test/helpers/ts-loader.mjs')).href;

const child = spawn(
  process.execPath,
  ['--import', loader, '--import', pathToFileURL(join(root, 'test/helpers/lean-harness.mjs')).href, '--test', `--test-concurrency=${concurrency}`, '--test-reporter=./test/helpers/reporter.mjs', '--test-reporter-destination=stdout', ...files],
  { cwd: root, stdio: 'inherit' },
);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
