/**
 * Every TypeScript example of the README and docs/ compiles against the built package, and the
 * ones marked `<!-- example: run -->` run to completion (issue #13).
 *
 * Each block is written to test/.doc-examples/ as its prelude, its code and `export {}`, and one
 * `tsc -p` checks them all: imports use the packages' public names, resolved as a user's project
 * resolves them, through node_modules to the built packages (`dist/`, so `npm test` builds them
 * first; the generated tsconfig empties the root's `paths`, which map the names to the sources).
 * Checking against the declarations rather than the sources is also a third of the time: tsc
 * then checks no source of the packages. An error is reported at its doc line:
 * `docs/registry.md:137 (block line 3): TS2304 Cannot find name 'x'.` An excerpt's interfaces
 * that the package exports under the same name are also checked against the real type, both
 * ways, so a listing cannot drift from the API.
 *
 * Then each `run` block is executed with `node --import tsx` against the same built packages
 * (`TSX_TSCONFIG_PATH` names the generated tsconfig) and must exit 0. Its prelude makes
 * the context real from ./fixtures.ts (inline cards, a signing key, a loopback card server), so
 * nothing leaves the machine. The generated files are removed unless something failed (or
 * KEEP_DOC_EXAMPLES is set).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertDistFresh } from '../helpers/dist.js';
import { docExamples, type DocExample } from './doc-examples.js';

const root = new URL('../../', import.meta.url).pathname;
const outDir = join(root, 'test', '.doc-examples');
/** Each public entry whose names an excerpt may list, and its built declaration file. */
const ENTRIES: Record<string, string> = {
  'a2a-discovery': 'packages/core/dist/index.d.ts',
  'a2a-discovery/adk': 'packages/core/dist/adk/index.d.ts',
  'a2a-discovery/config': 'packages/core/dist/config/index.d.ts',
  'a2a-discovery/explorer': 'packages/core/dist/explorer/index.d.ts',
  'a2a-discovery/routing': 'packages/core/dist/routing/index.d.ts',
  'a2a-discovery/probe': 'packages/core/dist/probe/index.d.ts',
  '@a2a-discovery/store': 'packages/store/dist/index.d.ts',
  '@a2a-discovery/store/adk-sessions': 'packages/store/dist/adk-sessions.d.ts',
  '@a2a-discovery/service': 'packages/service/dist/index.d.ts',
};

/**
 * The examples that are type-checked but not run, found by a line of their code (doc lines move),
 * and why. Every other example that is not an API listing is marked `<!-- example: run -->`.
 */
const NOT_RUN: ReadonlyArray<{ file: string; contains: string; why: string }> = [
  { file: 'README.md', contains: "allow: ['https://billing.example.com'", why: 'discovers https://billing.example.com and sends it a turn' },
  { file: 'README.md', contains: 'process.argv[2]', why: 'test/package/install.test.ts runs it in an empty project with the packed library, against a real peer' },
  { file: 'docs/adk.md', contains: 'new TreeFactory({', why: "the loop's options, hints and specialists are the reader's (declared in the prelude), and a turn calls a peer" },
  { file: 'docs/configuration.md', contains: "loadConfig('/etc/a2a/discovery.yaml')", why: "reads the reader's /etc/a2a/discovery.yaml and the secrets it names" },
  { file: 'docs/pipeline.md', contains: 'kubernetesSource({', why: 'fetches https://billing.example.com and watches a Kubernetes API server' },
  { file: 'docs/registry.md', contains: 'const lookup = (name: string', why: "the model and the tool are the reader's (declared); it only defines specs" },
  { file: 'docs/registry.md', contains: 'new RegistryHolder(', why: "the specs, runners and session service are the reader's (declared), and its catch would hide a failure" },
  { file: 'docs/rollouts.md', contains: 'const late: { loop?: DiscoveryLoop }', why: "the loop's options and the tree builder are the reader's (declared); it only wires the parts" },
];

function notRun(example: DocExample): string | undefined {
  return NOT_RUN.find((n) => n.file === example.file && example.code.includes(n.contains))?.why;
}

interface Generated {
  readonly example: DocExample;
  readonly path: string;
  /** Lines before the block's first line in the generated file. */
  readonly offset: number;
  readonly codeLines: number;
  /** For the lines after the block (an excerpt's checks): the block line of the interface each checks. */
  readonly checked: readonly number[];
}

const examples = docExamples(root);

function fileName(example: DocExample): string {
  return `${example.file.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '_')}_L${example.line}.ts`;
}

/** Names each public entry exports, read from its built declaration file. */
function exportedNames(): Map<string, string> {
  const byName = new Map<string, string>();
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const dts = join(root, file);
    const text = readFileSync(dts, 'utf8');
    for (const list of text.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
      for (const item of list[1]!.split(',')) {
        const name = item.trim().split(/\s+as\s+/).pop()!.replace(/^type\s+/, '');
        if (name && !byName.has(name)) byName.set(name, entry);
      }
    }
  }
  return byName;
}

/**
 * For an excerpt: each exported, non-generic interface it lists must be assignable to the real
 * one and back. Three lines per interface, and the block line of each interface.
 */
function conformance(example: DocExample, exported: Map<string, string>): { code: string; checked: number[] } {
  const code: string[] = [];
  const checked: number[] = [];
  if (!example.excerpt) return { code: '', checked };
  example.code.split('\n').forEach((text, i) => {
    const name = /^(?:export\s+)?interface\s+(\w+)\s*\{/.exec(text)?.[1];
    const entry = name && exported.get(name);
    if (!name || !entry) return;
    code.push(
      `import type { ${name} as Real_${name} } from '${entry}';`,
      `declare const listed_${name}: ${name}; export const listingIsReal_${name}: Real_${name} = listed_${name};`,
      `declare const real_${name}: Real_${name}; export const realIsListing_${name}: ${name} = real_${name};`,
    );
    checked.push(i + 1, i + 1, i + 1);
  });
  return { code: code.join('\n'), checked };
}

function generate(): Generated[] {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'tsconfig.json'),
    JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, paths: {} }, include: ['*.ts'] }, null, 2),
  );
  const exported = exportedNames();
  return examples.map((example) => {
    const prelude = example.prelude ? `${example.prelude}\n` : '';
    const offset = prelude ? prelude.split('\n').length - 1 : 0;
    const path = join(outDir, fileName(example));
    const checks = conformance(example, exported);
    writeFileSync(path, `${prelude}${example.code}\n${checks.code}\nexport {};\n`);
    return { example, path, offset, codeLines: example.code.split('\n').length, checked: checks.checked };
  });
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number | string | null; output: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, TSX_TSCONFIG_PATH: join(outDir, 'tsconfig.json') };
    execFile(file, args, { cwd: root, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? ((err as NodeJS.ErrnoException & { code?: number | string }).code ?? (err.killed ? 'timeout' : 1)) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** `file(line,col): error TSxxxx: message` (plus indented continuation lines) at the doc's line. */
function mapErrors(output: string, generated: Generated[]): string[] {
  const byPath = new Map(generated.map((g) => [g.path, g]));
  const out: string[] = [];
  for (const chunk of output.split(/\n(?=\S)/)) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): ([\s\S]*)$/.exec(chunk.trim());
    if (!m) {
      if (chunk.trim()) out.push(chunk.trim());
      continue;
    }
    const g = byPath.get(join(root, m[1]!)) ?? byPath.get(m[1]!);
    // `import("/…/dist/sources/types", { with: … }).EndpointRecord` reads better as the package's name
    const message = `${m[4]} ${m[5]!.trim().replace(/import\("[^"]*"(?:, \{[^()]*\})?\)\.(\w+)/g, "a2a-discovery's $1")}`;
    if (!g) {
      out.push(`${m[1]}(${m[2]},${m[3]}): ${message}`);
      continue;
    }
    const line = Number(m[2]) - g.offset;
    const listed = g.checked[line - g.codeLines - 1];
    const where =
      line < 1 ? `${g.example.file}:${g.example.line - 1} (prelude)`
      : line <= g.codeLines ? `${g.example.file}:${g.example.line + line} (block line ${line})`
      : listed ? `${g.example.file}:${g.example.line + listed} (block line ${listed}: the listing differs from the exported type)`
      : `${g.example.file}:${g.example.line} (after the block)`;
    out.push(`${where}: ${message}`);
  }
  return out;
}

let failed = false;

// The generated files stay for inspection only when something failed (eslint would lint them).
after(() => {
  if (!failed && !process.env.KEEP_DOC_EXAMPLES) rmSync(outDir, { recursive: true, force: true });
});

function noting<T>(fn: () => Promise<T>): () => Promise<T> {
  return () =>
    fn().catch((err: unknown) => {
      failed = true;
      throw err;
    });
}

test('the docs have TypeScript examples', () => {
  assert.ok(examples.length >= 20, `${examples.length} blocks`);
});

test('every TypeScript example in the README and docs/ type-checks against the package', { timeout: 120_000 }, noting(async () => {
  // The excerpts are checked against the built declarations: they must be today's.
  assertDistFresh();
  const generated = generate();
  const { code, output } = await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(outDir, 'tsconfig.json'), '--pretty', 'false'], 90_000);
  if (code !== 0) assert.fail(`tsc exited ${code}:\n${mapErrors(output, generated).join('\n')}`);
}));

test('the examples marked run exit 0', { concurrency: 2 }, async (t) => {
  await Promise.all(
    examples
      .filter((e) => e.run)
      .map((example) =>
        t.test(`${example.file}:${example.line}`, { timeout: 45_000 }, noting(async () => {
          const why = notRun(example);
          assert.equal(why, undefined, `marked run, but NOT_RUN says: ${why}`);
          const path = join(outDir, fileName(example));
          assert.ok(existsSync(path), `${path} was not generated (the type-check test writes it)`);
          const { code, output } = await run(process.execPath, ['--import', 'tsx', path], 30_000);
          assert.equal(code, 0, `exited ${code}:\n${output}`);
        })),
      ),
  );
});

test('every example that is not run says why', () => {
  const unexplained = examples.filter((e) => !e.run && !e.excerpt && !notRun(e)).map((e) => `${e.file}:${e.line}`);
  assert.deepEqual(unexplained, [], 'mark these `<!-- example: run -->`, or list them in NOT_RUN with the reason');
});
