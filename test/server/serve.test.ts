/**
 * `a2a-discovery serve`, run as a child process the way a user runs it, against real loopback
 * A2A agents (ADK JS toA2a, A2A 0.3; @a2a-js/sdk 1.x, A2A 1.0 only): every API route, SSE
 * resumption, metric names, token enforcement on a non-loopback bind, configuration errors with
 * line and column, and a clean shutdown on SIGTERM.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import type { ServeExit } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

let dir: string;
let billing: RunningPeer;
let warranty: RunningV1Server;

function config(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    allow: [new URL(billing.baseUrl).origin, new URL(warranty.baseUrl).origin],
    allowLoopback: true,
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] },
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'], critical: true },
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
    ...extra,
  };
}

async function writeConfig(name: string, doc: Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, stringify(doc));
  return file;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'serve-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1Server({ prefix: 'warranty' });
});

after(async () => {
  await Promise.all([billing.close(), warranty.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a2a-discovery serve (child process)', () => {
  test('every API route, SSE resumption, metrics, and a clean shutdown on SIGTERM', async () => {
    const s = await startServe({ config: await writeConfig('ok.yaml', config()) });
    let stopped: Promise<ServeExit>;
    try {
      assert.deepEqual((await json(`${s.url}/healthz`)).body, { ok: true });
      await waitFor(async () => ((await fetch(`${s.url}/readyz`)).status === 200 ? true : undefined), 'ready');
      const snapshot = await waitFor(async () => {
        const r = await json(`${s.url}/api/snapshot`);
        return (r.body.agents as unknown[] | undefined)?.length === 2 ? r.body : undefined;
      }, 'both agents');
      const agents = snapshot.agents as Array<{ localName: string; description: string; protocolVersion: string; card: { name: string } }>;
      assert.deepEqual(agents.map((a) => [a.localName, a.protocolVersion]), [
        ['billing_agent', '0.3'],
        ['warranty_agent', '1.0'],
      ]);
      assert.equal(agents[0]!.description, 'Answers invoice questions.');
      const digest = snapshot.digest as string;

      const snapshots = (await json(`${s.url}/api/snapshots`)).body;
      assert.equal(snapshots.current, digest);
      assert.ok((snapshots.history as unknown[]).length >= 1);
      assert.equal((await json(`${s.url}/api/snapshots/${digest}`)).body.digest, digest);
      assert.equal((await json(`${s.url}/api/snapshots/${'0'.repeat(64)}`)).status, 404);
      const firstDigest = (snapshots.history as Array<{ digest: string }>)[0]!.digest;
      const diff = (await json(`${s.url}/api/diff?from=${firstDigest}&to=${digest}`)).body;
      assert.ok(Array.isArray(diff.added));

      const endpoints = (await json(`${s.url}/api/endpoints`)).body.endpoints as Array<{ baseUrl: string; admitted: boolean; sources: string[]; cache?: { lastOutcome: string }; verdict?: { verdict: string } }>;
      assert.equal(endpoints.length, 2);
      assert.ok(endpoints.every((e) => e.admitted && e.sources[0] === 'static' && e.verdict?.verdict === 'selected'));
      const card = (await json(`${s.url}/api/endpoints/card?url=${encodeURIComponent(warranty.baseUrl)}`)).body;
      assert.match(card.body as string, /Warranty Agent/);

      const chat = (await json(`${s.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: 'api-1', message: 'Is serial 7 under warranty?' }) })).body;
      assert.deepEqual([chat.sessionId, chat.author, chat.reply, chat.digest], ['api-1', 'warranty_agent', 'warranty: Is serial 7 under warranty?', digest]);
      assert.equal((await json(`${s.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'not json' })).status, 400);
      assert.equal((await json(`${s.url}/api/chat`, { method: 'POST', body: 'not json' })).status, 415, 'text/plain is what a cross-site page can send');
      // The session belongs to its creator: the secret the first turn returned (or its cookie).
      const secret = chat.sessionSecret as string;
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(chat.notices, []);
      assert.ok((chat.agents as string[]).includes('warranty_agent'), 'the agents of the turn are listed');
      const jsonType = { 'content-type': 'application/json' };
      const owner = { ...jsonType, 'x-session-secret': secret };
      const sessions = (await json(`${s.url}/api/sessions`, { headers: owner })).body;
      assert.deepEqual((sessions.sessions as Array<{ sessionId: string; digest: string; owned: boolean }>).map((x) => [x.sessionId, x.digest, x.owned]), [['api-1', digest, true]]);
      const stranger = (await json(`${s.url}/api/sessions`)).body;
      assert.deepEqual([stranger.sessions, stranger.others], [[], 1], 'another caller sees no session id, only a count');
      // Continuing it is 403; upgrading or ending it answers as for an unknown id (404), so ids cannot be probed.
      for (const [method, path, body, status] of [['POST', '/api/chat', JSON.stringify({ sessionId: 'api-1', message: 'more' }), 403], ['POST', '/api/sessions/api-1/upgrade', '{}', 404], ['DELETE', '/api/sessions/api-1', undefined, 404]] as const) {
        const res = await json(`${s.url}${path}`, { method, headers: jsonType, ...(body !== undefined && { body }) });
        assert.equal(res.status, status, `${method} ${path} by a stranger`);
      }
      assert.equal((await json(`${s.url}/api/sessions/x%20%3Cscript%3E/upgrade`, { method: 'POST', headers: owner, body: '{}' })).status, 400, 'one session-id rule on every route');
      assert.equal((await json(`${s.url}/api/sessions/never-started/upgrade`, { method: 'POST', headers: owner, body: '{}' })).status, 404, 'no pin is created for an unknown id');
      assert.equal((await json(`${s.url}/api/sessions/api-1/upgrade`, { method: 'POST', headers: owner, body: '{}' })).body.changed, false);
      assert.equal((await json(`${s.url}/api/sessions/api-1`, { method: 'DELETE', headers: owner })).body.ended, true);

      const refreshed = (await json(`${s.url}/api/refresh`, { method: 'POST', headers: jsonType })).body;
      assert.equal(refreshed.digest, digest);

      const events = (await json(`${s.url}/api/events?since=0`)).body.events as Array<{ seq: number; type: string }>;
      assert.ok(events.some((e) => e.type === 'snapshot.published'));
      const trace = (await json(`${s.url}/api/trace`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).body;
      assert.deepEqual(trace.stats && (trace.stats as Record<string, number>).networkFetches, 3);

      // SSE: resume after a known event id; everything after it arrives, nothing before.
      const lastSeen = events.at(-3)!.seq;
      const controller = new AbortController();
      const res = await fetch(`${s.url}/api/stream`, { headers: { 'last-event-id': String(lastSeen) }, signal: controller.signal });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      const ids: number[] = [];
      while (ids.length < 2) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        ids.splice(0, ids.length, ...[...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));
      }
      controller.abort();
      assert.ok(ids.length >= 2 && ids.every((id) => id > lastSeen), `resumed ids ${ids.join(',')} after ${lastSeen}`);
      assert.equal(ids[0], lastSeen + 1, 'no event is skipped');

      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      for (const name of [
        'a2a_discovery_card_fetches_total',
        'a2a_discovery_card_cache_hits_total',
        'a2a_discovery_card_not_modified_total',
        'a2a_discovery_card_stale_entries',
        'a2a_discovery_card_fetches_in_flight',
        'a2a_discovery_card_fetches_waiting',
        'a2a_discovery_card_failures_total',
        'a2a_discovery_snapshot_version',
        'a2a_discovery_snapshot_publications_total',
        'a2a_discovery_pinned_sessions',
        'a2a_discovery_tree_evictions_total',
        'a2a_discovery_card_fetch_duration_seconds_bucket',
      ]) {
        assert.match(metrics, new RegExp(`^(# TYPE )?${name}`, 'm'), name);
      }
      assert.match(metrics, /^a2a_discovery_snapshot_version [1-9]/m);
    } finally {
      stopped = s.stop();
    }
    assert.deepEqual(await stopped, { code: 0, signal: null }, `exit code after SIGTERM (stderr: ${s.stderr()})`);
  });

  test('a non-loopback bind needs a token, and then every API call checks it', async () => {
    const noToken = await writeConfig('public-no-token.yaml', config({ server: { host: '0.0.0.0', port: 0 } }));
    const refused = await runCli(['serve', '--config', noToken]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /public-no-token\.yaml:\d+:\d+ server/);

    const withToken = await writeConfig('public.yaml', config({ server: { host: '0.0.0.0', port: 0, tokenEnv: 'TEST_SERVE_TOKEN' } }));
    const s = await startServe({ config: withToken, env: { ...process.env, TEST_SERVE_TOKEN: 'correct-horse' } });
    let stopped: Promise<ServeExit>;
    try {
      const local = s.url.replace('0.0.0.0', '127.0.0.1');
      assert.equal((await fetch(`${local}/api/snapshot`)).status, 401);
      assert.equal((await fetch(`${local}/api/snapshot`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
      assert.equal((await fetch(`${local}/metrics`)).status, 401);
      assert.equal((await fetch(`${local}/healthz`)).status, 200, 'health checks need no token');
      const ok = await fetch(`${local}/api/endpoints`, { headers: { authorization: 'Bearer correct-horse' } });
      assert.equal(ok.status, 200);
    } finally {
      stopped = s.stop();
    }
    assert.deepEqual(await stopped, { code: 0, signal: null });
  });

  test('configuration errors are printed with file, line and column, and serve exits 1', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'allow: [https://ok.example.com]\nstatic:\n  - name: Bad Name\n    url: https://ok.example.com/\n    description: x\n    tags: [nope]\nfrobnicate: true\n');
    const run = await runCli(['serve', '--config', file]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /broken\.yaml:3:\d+ static\[0\]\.name/);
    assert.match(run.stderr, /broken\.yaml:7:1 frobnicate/);
  });
});

test('a port already in use is a clear usage error (exit 2), not a crash', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as { port: number }).port;
  try {
    const file = join(dir, 'busy.yaml');
    await writeFile(file, stringify(config()));
    const run = await runCli(['serve', '--config', file, '--port', String(port)]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
  } finally {
    blocker.close();
  }
});
