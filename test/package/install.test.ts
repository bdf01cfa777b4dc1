/**
 * The library as a user installs it: `npm pack` of packages/core, installed in an empty folder
 * with its two peers (`@google/adk`, `@a2a-js/sdk`) exactly as the README says. What comes with it
 * must hold no database driver, server framework, UI library or native addon (beyond what the
 * peers themselves bring), nothing may be compiled, and the README's discovery script must run
 * there, as plain JavaScript, against a real ADK JS peer on loopback; against a URL where nothing
 * answers it must say why (the URL and the reason) and exit 1. (`npm test` builds dist/
 * first, and a dist/ older than the sources fails here: helpers/dist.ts; npm installs from its
 * cache where it can, so this costs about half a minute.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { docExamples } from '../docs/doc-examples.js';
import { startAdkPeer, type RunningPeer } from '../helpers/a2a-peers.js';
import { assertDistFresh } from '../helpers/dist.js';
import { adkStyleCard } from '../helpers/cards.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** What the library must not bring: the service's and the store's weight. */
const FORBIDDEN = ['sqlite3', 'better-sqlite3', 'pg', 'knex', 'hono', '@hono/node-server', 'express', 'preact', 'htm', 'prom-client', 'pino', 'commander', '@mikro-orm/sqlite', '@mikro-orm/postgresql', '@mikro-orm/knex'];

let project: string;
let peer: RunningPeer;

/** The version of `name` this repository is tested with (its lock file). */
function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const version = lock.packages[`node_modules/${name}`]?.version;
  assert.ok(version, `${name} is not in package-lock.json`);
  return version;
}

/** Every package folder under node_modules (scoped ones included, nested ones too). */
function installed(dir: string, out: Map<string, string[]> = new Map()): Map<string, string[]> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const inner of readdirSync(join(dir, name))) record(`${name}/${inner}`, join(dir, name, inner));
    } else record(name, join(dir, name));
  }
  return out;
  function record(name: string, path: string): void {
    out.set(name, [...(out.get(name) ?? []), path]);
    installed(join(path, 'node_modules'), out);
  }
}

/** Files anywhere under `dir` whose name matches. */
function findFiles(dir: string, match: (name: string) => boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) findFiles(path, match, out);
    else if (match(entry.name)) out.push(path);
  }
  return out;
}

before(async () => {
  assertDistFresh();
  project = mkdtempSync(join(tmpdir(), 'a2ad-install-'));
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', project, '-w', 'packages/core'], { cwd: root, maxBuffer: 16 * 2 ** 20 });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  assert.ok(packed, 'npm pack wrote no tarball');
  assert.ok(packed.files.some((f) => f.path === 'dist/index.js'), 'the tarball has no dist/index.js: was the library built?');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
  await run(
    npm,
    ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${packed.filename}`, `@google/adk@${lockedVersion('@google/adk')}`, `@a2a-js/sdk@${lockedVersion('@a2a-js/sdk')}`],
    { cwd: project, timeout: 300_000, maxBuffer: 16 * 2 ** 20 },
  );
  peer = await startAdkPeer({
    name: 'billing',
    description: 'Billing.',
    reply: 'billing: charged once, refunded',
    card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]),
  });
}, { timeout: 320_000 });

after(async () => {
  await peer?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

test('the library installs without a database driver, a server framework or a UI library', () => {
  const packages = installed(join(project, 'node_modules'));
  assert.ok(packages.has('a2a-discovery') && packages.has('undici') && packages.has('@google/adk'), [...packages.keys()].join(', '));
  const found = FORBIDDEN.filter((name) => packages.has(name));
  assert.deepEqual(found, [], `installed with the library: ${found.join(', ')}`);
  // The library's own dependencies, exactly: a new one is a decision, taken here and in docs/dependencies.md.
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'a2a-discovery', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.deepEqual(Object.keys(manifest.dependencies).sort(), ['canonicalize', 'confusables', 'dns-packet', 'fastest-levenshtein', 'htmlparser2', 'http-cache-semantics', 'http-link-header', 'ipaddr.js', 'jose', 'oauth4webapi', 'semver', 'undici', 'yaml', 'zod']);
});

test('nothing is compiled: no native addon and no node-gyp build in the installed tree', () => {
  const native = findFiles(join(project, 'node_modules'), (name) => name.endsWith('.node') || name === 'binding.gyp');
  assert.deepEqual(native, []);
});

/** The README's script, written to the user's project as discover.mjs. */
function writeScript(): void {
  const script = docExamples(root).find((e) => e.file === 'README.md' && e.code.includes('process.argv[2]'));
  assert.ok(script, 'the README has no script that takes the peer from process.argv[2]');
  assert.ok(script.code.split('\n').length <= 26, `the README's script has ${script.code.split('\n').length} lines`);
  // Plain JavaScript: the block has no type annotations, so a user runs it with node alone.
  writeFileSync(join(project, 'discover.mjs'), script.code);
}

/** A loopback port nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("the README's discovery script runs in the user's project against a real A2A peer", async () => {
  writeScript();
  const { stdout } = await run(process.execPath, ['discover.mjs', peer.baseUrl], { cwd: project, timeout: 60_000 });
  assert.match(stdout, /snapshot v1: \[ 'billing_agent' \] billing: charged once, refunded/);
});

test("the README's discovery script, pointed where nothing answers, prints the URL and the reason and exits 1", async () => {
  writeScript();
  const url = `http://127.0.0.1:${await closedPort()}/`;
  const failed = await run(process.execPath, ['discover.mjs', url], { cwd: project, timeout: 60_000 }).then(
    () => assert.fail('the script exited 0 although no agent was discovered'),
    (err: { code?: number; stdout: string; stderr: string }) => err,
  );
  assert.equal(failed.code, 1, failed.stderr);
  assert.doesNotMatch(failed.stdout, /snapshot v1: \[\]/, 'an empty snapshot is not reported as a result');
  assert.ok(failed.stderr.startsWith(`${url}: `), failed.stderr);
  assert.match(failed.stderr, /ECONNREFUSED/);
});

test("the README's discovery script, pointed at an agent without a billing skill, says it is unsuitable and exits 1", async () => {
  writeScript();
  const shipping = await startAdkPeer({
    name: 'shipping',
    description: 'Shipping.',
    reply: 'shipping here',
    card: (port) => adkStyleCard(port, 'Shipping Agent', [{ id: 'parcels', tags: ['shipping'] }]),
  });
  try {
    const failed = await run(process.execPath, ['discover.mjs', shipping.baseUrl], { cwd: project, timeout: 60_000 }).then(
      () => assert.fail('the script exited 0 although no agent was selected'),
      (err: { code?: number; stderr: string }) => err,
    );
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, new RegExp(`^${shipping.baseUrl.replace(/[.]/g, '\\.')}: unsuitable: `));
  } finally {
    await shipping.close();
  }
});
