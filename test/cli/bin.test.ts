/**
 * The service's built CLI is a program: `npm install` makes a linked bin executable only when it
 * links it, and a later clean build (tsc writes new files, mode 644) took that away — `npx
 * a2a-discovery` then answered "Permission denied". The build itself leaves it executable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { VERSION } from '../../packages/service/src/version.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('the built CLI is executable and runs as a program', async () => {
  const built = `${root}packages/service/dist/cli/main.js`;
  assert.notEqual((await stat(built)).mode & 0o111, 0, `${built} is not executable: run npm run build`);
  const { stdout } = await promisify(execFile)(built, ['--version'], { cwd: root });
  assert.equal(stdout.trim(), VERSION);
});
