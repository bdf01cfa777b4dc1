/**
 * A restart while a catalog host is down loses nothing: the service restarted on its SQLite store
 * keeps the agents an AI Catalog proposed (the restored snapshot's agents stand in for the source's
 * records until it lists again; their cards come from the store), publishes nothing new, and
 * follows the catalog again once it answers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService, type ServiceOptions } from '../../src/server/index.js';
import { createLogger } from '../../src/server/logger.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

let dir: string;
let returns: RunningPeer;
let host: JsonServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catalog-restart-'));
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', reply: 'returns: label sent', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'start', tags: ['returns'] }]) });
  host = await startJsonServer();
});
after(async () => {
  await Promise.all([returns?.close(), host?.close()]);
  await rm(dir, { recursive: true, force: true });
});

function options(): ServiceOptions {
  return {
    port: 0,
    policy: { allow: [host.origin, new URL(returns.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns.', keywords: ['return'] }],
    needs: [{ tag: 'returns' }],
    aiCatalogs: [{ id: 'platform', catalogs: [`${host.origin}/.well-known/ai-catalog.json`], pollIntervalMs: 1 }],
    health: { enterAfter: 1 },
    // A failed read is retried after 10-20 ms (the cache's backoff), not seconds.
    cache: { backoffBaseMs: 10, backoffMaxMs: 20 },
    loop: { cycleIntervalMs: 600_000, startupTimeoutMs: 5_000 },
    store: 'sqlite:state.sqlite',
    storeOptions: { dataDir: dir },
    logger: createLogger({ level: 'silent' }),
  };
}

test('restarted while the catalog host fails: the catalog agents stay, nothing is published; the catalog answers again and is followed', async () => {
  const entry = { identifier: 'urn:air:127.0.0.1:agent:returns_desk', type: 'application/a2a-agent-card+json', url: returns.cardUrl };
  host.routes.set('/.well-known/ai-catalog.json', { body: { specVersion: '1.0', entries: [entry] } });
  let s: RunningService = await startService(options());
  const first = s.loop.current();
  assert.deepEqual(first?.agents.map((a) => a.localName), ['returns_desk']);
  await s.close();

  host.routes.set('/.well-known/ai-catalog.json', { status: 503, body: { error: 'down for maintenance' } });
  s = await startService(options());
  try {
    await s.loop.refreshNow();
    const source = s.loop.sources.find((x) => x.id === 'platform')!;
    assert.equal(source.current().synced, false, 'the catalog could not be read since the restart');
    assert.equal(s.loop.current()?.digest, first!.digest, 'the restored snapshot stands: nothing was removed');
    const status = (await s.loop.status()).find((e) => e.baseUrl === returns.cardUrl);
    assert.equal(status?.state.verdict, 'selected');
    assert.deepEqual(status?.proposals[0]?.metadata, { restored: 'true', identifier: entry.identifier });
    const turn = await s.sessions.run('after-restart', 'I want to return my headphones');
    assert.equal(turn.author, 'returns_desk');

    // The catalog answers again, without the agent: the source lists, and the agent leaves.
    host.routes.set('/.well-known/ai-catalog.json', { body: { specVersion: '1.0', entries: [] } });
    await new Promise((r) => setTimeout(r, 50));
    const next = await s.loop.refreshNow();
    assert.equal(source.current().synced, true);
    assert.deepEqual(next?.agents.map((a) => a.localName), []);
  } finally {
    await s.close();
  }
});
