/**
 * How tests run the CLI as a user does: the built `packages/service/dist/cli/main.js` (the
 * package's bin), which `npm test` builds first (pretest). Without a build (a single test file run
 * by hand), the source runs through tsx instead.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

const built = new URL('../../packages/service/dist/cli/main.js', import.meta.url).pathname;
const source = new URL('../../packages/service/src/cli/main.ts', import.meta.url).pathname;

/** Arguments for `process.execPath` that start the CLI; append the command and its flags. */
export const CLI: readonly string[] = existsSync(built) ? [built] : ['--import', 'tsx', source];

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
