/**
 * Backup and restore of a SQLite store file (docs/operations.md, "Backup and restore").
 *
 * The file holds the store's tables (`a2ad_*`) and, with `sessions.history: store`, ADK's session
 * tables (`sessions`, `events`, ...): one file is the whole state. A backup is SQLite's own
 * consistent copy (`VACUUM INTO`) taken on a separate read connection, so a running service is
 * neither stopped nor blocked (its store lock is a `flock`, which SQLite's reads do not meet; see
 * sqlite-lock.ts). A restore checks the backup whole (SQLite's integrity check, our migrations
 * table, a schema this build understands) before it writes anything, then copies it page by page
 * with SQLite's online backup API into the target file while holding the store's lock, so no
 * service can open the file meanwhile and none may already hold it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DiscoveryError } from 'a2a-discovery';
import { MIGRATIONS_TABLE, migrationSource } from './migrations.js';

/** A table of a backup and its rows. */
export interface BackupTable {
  readonly name: string;
  readonly rows: number;
}

/** What a backup file holds, or what was written. */
export interface BackupReport {
  /** The backup file. */
  readonly file: string;
  readonly bytes: number;
  /** SHA-256 of the backup file, hex. */
  readonly sha256: string;
  /** The newest schema migration of the store in the backup. */
  readonly schema: string;
  /** Every table, ours (`a2ad_*`) and ADK's, with its rows, by name. */
  readonly tables: readonly BackupTable[];
}

interface Db {
  all(sql: string, params: unknown[], cb: (err: Error | null, rows: unknown[]) => void): void;
  exec(sql: string, cb: (err: Error | null) => void): void;
  close(cb: (err: Error | null) => void): void;
  backup(file: string, destName: string, sourceName: string, filenameIsDest: boolean, cb: (err: Error | null) => void): SqliteBackup;
}

interface SqliteBackup {
  step(pages: number, cb: (err: Error | null) => void): void;
  finish(cb?: (err: Error | null) => void): void;
  readonly completed: boolean;
  readonly failed: boolean;
}

async function openDb(file: string, mode: 'read' | 'write'): Promise<Db> {
  const { default: sqlite3 } = await import('sqlite3');
  const flags = mode === 'read' ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
  return new Promise<Db>((resolve, reject) => {
    const db = new sqlite3.Database(file, flags, (err) => (err ? reject(err) : resolve(db as unknown as Db)));
  });
}

const all = <T>(db: Db, sql: string, params: unknown[] = []) => new Promise<T[]>((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
const exec = (db: Db, sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
const close = (db: Db) => new Promise<void>((resolve) => db.close(() => resolve()));

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function tablesOf(db: Db): Promise<BackupTable[]> {
  const names = await all<{ name: string }>(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  const tables: BackupTable[] = [];
  for (const { name } of names) {
    const [row] = await all<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ${quoted(name)}`);
    tables.push({ name, rows: row?.n ?? 0 });
  }
  return tables;
}

function invalid(file: string, why: string, cause?: unknown): DiscoveryError {
  return new DiscoveryError('ERR_STORE_UNAVAILABLE', `${file} is not a usable a2a-discovery backup: ${why}; nothing was written`, { ...(cause !== undefined && { cause }), stage: 'store' });
}

/**
 * Reads a backup file and checks it whole: a SQLite database that passes SQLite's integrity
 * check, holds the store's migrations table, and whose schema this build understands (no
 * migration newer than this build's).
 *
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` for a missing, truncated, corrupt or foreign file, or one from a newer schema.
 */
async function inspectSqliteBackup(file: string): Promise<BackupReport> {
  const info = await stat(file).catch((err: unknown) => {
    throw invalid(file, (err as Error).message, err);
  });
  if (!info.isFile() || info.size === 0) throw invalid(file, 'the file is empty');
  let db: Db;
  try {
    db = await openDb(file, 'read');
  } catch (err) {
    throw invalid(file, (err as Error).message, err);
  }
  try {
    let check: Array<{ integrity_check: string }>;
    let tables: BackupTable[];
    try {
      check = await all<{ integrity_check: string }>(db, 'PRAGMA integrity_check');
      tables = await tablesOf(db);
    } catch (err) {
      throw invalid(file, `SQLite cannot read it (${(err as Error).message}): truncated or not a SQLite file`, err);
    }
    const problems = check.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    if (problems.length > 0) throw invalid(file, `SQLite's integrity check failed (${problems.slice(0, 3).join('; ')}): truncated or damaged`);
    if (!tables.some((t) => t.name === MIGRATIONS_TABLE)) throw invalid(file, `it has no ${MIGRATIONS_TABLE} table: not an a2a-discovery store`);
    const applied = (await all<{ name: string }>(db, `SELECT name FROM ${quoted(MIGRATIONS_TABLE)} ORDER BY name`)).map((r) => r.name);
    const known = await migrationSource.getMigrations([]);
    const unknown = applied.filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      throw invalid(
        file,
        `its schema is newer than this build understands (migrations ${unknown.join(', ')}; this build knows up to ${known.at(-1)}): restore it with the version that wrote it, or upgrade`,
      );
    }
    const bytes = info.size;
    return { file, bytes, sha256: await sha256Of(file), schema: applied.at(-1) ?? '(none)', tables };
  } finally {
    await close(db);
  }
}

/**
 * Copies a SQLite store file, consistently, while a service may be writing it: SQLite's
 * `VACUUM INTO` on a read connection, into a temporary name next to `out`, made private (0600),
 * checked, then renamed.
 *
 * @throws DiscoveryError `ERR_USAGE` when `out` exists, `ERR_STORE_UNAVAILABLE` when the store cannot be read or copied.
 */
export async function backupSqliteStore(file: string, out: string): Promise<BackupReport> {
  if (await stat(out).then(() => true, () => false)) throw new DiscoveryError('ERR_USAGE', `${out} already exists: choose a new backup file`);
  await stat(file).catch((err: unknown) => {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `no SQLite store at ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  });
  await mkdir(dirname(out), { recursive: true });
  const partial = `${out}.partial-${process.pid}`;
  await rm(partial, { force: true });
  try {
    const db = await openDb(file, 'read').catch((err: unknown) => {
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot open the SQLite store ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
    });
    try {
      // A running service writes in short transactions: wait for one rather than fail.
      await exec(db, 'PRAGMA busy_timeout = 10000');
      await exec(db, `VACUUM INTO '${partial.replace(/'/g, "''")}'`);
    } catch (err) {
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot copy the SQLite store ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
    } finally {
      await close(db);
    }
    // The store's rows (pins' owner secrets, conversations) are private, as the store file is.
    await chmod(partial, 0o600);
    const report = await inspectSqliteBackup(partial);
    await rename(partial, out);
    return { ...report, file: out };
  } finally {
    await rm(partial, { force: true });
  }
}

/** Copies the database `from` into `db` with SQLite's backup API (busy pages retried, a bounded number of times). */
async function copyInto(db: Db, from: string): Promise<void> {
  const copy = await new Promise<SqliteBackup>((resolve, reject) => {
    const b = db.backup(from, 'main', 'main', false, (err) => (err ? reject(err) : resolve(b)));
  });
  try {
    for (let i = 0; i < 100 && !copy.completed && !copy.failed; i++) {
      await new Promise<void>((resolve, reject) => copy.step(-1, (err) => (err ? reject(err) : resolve())));
      if (!copy.completed) await new Promise((r) => setTimeout(r, 50));
    }
    if (!copy.completed) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', 'the copy did not complete', { stage: 'store' });
  } finally {
    await new Promise<void>((resolve) => copy.finish(() => resolve()));
  }
}

/** What {@link restoreSqliteStore} did. */
export interface RestoreReport {
  /** The backup read, as {@link inspectSqliteBackup} reports it. */
  readonly backup: BackupReport;
  /** The store file written. */
  readonly store: string;
  /** Whether a store with tables was there and replaced (`force`). */
  readonly replaced: boolean;
}

/**
 * Restores a backup into the SQLite store file `file`: checks the backup first (nothing is written
 * when it is unusable), takes the store's lock (refused while a service holds the file), refuses a
 * store that has tables unless `force`, then copies the backup in with SQLite's backup API.
 *
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` for an unusable backup, `ERR_STORE_LOCKED` while
 *   a service holds the store, `ERR_USAGE` for a store that is not empty without `force`.
 */
export async function restoreSqliteStore(from: string, file: string, options: { force?: boolean } = {}): Promise<RestoreReport> {
  const backup = await inspectSqliteBackup(from);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 }).catch((err: unknown) => {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot create the data directory ${dirname(file)}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  });
  const existed = await stat(file).then(
    (s) => s.size > 0,
    () => false,
  );
  const { lockSqliteFile } = await import('./sqlite-lock.js');
  const lock = await lockSqliteFile(file);
  try {
    const db = await openDb(file, 'write');
    try {
      const present = existed ? await tablesOf(db) : [];
      if (present.length > 0 && options.force !== true) {
        throw new DiscoveryError(
          'ERR_USAGE',
          `the store ${file} is not empty (${present.length} tables, ${present.reduce((n, t) => n + t.rows, 0)} rows): restore into a new data directory, or pass --force to replace it`,
        );
      }
      await exec(db, 'PRAGMA busy_timeout = 10000');
      await copyInto(db, from).catch((err: unknown) => {
        throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot restore ${from} into ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
      });
      return { backup, store: lock.file, replaced: present.length > 0 };
    } finally {
      await close(db);
    }
  } finally {
    await lock.release();
  }
}
