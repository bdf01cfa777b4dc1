/**
 * Opening a state store from its one-line description: `memory`, `sqlite:<path>` or
 * `postgres://user@host:5432/db`. knex and the drivers are loaded only for the SQL engines.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Clock } from 'a2a-discovery';
import { systemClock, DiscoveryError } from 'a2a-discovery';
import { MemoryStateStore } from './memory-state-store.js';
import type { StateStore, StoreKind, StoreRetention } from './state-store.js';

/** A parsed store description. */
export type StoreSpec =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string };

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
}

/**
 * Parses `memory`, `sqlite` (the default file `a2a-discovery.sqlite`), `sqlite:<path>`
 * (`sqlite::memory:` for a throwaway database) or `postgres://…` / `postgresql://…`.
 * Returns a sentence saying what is wrong instead of throwing.
 */
export function parseStoreSpec(spec: string): StoreSpec | { problem: string } {
  const s = spec.trim();
  if (s === 'memory') return { kind: 'memory' };
  if (s === 'sqlite') return { kind: 'sqlite', file: DEFAULT_SQLITE_FILE };
  if (s.startsWith('sqlite:')) {
    const file = s.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') return { problem: 'sqlite: needs a file path, such as sqlite:a2a-discovery.sqlite' };
    return { kind: 'sqlite', file };
  }
  if (/^postgres(ql)?:\/\//.test(s)) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      return { problem: `${JSON.stringify(redactUrl(s))} is not a valid PostgreSQL URL` };
    }
    if (url.hostname === '') return { problem: 'the PostgreSQL URL has no host' };
    if (url.password !== '') return { problem: 'the PostgreSQL URL carries a password; give it through storePasswordEnv or storePasswordFile instead' };
    return { kind: 'postgres', url: s };
  }
  return { problem: `${JSON.stringify(redactUrl(s))} is not a store: use memory, sqlite, sqlite:<path> or postgres://user@host:5432/database` };
}

/** The default SQLite file name under the data directory. */
export const DEFAULT_SQLITE_FILE = 'a2a-discovery.sqlite';

/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

/** Where a store lives, for status and logs (no password). */
export function storeLocation(spec: StoreSpec, dataDir?: string): string {
  switch (spec.kind) {
    case 'memory':
      return 'memory';
    case 'sqlite':
      return spec.file === ':memory:' ? ':memory:' : sqlitePath(spec.file, dataDir);
    case 'postgres':
      return redactUrl(spec.url);
  }
}

function sqlitePath(file: string, dataDir?: string): string {
  return isAbsolute(file) ? file : resolve(dataDir ?? process.cwd(), file);
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
  const common = { clock, ...(options.retention && { retention: options.retention }), ...replica };
  if (parsed.kind === 'sqlite') {
    if (parsed.file === ':memory:') return openSqlStateStore({ kind: 'sqlite', connection: { filename: ':memory:' }, location: ':memory:', ...common });
    const file = sqlitePath(parsed.file, options.dataDir);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 }).catch((err: unknown) => {
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot create the data directory ${dirname(file)}: ${(err as Error).message}`, { cause: err, stage: 'store' });
    });
    const { lockSqliteFile } = await import('./sqlite-lock.js');
    const lock = await lockSqliteFile(file);
    return openSqlStateStore({ kind: 'sqlite', connection: { filename: file }, location: file, lock, ...common });
  }
  const url = new URL(parsed.url);
  const connection = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 5432 : Number(url.port),
    user: decodeURIComponent(url.username),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username),
    ...(options.password !== undefined && { password: options.password }),
    ...sslOf(url),
  };
  return openSqlStateStore({
    kind: 'postgres',
    connection,
    location: redactUrl(parsed.url),
    ...(options.schema !== undefined && { schema: options.schema }),
    ...common,
  });
}

/** `?sslmode=require` (or verify-full) turns TLS on, with certificate verification. */
function sslOf(url: URL): { ssl?: { rejectUnauthorized: boolean } } {
  const mode = url.searchParams.get('sslmode');
  return mode === 'require' || mode === 'verify-full' || mode === 'verify-ca' ? { ssl: { rejectUnauthorized: true } } : {};
}

/** The kinds, for messages and metrics labels. */
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'sqlite', 'postgres'];
