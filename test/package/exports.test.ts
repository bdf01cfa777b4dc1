/**
 * The package as a user installs it: the built entries resolve by name on this Node, export what
 * the docs promise, and the built CLI runs. (`npm test` builds dist/ first, through `pretest`; a
 * dist/ older than the sources fails every test here: helpers/dist.ts.)
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { assertDistFresh } from '../helpers/dist.js';
import { LOADS_HOOK, loadedFiles, VOCABULARY_MODULES } from '../helpers/module-loads.js';

before(assertDistFresh);

const entries: Record<string, string[]> = {
  'a2a-discovery': ['parseAgentCard', 'checkCard', 'toAdkCard', 'CardCache', 'HostPolicy', 'createCardFetcher', 'EventStream', 'VirtualClock', 'DiscoveryError', 'DiscoveryLoop', 'staticSource', 'kubernetesSource', 'aiCatalogSource', 'CatalogArtifacts', 'readAiCatalog', 'verifyDetachedSignature', 'signDetached', 'selectAgents', 'SnapshotStore'],
  'a2a-discovery/adk': ['TreeFactory', 'SessionRunner', 'snapshotTreeBuilder', 'remoteAgentFor', 'V1RemoteAgent', 'AgentRegistry', 'createPolicyFetch'],
  'a2a-discovery/config': ['parseConfig', 'loadConfig', 'resolveSecrets', 'formatProblems'],
  'a2a-discovery/explorer': ['runTrace', 'compareTraces'],
  'a2a-discovery/probe': ['probeEndpoint'],
  '@a2a-discovery/store': ['openStateStore', 'parseStoreSpec', 'MemoryStateStore', 'StoreWriter'],
  '@a2a-discovery/store/replicas': ['ReplicaCoordinator'],
  '@a2a-discovery/store/adk-sessions': ['openAdkSessionService', 'SqlSessionService'],
  '@a2a-discovery/service': ['startService', 'serviceOptionsFromConfig', 'createApp'],
};

for (const [entry, names] of Object.entries(entries)) {
  test(`${entry} resolves by name to its built files and exports its API`, () => {
    // A plain node (no tsx, whose tsconfig paths map these names to the sources): resolution goes
    // through node_modules and the package's "exports", as in a user's project.
    const script = `const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify({ url: import.meta.resolve(${JSON.stringify(entry)}), kinds: Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, typeof m[n]])) }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname })) as { url: string; kinds: Record<string, string> };
    assert.match(out.url, /\/packages\/[a-z]+\/dist\//, out.url);
    for (const name of names) assert.equal(out.kinds[name], 'function', `${entry}: ${name}`);
  });
}

test('a2a-discovery/vocabulary resolves by name and holds the same tables as the root and the explorer', () => {
  const script = `
    const v = await import('a2a-discovery/vocabulary');
    const root = await import('a2a-discovery');
    const explorer = await import('a2a-discovery/explorer');
    console.log(JSON.stringify({
      url: import.meta.resolve('a2a-discovery/vocabulary'),
      same: [v.ENDPOINT_VERDICTS === root.ENDPOINT_VERDICTS, v.ENDPOINT_CAUSES === root.ENDPOINT_CAUSES, v.TRACE_CONDITIONS === explorer.TRACE_CONDITIONS, v.TIMELINE_STAGE_NAMES === explorer.TIMELINE_STAGE_NAMES],
      verdicts: Object.keys(v.ENDPOINT_VERDICTS),
      ttl: v.DNS_AID_DEFAULT_TTL_SECONDS,
    }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname })) as { url: string; same: boolean[]; verdicts: string[]; ttl: number };
  assert.match(out.url, /\/packages\/core\/dist\/vocabulary\.js$/, out.url);
  assert.deepEqual(out.same, [true, true, true, true], 'one table each, whichever entry it is read from');
  assert.ok(out.verdicts.includes('selected') && out.verdicts.includes('refused'));
  assert.equal(out.ttl, 3600);
});


test('a2a-discovery/vocabulary loads no package and none of the library but its tables', () => {
  const run = spawnSync(process.execPath, ['--import', LOADS_HOOK, '--input-type=module', '-e', "await import('a2a-discovery/vocabulary');"], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname });
  assert.equal(run.status, 0, run.stderr);
  const files = loadedFiles(run.stderr).map((f) => f.replace(/^.*\/packages\/core\/dist\//, '').replace(/\.js$/, ''));
  assert.deepEqual(files.sort(), [...VOCABULARY_MODULES].sort());
});

test('the core entry does not load ADK JS, Express or the server (the library stays light)', async () => {
  // Walk the static import graph of the built core entry and collect the packages it loads.
  const { readFile } = await import('node:fs/promises');
  const { dirname, resolve } = await import('node:path');
  const root = new URL('../../packages/core/dist/index.js', import.meta.url).pathname;
  const seen = new Set<string>();
  const packages = new Set<string>();
  const lazy = new Set<string>();
  const queue = [root];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = await readFile(file, 'utf8');
    const name = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec));
      else packages.add(name(spec));
    }
    for (const m of code.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) lazy.add(name(m[1]!));
  }
  assert.ok(seen.size > 20, `walked ${seen.size} files`);
  for (const heavy of ['@google/adk', 'express', 'hono', '@hono/node-server', 'prom-client', 'pino', '@kubernetes/client-node', 'knex', 'pg', 'sqlite3', '@mikro-orm/core']) {
    assert.equal(packages.has(heavy), false, `the core entry imports ${heavy}`);
  }
  assert.ok(packages.has('undici') && packages.has('@a2a-js/sdk'), [...packages].join(', '));
  assert.ok(lazy.has('@kubernetes/client-node'), 'the Kubernetes client is loaded only when that source is configured');
});

test('the store entry loads knex and the database drivers only when a SQL engine is opened', async () => {
  const { readFile } = await import('node:fs/promises');
  const { dirname, resolve } = await import('node:path');
  const root = new URL('../../packages/store/dist/index.js', import.meta.url).pathname;
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = [root];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = await readFile(file, 'utf8');
    for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  for (const heavy of ['knex', 'pg', 'sqlite3', '@google/adk']) assert.equal(packages.has(heavy), false, `the store entry imports ${heavy} statically`);
});

test('the built CLI prints its version', () => {
  const out = execFileSync(process.execPath, [new URL('../../packages/service/dist/cli/main.js', import.meta.url).pathname, '--version'], { encoding: 'utf8' });
  assert.match(out.trim(), /^\d+\.\d+\.\d+$/);
});
