/**
 * A client generated from the OpenAPI document (docs/service.md "The OpenAPI document") works:
 * `openapi-typescript` generates the types from the served `/openapi.json`, a small client on
 * `openapi-fetch` written against them is type-checked by `tsc` — and a client that sends the
 * search a wrong body does not compile — then runs against a real service over a real A2A
 * agent: `POST /api/registry/search` finds it, `GET /api/snapshot` gives the digest the service
 * holds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import type { RunningService } from '../../packages/service/src/index.js';
import { fullService } from '../../scripts/openapi.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'client-admin-token-0123456789abcdef';

let service: RunningService;
let warranty: RunningPeer;
let dir: string;

before(async () => {
  warranty = await startV1CardServer({ card: (port) => v1Card(port) });
  service = await fullService({
    token: TOKEN,
    // The card asks a bearer token of its callers (as two-agent-service.ts presents it).
    credentials: (origin) => (origin === new URL(warranty.baseUrl).origin ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [new URL(warranty.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'warranty', description: 'Warranty status.' }],
    needs: [{ tag: 'warranty' }],
    static: [{ name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] }],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
  });
  await waitFor(async () => (service.loop.current()?.agents.length === 1 ? true : undefined), 'the warranty agent admitted');
  // Inside the repository, so that the client resolves openapi-fetch from its node_modules.
  dir = await mkdtemp(join(ROOT, '.tmp-openapi-client-'));
});

after(async () => {
  await service?.close();
  await warranty?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { cwd: dir, timeout: 120_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, out: `${stdout}${stderr}` });
    });
  });
}

const client = (searchBody: string): string => `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const api = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { authorization: \`Bearer \${process.env.TOKEN!}\` } });
const found = await api.POST('/api/registry/search', { body: ${searchBody} });
if (found.data === undefined) throw new Error(\`search failed: \${JSON.stringify(found.error)}\`);
const snapshot = await api.GET('/api/snapshot');
if (snapshot.data === undefined) throw new Error('no snapshot');
const names: string[] = found.data.results.map((r) => r.displayName);
const digest: string = snapshot.data.digest;
const version: number = snapshot.data.version;
console.log(JSON.stringify({ names, digest, version }));
`;

test('a client generated from /openapi.json type-checks, refuses a wrong body at compile time, and calls search and snapshot', async () => {
  const res = await fetch(`${service.url}/openapi.json`);
  const types = astToString(await openapiTS((await res.json()) as Parameters<typeof openapiTS>[0]));
  await writeFile(join(dir, 'schema.d.ts'), types);
  await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
  await writeFile(join(dir, 'client.ts'), client(`{ query: { text: 'is serial 123 under warranty?' }, federation: 'none' }`));
  await writeFile(join(dir, 'wrong.ts'), client(`{ query: { text: 123 }, federation: 'none' }`));

  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--types', 'node'];
  const good = await run(tsc, [...flags, 'client.ts']);
  assert.equal(good.code, 0, good.out);
  const wrong = await run(tsc, [...flags, 'wrong.ts']);
  assert.notEqual(wrong.code, 0, 'a search body whose text is a number must not compile');
  assert.match(wrong.out, /wrong\.ts.*Type 'number' is not assignable to type 'string'/s);

  const ran = await run(join(ROOT, 'node_modules/tsx/dist/cli.mjs'), ['client.ts'], { BASE_URL: service.url, TOKEN });
  assert.equal(ran.code, 0, ran.out);
  const out = JSON.parse(ran.out.trim().split('\n').at(-1)!) as { names: string[]; digest: string; version: number };
  assert.deepEqual(out.names, ['warranty_agent']);
  assert.equal(out.digest, service.loop.current()!.digest);
  assert.equal(out.version, service.loop.current()!.version);
});
