/**
 * What a process loads: a module-loader hook (`node --import LOADS_HOOK …`) that writes each file
 * module the process loads to stderr as `LOADED <url>`, before the process's own output, and the
 * reader of those lines. Used to bound what the CLI's starts and the light entries load.
 */

/**
 * The hook, as a data URL for `--import`. It writes to file descriptor 2 synchronously: the hooks
 * run on a thread of their own, whose `process.stderr` reaches the process's through the main
 * thread, and a command that exits at once (`--help`) lost the line of the last module it loaded.
 */
export const LOADS_HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { writeSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\\\n');
  return next(url, context);
}\`));
`)}`;

/** The files (absolute paths) the hook reported in a process's stderr, in load order. */
export function loadedFiles(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => decodeURIComponent(new URL(l.slice(7)).pathname));
}

/** The process's stderr without the hook's lines. */
export function withoutLoads(stderr: string): string {
  return stderr
    .split('\n')
    .filter((l) => !l.startsWith('LOADED '))
    .join('\n');
}

/**
 * The modules `a2a-discovery/vocabulary` loads, under `packages/core/src` or `dist` without their
 * extension: the entry and the three plain tables it re-exports, nothing else of the library.
 */
export const VOCABULARY_MODULES: readonly string[] = Object.freeze(['vocabulary', 'health/endpoint-causes', 'explorer/types', 'rules/dns-aid']);
