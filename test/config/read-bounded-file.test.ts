/**
 * Every local file is opened, checked to be a regular file and read under a byte cap
 * (readBoundedFile), and the CLI refuses devices at once: `validate --config /dev/zero`,
 * `probe /dev/zero` and `tokenFile: /dev/zero` used to read until memory ran out, or forever.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileReadError, loadConfig, parseConfig, readBoundedFile, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { runCli } from '../helpers/cli.js';

/** A valid configuration whose token is read from `tokenFile`. */
const TOKEN_CONFIG = (tokenFile: string): string =>
  `server:\n  tokenFile: ${tokenFile}\nallowLoopback: true\nallow: [http://127.0.0.1:9]\nvocabulary:\n  - tag: billing\n    description: Billing.\nneeds:\n  - tag: billing\nstatic:\n  - name: billing_agent\n    url: http://127.0.0.1:9/\n    description: Billing.\n    tags: [billing]\n`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bounded-'));
});
after(() => rm(dir, { recursive: true, force: true }));

async function refusal(file: string, max = 1024): Promise<FileReadError> {
  const err = await readBoundedFile(file, max).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof FileReadError, `${file} was read`);
  return err;
}

test('reads a regular file up to the cap, refuses one byte more', async () => {
  const file = join(dir, 'ten.txt');
  await writeFile(file, '0123456789');
  assert.equal((await readBoundedFile(file, 10)).toString(), '0123456789');
  const big = await refusal(file, 9);
  assert.equal(big.tooLarge, true);
  assert.match(big.message, /larger than 9 bytes/);
});

test('devices, pipes and directories are refused before any read', async () => {
  assert.match((await refusal('/dev/zero')).message, /not a regular file \(a character device\)/);
  assert.match((await refusal(dir)).message, /it is a directory/);
  assert.match((await refusal(join(dir, 'missing'))).message, /no such file/);
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  assert.match((await refusal(fifo)).message, /named pipe/);
});

test('loadConfig and resolveSecrets refuse /dev/zero with a clear message', async () => {
  await assert.rejects(loadConfig('/dev/zero'), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_USAGE' && /\/dev\/zero: it is not a regular file/.test(err.message));
  const config = parseConfig(TOKEN_CONFIG('/dev/zero'));
  await assert.rejects(resolveSecrets(config, {}), (err: unknown) => isDiscoveryError(err) && /token file \/dev\/zero: it is not a regular file/.test(err.problems[0]!.message));
});

test('the CLI refuses /dev/zero at once: validate and probe exit 2, a token file /dev/zero is a problem', async () => {
  const validate = await runCli(['validate', '--config', '/dev/zero']);
  assert.equal(validate.code, 2, validate.stderr);
  assert.match(validate.stderr, /\/dev\/zero: it is not a regular file/);
  const probe = await runCli(['probe', '/dev/zero']);
  assert.equal(probe.code, 2, probe.stderr);
  assert.match(probe.stderr, /not a regular file/);
  const file = join(dir, 'token.yaml');
  await writeFile(file, TOKEN_CONFIG('/dev/zero'));
  const token = await runCli(['validate', '--config', file]);
  assert.equal(token.code, 1, token.stderr);
  assert.match(token.stdout, /server\.tokenFile: cannot read token file \/dev\/zero: it is not a regular file/);
});
