/**
 * `a2a-discovery serve` restarted on the same SQLite file (its default store, under the data
 * directory next to the configuration), as child processes: every snapshot, pin (with its owner),
 * conversation and journal entry survives; the first cycle after the restart sends only
 * conditional requests; a peer that is down at restart is still served from its last good card,
 * marked stale; and a second process on the same file is refused while the first runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

interface Ev {
  seq: number;
  type: string;
  endpoint?: string;
  conditional?: boolean;
  outcome?: string;
  sessionId?: string;
  version?: number;
}

function query<T>(file: string, sql: string, params: unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.all(sql, params, (e, rows) => {
        db.close();
        if (e) reject(e);
        else resolve(rows as T[]);
      });
    });
  });
}

let dir: string;
let billing: RunningPeer;
let warranty: RunningV1Server;
let configFile: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'restart-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1Server({ prefix: 'warranty' });
  configFile = join(dir, 'discovery.yaml');
  await writeFile(
    configFile,
    stringify({
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
      // Every card is due at every cycle, so the first cycle after a restart asks every peer.
      cache: { minTtlMs: 0, maxTtlMs: 1 },
      loop: { cycleIntervalMs: 200 },
    }),
  );
});

after(async () => {
  await Promise.all([billing.close(), warranty.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('serve restarted on its SQLite store (child processes)', () => {
  test('keeps snapshots, pins, owners, conversations and the journal; revalidates conditionally; serves a down peer stale; refuses a second process', async () => {
    // --- first run -------------------------------------------------------------------------
    const first = await startServe({ config: configFile });
    let digest: string;
    let version: number;
    let secret1: string;
    let secret2: string;
    let lastSeq: number;
    let history: unknown;
    try {
      await waitFor(async () => ((await fetch(`${first.url}/readyz`)).status === 200 ? true : undefined), 'ready');
      const snap = await waitFor(async () => {
        const r = await json(`${first.url}/api/snapshot`);
        return (r.body.agents as unknown[] | undefined)?.length === 2 ? r.body : undefined;
      }, 'both agents');
      digest = snap.digest as string;
      version = snap.version as number;
      const ready = (await json(`${first.url}/readyz`)).body;
      // Where it lives is shown to the token's holder only (no token here).
      assert.deepEqual(ready.store, { kind: 'sqlite', ok: true }, 'the default store: SQLite');
      assert.ok((await stat(join(dir, 'data', 'a2a-discovery.sqlite'))).isFile(), 'a SQLite file under the data directory');

      const t1 = (await post(`${first.url}/api/chat`, { sessionId: 'r-1', message: 'Is serial 7 under warranty?' })).body;
      assert.equal(t1.author, 'warranty_agent', JSON.stringify(t1));
      secret1 = t1.sessionSecret as string;
      const t2 = (await post(`${first.url}/api/chat`, { sessionId: 'r-2', message: 'Explain my invoice' })).body;
      assert.equal(t2.author, 'billing_agent', JSON.stringify(t2));
      secret2 = t2.sessionSecret as string;

      // A second process on the same store file is refused, clearly, while this one runs.
      const second = await runCli(['serve', '--config', configFile, '--port', '0']);
      assert.equal(second.code, 1);
      assert.match(second.stderr + second.stdout, /SQLite store .*a2a-discovery\.sqlite is in use by another process/);

      const events = (await json(`${first.url}/api/events?since=0`)).body.events as Ev[];
      lastSeq = events.at(-1)!.seq;
      history = (await json(`${first.url}/api/snapshots`)).body.history;
      const metrics = await (await fetch(`${first.url}/metrics`)).text();
      assert.match(metrics, /a2a_discovery_store_up\{kind="sqlite"\} 1/);
    } finally {
      assert.deepEqual(await first.stop(), { code: 0, signal: null }, 'stops cleanly on SIGTERM');
    }
    const file = join(dir, 'data', 'a2a-discovery.sqlite');
    assert.ok((await stat(file)).size > 0);
    const stored = await query<{ session_id: string; digest: string }>(file, 'SELECT session_id, digest FROM a2ad_pins ORDER BY session_id');
    assert.deepEqual(
      stored.map((p) => [p.session_id, p.digest]),
      [
        ['r-1', digest],
        ['r-2', digest],
      ],
      'a clean stop keeps the pins (only ending or idling out a session releases it)',
    );

    // --- the warranty peer goes down; restart ----------------------------------------------
    await warranty.close();
    const again = await startServe({ config: configFile });
    try {
      await waitFor(async () => ((await fetch(`${again.url}/readyz`)).status === 200 ? true : undefined), 'ready again');
      const snap = (await json(`${again.url}/api/snapshot`)).body;
      assert.deepEqual([snap.digest, snap.version], [digest, version], 'the same snapshot is current, under the same version');
      assert.deepEqual((await json(`${again.url}/api/snapshots`)).body.history, history, 'the version history survived');

      // The down peer is served from its last good card, stale.
      const endpoint = await waitFor(async () => {
        const list = (await json(`${again.url}/api/endpoints`)).body.endpoints as Array<{ baseUrl: string; cache?: { stale: boolean; usable: boolean }; state: { verdict: string } }>;
        const w = list.find((e) => e.baseUrl === warranty.baseUrl);
        return w?.cache?.stale ? w : undefined;
      }, 'the warranty card served stale');
      assert.equal(endpoint.cache?.usable, true);
      assert.equal(endpoint.state.verdict, 'degraded');
      assert.ok(((await json(`${again.url}/api/snapshot`)).body.agents as Array<{ localName: string }>).some((a) => a.localName === 'warranty_agent'), 'still in the snapshot');

      // Pins and owners: each session continues with its own secret, on its digest, and only with it.
      const mine = (await json(`${again.url}/api/sessions`, { headers: { 'x-session-secret': secret2 } })).body.sessions as Array<{ sessionId: string; digest: string; owned: boolean }>;
      assert.deepEqual(
        mine.map((s) => [s.sessionId, s.digest, s.owned]),
        [['r-2', digest, true]],
      );
      assert.equal((await post(`${again.url}/api/chat`, { sessionId: 'r-2', message: 'and the invoice?' })).status, 403, 'a stranger still cannot continue it');
      const t3 = (await post(`${again.url}/api/chat`, { sessionId: 'r-2', message: 'Another invoice question' }, { 'x-session-secret': secret2 })).body;
      assert.deepEqual([t3.author, t3.digest, t3.notices], ['billing_agent', digest, []]);
      const theirs = (await json(`${again.url}/api/sessions`, { headers: { 'x-session-secret': secret1 } })).body.sessions as Array<{ sessionId: string; digest: string; owned: boolean }>;
      assert.deepEqual(
        theirs.map((s) => [s.sessionId, s.digest, s.owned]),
        [['r-1', digest, true]],
      );

      // The journal: the first run's story is there, and numbering continues after it.
      const events = (await json(`${again.url}/api/events?since=0`)).body.events as Ev[];
      const before = events.filter((e) => e.seq <= lastSeq);
      const after = events.filter((e) => e.seq > lastSeq);
      assert.ok(before.some((e) => e.type === 'snapshot.published' && e.version === version), 'the publication from before the restart');
      assert.deepEqual(
        before.filter((e) => e.type === 'session.pinned').map((e) => e.sessionId),
        ['r-1', 'r-2'],
      );
      assert.ok(!before.some((e) => e.type === 'card.fetch'), 'cache chatter was counted, not journaled');
      assert.ok(!after.some((e) => e.type === 'snapshot.published'), 'nothing new to publish');

      // The first cycle after the restart sent only conditional requests; the live peer answered 304.
      const fetches = after.filter((e) => e.type === 'card.fetch');
      assert.ok(fetches.length >= 2, JSON.stringify(fetches));
      assert.deepEqual(
        fetches.filter((e) => !e.conditional),
        [],
        'no unconditional request',
      );
      assert.ok(after.some((e) => e.type === 'card.result' && e.endpoint === billing.baseUrl && e.outcome === 'revalidated'));
    } finally {
      assert.deepEqual(await again.stop(), { code: 0, signal: null });
    }

    // The conversation kept its history in ADK's tables on the same file: two turns of r-2.
    const rows = await query<{ event_data: string }>(file, "SELECT event_data FROM events WHERE session_id = 'r-2' ORDER BY timestamp");
    const said = rows.map((r) => JSON.parse(r.event_data) as { author: string; content?: { parts?: Array<{ text?: string }> } }).filter((e) => e.author === 'user');
    assert.deepEqual(
      said.map((e) => e.content?.parts?.[0]?.text),
      ['Explain my invoice', 'Another invoice question'],
      'both user turns of r-2, one before and one after the restart',
    );
  });
});
