/** Secret files are read one way (issue 37): bounded at 64 KiB, and never waited on (a FIFO without a writer). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_SECRET_BYTES, readSecretFile } from '../../packages/core/src/rules/bounded-file.js';

test('a secret file up to 64 KiB is read; one byte more is refused without its content', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'secret-'));
  try {
    const fits = join(dir, 'fits');
    await writeFile(fits, 'x'.repeat(MAX_SECRET_BYTES));
    assert.equal((await readSecretFile(fits)).length, MAX_SECRET_BYTES);
    const over = join(dir, 'over');
    await writeFile(over, 'y'.repeat(MAX_SECRET_BYTES + 1));
    await assert.rejects(readSecretFile(over), (err: Error) => /larger than 65536 bytes/.test(err.message) && !err.message.includes('yyyy'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a FIFO with no writer and a directory are refused at once, not waited on', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'secret-'));
  try {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(readSecretFile(fifo), /not a regular file/);
    await assert.rejects(readSecretFile(dir), /directory/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
