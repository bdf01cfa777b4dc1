/**
 * How tests run the CLI as a user does, always today's code: the built
 * `packages/service/dist/cli/main.js` (the package's bin) when packages/*\/dist is the build of
 * today's sources (helpers/dist.ts; `npm test` builds first, in pretest), otherwise the sources,
 * through tsx with this checkout's tsconfig paths (helpers/from-source.mjs), so a test file run by
 * hand after an edit of `src/` tests the edit. The built CLI starts about twice as fast.
 */
import { execFile } from 'node:child_process';
import { staleDist } from './dist.js';

const built = new URL('../../packages/service/dist/cli/main.js', import.meta.url).pathname;
const source = new URL('../../packages/service/src/cli/main.ts', import.meta.url).pathname;
const fromSource = new URL('./from-source.mjs', import.meta.url).pathname;

/** Arguments for `process.execPath` that start the CLI; append the command and its flags. */
export const CLI: readonly string[] = staleDist() === undefined ? [built] : ['--import', fromSource, source];

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (bounded to 30 s) and returns its exit code and output. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { timeout: 30_000, ...options }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 99) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
