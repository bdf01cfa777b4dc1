/**
 * Internal: SQLite mode is one process. The process that opens a store file for writing holds an
 * exclusive SQLite lock on a companion file (`<file>.lock`) for as long as the store is open; a
 * second process is refused at once with a clear message. The lock is the operating system's
 * (SQLite's file lock), so a killed process releases it: no stale lock file to clean up. The
 * store file itself stays shareable inside the process (ADK's session service opens it too).
 */
import { DiscoveryError } from 'a2a-discovery';

export interface SqliteLock {
  readonly path: string;
  release(): Promise<void>;
}

interface LockDb {
  exec(sql: string, cb: (err: Error | null) => void): void;
  close(cb: (err: Error | null) => void): void;
}

/** Takes the lock for `file`, or throws `ERR_STORE_LOCKED`. */
export async function lockSqliteFile(file: string): Promise<SqliteLock> {
  const { default: sqlite3 } = await import('sqlite3');
  const path = `${file}.lock`;
  const db = await new Promise<LockDb>((resolve, reject) => {
    const d: LockDb = new sqlite3.Database(path, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => (err ? reject(err) : resolve(d)));
  }).catch((err: unknown) => {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot create the lock file ${path}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  });
  const exec = (sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  try {
    // busy_timeout 0: a held lock answers SQLITE_BUSY at once instead of waiting.
    await exec('PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;');
  } catch (err) {
    await new Promise<void>((r) => db.close(() => r()));
    const busy = (err as { code?: string }).code === 'SQLITE_BUSY' || /SQLITE_BUSY|locked/i.test((err as Error).message);
    if (busy) {
      throw new DiscoveryError(
        'ERR_STORE_LOCKED',
        `the SQLite store ${file} is in use by another process (SQLite mode is one process: stop the other one, choose another store file, or share a PostgreSQL store between replicas)`,
        { cause: err, stage: 'store' },
      );
    }
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot lock the SQLite store ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  }
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      await exec('ROLLBACK;').catch(() => undefined);
      await new Promise<void>((r) => db.close(() => r()));
    },
  };
}
