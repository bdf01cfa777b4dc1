/**
 * A restart loses nothing an AI Catalog gave: the catalog documents are kept in the SQLite store,
 * so a restarted service revalidates each one (a 304, not a 200) and, while a catalog host is
 * down, lists its agents from the last good copy. A source whose acceptance rules changed does not
 * trust what an earlier configuration accepted: it reads its catalogs afresh, and until it can,
 * the restored snapshot's agents stand in for its records. Either way nothing is published anew
 * while the host is down, and the catalog is followed again once it answers.
 */
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import type { AiCatalogSource } from '../../packages/core/src/sources/index.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

let dir: string;
let returns: RunningPeer;
let host: JsonServer;

const PATH = '/.well-known/ai-catalog.json';

before(async () => {
  returns = await startAdkPeer({ name: 'returns', description: 'Returns.', reply: 'returns: label sent', card: (port) => adkStyleCard(port, 'Returns Agent', [{ id: 'start', tags: ['returns'] }]) });
  host = await startJsonServer();
});
after(async () => {
  await Promise.all([returns?.close(), host?.close()]);
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catalog-restart-'));
  host.requests.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The catalog under a strong ETag, always expired (max-age=0): each read is conditional, a 304 while unchanged. */
function serveCatalog(entries: object[], etag: string): void {
  host.routes.set(PATH, (req) =>
    req.headers['if-none-match'] === etag
      ? { status: 304, body: '', headers: { etag, 'cache-control': 'max-age=0' } }
      : { body: { specVersion: '1.0', entries }, headers: { etag, 'cache-control': 'max-age=0' } },
  );
}

/** The catalog requests since `from`: what each sent as If-None-Match. */
const catalogReads = (from: number): Array<string | undefined> =>
  host.requests.slice(from).filter((r) => r.path === PATH).map((r) => r.headers['if-none-match'] as string | undefined);

function options(catalog: Partial<NonNullable<ServiceOptions['aiCatalogs']>[number]> = {}): ServiceOptions {
  return {
    port: 0,
    policy: { allow: [host.origin, new URL(returns.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'returns', description: 'Returns.', keywords: ['return'] }],
    needs: [{ tag: 'returns' }],
    aiCatalogs: [{ id: 'platform', catalogs: [`${host.origin}/.well-known/ai-catalog.json`], pollIntervalMs: 1, ...catalog }],
    health: { enterAfter: 1 },
    // A failed read is retried after 10-20 ms (the cache's backoff), not seconds; max-age=0 is taken as said.
    cache: { backoffBaseMs: 10, backoffMaxMs: 20, minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000, startupTimeoutMs: 5_000 },
    store: 'sqlite:state.sqlite',
    storeOptions: { dataDir: dir },
    logger: createLogger({ level: 'silent' }),
  };
}

const entry = () => ({ identifier: 'urn:air:127.0.0.1:agent:returns_desk', type: 'application/a2a-agent-card+json', url: returns.cardUrl });

/** The first run: the catalog (ETag "v1") read and published, the service stopped; its snapshot. */
async function firstRun(): Promise<Snapshot> {
  serveCatalog([entry()], '"v1"');
  const s = await startService(options());
  const first = s.loop.current();
  await s.close();
  assert.deepEqual(first?.agents.map((a) => a.localName), ['returns_desk']);
  return first!;
}

test('restarted: the stored catalog is revalidated (If-None-Match, a 304), not read again', async () => {
  const first = await firstRun();

  const from = host.requests.length;
  const s = await startService(options());
  try {
    assert.deepEqual(catalogReads(from), ['"v1"'], 'one conditional read at start-up, answered 304');
    assert.equal(s.loop.current()?.digest, first.digest);
    const reported = s.loop.sources.find((x) => x.id === 'platform') as AiCatalogSource;
    assert.deepEqual(reported.catalogs().map((c) => [c.outcome, c.etag]), [['revalidated', '"v1"']]);
  } finally {
    await s.close();
  }
});

test('restarted while the catalog host fails: its agents are listed from the last good copy, nothing is published; the catalog answers again and is followed', async () => {
  const first = await firstRun();

  host.routes.set(PATH, { status: 503, body: { error: 'down for maintenance' } });
  const s = await startService(options());
  try {
    await s.loop.refreshNow();
    const source = s.loop.sources.find((x) => x.id === 'platform')!;
    assert.equal(source.current().synced, true, 'the source lists from the stored catalog');
    assert.equal(s.loop.current()?.digest, first.digest, 'nothing was removed, nothing published');
    const status = (await s.loop.status()).find((e) => e.baseUrl === returns.baseUrl);
    assert.equal(status?.state.verdict, 'selected');
    assert.equal(status?.proposals[0]?.metadata?.['identifier'], entry().identifier);
    assert.equal(status?.proposals[0]?.metadata?.['restored'], undefined, 'proposed by the catalog itself, not the stand-in');
    const turn = await s.sessions.run('after-restart', 'I want to return my headphones');
    assert.equal(turn.author, 'returns_desk');

    // The catalog answers again, without the agent: the agent leaves.
    serveCatalog([], '"v2"');
    await new Promise((r) => setTimeout(r, 50));
    const next = await s.loop.refreshNow();
    assert.deepEqual(next?.agents.map((a) => a.localName), []);
  } finally {
    await s.close();
  }
});

test('restarted with other acceptance rules while the catalog host fails: the stored copy is not trusted, the restored snapshot stands in; the catalog is read afresh once it answers', async () => {
  const first = await firstRun();

  // The document size bound is among the rules a catalog is accepted under: the copy stored under the old ones is dropped.
  host.routes.set(PATH, { status: 503, body: { error: 'down for maintenance' } });
  const s = await startService(options({ maxBytes: 500_000 }));
  try {
    await s.loop.refreshNow();
    const source = s.loop.sources.find((x) => x.id === 'platform')!;
    assert.equal(source.current().synced, false, 'the catalog could not be read under the new rules since the restart');
    assert.equal(s.loop.current()?.digest, first.digest, 'the restored snapshot stands: nothing was removed');
    const status = (await s.loop.status()).find((e) => e.baseUrl === returns.baseUrl);
    assert.equal(status?.state.verdict, 'selected');
    assert.deepEqual(status?.proposals[0]?.metadata, { restored: 'true', identifier: entry().identifier });
    const turn = await s.sessions.run('after-restart', 'I want to return my headphones');
    assert.equal(turn.author, 'returns_desk');

    // The catalog answers again: read whole (no validator from the old copy), and followed.
    const from = host.requests.length;
    serveCatalog([], '"v1"');
    await new Promise((r) => setTimeout(r, 50));
    const next = await s.loop.refreshNow();
    assert.deepEqual(catalogReads(from), [undefined], 'no If-None-Match from a copy accepted under other rules');
    assert.equal(source.current().synced, true);
    assert.deepEqual(next?.agents.map((a) => a.localName), []);
  } finally {
    await s.close();
  }
});
