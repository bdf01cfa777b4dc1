/**
 * The service on each durable engine, in process: a service closed and started again on the same
 * SQLite file or PostgreSQL schema keeps its current snapshot and version, its pins (the tree of
 * a pinned snapshot is rebuilt from the stored cards) and the conversation held by ADK's
 * DatabaseSessionService on the same database.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

let warranty: RunningV1Server;
let dir: string;
let pg: TestPostgres | undefined;

before(async () => {
  warranty = await startV1Server({ prefix: 'warranty' });
  dir = await mkdtemp(join(tmpdir(), 'store-service-'));
  if (POSTGRES_SKIP === undefined) pg = await startPostgres();
});

after(async () => {
  await warranty.close();
  await pg?.close();
  await rm(dir, { recursive: true, force: true });
});

function options(store: Pick<ServiceOptions, 'store' | 'storeOptions'>): ServiceOptions {
  return {
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(warranty.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] }],
    needs: [{ tag: 'warranty' }],
    static: [{ name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] }],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 60_000 },
    ...store,
  };
}

const engines: Array<{ name: string; skip: string | undefined; store: () => Pick<ServiceOptions, 'store' | 'storeOptions'> }> = [
  { name: 'sqlite', skip: undefined, store: () => ({ store: 'sqlite:state.sqlite', storeOptions: { dataDir: dir } }) },
  { name: 'postgres', skip: POSTGRES_SKIP, store: () => ({ store: pg!.url, storeOptions: { schema: 'service_restart' } }) },
];

for (const engine of engines) {
  describe(`the service on ${engine.name}`, { skip: engine.skip }, () => {
    test('a restart keeps the snapshot, its version, the pin and the conversation', async () => {
      const first = await startService(options(engine.store()));
      let digest: string;
      let version: number;
      try {
        assert.equal(first.store.kind, engine.name);
        const snap = first.loop.current();
        assert.ok(snap && snap.agents.length === 1, 'published');
        digest = snap.digest;
        version = snap.version;
        const turn = await first.sessions.run('c-1', 'Is serial 7 under warranty?', { userId: 'alice' });
        assert.equal(turn.author, 'warranty_agent', turn.error);
        await first.flushStore();
      } finally {
        await first.close();
      }

      const again = await startService(options(engine.store()));
      try {
        assert.deepEqual([again.loop.current()?.digest, again.loop.current()?.version], [digest, version]);
        assert.equal(again.trees.digestOf('c-1'), digest, 'the pin survived');
        assert.equal(again.sessions.userOf('c-1'), 'alice');
        const turn = await again.sessions.run('c-1', 'And serial 8?', { userId: 'alice' });
        assert.deepEqual([turn.author, turn.digest], ['warranty_agent', digest], turn.error);
        const history = await again.sessions.sessionService.getSession({ appName: again.sessions.appName, userId: 'alice', sessionId: 'c-1' });
        const said = (history?.events ?? []).filter((e) => e.author === 'user').map((e) => e.content?.parts?.[0]?.text);
        assert.deepEqual(said, ['Is serial 7 under warranty?', 'And serial 8?'], 'the history from before the restart is there');
      } finally {
        await again.close();
      }
    });
  });
}
