/**
 * Per-agent transport options from a registry record survive a restart: the SQLite store keeps the
 * snapshot agents' `transport`, and while the registry is down the restored snapshot's agents
 * stand in for its records *with* their options, so the same digest stands (nothing is published
 * without them) and the tree still calls the agent the configured way.
 */
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { startBrokenStreamPeer } from '../interop/transport-peers.js';
import type { TransportPeer } from '../interop/transport-peers.js';

let dir: string;
let peer: TransportPeer & { cardUrl: string };
let registry: JsonServer;

before(async () => {
  peer = await startBrokenStreamPeer({ prefix: 'returns', tag: 'returns' });
  registry = await startJsonServer();
});
after(async () => {
  await Promise.all([peer?.close(), registry?.close()]);
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'transport-restart-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function options(): ServiceOptions {
  return {
    port: 0,
    policy: { allow: [registry.origin, new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns.', keywords: ['return'] }],
    needs: [{ tag: 'returns' }],
    registries: [{ id: 'catalog', url: `${registry.origin}/agents`, pollIntervalMs: 600_000 }],
    health: { enterAfter: 1 },
    cache: { backoffBaseMs: 10, backoffMaxMs: 20, minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000, startupTimeoutMs: 5_000 },
    store: 'sqlite:state.sqlite',
    storeOptions: { dataDir: dir },
    logger: createLogger({ level: 'silent' }),
  };
}

test('restarted while the registry is down: the restored agent keeps `streaming: false`, the digest stands, the turn uses message/send', async () => {
  registry.routes.set('/agents', { body: { agents: [{ name: 'returns_desk', url: peer.baseUrl, tags: ['returns'], streaming: false }] } });
  const first = await startService(options());
  const snapshot = first.loop.current();
  await first.close();
  assert.deepEqual(
    snapshot?.agents.map((a) => [a.localName, a.transport]),
    [['returns_desk', { streaming: false }]],
  );

  registry.routes.set('/agents', { status: 503, body: { error: 'down for maintenance' } });
  const s = await startService(options());
  try {
    await s.loop.refreshNow();
    assert.equal(s.loop.current()?.digest, snapshot!.digest, 'the restored snapshot stands, options included');
    assert.deepEqual(s.loop.current()?.agents[0]?.transport, { streaming: false });
    const from = peer.calls.length;
    const turn = await s.sessions.run('after-restart', 'I want to return my headphones');
    assert.equal(turn.author, 'returns_desk');
    assert.deepEqual(
      peer.calls.slice(from).map((c) => c.method),
      ['message/send'],
    );
  } finally {
    await s.close();
  }
});
