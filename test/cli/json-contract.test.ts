/**
 * The CLI's contract with `--json`: every outcome — a report, a refusal, a usage error, an
 * unreadable or oversized file — is one JSON object on stdout, with the exit code the text mode
 * gives. Run as real child processes, as a script runs them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-json-'));
  await mkdir(join(dir, 'a-directory.json'));
  // Larger than anything probe reads (16 × the 64 KiB card limit, and an AI Catalog's 1 MiB).
  await writeFile(join(dir, 'huge.json'), JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }));
  await writeFile(join(dir, 'bad.yaml'), 'server: [\n');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `args` with `--json` and without; both exit with `code`, and the JSON run prints one JSON object. */
async function outcome(args: string[], code: number): Promise<Record<string, unknown>> {
  const [json, text] = await Promise.all([runCli([...args, '--json']), runCli(args)]);
  assert.equal(text.code, code, `text: ${args.join(' ')}: ${text.stderr}`);
  assert.equal(json.code, code, `--json: ${args.join(' ')}: ${json.stderr}`);
  let parsed: unknown;
  assert.doesNotThrow(() => (parsed = JSON.parse(json.stdout)), `--json ${args.join(' ')} printed: ${json.stdout}`);
  assert.equal(typeof parsed, 'object');
  return parsed as Record<string, unknown>;
}

/** A usage error or failure: `{ error: {code, failure, message, ...}, exitCode }`. */
async function failure(args: string[], code: number, errorCode: string, message: RegExp): Promise<void> {
  const body = await outcome(args, code);
  assert.equal(body.exitCode, code, JSON.stringify(body));
  const error = body.error as { code: string; failure: string; message: string };
  assert.equal(error.code, errorCode, JSON.stringify(body));
  assert.match(error.message, message);
}

describe('--json: every outcome is JSON on stdout, with unchanged exit codes', () => {
  test('probe: usage errors and unreadable files (exit 2)', async () => {
    await failure(['probe'], 2, 'ERR_USAGE', /missing required argument 'target'/);
    await failure(['probe', 'examples/cards/billing-agent.json', '--frobnicate'], 2, 'ERR_USAGE', /unknown option '--frobnicate'/);
    await failure(['probe', 'examples/cards/billing-agent.json', '--max-bytes', 'lots'], 2, 'ERR_USAGE', /--max-bytes <n>.*must be a positive whole number/);
    await failure(['probe', join(dir, 'nope.json')], 2, 'ERR_USAGE', /cannot read .*nope\.json: no such file/);
    await failure(['probe', join(dir, 'a-directory.json')], 2, 'ERR_USAGE', /it is a directory/);
    await failure(['probe', 'examples/cards/billing-agent.json', '--allow', 'ftp://x'], 2, 'ERR_USAGE', /^--allow "ftp:\/\/x": scheme must be https/);
  });

  test('probe: a file over the size limit is a refusal like any too-large input (exit 1), in JSON as in text', async () => {
    const report = await outcome(['probe', join(dir, 'huge.json')], 1);
    assert.equal(report.accepted, false);
    assert.equal(report.stage, 'parse');
    assert.match((report.problems as Array<{ message: string }>)[0]!.message, /larger than 1048576 bytes/);
    const text = await runCli(['probe', join(dir, 'huge.json')]);
    assert.match(text.stdout, /REFUSED {3}at stage parse/);
  });

  test('probe: reports and refusals stay the report (exit 0 and 1)', async () => {
    assert.equal((await outcome(['probe', 'examples/cards/billing-agent.json', '--allow', 'https://billing.example.com'], 0)).accepted, true);
    assert.equal((await outcome(['probe', 'examples/cards/broken-agent.json'], 1)).stage, 'schema');
  });

  test('validate, eval-routing and trace: usage errors and unreadable files (exit 2), an invalid file (exit 1)', async () => {
    await failure(['validate'], 2, 'ERR_USAGE', /required option '--config <file>' not specified/);
    await failure(['validate', '--config', join(dir, 'nope.yaml')], 2, 'ERR_USAGE', /cannot read configuration file .*nope\.yaml: no such file/);
    assert.equal((await outcome(['validate', '--config', join(dir, 'bad.yaml')], 1)).valid, false);
    await failure(['eval-routing', '--config', join(dir, 'nope.yaml')], 2, 'ERR_USAGE', /no such file/);
    await failure(['eval-routing', '--config', 'examples/discovery.yaml', '--min-accuracy', '3'], 2, 'ERR_USAGE', /--min-accuracy must be between 0 and 1/);
    await failure(['eval-routing', '--config', 'examples/discovery.yaml', '--digest', 'abc'], 2, 'ERR_USAGE', /--digest needs --url/);
    await failure(['trace', '--condition', 'bogus'], 2, 'ERR_USAGE', /argument 'bogus' is invalid/);
    await failure(['trace', '--unknown-flag'], 2, 'ERR_USAGE', /unknown option '--unknown-flag'/);
    await failure(['trace', '--attempts', '0'], 2, 'ERR_CONFIG_INVALID', /attempts must be between 1 and 100/);
    await failure(['no-such-command'], 2, 'ERR_USAGE', /unknown command 'no-such-command'/);
  });
});
