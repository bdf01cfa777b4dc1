// @ts-check
/**
 * The hooks of test/helpers/ts-loader.mjs (which says why they exist), run on Node's hooks thread.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync, version as esbuildVersion } from 'esbuild';

/** @type {string} */
let rootUrl = '';
/** @type {Array<{ prefix: string, exact: boolean, target: string }>} */
const paths = [];
/** @type {string} */
let cacheDir = '';
/** @type {import('esbuild').TransformOptions} */
let transform = {};
/** What a cached transform depends on besides the file: esbuild's version and its options. */
let salt = '';

/** @param {{ rootUrl: string, paths: Record<string, string[]>, compilerOptions: Record<string, unknown>, cacheDir: string }} data */
export function initialize(data) {
  rootUrl = data.rootUrl;
  cacheDir = data.cacheDir;
  for (const [pattern, targets] of Object.entries(data.paths)) {
    const star = pattern.endsWith('/*');
    paths.push({ prefix: star ? pattern.slice(0, -1) : pattern, exact: !star, target: new URL(targets[0] ?? '', rootUrl).href });
  }
  // As tsc matches them: an exact pattern first, then the wildcard with the longest prefix.
  paths.sort((a, b) => Number(b.exact) - Number(a.exact) || b.prefix.length - a.prefix.length);
  transform = { loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcemap: 'inline', tsconfigRaw: { compilerOptions: data.compilerOptions } };
  salt = `${esbuildVersion}\0${JSON.stringify(transform)}`;
  try {
    mkdirSync(cacheDir, { recursive: true });
  } catch {
    cacheDir = '';
  }
}

/** Whether a module of this repository (not of node_modules) imports the specifier. */
function ours(/** @type {string | undefined} */ parent) {
  return parent !== undefined && parent.startsWith(rootUrl) && !parent.includes('/node_modules/');
}

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    if (specifier.endsWith('.js') && ours(context.parentURL)) {
      const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
      if (existsSync(fileURLToPath(ts))) return { url: ts.href, format: 'module', shortCircuit: true };
    }
  } else if (!specifier.startsWith('node:')) {
    for (const p of paths) {
      if (p.exact ? specifier !== p.prefix : !specifier.startsWith(p.prefix)) continue;
      const url = p.exact ? p.target : p.target.replace('*', specifier.slice(p.prefix.length));
      if (existsSync(fileURLToPath(url))) return { url, format: 'module', shortCircuit: true };
    }
  }
  return next(specifier, context);
}

/** @type {import('node:module').LoadHook} */
export async function load(url, context, next) {
  if (!url.startsWith('file:')) return next(url, context);
  if (url.endsWith('.ts')) return { format: 'module', source: transpiled(fileURLToPath(url)), shortCircuit: true };
  // node's own load reads the file through asynchronous reads on this thread: four system calls
  // and several turns per module. An ES module's text is all it needs here.
  if (context.format === 'module') return { format: 'module', source: readFileSync(fileURLToPath(url)), shortCircuit: true };
  return next(url, context);
}

/** A `.ts` file as JavaScript: from the cache when this text was transformed before. */
function transpiled(/** @type {string} */ path) {
  const source = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(salt).update('\0').update(path).update('\0').update(source).digest('hex').slice(0, 40);
  const cached = cacheDir && join(cacheDir, `${key}.js`);
  if (cached) {
    try {
      return readFileSync(cached, 'utf8');
    } catch {
      // not transformed yet
    }
  }
  const code = transformSync(source, { ...transform, sourcefile: path }).code;
  if (cached) {
    try {
      const partial = `${cached}.${process.pid}`;
      writeFileSync(partial, code);
      renameSync(partial, cached);
    } catch {
      // the next process transforms it again
    }
  }
  return code;
}
