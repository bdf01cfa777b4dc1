/**
 * Reload, the rest (docs/operations.md "Reload"): `a2a-discovery serve` as a child process. A
 * lowered `server.limits.maxBodyBytes` + SIGHUP bites on the next request, refused naming the key;
 * a limit fixed at start (a socket timeout) is refused naming it; a reload through the API is
 * journaled as an `api.action` with the caller's identity; a peer credential's `valueFile`
 * rewritten + SIGHUP: the peer (a registry source on loopback) receives the new header.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'reload-live-admin-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

let dir: string;
let file: string;
let billing: RunningPeer;
let registry: JsonServer;
let s: ServeProcess;

function config(limits: Record<string, unknown>): Record<string, unknown> {
  return {
    allow: [new URL(billing.baseUrl).origin, registry.origin],
    allowLoopback: true,
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] }],
    needs: [{ tag: 'billing' }],
    static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
    // A registry that needs a key: its credential's value is in a file.
    sources: { registries: [{ id: 'partners', url: `${registry.origin}/agents`, pollIntervalMs: 200 }] },
    credentials: [{ origin: registry.origin, header: 'x-api-key', valueFile: join(dir, 'registry-key') }],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
    store: 'memory',
    server: { tokenFile: 'token', limits },
  };
}

async function events(type: string): Promise<Array<Record<string, unknown>>> {
  return ((await json(`${s.url}/api/events`)).body.events as Array<Record<string, unknown>>).filter((e) => e.type === type);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reload-live-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  registry = await startJsonServer();
  registry.routes.set('/agents', { body: { agents: [] } });
  file = join(dir, 'discovery.yaml');
  await writeFile(join(dir, 'token'), TOKEN);
  await writeFile(join(dir, 'registry-key'), 'registry-key-one\n');
  await writeFile(file, stringify(config({ maxBodyBytes: 4096 })));
  s = await startServe({ config: file });
});

after(async () => {
  await s.stop();
  await Promise.all([billing.close(), registry.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('serve: limits live on reload; a reload through the API is journaled (child process)', () => {
  // A JSON object of about 2,000 bytes: under 4,096, over 1,024.
  const body = JSON.stringify({ note: 'x'.repeat(2_000) });

  test('server.limits.maxBodyBytes lowered + SIGHUP: the next request over it is 413 naming the key', async () => {
    assert.equal((await json(`${s.url}/api/refresh`, { method: 'POST', body })).status, 200, 'under the limit at start');
    await writeFile(file, stringify(config({ maxBodyBytes: 1024 })));
    s.signal('SIGHUP');
    const [reloaded] = await waitFor(async () => {
      const e = await events('config.reloaded');
      return e.length > 0 ? e : undefined;
    }, 'config.reloaded');
    assert.deepEqual([reloaded!.trigger, reloaded!.changed], ['signal', ['server.limits.maxBodyBytes']]);
    const r = await json(`${s.url}/api/refresh`, { method: 'POST', body });
    assert.equal(r.status, 413);
    assert.equal(r.body.message, 'the request body is larger than 1024 bytes (server.limits.maxBodyBytes)');
    assert.equal((await json(`${s.url}/api/refresh`, { method: 'POST', body: '{}' })).status, 200, 'a small body still passes');
    assert.ok(s.running);
  });

  test('a limit fixed at start (a socket timeout) is refused naming its key; the live limit stays', async () => {
    await writeFile(file, stringify(config({ maxBodyBytes: 1024, headersTimeoutMs: 20_000 })));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', body: '{}' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.problems, ['server.limits.headersTimeoutMs cannot change without a restart']);
    assert.equal((await json(`${s.url}/api/refresh`, { method: 'POST', body })).status, 413);
  });

  test('POST /api/config/reload is an api.action in the journal, with the caller (the admin token)', async () => {
    await writeFile(file, stringify(config({ maxBodyBytes: 8192 })));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', body: '{}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.changed, ['server.limits.maxBodyBytes']);
    assert.equal((await json(`${s.url}/api/refresh`, { method: 'POST', body })).status, 200, 'raised again: passes');
    const journal = await waitFor(async () => {
      const j = ((await json(`${s.url}/api/journal?types=api.action`)).body.events as Array<{ action: string; actor: Record<string, unknown> }>).filter((e) => e.action === 'config.reload');
      return j.length >= 2 ? j : undefined;
    }, 'the reloads in the journal');
    // The refused one (previous test) and the applied one, both by the admin token.
    assert.deepEqual(journal.map((e) => e.actor), [{ kind: 'admin-token', role: 'admin' }, { kind: 'admin-token', role: 'admin' }]);
  });

  test('a peer credential\'s valueFile rewritten + SIGHUP: the peer receives the new value (the file is unchanged)', async () => {
    const keysSeen = () => registry.requests.filter((r) => r.path === '/agents').map((r) => r.headers['x-api-key']);
    await waitFor(async () => (keysSeen().includes('registry-key-one') ? true : undefined), 'the registry asked with the first key');
    const reloads = (await events('config.reloaded')).length;
    await writeFile(join(dir, 'registry-key'), 'registry-key-two\n');
    s.signal('SIGHUP');
    const [reloaded] = await waitFor(async () => {
      const e = await events('config.reloaded');
      return e.length > reloads ? e.slice(reloads) : undefined;
    }, 'config.reloaded');
    assert.deepEqual(reloaded!.changed, [], 'the configuration file did not change');
    const asked = registry.requests.length;
    await waitFor(async () => (registry.requests.slice(asked).some((r) => r.path === '/agents' && r.headers['x-api-key'] === 'registry-key-two') ? true : undefined), 'the registry asked with the new key');
    await waitFor(async () => (registry.requests.slice(asked + 2).some((r) => r.path === '/agents') ? true : undefined), 'more requests');
    assert.deepEqual([...new Set(registry.requests.slice(asked + 1).map((r) => r.headers['x-api-key']))], ['registry-key-two'], 'the old key is no longer sent');
  });

  test('a credential file that cannot be read: the reload is refused naming it; the old value keeps being sent', async () => {
    await rm(join(dir, 'registry-key'));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', body: '{}' });
    assert.equal(r.status, 422);
    assert.match((r.body.problems as string[]).join('\n'), /credentials\[0\]\.valueFile.*registry-key/);
    const asked = registry.requests.length;
    await waitFor(async () => (registry.requests.slice(asked).some((x) => x.path === '/agents') ? true : undefined), 'another request');
    assert.equal(registry.requests.slice(asked).find((x) => x.path === '/agents')!.headers['x-api-key'], 'registry-key-two');
  });
});
