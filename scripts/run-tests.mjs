#!/usr/bin/env node
// @ts-check
/**
 * `npm test`'s runner (after `pretest`: the test dependencies and the build): node's test runner
 * over every `test/**\/*.test.ts`, or the files given (`npm test -- test/cache/card-cache.test.ts`),
 * from source through tsx, with the repository's reporter (test/helpers/reporter.mjs).
 *
 * - **Concurrency**: `A2A_TEST_CONCURRENCY`, default as many test processes at a time as the
 *   machine has cores (at least two). Each file starts its own servers on ports the OS picks, its
 *   own PostgreSQL and its own DNS servers, so files never share a server or a database. On two
 *   cores, three at a time ran the suite no faster (10 min 59 s against 10 min 58 s, and 11 min 42 s
 *   against 11 min 58 s on 2026-12-07, for 5 % more CPU), so the default stays at the cores
 *   (docs/benchmarks.md, "Issue 43: the suite" and "… the suite on a quiet host").
 * - **Several files in one process**: the files of a folder run in groups of up to
 *   `A2A_TEST_GROUP_SIZE` (default 32, so most folders are one process; 1: every file in its own
 *   process, as `node --test` runs them), one process per group. Each file's tests and hooks run
 *   inside a suite named by its path, one file after the other (the next file is imported once
 *   the last one's tests and hooks have run), so within a file nothing changes; the reporter names
 *   the files, not the processes. What
 *   it spares: each process loads the sources, ADK and the drivers once (2–3 s of CPU for a file
 *   that loads the service), where half the files loaded them each. Files that must have a
 *   process of their own run alone (`ALONE` below: the slowest, the harness's and the packages'
 *   own tests, telemetry's process-wide providers, event-loop and memory measures, and files that
 *   change the environment or the process's listeners).
 * - **Order**: the slowest files first (the list below, from the reporter's "slowest files" of a
 *   whole run), then the groups, then the other files that run alone, so no long file starts last
 *   and runs alone at the end.
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
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** test/helpers/lean-harness.mjs, loaded into every test process (see above). */
const leanHarness = pathToFileURL(join(root, 'test/helpers/lean-harness.mjs')).href;

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

/**
 * Files that run in a process of their own even when files are grouped: the slowest (they start
 * first, each beside the rest), the harness's and the packages' own tests, telemetry (process-wide
 * providers), files that measure the event loop or memory of their process, and files that change
 * the process's environment, its global providers or its listeners.
 */
const ALONE_DIRS = ['test/helpers/', 'test/package/', 'test/docs/', 'test/telemetry/'];
const ALONE_NAMES = /event-loop|memory|heap/;
const ALONE = new Set([
  ...SLOW_FIRST,
  'test/adk/remote/policy-fetch.test.ts',
  'test/fetch/card-fetcher.test.ts',
  'test/sources/google-agent-registry.test.ts',
  'test/sources/dns-source.test.ts',
  'test/loop/revalidation-reuse.test.ts',
  'test/web/trace-links.test.ts',
  'test/server/hardening.test.ts',
]);

/** @param {string} file */
const runsAlone = (file) => ALONE.has(file) || ALONE_DIRS.some((d) => file.startsWith(d)) || ALONE_NAMES.test(file);

/**
 * The processes to run: the files that run alone, and the others in groups of up to `size` files
 * of one folder, each group one process whose entry (a `.group.mjs` file in `dir`) imports its
 * files one after the other, each inside a suite named by its path (its hooks and tests run
 * within it, as in a process of its own; test/helpers/reporter.mjs reads the suites as files).
 * @param {string[]} files in the order to start them
 * @param {number} size
 * @param {() => string} dir the folder for the entries, made on first use
 * @returns {string[]}
 */
function processes(files, size, dir) {
  if (size <= 1) return files;
  /** @type {Map<string, string[]>} */
  const byFolder = new Map();
  const alone = [];
  for (const f of files) {
    if (runsAlone(f)) alone.push(f);
    else byFolder.set(dirname(f), [...(byFolder.get(dirname(f)) ?? []), f]);
  }
  const groups = [];
  for (const [folder, members] of byFolder) {
    // As few processes as the bound allows, of even sizes (35 files at 32: 18 and 17, not 32 and 3).
    const per = Math.ceil(members.length / Math.ceil(members.length / size));
    for (let i = 0; i < members.length; i += per) {
      const chunk = members.slice(i, i + per);
      if (chunk.length === 1) {
        groups.push(/** @type {string} */ (chunk[0]));
        continue;
      }
      const entry = join(dir(), `${folder.replace(/[^\w]+/g, '-')}-${i / per + 1}.group.mjs`);
      const suites = chunk.map((f) => `describe(${JSON.stringify(f)}, member(${JSON.stringify(pathToFileURL(resolve(root, f)).href)}));`);
      writeFileSync(entry, `${GROUP_PRELUDE}${suites.join('\n')}\n`);
      groups.push(entry);
    }
  }
  // The slowest first (they run alone), then the groups, then the other files that run alone.
  return [...alone.filter((f) => SLOW_FIRST.includes(f)), ...groups, ...alone.filter((f) => !SLOW_FIRST.includes(f))];
}

/**
 * A group entry's first lines. `member(url)` is the suite of one test file: it imports the file once
 * the file before it has finished (its tests and hooks run, so no two files of a group overlap, as
 * in processes of their own), and counts the imports in progress for test/helpers/lean-harness.mjs
 * (promises are tracked while one is, so the tests and hooks the file declares land in its suite).
 * The file's end is an \`after\` hook declared last in its suite, while it is being imported.
 */
const GROUP_PRELUDE = `import { AsyncResource } from 'node:async_hooks';
import { after, describe } from 'node:test';
import { IMPORTING } from ${JSON.stringify(leanHarness)};
let previous = Promise.resolve();
const member = (url) => {
  let finished;
  const done = new Promise((resolve) => (finished = resolve));
  const prior = previous;
  previous = done;
  return () => {
    // Made in the suite's scope (node's harness maps it to the suite): the import runs in it.
    const scope = new AsyncResource('a2a-discovery.test-file');
    return prior.then(() =>
      scope.runInAsyncScope(async () => {
        globalThis[IMPORTING] = (globalThis[IMPORTING] ?? 0) + 1;
        try {
          await import(url);
          after(() => finished());
        } catch (err) {
          finished();
          throw err;
        } finally {
          globalThis[IMPORTING] -= 1;
        }
      }),
    );
  };
};
`;

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

const groupSize = Number(process.env['A2A_TEST_GROUP_SIZE'] ?? 32);
if (!Number.isInteger(groupSize) || groupSize < 1) {
  console.error(`A2A_TEST_GROUP_SIZE must be a whole number of files per process, 1 or more: ${process.env['A2A_TEST_GROUP_SIZE']}`);
  process.exit(2);
}
/** @type {string | undefined} where the group entries are written (made when a group is) */
let groupDir;
const entriesDir = () => (groupDir ??= mkdtempSync(join(tmpdir(), 'a2a-discovery-test-groups-')));
const removeGroups = () => {
  if (groupDir !== undefined) rmSync(groupDir, { recursive: true, force: true });
};

const child = spawn(
  process.execPath,
  ['--import', loader, '--import', leanHarness, '--test', `--test-concurrency=${concurrency}`, '--test-reporter=./test/helpers/reporter.mjs', '--test-reporter-destination=stdout', ...processes(files, groupSize, entriesDir)],
  { cwd: root, stdio: 'inherit' },
);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  removeGroups();
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
