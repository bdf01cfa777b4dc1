/**
 * The TypeScript examples of the README and docs/, extracted so the tests can type-check (and
 * run) them. A fenced ```ts block may be preceded by an HTML comment that says how:
 *
 *   <!-- example: run -->                 type-check, then run it (it must finish on its own)
 *   <!-- example: prelude <declarations> -->   declarations the excerpt assumes (`declare const loop: DiscoveryLoop;`)
 *   <!-- example: excerpt -->             an API listing (interfaces, signatures): type-checked as declarations
 *
 * Without a comment a block is type-checked as a module. Comments can be combined, one per line.
 * A prelude is written above the block in test/.doc-examples/, so it can make a runnable block's
 * context real with `import { billingCard } from './fixtures.js';` (see fixtures.ts).
 * tsx drops unused imports, so a block of imports alone is an `excerpt`, not worth running.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface DocExample {
  /** `README.md` or `docs/x.md`. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly code: string;
  readonly run: boolean;
  readonly excerpt: boolean;
  readonly prelude: string;
}

const DIRECTIVE = /^<!--\s*example:\s*(run|excerpt|prelude)\b([\s\S]*?)-->\s*$/;

/** Every ```ts block of the README and docs/*.md under `root`. */
export function docExamples(root: string): DocExample[] {
  const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const out: DocExample[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      let run = false;
      let excerpt = false;
      const prelude: string[] = [];
      for (let j = start - 1; j >= 0; j--) {
        const m = DIRECTIVE.exec(lines[j]!.trim());
        if (!m) break;
        if (m[1] === 'run') run = true;
        else if (m[1] === 'excerpt') excerpt = true;
        else prelude.unshift(m[2]!.trim());
      }
      out.push({ file, line: start + 1, code: body.join('\n'), run, excerpt, prelude: prelude.join('\n') });
    }
  }
  return out;
}
