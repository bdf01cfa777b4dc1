/**
 * Conversations beside the state store: ADK's own session service on the database a store
 * description names — `DatabaseSessionService` (MikroORM) on the SQLite file or the PostgreSQL
 * database, `InMemorySessionService` for `memory`. ADK opens its own connection and keeps its
 * tables (`sessions`, `events`, `app_states`, `user_states`, `adk_internal_metadata`) beside the
 * store's (`a2ad_*`).
 *
 * The PostgreSQL connection is read from the description by the same rule as the store's own
 * (`postgresConnection` of `a2a-discovery/config`): host, port, user, database and TLS —
 * `?sslmode=require`, `verify-ca` or `verify-full` make ADK's connection TLS with certificate
 * verification too, so the conversations travel as the store's rows do.
 *
 * A subpath export (`@a2a-discovery/store/adk-sessions`): it needs the optional peers
 * `@google/adk` and, for a SQL store, `@mikro-orm/sqlite` or `@mikro-orm/postgresql`, which load
 * only when such a store is opened. The store's main entry never loads any of them.
 *
 * @module
 */
import { BaseSessionService, DatabaseSessionService, InMemorySessionService } from '@google/adk';
import { DiscoveryError } from 'a2a-discovery';
import { parseStoreSpec, postgresConnection, redactUrl, sqliteFilePath, type StoreSpec } from 'a2a-discovery/config';
import type { OpenStateStoreOptions } from './open-state-store.js';
import type { StateStore } from './state-store.js';

/** Work run through a store's gate (see `StateStore.exclusive`). */
export type SessionGate = <T>(work: () => Promise<T>) => Promise<T>;

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
  const service = parsed.kind === 'sqlite' ? await sqliteSessions(sqliteFilePath(parsed.file, options.dataDir)) : await postgresSessions(parsed.url, options.password, options.schema);
  const store = options.store;
  const gate: SessionGate | undefined = store?.exclusive && (<T>(work: () => Promise<T>) => store.exclusive!(work));
  const close = async () => {
    // ADK 2.0's DatabaseSessionService has no close(); its MikroORM instance holds the pool open.
    const orm = (service as unknown as { orm?: { close(force?: boolean): Promise<void> } }).orm;
    await orm?.close(true);
  };
  try {
    await (gate ? gate(() => service.init()) : service.init());
  } catch (err) {
    await close().catch(() => undefined);
    const where = parsed.kind === 'sqlite' ? sqliteFilePath(parsed.file, options.dataDir) : redactUrl(parsed.url);
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `ADK's session service cannot open ${where}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  }
  return { service: gate ? new GatedSessionService(service, gate) : service, close };
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

/**
 * A session service whose every call runs through a gate (see `StateStore.exclusive`), so ADK's
 * transactions on a SQLite file never interleave with the store's writes.
 */
export class GatedSessionService extends BaseSessionService {
  readonly #inner: BaseSessionService;
  readonly #gate: SessionGate;

  constructor(inner: BaseSessionService, gate: SessionGate) {
    super();
    this.#inner = inner;
    this.#gate = gate;
  }

  createSession(request: Parameters<BaseSessionService['createSession']>[0]): ReturnType<BaseSessionService['createSession']> {
    return this.#gate(() => this.#inner.createSession(request));
  }

  getSession(request: Parameters<BaseSessionService['getSession']>[0]): ReturnType<BaseSessionService['getSession']> {
    return this.#gate(() => this.#inner.getSession(request));
  }

  listSessions(request: Parameters<BaseSessionService['listSessions']>[0]): ReturnType<BaseSessionService['listSessions']> {
    return this.#gate(() => this.#inner.listSessions(request));
  }

  deleteSession(request: Parameters<BaseSessionService['deleteSession']>[0]): ReturnType<BaseSessionService['deleteSession']> {
    return this.#gate(() => this.#inner.deleteSession(request));
  }

  override appendEvent(request: Parameters<BaseSessionService['appendEvent']>[0]): ReturnType<BaseSessionService['appendEvent']> {
    return this.#gate(() => this.#inner.appendEvent(request));
  }
}
