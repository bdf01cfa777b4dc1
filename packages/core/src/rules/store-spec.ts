/**
 * The store description: one line naming where durable state lives — `memory`, `sqlite`
 * (the default file under the data directory), `sqlite:<path>` or `postgres://user@host:5432/db`.
 * The configuration checks it when it is read, the store opens it; both read it here, so a
 * description is accepted, refused and explained the same way in both places.
 *
 * @module
 */
import { resolve } from 'node:path';
import { describe } from '../text.js';
import { redactUrl } from './redaction.js';

/** A parsed store description. */
export type StoreSpec =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string };

/** The default SQLite file name under the data directory (the store `sqlite`). */
export const DEFAULT_SQLITE_FILE = 'a2a-discovery.sqlite';

const POSTGRES = /^postgres(ql)?:\/\//;

/**
 * The engine a description names, judged by its form alone (`postgres://…` is `postgres` even
 * when the URL is unusable), or undefined for something that is no store description.
 */
export function storeSpecKind(spec: string): StoreSpec['kind'] | undefined {
  const s = spec.trim();
  if (s === 'memory') return 'memory';
  if (s === 'sqlite' || s.startsWith('sqlite:')) return 'sqlite';
  if (POSTGRES.test(s)) return 'postgres';
  return undefined;
}

/**
 * Parses `memory`, `sqlite` (the file {@link DEFAULT_SQLITE_FILE}), `sqlite:<path>`
 * (`sqlite::memory:` for a throwaway database; `sqlite:///abs/path` for an absolute path) or
 * `postgres://…` / `postgresql://…` without a password. Surrounding whitespace is ignored.
 * Returns a sentence saying what is wrong instead of throwing (no password in it).
 *
 * @example parseStoreSpec('sqlite:state/a2a.sqlite') // { kind: 'sqlite', file: 'state/a2a.sqlite' }
 * @example parseStoreSpec('redis://cache') // { problem: 'must be memory, sqlite, sqlite:<path> or postgres://…, got "redis://cache"' }
 */
export function parseStoreSpec(spec: string): StoreSpec | { problem: string } {
  const s = spec.trim();
  switch (storeSpecKind(s)) {
    case 'memory':
      return { kind: 'memory' };
    case 'sqlite': {
      if (s === 'sqlite') return { kind: 'sqlite', file: DEFAULT_SQLITE_FILE };
      const file = s.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
      if (file === '') return { problem: `sqlite: needs a file path, such as sqlite:${DEFAULT_SQLITE_FILE}` };
      return { kind: 'sqlite', file };
    }
    case 'postgres': {
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        return { problem: `${describe(redactUrl(s))} is not a valid PostgreSQL URL such as postgres://a2a@db.example.com:5432/a2a` };
      }
      if (url.password !== '' || url.searchParams.has('password')) return { problem: 'the PostgreSQL URL carries a password; give it separately (storePasswordEnv or storePasswordFile in the configuration, the password option of openStateStore)' };
      if (url.hostname === '') return { problem: 'the PostgreSQL URL has no host' };
      return { kind: 'postgres', url: s };
    }
    default:
      return { problem: `must be memory, sqlite, sqlite:<path> or postgres://user@host:5432/database, got ${describe(redactUrl(s))}` };
  }
}

/** The SQLite file of a `sqlite` description, absolute: a relative path is under `dataDir` (default the working directory); `:memory:` stays. */
export function sqliteFilePath(file: string, dataDir?: string): string {
  return file === ':memory:' ? file : resolve(dataDir ?? process.cwd(), file);
}

/** Where a PostgreSQL description connects (no password: it never is in the URL). */
export interface PostgresConnection {
  readonly host: string;
  /** Default 5432. */
  readonly port: number;
  readonly user: string;
  /** The URL's path, else the user name (PostgreSQL's own default). */
  readonly database: string;
  /** `?sslmode=require`, `verify-ca` or `verify-full`: TLS, with certificate verification. */
  readonly ssl?: { readonly rejectUnauthorized: true };
}

/**
 * The connection a `postgres://` description names.
 *
 * @example postgresConnection('postgres://a2a@db.example.com/a2a?sslmode=require')
 * // { host: 'db.example.com', port: 5432, user: 'a2a', database: 'a2a', ssl: { rejectUnauthorized: true } }
 */
export function postgresConnection(spec: string): PostgresConnection {
  const url = new URL(spec.trim());
  const mode = url.searchParams.get('sslmode');
  const tls = mode === 'require' || mode === 'verify-full' || mode === 'verify-ca';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 5432 : Number(url.port),
    user: decodeURIComponent(url.username),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username),
    ...(tls && { ssl: { rejectUnauthorized: true } as const }),
  };
}
