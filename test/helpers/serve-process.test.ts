/**
 * The `serve` child-process helper, on a stand-in CLI (a small Node script given as `cli`): the URL
 * from the line it prints once listening, lines waited for, a bounded output buffer that counts what
 * it let go, a stop that escalates to SIGKILL after its bound, and a failed start that kills the
 * child and carries its output.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from './serve-process.js';

/** Behaves as its `--mode` says; prints `serving …` as `serve` does, except in the modes that fail to start. */
const FAKE_CLI = `
const mode = process.argv[process.argv.indexOf('--mode') + 1];
const port = 40000 + (process.pid % 1000);
const keepAlive = setInterval(() => {}, 1000);
if (mode === 'ignore-term') process.on('SIGTERM', () => console.log('SIGTERM ignored'));
else process.on('SIGTERM', () => { console.log('stopping'); clearInterval(keepAlive); });
if (mode === 'exit-early') {
  console.error('configuration invalid: nope');
  process.exit(1);
}
if (mode !== 'silent') {
  console.error('starting');
  if (mode === 'chatty') process.stderr.write('x'.repeat(50) + '\\n');
  console.log('a2a-discovery serving http://127.0.0.1:' + port + '/ (dashboard)');
}
if (mode === 'plain') setTimeout(() => console.log('later line 42'), 100);
`;

describe('startServe (on a stand-in CLI)', { timeout: 30_000 }, () => {
  let dir: string;
  let cli: string[];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-process-'));
    const script = join(dir, 'fake-cli.cjs');
    await writeFile(script, FAKE_CLI);
    cli = [script];
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('the URL once listening, lines already printed and still to come, a SIGTERM stop with its exit', async () => {
    const s = await startServe({ cli, config: 'unused.yaml', args: ['--mode', 'plain'] });
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(s.running, true);
    assert.deepEqual([...(await s.waitForLine(/^starting$/, 5_000))], ['starting'], 'a line printed before the call');
    assert.equal((await s.waitForLine(/later line (\d+)/, 5_000))[1], '42', 'a line printed after it');
    await assert.rejects(s.waitForLine(/never printed/, 50), /no line matching \/never printed\/ within 50 ms/);
    assert.deepEqual(await s.stop(), { code: 0, signal: null });
    assert.equal(s.running, false);
    assert.match(s.stdout(), /stopping\n$/, 'output read to its end');
    assert.match(s.output(), /serving[^]*starting/, 'stdout, then stderr');
    await assert.rejects(s.waitForLine(/never printed/, 5_000), /serve ended before printing a line matching/);
  });

  test('a child that ignores SIGTERM is killed once the stop\'s bound runs out', async () => {
    const s = await startServe({ cli, config: 'unused.yaml', args: ['--mode', 'ignore-term'] });
    assert.deepEqual(await s.stop(200), { code: null, signal: 'SIGKILL' });
    assert.match(s.stdout(), /SIGTERM ignored/);
  });

  test('the kept output is bounded: the latest characters of each stream, the rest counted as dropped', async () => {
    const s = await startServe({ cli, config: 'unused.yaml', args: ['--mode', 'chatty'], maxOutputChars: 20 });
    await s.stop();
    assert.equal(s.stderr().length, 20);
    assert.equal(s.stderr(), `${'x'.repeat(19)}\n`);
    assert.equal(s.stdout(), `a2a-discovery serving ${s.url}/ (dashboard)\nstopping\n`.slice(-20));
    const printed = { stdout: 'a2a-discovery serving http://127.0.0.1:40000/ (dashboard)\nstopping\n'.length, stderr: 'starting\n'.length + 51 };
    assert.equal(s.dropped, printed.stdout - 20 + printed.stderr - 20);
  });

  test('a start that fails says why, with the child\'s output, and leaves no child behind', async () => {
    await assert.rejects(startServe({ cli, config: 'unused.yaml', args: ['--mode', 'exit-early'] }), /serve exited with code 1 before printing a line matching .*: configuration invalid: nope/s);
    let pid = 0;
    await assert.rejects(startServe({ cli, config: 'unused.yaml', args: ['--mode', 'silent'], startTimeoutMs: 300 }), (err: Error) => {
      assert.match(err.message, /no line matching .* within 300 ms/);
      pid = Number(/serve \(pid (\d+)\) did not start/.exec(err.message)?.[1]);
      return true;
    });
    assert.ok(pid > 0);
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the child was killed');
  });
});
