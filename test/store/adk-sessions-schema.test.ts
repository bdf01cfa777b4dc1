/**
 * On PostgreSQL, ADK's session tables go in the store's schema (`storeOptions.schema`), beside
 * the store's own tables, not in `public`: two services on one database with two schemas keep
 * their conversations apart.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import knexFactory from 'knex';
import { systemClock } from '../../packages/core/src/clock/index.js';
import { openStores } from '../../packages/service/src/assembly/service-store.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

describe('ADK sessions in the store schema', { skip: POSTGRES_SKIP }, () => {
  let server: TestPostgres;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.close();
  });

  test('the session tables are created in the store schema, and a conversation is kept there', async () => {
    const schema = server.schema();
    const stores = await openStores({ store: server.url, storeOptions: { schema }, policy: { allow: [] }, vocabulary: [], needs: [] }, systemClock);
    try {
      const service = stores.sessionStore.service;
      const session = await service.createSession({ appName: 'app', userId: 'u', sessionId: 's-schema' });
      assert.equal(session.id, 's-schema');
      assert.ok(await service.getSession({ appName: 'app', userId: 'u', sessionId: 's-schema' }));
    } finally {
      await stores.sessionStore.close();
      await stores.store.close();
    }
    const db = knexFactory({ client: 'pg', connection: server.url, pool: { min: 0, max: 1 } });
    try {
      const rows = (await db.raw('SELECT table_schema, table_name FROM information_schema.tables WHERE table_name = ?', ['sessions'])) as { rows: Array<{ table_schema: string }> };
      assert.deepEqual(rows.rows.map((r) => r.table_schema), [schema], 'ADK\'s sessions table is in the store schema only');
      const ours = (await db.raw('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE ?', [schema, 'a2ad_%'])) as { rows: Array<{ n: number }> };
      assert.ok(ours.rows[0]!.n > 0, 'beside the store\'s own tables');
    } finally {
      await db.destroy();
    }
  });
});
