/**
 * Reload on replicas (docs/operations.md "Reload", "Several replicas"): two `a2a-discovery serve`
 * child processes on one real PostgreSQL. A follower that receives SIGHUP applies the file (one
 * `config.reloaded` in its events) but publishes nothing: the leader publishes. The leader's SIGHUP
 * publishes the snapshot with the added agent, and the follower serves it. A follower that reloaded
 * alone takes over, when the leader is killed, with the settings it reloaded.
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
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

async function json(url: string): Promise<Record<string, unknown>> {
  return (await (await fetch(url)).json()) as Record<string, unknown>;
}

const names = async (r: ServeProcess) => (((await json(`${r.url}/api/snapshot`)).agents as Array<{ localName: string }> | undefined) ?? []).map((a) => a.localName).sort();
const role = async (r: ServeProcess) => ((await json(`${r.url}/readyz`)).replica as { role: string; inSync: boolean } | undefined);
const reloads = async (r: ServeProcess) => ((await json(`${r.url}/api/events`)).events as Array<{ type: string; changed?: string[] }>).filter((e) => e.type === 'config.reloaded');

describe('reload on two replicas on one PostgreSQL (child processes)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let dir: string;
  let file: string;
  let billing: RunningPeer;
  let returns: RunningPeer;
  const replicas: ServeProcess[] = [];

  const config = (withReturns: boolean) =>
    stringify({
      allow: [new URL(billing.baseUrl).origin, new URL(returns.baseUrl).origin],
      allowLoopback: true,
      vocabulary: [
        { tag: 'billing', description: 'Invoices.', keywords: ['invoice'] },
        { tag: 'returns', description: 'Returns.', keywords: ['return'] },
      ],
      needs: [{ tag: 'billing' }, { tag: 'returns' }],
      static: [
        { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
        ...(withReturns ? [{ name: 'returns_agent', url: returns.baseUrl, description: 'Handles returns.', tags: ['returns'] }] : []),
      ],
      cache: { minTtlMs: 0 },
      // Agents leave at once (the takeover test removes one).
      loop: { cycleIntervalMs: 200, removalGraceMs: 0 },
      store: pg.url,
      replica: { leaderRetryMs: 200, pollMs: 500, leaseMs: 3_000 },
    });

  before(async () => {
    pg = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'reload-replicas-'));
    billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
    returns = await startAdkPeer({ name: 'returns', description: 'Returns.', reply: 'returns: label sent', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'returns', tags: ['returns'] }]) });
    file = join(dir, 'discovery.yaml');
    await writeFile(file, config(false));
    // One after another: the first takes the lock and discovers; the second follows.
    for (let i = 0; i < 2; i++) replicas.push(await startServe({ config: file }));
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all([billing.close(), returns.close()]);
    await pg.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a follower applies a reload and publishes nothing; the leader\'s reload publishes and the follower serves it', async () => {
    const roles = await waitFor(async () => {
      const all = await Promise.all(replicas.map(role));
      return all.every((r) => r?.inSync === true) && (await Promise.all(replicas.map(names))).every((n) => n.length === 1) ? all : undefined;
    }, 'two replicas in sync on the first snapshot');
    const leader = replicas[roles.findIndex((r) => r!.role === 'leader')]!;
    const follower = replicas[roles.findIndex((r) => r!.role === 'follower')]!;
    assert.ok(leader !== follower);

    await writeFile(file, config(true));
    follower.signal('SIGHUP');
    const [applied] = await waitFor(async () => {
      const r = await reloads(follower);
      return r.length > 0 ? r : undefined;
    }, 'the follower\'s config.reloaded');
    assert.deepEqual(applied!.changed, ['static']);
    assert.ok(follower.running);
    // The leader publishes; it has not reloaded yet.
    await fetch(`${leader.url}/api/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual([await names(leader), await names(follower)], [['billing_agent'], ['billing_agent']]);

    leader.signal('SIGHUP');
    for (const r of [leader, follower]) {
      await waitFor(async () => ((await names(r)).includes('returns_agent') ? true : undefined), 'the added agent on every replica');
    }
    assert.deepEqual(await names(follower), ['billing_agent', 'returns_agent']);
    assert.equal((await reloads(leader)).length, 1);
  });

  test('a follower that reloaded takes over with its reloaded settings when the leader is killed', async () => {
    const roles = await Promise.all(replicas.map(role));
    const leader = replicas[roles.findIndex((r) => r!.role === 'leader')]!;
    const follower = replicas[roles.findIndex((r) => r!.role === 'follower')]!;
    // Only the follower reads the file without the returns agent; the leader keeps publishing it.
    await writeFile(file, config(false));
    const before = (await reloads(follower)).length;
    follower.signal('SIGHUP');
    await waitFor(async () => ((await reloads(follower)).length > before ? true : undefined), 'the follower\'s second config.reloaded');
    await fetch(`${leader.url}/api/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual(await names(follower), ['billing_agent', 'returns_agent'], 'the leader still publishes its settings');
    const version = (await json(`${follower.url}/api/snapshot`)).version as number;

    leader.signal('SIGKILL');
    await leader.exit;
    await waitFor(async () => ((await role(follower))?.role === 'leader' ? true : undefined), 'the follower leading');
    await waitFor(async () => ((await names(follower)).join() === 'billing_agent' ? true : undefined), 'a snapshot with the follower\'s reloaded settings');
    const now = await json(`${follower.url}/api/snapshot`);
    assert.ok((now.version as number) > version, `published a newer snapshot (${String(now.version)} > ${version})`);
  });
});
