/**
 * A command line that answers at once (issue 43): `--version`, the root `--help` and a mistyped
 * command load the CLI's entry, commander and the command table, and nothing else: not the
 * library, the service, ADK, the store drivers or OpenTelemetry. A command loads its own module
 * only when it runs. What each start loads is read from a module-loader hook in the CLI's own
 * process (no timing here: the CPU it costs is measured by `npm run bench:cli`,
 * docs/benchmarks.md). The root help lists every command with the term and description its real
 * registration gives, so listing them without loading them says nothing untrue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { buildProgram } from '../../packages/service/src/cli/main.js';
import { COMMANDS } from '../../packages/service/src/cli/flags.js';
import { CLI } from '../helpers/cli.js';
import { LOADS_HOOK, loadedFiles, VOCABULARY_MODULES, withoutLoads } from '../helpers/module-loads.js';


/** The files a CLI run loads (node_modules packages by name, our own by path under the repository), with its output. */
function loads(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string; files: string[]; packages: Set<string> }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', LOADS_HOOK, ...CLI, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      const files = loadedFiles(stderr);
      const packages = new Set(files.flatMap((f) => (f.includes('/node_modules/') ? [/\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]!] : [])));
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, stdout, stderr: withoutLoads(stderr), files, packages });
    });
  });
}

/** Run from source (helpers/cli.ts, after an edit without a build), tsx and its own dependencies load too: they are the runner, not the CLI. */
const RUNNER: ReadonlySet<string> = new Set(CLI[0]!.endsWith('.js') ? [] : ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps']);

/** Our own modules a run loaded, outside node_modules, as paths under packages/. */
function ours(files: readonly string[]): string[] {
  return files.filter((f) => !f.includes('/node_modules/') && f.includes('/packages/')).map((f) => f.slice(f.indexOf('/packages/') + 1));
}

for (const args of [['--version'], ['--help'], ['prbe']]) {
  test(`a2a-discovery ${args.join(' ')} loads the entry, commander and the command table, nothing else`, async () => {
    const run = await loads(args);
    if (args[0] === '--version') assert.match(run.stdout, /^\d+\.\d+\.\d+/);
    if (args[0] === '--help') assert.match(run.stdout, /^Commands:$/m);
    if (args[0] === 'prbe') {
      assert.equal(run.code, 2);
      assert.match(run.stderr, /unknown command 'prbe'.*\n.*Did you mean probe\?|unknown command 'prbe'/s);
    }
    assert.deepEqual([...run.packages].filter((p) => !RUNNER.has(p)), ['commander'], 'no package but commander');
    const own = ours(run.files).map((f) => f.replace(/\.(ts|js)$/, ''));
    assert.deepEqual(own.sort(), ['packages/service/src/cli/flags', 'packages/service/src/cli/main', 'packages/service/src/version'].map((f) => (CLI[0]!.endsWith('.js') ? f.replace('/src/', '/dist/') : f)).sort());
  });
}

/** The modules of the library a command's declaration may load: the vocabulary entry and the plain tables it re-exports. */
const VOCABULARY = VOCABULARY_MODULES.map((f) => `packages/core/${CLI[0]!.endsWith('.js') ? 'dist' : 'src'}/${f}`);

for (const name of Object.keys(COMMANDS)) {
  test(`a2a-discovery ${name} --help loads commander, the entry and the command's declaration, nothing of what the command does`, async () => {
    const run = await loads([name, '--help']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^Usage: a2a-discovery ${name} `));
    assert.deepEqual([...run.packages].filter((p) => !RUNNER.has(p)), ['commander'], 'no package but commander');
    const own = ours(run.files).map((f) => f.replace(/\.(ts|js)$/, ''));
    const cli = own.filter((f) => f.includes('/cli/')).map((f) => f.replace(/^.*\/cli\//, ''));
    assert.equal(cli.filter((f) => f.startsWith('commands/')).length, 1, `one declaration: ${cli.join(', ')}`);
    assert.deepEqual(cli.filter((f) => !f.startsWith('commands/')).sort(), ['flags', 'main'], `no command's run module: ${cli.join(', ')}`);
    const rest = own.filter((f) => !f.includes('/cli/') && !f.endsWith('/version'));
    assert.deepEqual(rest.filter((f) => !VOCABULARY.includes(f)), [], 'of the library, only the vocabulary tables');
  });
}

test('the root help lists each command with the term and description its real registration gives', async () => {
  const program = await buildProgram({ out: () => {}, err: () => {} });
  const help = program.createHelp();
  assert.deepEqual(
    program.commands.map((c) => [c.name(), help.subcommandTerm(c), c.description()]),
    Object.entries(COMMANDS).map(([name, c]) => [name, c.term, c.description]),
  );
  // And the listing main prints from the table reads as commander would print the real commands.
  const real = program.helpInformation();
  const listed = (await loads(['--help'])).stdout;
  assert.equal(listed, real);
});
