/**
 * Two `a2a-discovery serve` child processes on one real PostgreSQL: SIGTERM to the leader during a
 * chat turn steps it down at once — the follower leads long before its next try of the lock
 * (`leaderRetryMs` is 30 s here, the wait is bounded well below) — while the turn in flight
 * finishes on the draining replica, whose pin reaches the database; the session continues on the
 * new leader on its digest, and the published snapshot is the same: nothing lost.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { GatedPeer } from '../helpers/gated-peer.js';
import { startGatedPeer } from '../helpers/gated-peer.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

interface Ready {
  ready: boolean;
  draining?: boolean;
  replica: { id: string; role: 'leader' | 'follower'; epoch: number; digest: string | null; storeDigest: string | null; inSync: boolean };
}
const readyz = async (r: ServeProcess) => (await json(`${r.url}/readyz`)).body as unknown as Ready;

describe('SIGTERM to the leading replica (two serve processes on PostgreSQL)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let dir: string;
  let peer: GatedPeer;
  const replicas: ServeProcess[] = [];

  before(async () => {
    pg = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'replica-drain-'));
    peer = await startGatedPeer('billing: your invoice is paid');
    const configFile = join(dir, 'discovery.yaml');
    await writeFile(
      configFile,
      stringify({
        allow: [new URL(peer.baseUrl).origin],
        allowLoopback: true,
        vocabulary: [{ tag: 'billing', description: 'billing questions.', keywords: ['invoice'] }],
        needs: [{ tag: 'billing' }],
        static: [{ name: 'billing_agent', url: peer.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
        store: pg.url,
        // A follower tries the lock only every 30 s: a takeover sooner than that is the step-down's.
        replica: { leaderRetryMs: 30_000, pollMs: 30_000, leaseMs: 61_000 },
        server: { drainTimeoutMs: 20_000 },
      }),
    );
    replicas.push(await startServe({ config: configFile, logLevel: 'info' }));
    await waitFor(async () => ((await readyz(replicas[0]!)).replica.role === 'leader' ? true : undefined), 'the first replica leading');
    replicas.push(await startServe({ config: configFile, logLevel: 'info' }));
  });

  after(async () => {
    peer.open();
    for (const r of replicas) r.signal('SIGKILL');
    await Promise.all(replicas.map((r) => r.exit));
    await peer.close();
    await pg.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the follower leads at once, the turn in flight finishes, the session and the snapshot carry over', async () => {
    const [leader, follower] = replicas as [ServeProcess, ServeProcess];
    const before = await waitFor(async () => {
      const [a, b] = [await readyz(leader), await readyz(follower)];
      return a.ready && b.ready && b.replica.role === 'follower' && b.replica.inSync && b.replica.digest !== null ? { a, b } : undefined;
    }, 'a leader and a follower in sync');
    const digest = before.a.replica.digest;

    // A turn in flight on the leader when SIGTERM comes.
    peer.reset();
    const turn = post(`${leader.url}/api/chat`, { message: 'Explain my invoice' });
    await peer.entered();
    leader.signal('SIGTERM');

    const led = await waitFor(
      async () => {
        const b = await readyz(follower);
        return b.replica.role === 'leader' ? b : undefined;
      },
      'the follower leading after the step-down',
      5_000,
    );
    assert.ok(led.replica.epoch > before.a.replica.epoch, 'the takeover moved the fencing epoch');
    assert.equal(led.replica.storeDigest, digest, 'the published snapshot carried over');
    const draining = await readyz(leader);
    assert.equal(draining.draining, true, 'the former leader is still draining, unready');

    peer.open();
    const done = await turn;
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.reply, 'billing: your invoice is paid');
    assert.deepEqual(await leader.exit, { code: 0, signal: null }, leader.output());
    assert.match(leader.output(), /stepped down as leader/);

    // The session the draining replica started continues on the new leader, on its digest.
    const next = await post(`${follower.url}/api/chat`, { sessionId: done.body.sessionId, message: 'Another invoice question' }, { 'x-session-secret': String(done.body.sessionSecret) });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.deepEqual([next.body.author, next.body.digest], ['billing_agent', done.body.digest]);
  });
});
