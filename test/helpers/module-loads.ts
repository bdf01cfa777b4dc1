/**
 * What a process loads: a module-loader hook (`node --import LOADS_HOOK …`) that writes each file
 * module the process loads to stderr as `LOADED <url>`, before the process's own output, and the
 * reader of those lines. Used to bound what the CLI's starts and the light entries load.
 */

/** The hook, as a data URL for `--import`. */
export const LOADS_HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
export async function load(url, context, next) {
  if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\\\n');
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
