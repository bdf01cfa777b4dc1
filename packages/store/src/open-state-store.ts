/**
 * Opening a state store from its one-line description: `memory`, `sqlite:<path>` or
 * `postgres://user@host:5432/db`. knex and the drivers are loaded only for the SQL engines.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from 'a2a-discovery';
import { systemClock, DiscoveryError } from 'a2a-discovery';
import { parseStoreSpec, postgresConnection, redactUrl, sqliteFilePath, type StoreSpec } from 'a2a-discovery/config';
import { MemoryStateStore } from './memory-state-store.js';
import type { StateStore, StoreKind, StoreRetention, TurnsInFlight } from './state-store.js';

/** The store description's rules live in the library (`rules/store-spec.ts`, exported by `a2a-discovery/config`); the store entry re-exports them. */
export { DEFAULT_SQLITE_FILE, parseStoreSpec,  type StoreSpec } from 'a2a-discovery/config';

export interface OpenStateStoreOptions {
  /** Relative SQLite paths are resolved against it. Default the working directory. */
  dataDir?: string;
  /** The PostgreSQL password, when it is not in the URL (read from env or a file by the config). */
  password?: string;
  /** PostgreSQL schema for our tables. Default `public`. */
  schema?: string;
  clock?: Clock;
  retention?: StoreRetention;
  /** How this process names itself in the journal rows it writes (the replica id). Default `<hostname>:<pid>`. */
  replica?: string;
  /** The conversation turns in flight: a SQL store's batches of card-entry writes wait for a moment with none. */
  turns?: TurnsInFlight;
}

/** Where a store lives, for status and logs (no password). */
export function storeLocation(spec: StoreSpec, dataDir?: string): string {
  switch (spec.kind) {
    case 'memory':
      return 'memory';
    case 'sqlite':
      return sqliteFilePath(spec.file, dataDir);
    case 'postgres':
      return redactUrl(spec.url);
  }
}

/**
 * Opens (and migrates) a state store.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` for a malformed description, `ERR_STORE_LOCKED`
 *   when another process holds the SQLite file, `ERR_STORE_UNAVAILABLE` when the engine cannot be
 *   reached or migrated.
 * @example
 * const store = await openStateStore('sqlite:a2a-discovery.sqlite', { dataDir: '/var/lib/a2a-discovery' });
 * const cache = new CardCache({ fetcher, hostPolicy, store: store.cards });
 * await store.close();
 */
export async function openStateStore(spec: string | StoreSpec, options: OpenStateStoreOptions = {}): Promise<StateStore> {
  const parsed = typeof spec === 'string' ? parseStoreSpec(spec) : spec;
  if ('problem' in parsed) throw new DiscoveryError('ERR_CONFIG_INVALID', `store: ${parsed.problem}`, { path: 'store', stage: 'config' });
  const clock = options.clock ?? systemClock;
  const replica = options.replica !== undefined && { replica: options.replica };
  if (parsed.kind === 'memory') return new MemoryStateStore({ wallNow: () => clock.wallNow(), ...(options.retention && { retention: options.retention }), ...replica });
  const { openSqlStateStore } = await import('./sql-state-store.js');
  const common = { clock, ...(options.retention && { retention: options.retention }), ...replica, ...(options.turns && { turns: options.turns }) };
  if (parsed.kind === 'sqlite') {
    if (parsed.file === ':memory:') return openSqlStateStore({ kind: 'sqlite', connection: { filename: ':memory:' }, location: ':memory:', ...common });
    const file = sqliteFilePath(parsed.file, options.dataDir);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 }).catch((err: unknown) => {
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot create the data directory ${dirname(file)}: ${(err as Error).message}`, { cause: err, stage: 'store' });
    });
    const { lockSqliteFile } = await import('./sqlite-lock.js');
    const lock = await lockSqliteFile(file);
    return openSqlStateStore({ kind: 'sqlite', connection: { filename: file }, location: file, lock, ...common });
  }
  const connection = { ...postgresConnection(parsed.url), ...(options.password !== undefined && { password: options.password }) };
  return openSqlStateStore({
    kind: 'postgres',
    connection,
    location: redactUrl(parsed.url),
    ...(options.schema !== undefined && { schema: options.schema }),
    ...common,
  });
}

/** The kinds, for messages and metrics labels. */
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'sqlite', 'postgres'];
