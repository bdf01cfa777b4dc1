/**
 * Conversations beside the state store, on ADK's own session tables (`sessions`, `events`,
 * `app_states`, `user_states`, `adk_internal_metadata`) in the SQLite file or the PostgreSQL
 * database a store description names, beside the store's (`a2ad_*`); `InMemorySessionService`
 * for `memory`.
 *
 * ADK's `DatabaseSessionService` (MikroORM) creates or checks its tables when the service opens,
 * then lets go; every call after that is {@link SqlSessionService}'s plain SQL on the same tables
 * and rows (issue 43: a turn's history cost 24 ms of ORM work), so ADK's own service reads what
 * this one writes and the other way round.
 *
 * The PostgreSQL connection is read from the description by the same rule as the store's own
 * (`postgresConnection` of `a2a-discovery/config`): host, port, user, database and TLS —
 * `?sslmode=require`, `verify-ca` or `verify-full` make the connection TLS with certificate
 * verification too, so the conversations travel as the store's rows do.
 *
 * A subpath export (`@a2a-discovery/store/adk-sessions`): it needs the optional peers
 * `@google/adk` and, for a SQL store, `@mikro-orm/sqlite` or `@mikro-orm/postgresql`, which load
 * only when such a store is opened. The store's main entry never loads any of them.
 *
 * @module
 */
import { DatabaseSessionService, InMemorySessionService } from '@google/adk';
import type { BaseSessionService } from '@google/adk';
import { DiscoveryError } from 'a2a-discovery';
import { parseStoreSpec, postgresConnection, redactUrl, sqliteFilePath, type StoreSpec } from 'a2a-discovery/config';
import type { OpenStateStoreOptions } from './open-state-store.js';
import { postgresKnex } from './postgres-knex.js';
import { SqlSessionService, ensureSessionIndex, postgresSessionSql, sqliteSessionSql } from './sql-session-service.js';
import type { SessionGate, SessionSql } from './sql-session-service.js';
import type { StateStore } from './state-store.js';

export { SqlSessionService, EVENTS_INDEX } from './sql-session-service.js';
export type { SessionGate, SessionSql, SqlSessionServiceOptions } from './sql-session-service.js';

export interface AdkSessionServiceOptions extends Pick<OpenStateStoreOptions, 'dataDir' | 'password' | 'schema'> {
  /**
   * The state store opened from the same description. When it has a gate (`exclusive`), every
   * call of the session service runs through it, so ADK's transactions on a shared SQLite file
   * never interleave with the store's writes (on PostgreSQL the gate lets every call through).
   */
  store?: Pick<StateStore, 'exclusive'>;
}

/** An open session service and how to release its connection. */
export interface AdkSessions {
  readonly service: BaseSessionService;
  /** Closes ADK's connection pool (a no-op for the memory service). */
  close(): Promise<void>;
}

/**
 * Opens ADK's session service on the database of a store description (`memory`, `sqlite`,
 * `sqlite:<path>`, `postgres://user@host:5432/db?sslmode=require`): the same SQLite file (a
 * relative path under `dataDir`) or the same PostgreSQL database, with the same TLS, as
 * `openStateStore` would use. `memory` and `sqlite::memory:` give ADK's `InMemorySessionService`.
 * ADK creates its tables at the first open.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` for a malformed description, `ERR_STORE_UNAVAILABLE`
 *   when ADK cannot reach or set up the database (a refused TLS certificate included).
 * @example
 * const store = await openStateStore('sqlite:a2a.sqlite', { dataDir });
 * const sessions = await openAdkSessionService('sqlite:a2a.sqlite', { dataDir, store });
 * const runner = new Runner({ appName: 'app', agent, sessionService: sessions.service });
 * // …
 * await sessions.close();
 * await store.close();
 */
export async function openAdkSessionService(spec: string | StoreSpec, options: AdkSessionServiceOptions = {}): Promise<AdkSessions> {
  const parsed = typeof spec === 'string' ? parseStoreSpec(spec) : spec;
  if ('problem' in parsed) throw new DiscoveryError('ERR_CONFIG_INVALID', `store: ${parsed.problem}`, { path: 'store', stage: 'config' });
  if (parsed.kind === 'memory' || (parsed.kind === 'sqlite' && parsed.file === ':memory:')) {
    return { service: new InMemorySessionService(), close: () => Promise.resolve() };
  }
  const file = parsed.kind === 'sqlite' ? sqliteFilePath(parsed.file, options.dataDir) : undefined;
  const where = parsed.kind === 'sqlite' ? file : redactUrl(parsed.url);
  const store = options.store;
  const gate: SessionGate | undefined = store?.exclusive && (<T>(work: () => Promise<T>) => store.exclusive!(work));
  let sql: SessionSql | undefined;
  try {
    // ADK creates its tables (or checks their schema version) with its own ORM, once.
    const adk = parsed.kind === 'sqlite' ? await sqliteSessions(file!) : await postgresSessions(parsed.url, options.password, options.schema);
    try {
      await (gate ? gate(() => adk.init()) : adk.init());
    } finally {
      // ADK 2.0's DatabaseSessionService has no close(); its MikroORM instance holds the pool open.
      await (adk as unknown as { orm?: { close(force?: boolean): Promise<void> } }).orm?.close(true);
    }
    sql = parsed.kind === 'sqlite' ? await sqliteSessionSql(file!) : postgresSessionSql(await postgresKnex({ url: parsed.url, ...(options.password !== undefined && { password: options.password }) }, { ...(options.schema !== undefined && { searchPath: options.schema }), maxConnections: 4 }));
    const opened = sql;
    await (gate ? gate(() => ensureSessionIndex(opened)) : ensureSessionIndex(opened));
  } catch (err) {
    await sql?.close().catch(() => undefined);
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `ADK's session service cannot open ${where}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  }
  const service = new SqlSessionService(sql, gate && { gate });
  return { service, close: () => service.close() };
}

async function sqliteSessions(file: string): Promise<DatabaseSessionService> {
  const { SqliteDriver } = await import('@mikro-orm/sqlite');
  return new DatabaseSessionService({
    driver: SqliteDriver,
    dbName: file,
    // The store writes the same file on another connection: wait for its short transactions
    // instead of failing a turn with SQLITE_BUSY.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) =>
        conn.exec('PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;', (err) => done(err, conn)),
    },
  });
}

/** On PostgreSQL, ADK's tables go in the store's schema (`schema`, default `public`), created when missing. */
async function postgresSessions(url: string, password: string | undefined, schema: string | undefined): Promise<DatabaseSessionService> {
  const { PostgreSqlDriver } = await import('@mikro-orm/postgresql');
  const pg = postgresConnection(url);
  return new DatabaseSessionService({
    driver: PostgreSqlDriver,
    host: pg.host,
    port: pg.port,
    user: pg.user,
    dbName: pg.database,
    ...(schema !== undefined && { schema }),
    ...(password !== undefined && { password }),
    // MikroORM merges `driverOptions` into knex's configuration: `connection.ssl` reaches node-postgres.
    ...(pg.ssl && { driverOptions: { connection: { ssl: { ...pg.ssl } } } }),
  });
}
