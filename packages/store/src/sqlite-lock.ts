/**
 * Internal: SQLite mode is one process. The process that opens a store file holds, for as long as
 * the store is open, two operating-system locks that a second process is refused on at once with
 * a clear message (`ERR_STORE_LOCKED`):
 *
 * - an exclusive `flock` on the database file itself, so every name of the file (the path, a
 *   symlink, a hard link: they share the inode) meets the same lock. Node has no `flock`, so a
 *   small child (`flock -n <file> -c 'exec cat'`, util-linux or BusyBox) takes it and holds it
 *   while it reads its stdin from us; we never open the database file ourselves (closing a
 *   descriptor of it would drop SQLite's own POSIX locks in this process). When this process
 *   dies, even by SIGKILL, the pipe closes, the child exits and the kernel releases the lock. A
 *   `flock` lock is independent of SQLite's `fcntl` locks, so this process's own connections
 *   (the store's pool, ADK's session service) and read-only tools (`sqlite3 .backup`) are not
 *   stopped by it.
 * - an exclusive SQLite lock on a companion file `<real path>.lock` (symlinks resolved), which
 *   works where there is no `flock` command (macOS, Windows): there, a hard link is not caught.
 *
 * Both die with the process: no stale lock file to clean up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { open as openFile, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DiscoveryError } from 'a2a-discovery';

export interface SqliteLock {
  /** The database file with its symlinks resolved: the name in messages. */
  readonly file: string;
  /** The companion lock file. */
  readonly path: string;
  /** `inode` when the database file itself is locked (every name of it, hard links included), `path` when only the companion file is (no `flock` command here). */
  readonly guards: 'inode' | 'path';
  release(): Promise<void>;
}

interface LockDb {
  exec(sql: string, cb: (err: Error | null) => void): void;
  close(cb: (err: Error | null) => void): void;
}

/** The database file's real path: symlinks resolved (the directory's when the file is not there yet). */
async function realSqlitePath(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return join(await realpath(dirname(file)), basename(file));
  }
}

function lockedError(real: string, file: string, cause: unknown, hint: string): DiscoveryError {
  const named = real === file ? real : `${real} (opened as ${file})`;
  return new DiscoveryError(
    'ERR_STORE_LOCKED',
    `the SQLite store ${named} is in use by another process (SQLite mode is one process: stop the other one, choose another store file, or share a PostgreSQL store between replicas${hint})`,
    { cause, stage: 'store' },
  );
}

/** Takes the lock for `file`, or throws `ERR_STORE_LOCKED`. */
export async function lockSqliteFile(file: string): Promise<SqliteLock> {
  const real = await realSqlitePath(file).catch((err: unknown) => {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot resolve the SQLite store path ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  });
  const companion = await lockCompanion(real, file);
  let holder: ChildProcess | undefined;
  try {
    holder = await holdFileLock(real, file);
  } catch (err) {
    await companion.release();
    throw err;
  }
  let released = false;
  return {
    file: real,
    path: companion.path,
    guards: holder ? 'inode' : 'path',
    async release() {
      if (released) return;
      released = true;
      if (holder) await releaseHolder(holder);
      await companion.release();
    },
  };
}

async function lockCompanion(real: string, file: string): Promise<{ path: string; release(): Promise<void> }> {
  const { default: sqlite3 } = await import('sqlite3');
  const path = `${real}.lock`;
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
    if (busy) throw lockedError(real, file, err, '');
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot lock the SQLite store ${real}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  }
  return {
    path,
    async release() {
      await exec('ROLLBACK;').catch(() => undefined);
      await new Promise<void>((r) => db.close(() => r()));
    },
  };
}

/**
 * Starts the child holding `flock` on the database file. Resolves with it once it holds the lock,
 * with `undefined` when there is no usable `flock` command; throws `ERR_STORE_LOCKED` when another
 * process holds the file.
 */
async function holdFileLock(real: string, file: string): Promise<ChildProcess | undefined> {
  // `flock` creates a missing file 0666 & umask; SQLite would 0644. Create it private first. The
  // file did not exist, so no SQLite connection of ours has it open: closing this descriptor
  // drops no lock of theirs.
  await openFile(real, 'wx', 0o600).then(
    (h) => h.close(),
    () => undefined,
  );
  const child = spawn('flock', ['-n', real, '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own session: a Ctrl-C to our terminal's process group does not end it (and the lock)
    // while we are still shutting down; it ends when our end of its stdin closes.
    detached: true,
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const outcome = await new Promise<'held' | 'busy' | 'unusable'>((resolve) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('locked')) resolve('held');
    });
    child.on('error', () => resolve('unusable'));
    // util-linux and BusyBox both exit 1 without a word when -n meets a held lock.
    child.on('exit', (code) => resolve(code === 1 && stderr.trim() === '' ? 'busy' : 'unusable'));
  });
  if (outcome === 'held') {
    child.stdout!.destroy();
    child.stderr!.destroy();
    // Neither the child nor its stdin keeps this process alive: an exiting process closes the pipe.
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    child.unref();
    child.stdin!.on('error', () => undefined);
    return child;
  }
  child.stdin?.destroy();
  if (outcome === 'busy') throw lockedError(real, file, undefined, '; the other process may have opened the file under another name, a symlink or a hard link');
  return undefined;
}

async function releaseHolder(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
