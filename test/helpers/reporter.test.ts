/**
 * The test command's reporter (test/helpers/reporter.mjs), run as `npm test` runs it: node's test
 * runner in a child process over small test files, its output read as CI reads it (tap: stdout is
 * not a terminal). What a person relies on: node's own output and summary stay as they were, and
 * the last lines say the counts, what was skipped and why, the slowest files, how many known
 * third-party warnings were hidden, and what failed, by file and name.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const REPORTER = new URL('./reporter.mjs', import.meta.url).pathname;

/** ADK 2.0.0's logger (winston, colours on) writing its toA2a warning, as the test servers print it. */
const ADK_SECURITY_WARNING =
  '\u001b[33mWARN\u001b[39m: [ADK] 2026-12-04T06:09:43.492Z SECURITY WARNING: Mounting the A2A server WITHOUT authentication because `allowUnauthenticated: true` was set. The agent and all of its tools are exposed to any network-reachable caller, which can invoke them with arbitrary input and read the output. Do NOT use this outside of local, trusted development.';

const FIXTURES: Record<string, string> = {
  'pass.test.mjs': `import test from 'node:test';
test('adds', () => {});
`,
  'slow.test.mjs': `import test from 'node:test';
test('waits', () => new Promise((resolve) => setTimeout(resolve, 2500)));
`,
  'fail.test.mjs': `import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
describe('billing', () => {
  test('charges the card', () => assert.equal(1 + 1, 3));
  test('refunds', () => {});
});
`,
  'skip.test.mjs': `import test from 'node:test';
test('talks to PostgreSQL', { skip: 'PostgreSQL binaries (initdb, pg_ctl, postgres) not found' }, () => {});
`,
  'adk.test.mjs': `import test from 'node:test';
test('mounts test servers', () => {
  console.log(${JSON.stringify(ADK_SECURITY_WARNING)});
  console.log(${JSON.stringify(ADK_SECURITY_WARNING)});
  // @a2a-js/sdk's express handler, a version refused on purpose: an error dumped with its fields.
  class VersionNotSupportedError extends Error {
    name = 'VersionNotSupportedError';
    reason = 'VERSION_NOT_SUPPORTED';
    metadata = undefined;
  }
  console.error('Unhandled error in JSON-RPC POST handler:', new VersionNotSupportedError("The requested A2A protocol version '0.3' is not supported. Supported versions: 1.0"));
  console.log('the test says: mounted');
});
`,
  'unknown.test.mjs': `import test from 'node:test';
test('prints a new warning', () => {
  console.log('\\u001b[33mWARN\\u001b[39m: [ADK] 2026-12-04T06:09:44.000Z Something new the tests never said before');
  console.error('SomeLib WARNING: deprecated option');
});
`,
};

interface Run {
  code: number;
  stdout: string;
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reporter-'));
  for (const [name, text] of Object.entries(FIXTURES)) await writeFile(join(dir, name), text);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `node --test` with the reporter over `files`, as package.json's "test" runs it (stdout a pipe: tap). */
function runTests(files: readonly string[]): Promise<Run> {
  // A runner inside this test's process would report to it: the child is a runner of its own.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', ...files],
      { cwd: dir, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, stdout }),
    );
  });
}

/** The lines after node's own summary (its last line is `# duration_ms …`). */
function summaryOf(stdout: string): string[] {
  const lines = stdout.trimEnd().split('\n');
  const end = lines.findIndex((l) => l.startsWith('# duration_ms '));
  assert.ok(end > 0, `node's summary is there:\n${stdout}`);
  return lines.slice(end + 1);
}

describe('the test reporter', () => {
  let run: Run;
  before(async () => {
    run = await runTests(Object.keys(FIXTURES).sort());
  });

  test("keeps node's tap output, its not ok lines and its summary, and node's exit code", () => {
    assert.equal(run.code, 1, 'a failed test fails the run');
    assert.match(run.stdout, /^TAP version 13$/m);
    assert.match(run.stdout, /^ {4}not ok 1 - charges the card$/m);
    assert.match(run.stdout, /^not ok \d+ - billing$/m);
    const node = run.stdout.split('\n').filter((l) => /^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(l));
    assert.deepEqual(
      node.map((l) => l.replace(/^# duration_ms .*/, '# duration_ms …')),
      ['# tests 7', '# suites 1', '# pass 5', '# fail 1', '# cancelled 0', '# skipped 1', '# todo 0', '# duration_ms …'],
    );
  });

  test('ends with the counts, the skips and why, the slowest files, the hidden warnings and the failures', () => {
    const summary = summaryOf(run.stdout);
    assert.ok(summary.length > 0 && summary.every((l) => l.startsWith('# ')), `tap comment lines only:\n${summary.join('\n')}`);
    assert.match(summary[0] ?? '', /^# summary: 7 tests: 5 passed, 1 failed, 0 cancelled, 1 skipped, 0 todo; \d+\.\d s$/);
    assert.deepEqual(summary.slice(1, 3), ['# skipped: 1 suite or test', '# skipped: skip.test.mjs: PostgreSQL binaries (initdb, pg_ctl, postgres) not found (1)']);
    const slowest = summary.indexOf('# slowest files:');
    assert.ok(slowest > 0, summary.join('\n'));
    const files = summary.slice(slowest + 1, slowest + 7);
    assert.equal(files.length, 6, 'every file, up to ten');
    assert.ok(files.every((l) => /^# {3}\s*\d+\.\d s {2}\S+\.test\.mjs$/.test(l)), files.join('\n'));
    // slow.test.mjs waits 2.5 s; the others wait for nothing.
    assert.match(files[0] ?? '', /slow\.test\.mjs$/);
    assert.deepEqual(
      files.map((l) => l.replace(/^.*\s/, '')).sort(),
      Object.keys(FIXTURES).sort(),
    );
    assert.deepEqual(summary.slice(slowest + 7), [
      '# third-party warnings: 3 hidden (ADK: allowUnauthenticated test servers 2; @a2a-js/sdk: protocol versions refused on purpose 1)',
      '# failed: 1 test',
      '# failed: fail.test.mjs: billing > charges the card: Expected values to be strictly equal:',
    ]);
  });

  test('hides the known third-party warnings inline, and prints every other line a test prints', () => {
    assert.doesNotMatch(run.stdout, /SECURITY WARNING: Mounting/);
    assert.doesNotMatch(run.stdout, /VersionNotSupportedError|VERSION_NOT_SUPPORTED|^# +at /m);
    assert.match(run.stdout, /^# the test says: mounted$/m);
    assert.match(run.stdout, /^# .*WARN.*: \[ADK\] \S+ Something new the tests never said before$/m);
    assert.match(run.stdout, /^# SomeLib WARNING: deprecated option$/m);
  });

  test('a run that passes exits 0 and says so, with nothing hidden or failed to report', async () => {
    const passing = await runTests(['pass.test.mjs', 'skip.test.mjs']);
    assert.equal(passing.code, 0);
    const summary = summaryOf(passing.stdout);
    assert.match(summary[0] ?? '', /^# summary: 2 tests: 1 passed, 0 failed, 0 cancelled, 1 skipped, 0 todo;/);
    assert.ok(!summary.some((l) => /third-party|failed:/.test(l)), summary.join('\n'));
  });
});

describe('several test files in one process (scripts/run-tests.mjs groups the files of a folder)', () => {
  const RUNNER = new URL('../../scripts/run-tests.mjs', import.meta.url).pathname;
  /** A file as the summary names it: relative to the repository, where the runner runs node's runner. */
  const named = (name: string) => relative(new URL('../..', import.meta.url).pathname, join(groupDir, name));
  const GROUPED: Record<string, string> = {
    // Its tests are declared after a top-level await: they must still land in its own suite.
    'g-first.test.mjs': `import { after, before, test } from 'node:test';
before(() => console.log('order: first before'));
after(() => console.log('order: first after'));
await new Promise((resolve) => setTimeout(resolve, 50));
test('declared after an await', () => console.log('order: first test'));
`,
    // A file that cannot load fails as itself; the files after it in its process still run.
    'g-broken.test.mjs': `throw new Error('cannot load: a fixture that throws');
`,
    'g-second.test.mjs': `import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
console.log('order: second loaded');
before(() => console.log('order: second before'));
describe('billing', () => {
  test('charges the card', () => assert.equal(1 + 1, 3));
});
`,
  };
  let groupDir: string;
  let run: Run;
  before(async () => {
    groupDir = await mkdtemp(join(tmpdir(), 'reporter-groups-'));
    for (const [name, text] of Object.entries(GROUPED)) await writeFile(join(groupDir, name), text);
    const env: NodeJS.ProcessEnv = { ...process.env, A2A_TEST_GROUP_SIZE: '8' };
    delete env.NODE_TEST_CONTEXT;
    run = await new Promise((resolve) => {
      execFile(process.execPath, [RUNNER, ...Object.keys(GROUPED).map((n) => join(groupDir, n))], { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, stdout }),
      );
    });
  });
  after(async () => {
    await rm(groupDir, { recursive: true, force: true });
  });

  test('each file is a suite named by its path, with its own tests in it, run one file after the other with its own hooks', () => {
    const first = join(groupDir, 'g-first.test.mjs');
    assert.match(run.stdout, new RegExp(`^# Subtest: ${first.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n {4}# Subtest: declared after an await$`, 'm'), run.stdout);
    const order = run.stdout.split('\n').filter((l) => l.startsWith('# order: ')).map((l) => l.slice('# order: '.length));
    // The next file is loaded only once the last one's tests and hooks have run.
    assert.deepEqual(order, ['first before', 'first test', 'first after', 'second loaded', 'second before']);
  });

  test('the summary names the files, not the process that ran them: the slowest files and what failed, by file and name', () => {
    assert.equal(run.code, 1);
    const summary = summaryOf(run.stdout);
    assert.match(summary[0] ?? '', /^# summary: 2 tests: 1 passed, 1 failed, 0 cancelled, 0 skipped, 0 todo;/);
    const slowest = summary.indexOf('# slowest files:');
    assert.deepEqual(
      summary.slice(slowest + 1, slowest + 4).map((l) => l.replace(/^.*\s/, '')).sort(),
      Object.keys(GROUPED).map((n) => named(n)).sort(),
    );
    assert.deepEqual(summary.slice(slowest + 4), [
      '# failed: 2 tests',
      `# failed: ${named('g-broken.test.mjs')}: (the file itself): cannot load: a fixture that throws`,
      `# failed: ${named('g-second.test.mjs')}: billing > charges the card: Expected values to be strictly equal:`,
    ]);
  });
});
