/**
 * What each package's tarball carries, as `npm pack` writes it: its README.md, the Apache-2.0
 * LICENSE (the repository's own text, identical in each package), package.json and the built
 * dist/. The README tells users to install these tarballs by path (the packages are not on a
 * registry yet), so the names and the version it writes must be the ones `npm pack` produces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { assertDistFresh } from '../helpers/dist.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const FOLDERS = { 'a2a-discovery': 'core', '@a2a-discovery/store': 'store', '@a2a-discovery/service': 'service' } as const;

interface Packed {
  readonly name: keyof typeof FOLDERS;
  readonly version: string;
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

async function packAll(): Promise<Packed[]> {
  const args = ['pack', '--dry-run', '--json', ...Object.values(FOLDERS).flatMap((f) => ['-w', `packages/${f}`])];
  const { stdout } = await run(npm, args, { cwd: root, maxBuffer: 16 * 2 ** 20 });
  return JSON.parse(stdout) as Packed[];
}

test('each package tarball carries README.md, LICENSE, package.json and dist/, and its LICENSE is the repository\'s Apache-2.0 text', async () => {
  assertDistFresh();
  const license = readFileSync(join(root, 'LICENSE'), 'utf8');
  assert.match(license, /^\s*Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
  const packed = await packAll();
  assert.deepEqual(packed.map((p) => p.name).sort(), Object.keys(FOLDERS).sort());
  for (const p of packed) {
    const paths = new Set(p.files.map((f) => f.path));
    for (const file of ['README.md', 'LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts']) {
      assert.ok(paths.has(file), `${p.filename} has no ${file}`);
    }
    const folder = join(root, 'packages', FOLDERS[p.name]);
    assert.equal(readFileSync(join(folder, 'LICENSE'), 'utf8'), license, `packages/${FOLDERS[p.name]}/LICENSE differs from the root LICENSE`);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { license: string };
    assert.equal(manifest.license, 'Apache-2.0');
  }
});

test('the README names the tarballs npm pack writes, and says the packages are not on the registry', async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Packages: what to install'), readme.indexOf('## As a library'));
  assert.match(section, /not on the npm registry/);
  assert.match(section, /npm pack --workspace packages\/core --workspace packages\/store --workspace packages\/service/);
  for (const p of await packAll()) {
    const name = p.filename.replace(p.version, '<version>');
    assert.ok(section.includes(name), `the README's package table does not name ${name}`);
    // The one literal command a user copies carries today's version.
    if (p.name === 'a2a-discovery') assert.ok(section.includes(`npm install /path/to/${p.filename} `), `the README's install command does not name ${p.filename}`);
  }
});
