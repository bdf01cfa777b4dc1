/**
 * How tests run the CLI as a user does: the built `dist/cli/main.js` (the package's bin), which
 * `npm test` builds first (pretest). Without a build (a single test file run by hand), the source
 * runs through tsx instead.
 */
import { existsSync } from 'node:fs';

const built = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const source = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** Arguments for `process.execPath` that start the CLI; append the command and its flags. */
export const CLI: readonly string[] = existsSync(built) ? [built] : ['--import', 'tsx', source];
