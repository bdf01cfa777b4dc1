/**
 * Whether the packages' `dist/` folders are the build of today's sources: every
 * `packages/<pkg>/src/**\/*.ts` has its `dist/**\/*.js`, and neither it nor the package's build
 * record (`dist/.tsbuildinfo`, written by every `tsc -b` that judged the package) is older than
 * the source's last change. (The build is incremental: a source touched without a change of its
 * text is judged again but not written again, so its `.js` keeps its time and the record moves on.)
 * `npm test` builds first (pretest); a test file run by hand after an edit of `src/` finds dist/
 * stale. The CLI's tests then run the sources (helpers/cli.ts); the tests of the
 * built packages themselves (test/package/, the docs' examples) fail with {@link assertDistFresh}.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const PACKAGES = ['core', 'store', 'service'] as const;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourcesUnder(path);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

function mtimeMs(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Why packages/*\/dist is not the build of today's sources (the first difference found), or undefined when it is. */
function findStale(): string | undefined {
  for (const pkg of PACKAGES) {
    const src = join(ROOT, 'packages', pkg, 'src');
    const judgedAt = mtimeMs(join(ROOT, 'packages', pkg, 'dist', '.tsbuildinfo')) ?? 0;
    for (const file of sourcesUnder(src)) {
      const built = join(ROOT, 'packages', pkg, 'dist', relative(src, file)).replace(/\.ts$/, '.js');
      const builtAt = mtimeMs(built);
      const rel = (p: string) => relative(ROOT, p);
      if (builtAt === undefined) return `${rel(built)} is missing (the build of ${rel(file)})`;
      if (Math.max(builtAt, judgedAt) < statSync(file).mtimeMs) return `${rel(built)} is older than ${rel(file)}`;
    }
  }
  return undefined;
}

let checked: { stale: string | undefined } | undefined;

/** Why dist/ is stale or missing (checked once per process), or undefined when it is today's build. */
export function staleDist(): string | undefined {
  checked ??= { stale: findStale() };
  return checked.stale;
}

/** Throws, saying what to run, unless packages/*\/dist is the build of today's sources. */
export function assertDistFresh(): void {
  const stale = staleDist();
  if (stale !== undefined) throw new Error(`packages/*/dist is not the build of today's sources: ${stale}. Run \`npm run build\` (npm test does it first).`);
}
