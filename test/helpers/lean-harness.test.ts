/**
 * `npm test`'s preload (test/helpers/lean-harness.mjs), run as `npm test` runs it, over small test
 * files: node's harness no longer tracks each promise, and what a person relies on still holds. A
 * test that throws from a timer fails by name; an unhandled rejection still fails the run, with its
 * error in the output (charged to its file); `A2A_TEST_TRACK_PROMISES=1` charges it to its test;
 * AsyncLocalStorage (OpenTelemetry's context) is untouched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PRELOAD = new URL('./lean-harness.mjs', import.meta.url).href;
const REPORTER = new URL('./reporter.mjs', import.meta.url).pathname;

const FIXTURES: Record<string, string> = {
  'rejects.test.mjs': `import test from 'node:test';
test('leaves a rejection unhandled', async () => {
  Promise.reject(new Error('nobody caught this'));
  await new Promise((resolve) => setTimeout(resolve, 50));
});
test('passes', () => {});
`,
  'timer.test.mjs': `import test from 'node:test';
test('throws from a timer', async () => {
  setTimeout(() => { throw new Error('thrown in a timer'); }, 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
});
`,
  'context.test.mjs': `import test from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
test('keeps the async context across awaits and timers', async () => {
  const als = new AsyncLocalStorage();
  await als.run('turn-1', async () => {
    await Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(als.getStore(), 'turn-1');
  });
});
`,
};

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lean-harness-'));
  for (const [name, text] of Object.entries(FIXTURES)) await writeFile(join(dir, name), text);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** node's test runner with the preload and the repository's reporter, as `npm test` runs it. */
function runTests(file: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv['NODE_TEST_CONTEXT'];
  if (env['A2A_TEST_TRACK_PROMISES'] === undefined) delete childEnv['A2A_TEST_TRACK_PROMISES'];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', PRELOAD, '--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', file],
      { cwd: dir, env: childEnv, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, stdout }),
    );
  });
}

test('an unhandled rejection still fails the run, its error printed and its file listed as failed', async () => {
  const run = await runTests('rejects.test.mjs');
  assert.equal(run.code, 1);
  assert.match(run.stdout, /nobody caught this/);
  assert.match(run.stdout, /^# failed: .*rejects\.test\.mjs: \(the file itself\)/m);
});

test('A2A_TEST_TRACK_PROMISES=1 charges the rejection to the test that left it', async () => {
  const run = await runTests('rejects.test.mjs', { A2A_TEST_TRACK_PROMISES: '1' });
  assert.equal(run.code, 1);
  assert.match(run.stdout, /^not ok \d+ - leaves a rejection unhandled$/m);
  assert.match(run.stdout, /^ok \d+ - passes$/m);
});

test('an exception thrown from a timer fails its test by name', async () => {
  const run = await runTests('timer.test.mjs');
  assert.equal(run.code, 1);
  assert.match(run.stdout, /^not ok \d+ - throws from a timer$/m);
  assert.match(run.stdout, /thrown in a timer/);
});

test('AsyncLocalStorage keeps its context: only the harness hook is changed', async () => {
  const run = await runTests('context.test.mjs');
  assert.equal(run.code, 0, run.stdout);
});
