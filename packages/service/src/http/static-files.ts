/**
 * The dashboard's files, served from the package's `web/` folder, plus the few vendor ES modules
 * it imports (preact, htm) from node_modules: no build step, no CDN. Paths are resolved inside
 * their root only; anything else is a 404.
 */
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBoundedFile } from 'a2a-discovery/config';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/**
 * Vendor modules the dashboard imports, resolved from node_modules: the package entry (which its
 * `exports` map allows) and the ES module file beside it (which it does not export by path).
 */
const VENDOR: Record<string, readonly [specifier: string, sibling: string]> = {
  'preact.mjs': ['preact', 'preact.mjs'],
  'preact-hooks.mjs': ['preact/hooks', 'hooks.mjs'],
  'htm.mjs': ['htm', 'htm.mjs'],
};

/** Largest dashboard or vendor file served. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

const here = dirname(fileURLToPath(import.meta.url));
/** `web/` next to `src/` (sources) or `dist/` (built). */
const DEFAULT_ROOT = join(here, '..', '..', 'web');

export function staticFileServer(root: string = DEFAULT_ROOT): (path: string) => Promise<Response | undefined> {
  const require = createRequire(import.meta.url);
  return async (path) => {
    let file: string | undefined;
    if (path.startsWith('/vendor/')) {
      const target = VENDOR[path.slice('/vendor/'.length)];
      if (target === undefined) return undefined;
      try {
        file = join(dirname(require.resolve(target[0])), target[1]);
      } catch {
        return undefined;
      }
    } else {
      const rel = normalize(decodeURIComponent(path === '/' || path === '' ? '/index.html' : path)).replace(/^([/\\])+/, '');
      file = join(root, rel);
      if (!file.startsWith(root + sep)) return undefined;
    }
    try {
      let body: Buffer | string = await readBoundedFile(file, MAX_FILE_BYTES);
      // preact/hooks imports the bare specifier 'preact'; without an import map (blocked by the
      // CSP, which allows no inline script) point it at the vendored file.
      if (path === '/vendor/preact-hooks.mjs') body = body.toString('utf8').replace(/from\s*["']preact["']/g, 'from"/vendor/preact.mjs"');
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      return new Response(body, {
        headers: {
          'content-type': type,
          'cache-control': 'no-cache',
          // Card text is rendered as text only; no inline scripts, nothing from elsewhere.
          ...(type.startsWith('text/html') && {
            'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
          }),
        },
      });
    } catch {
      return undefined;
    }
  };
}
