/**
 * Reload without restart (docs/operations.md "Reload"): `a2a-discovery serve` run as a child
 * process against real loopback A2A agents. SIGHUP after adding a static agent publishes a snapshot
 * with it in the same process while a session started before stays pinned and answers; a broken
 * file is refused through the API with its line and the old snapshot keeps serving; an allowlist
 * change removing a host makes its agent leave; a port change is refused naming `server.port`;
 * with `config.watch`, writing the file is enough.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
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

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const jsonType = { 'content-type': 'application/json' };
let dir: string;
let file: string;
let billing: RunningPeer;
let returns: RunningPeer;
let shipping: RunningPeer;
let registry: JsonServer;
let s: ServeProcess;

/** Billing (static), returns (static once added), shipping (proposed by a registry, while allowed). */
function config(o: { returns?: boolean; allowShipping?: boolean; extra?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    allow: [new URL(billing.baseUrl).origin, new URL(returns.baseUrl).origin, registry.origin, ...(o.allowShipping === false ? [] : [new URL(shipping.baseUrl).origin])],
    allowLoopback: true,
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'], examples: ['Where is my invoice?'] },
      { tag: 'returns', description: 'Returns and refunds.', keywords: ['return', 'refund'] },
      { tag: 'shipping', description: 'Parcels and delivery.', keywords: ['parcel'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'returns' }, { tag: 'shipping' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      ...(o.returns === true ? [{ name: 'returns_agent', url: returns.baseUrl, description: 'Handles returns.', tags: ['returns'] }] : []),
    ],
    sources: { registries: [{ id: 'partners', url: `${registry.origin}/agents` }] },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
    store: 'memory',
    ...o.extra,
  };
}

async function agents(): Promise<{ version: number; digest: string; names: string[] }> {
  const body = (await json(`${s.url}/api/snapshot`)).body;
  return { version: body.version as number, digest: body.digest as string, names: ((body.agents as Array<{ localName: string }> | undefined) ?? []).map((a) => a.localName).sort() };
}

async function events(type: string): Promise<Array<Record<string, unknown>>> {
  return ((await json(`${s.url}/api/events`)).body.events as Array<Record<string, unknown>>).filter((e) => e.type === type);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reload-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', reply: 'returns: label sent', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'returns', tags: ['returns'] }]) });
  shipping = await startAdkPeer({ name: 'shipping', description: 'Shipping.', reply: 'shipping: on its way', card: (port) => adkStyleCard(port, 'Shipping Agent', [{ id: 'parcels', tags: ['shipping'] }]) });
  registry = await startJsonServer();
  registry.routes.set('/agents', { body: { agents: [{ name: 'shipping_agent', url: shipping.baseUrl, tags: ['shipping'] }] } });
  file = join(dir, 'discovery.yaml');
  await writeFile(file, stringify(config()));
  s = await startServe({ config: file });
});

after(async () => {
  await s.stop();
  await Promise.all([billing.close(), returns.close(), shipping.close(), registry.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('serve: reload without restart (child process)', () => {
  let pinned: { digest: string; secret: string };

  test('a static agent added to the file + SIGHUP: published by the same process; a session started before stays pinned and answers', async () => {
    const first = await waitFor(async () => {
      const a = await agents();
      return a.names.length === 2 ? a : undefined;
    }, 'the first snapshot');
    assert.deepEqual(first.names, ['billing_agent', 'shipping_agent']);
    const chat = (await json(`${s.url}/api/chat`, { method: 'POST', headers: jsonType, body: JSON.stringify({ sessionId: 'before-reload', message: 'Where is my invoice?' }) })).body;
    assert.equal(chat.digest, first.digest);
    pinned = { digest: first.digest, secret: chat.sessionSecret as string };

    const text = stringify(config({ returns: true }));
    await writeFile(file, text);
    const pid = s.pid;
    s.signal('SIGHUP');
    const next = await waitFor(async () => {
      const a = await agents();
      return a.names.includes('returns_agent') ? a : undefined;
    }, 'a snapshot with the added agent');
    assert.deepEqual(next.names, ['billing_agent', 'returns_agent', 'shipping_agent']);
    assert.ok(next.version > first.version);
    assert.ok(s.running, 'still running');
    assert.equal(s.pid, pid);

    const [reloaded] = await waitFor(async () => {
      const e = await events('config.reloaded');
      return e.length > 0 ? e : undefined;
    }, 'config.reloaded');
    assert.deepEqual([reloaded!.trigger, reloaded!.sha256, reloaded!.changed], ['signal', createHash('sha256').update(text).digest('hex'), ['static']]);

    // The session started before the reload stays on its snapshot, and answers.
    const owner = { ...jsonType, 'x-session-secret': pinned.secret };
    const sessions = (await json(`${s.url}/api/sessions`, { headers: owner })).body.sessions as Array<{ sessionId: string; digest: string }>;
    assert.deepEqual(sessions.map((x) => [x.sessionId, x.digest]), [['before-reload', first.digest]]);
    const again = (await json(`${s.url}/api/chat`, { method: 'POST', headers: owner, body: JSON.stringify({ sessionId: 'before-reload', message: 'And the invoice total?' }) })).body;
    assert.deepEqual([again.digest, again.reply], [first.digest, 'billing: charged once']);
  });

  test('a broken file through the API: refused with its line, the old snapshot keeps serving', async () => {
    const before = await agents();
    await writeFile(file, `${stringify(config({ returns: true }))}needs:\n  - tag: [unclosed\n`);
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', headers: jsonType, body: '{}' });
    assert.equal(r.status, 422);
    assert.equal(r.body.error, 'config-refused');
    const problems = r.body.problems as string[];
    assert.ok(problems.length > 0);
    assert.ok(problems.every((p) => p.startsWith(`${file}:`)), problems.join('\n'));
    assert.match(problems[0]!, /discovery\.yaml:\d+:\d+ /, 'the problem has its line and column');
    assert.deepEqual(await agents(), before, 'the running configuration keeps serving');
    const refused = await events('config.refused');
    assert.equal(refused.length, 1);
    assert.deepEqual(refused[0]!.problems, problems);
    assert.ok((await events('alert')).some((e) => e.kind === 'config-refused'), 'the refusal is an alert');
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    assert.match(metrics, /a2a_discovery_config_reloads_total\{result="refused"\} 1/);
    assert.match(metrics, /a2a_discovery_config_reloads_total\{result="applied"\} 1/);
  });

  test('an allowlist change removing a host: its agent leaves; the pinned session stays', async () => {
    await writeFile(file, stringify(config({ returns: true, allowShipping: false })));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', headers: jsonType, body: '{}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.changed, ['allow']);
    const after = await waitFor(async () => {
      const a = await agents();
      return a.names.includes('shipping_agent') ? undefined : a;
    }, 'the shipping agent to leave');
    assert.deepEqual(after.names, ['billing_agent', 'returns_agent']);
    const refused = await events('endpoint.refused');
    assert.ok(refused.some((e) => String(e.endpoint).startsWith(new URL(shipping.baseUrl).origin) && e.code === 'ERR_HOST_NOT_ALLOWED'), JSON.stringify(refused));
    const sessions = (await json(`${s.url}/api/sessions`, { headers: { 'x-session-secret': pinned.secret } })).body.sessions as Array<{ sessionId: string; digest: string }>;
    assert.deepEqual(sessions.map((x) => x.digest), [pinned.digest]);
  });

  test('a port change is refused naming server.port; nothing else of the file is applied', async () => {
    const before = await agents();
    await writeFile(file, stringify(config({ returns: true, allowShipping: false, extra: { server: { port: 7444 } } })));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', headers: jsonType, body: '{}' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.problems, ['server.port cannot change without a restart']);
    assert.deepEqual(r.body.changed, ['server.port']);
    assert.deepEqual(await agents(), before);
    assert.ok(s.running);
  });

  test('a routing threshold change: the routing is evaluated again against the new minimum', async () => {
    const before = (await events('routing.evaluated')).length;
    await writeFile(file, stringify(config({ returns: true, allowShipping: false, extra: { routing: { minAccuracy: 0.5 } } })));
    const r = await json(`${s.url}/api/config/reload`, { method: 'POST', headers: jsonType, body: '{}' });
    assert.deepEqual([r.status, r.body.changed], [200, ['routing.minAccuracy']]);
    const evaluated = await waitFor(async () => {
      const e = await events('routing.evaluated');
      return e.length > before ? e.at(-1) : undefined;
    }, 'a routing evaluation after the reload');
    assert.equal(evaluated.minAccuracy, 0.5);
  });

  test('config.watch: a change of the file is applied without a signal (the cap here)', async () => {
    const watched = { returns: true, allowShipping: false, extra: { routing: { minAccuracy: 0.5 }, config: { watch: true } } };
    await writeFile(file, stringify(config(watched)));
    const on = await json(`${s.url}/api/config/reload`, { method: 'POST', headers: jsonType, body: '{}' });
    assert.deepEqual([on.status, on.body.changed], [200, ['config.watch']]);
    assert.deepEqual((await agents()).names, ['billing_agent', 'returns_agent']);
    await writeFile(file, stringify(config({ ...watched, extra: { ...watched.extra, policies: { maxAgents: 1 } } })));
    const capped = await waitFor(async () => {
      const a = await agents();
      return a.names.length === 1 ? a : undefined;
    }, 'a snapshot under the new cap');
    assert.equal(capped.names.length, 1);
    const byWatch = (await events('config.reloaded')).filter((e) => e.trigger === 'watch');
    assert.deepEqual(byWatch.at(-1)!.changed, ['policies.maxAgents']);
  });
});
