/**
 * ADK's session service on a store's database (`@a2a-discovery/store/adk-sessions`): the
 * conversations take the connection the store description names, TLS included — a PostgreSQL
 * store with `?sslmode=require` keeps its conversations on a verified TLS connection, like its
 * own rows, and never on plain TCP.
 *
 * The PostgreSQL here is switched to TLS only (`ssl = on` with a self-signed certificate,
 * `hostssl` the only TCP rule in pg_hba.conf): a plain connection is refused, so a session
 * service that works at all speaks TLS. A process that does not trust the certificate is refused
 * by certificate verification; one that trusts it (`NODE_EXTRA_CA_CERTS`, how an operator trusts
 * a private CA) runs a conversation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import { InMemorySessionService } from '@google/adk';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { openAdkSessionService } from '../../packages/store/src/adk-sessions.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

describe('the session service of a store description', () => {
  test('memory and sqlite::memory: keep conversations in the process', async () => {
    for (const spec of ['memory', 'sqlite::memory:']) {
      const sessions = await openAdkSessionService(spec);
      assert.ok(sessions.service instanceof InMemorySessionService, spec);
      await sessions.close();
    }
  });

  test('a malformed description is refused as the store refuses it', async () => {
    await assert.rejects(openAdkSessionService('redis://cache'), (err) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID');
  });
});

/** Writes a file into the server's data directory, owned by the server's user and readable by it alone (as PostgreSQL wants its key). */
async function writeServerFile(dataDir: string, path: string, text: string): Promise<void> {
  const owner = await stat(dataDir);
  await writeFile(path, text, { mode: 0o600 });
  await chown(path, owner.uid, owner.gid);
}

/** A one-connection client of the test PostgreSQL; `ssl` as node-postgres takes it. */
function client(server: TestPostgres, ssl: false | { ca: string }): Knex {
  return knexFactory({ client: 'pg', connection: { connectionString: server.url, ssl }, pool: { min: 0, max: 1 } });
}

/** Switches the test PostgreSQL to TLS only, with `cert` as its certificate. */
async function requireTls(server: TestPostgres, cert: TestCertificate): Promise<void> {
  const admin = client(server, false);
  try {
    const setting = async (name: string) => ((await admin.raw(`SHOW ${name}`)) as { rows: Array<Record<string, string>> }).rows[0]![name]!;
    const dataDir = await setting('data_directory');
    const hbaFile = await setting('hba_file');
    await writeServerFile(dataDir, join(dataDir, 'server.crt'), cert.cert);
    await writeServerFile(dataDir, join(dataDir, 'server.key'), cert.key);
    await writeServerFile(dataDir, hbaFile, 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
    await admin.raw('ALTER SYSTEM SET ssl = on');
    await admin.raw('SELECT pg_reload_conf()');
  } finally {
    await admin.destroy();
  }
  // The postmaster reloads asynchronously: wait (bounded) until TLS is accepted and plain TCP refused.
  const connects = async (ssl: false | { ca: string }) => {
    const c = client(server, ssl);
    try {
      await c.raw('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.destroy();
    }
  };
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await connects({ ca: cert.cert })) && !(await connects(false))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail('the test PostgreSQL did not switch to TLS only');
}

describe('the session service on a PostgreSQL store with sslmode=require', { skip: POSTGRES_SKIP }, () => {
  let server: TestPostgres;
  let cert: TestCertificate;
  let dir: string;

  before(async () => {
    server = await startPostgres();
    cert = await createTestCertificate();
    dir = await mkdtemp(join(tmpdir(), 'adk-sessions-'));
    await requireTls(server, cert);
  });

  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('verifies the server certificate: an untrusted one is refused', async () => {
    await assert.rejects(openAdkSessionService(`${server.url}?sslmode=require`), (err) => {
      assert.ok(isDiscoveryError(err), String(err));
      assert.equal(err.code, 'ERR_STORE_UNAVAILABLE');
      assert.match(err.message, /self[- ]signed certificate/, err.message);
      return true;
    });
  });

  test('the service keeps a conversation over TLS beside its store (the certificate trusted)', async () => {
    const ca = join(dir, 'ca.pem');
    await writeFile(ca, cert.cert);
    // The service's own build step, in a process that trusts the certificate: the store and the
    // session service both connect; the hba rules refuse any plain connection.
    const script = `
      import { openStores } from ${JSON.stringify(join(ROOT, 'packages/service/src/assembly/service-store.ts'))};
      import { systemClock } from 'a2a-discovery';
      const stores = await openStores({ store: ${JSON.stringify(`${server.url}?sslmode=require`)}, storeOptions: { schema: 'tls_sessions' } }, systemClock);
      try {
        const service = stores.sessionStore.service;
        await service.createSession({ appName: 'app', userId: 'alice', sessionId: 's-1', state: { topic: 'warranty' } });
        const back = await service.getSession({ appName: 'app', userId: 'alice', sessionId: 's-1' });
        console.log(JSON.stringify({ state: back?.state }));
      } finally {
        await stores.sessionStore.close();
        await stores.store.close();
      }
    `;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: ca },
      timeout: 120_000,
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as { state: Record<string, unknown> };
    assert.deepEqual(out.state, { topic: 'warranty' });
    // The conversation is in the store's PostgreSQL database (ADK's own table, in the store's schema), not in a process.
    const check = client(server, { ca: cert.cert });
    try {
      const rows = ((await check.raw("SELECT state FROM tls_sessions.sessions WHERE id = 's-1' AND user_id = 'alice'")) as { rows: unknown[] }).rows;
      assert.deepEqual(rows, [{ state: { topic: 'warranty' } }]);
    } finally {
      await check.destroy();
    }
  });
});
