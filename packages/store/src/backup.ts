/**
 * Backup and restore of a SQLite store file (docs/operations.md, "Backup and restore"); a
 * PostgreSQL store's are in backup-postgres.ts, in the same file format, through the same checks
 * ({@link rebuildBackup}).
 *
 * The file holds the store's tables (`a2ad_*`) and, with `sessions.history: store`, ADK's session
 * tables (`sessions`, `events`, ...): one file is the whole state. A backup is SQLite's own
 * consistent copy (`VACUUM INTO`) taken on a separate read connection, so a running service is
 * neither stopped nor blocked (its store lock is a `flock`, which SQLite's reads do not meet; see
 * sqlite-lock.ts); the copy then receives the digest of its rows (backup-rows.ts).
 *
 * A restore rebuilds, it does not adopt: it checks the backup whole (SQLite's integrity check, our
 * migrations table, a schema this build understands, the rows' digest), builds a fresh store in a
 * private temporary folder from this build's migrations (and ADK's own session schema), copies the
 * backup's rows of the known tables into it (each value checked against its column, references
 * between tables checked), and never a schema object of the backup: its triggers, views, indexes,
 * extra tables and columns and pragmas are reported and ignored. Only then does it take the store's
 * lock and copy the fresh store into the target file with SQLite's online backup API, so no
 * service can open the file meanwhile and none may already hold it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DiscoveryError } from 'a2a-discovery';
import type { Knex } from 'knex';
import {
  ADK_TABLES,
  BACKUP_META_TABLE,
  DIGEST_FORMAT,
  DIGEST_FORMATS,
  PAGE,
  buildFresh,
  knownSchema,
  misfit,
  planOf,
  quoted,
  rowsDigest,
  rowsOf,
  type All,
  type IgnoredObject,
  type KnownTable,
  type TablePlan,
} from './backup-rows.js';
import { MIGRATIONS_TABLE, migrate, migrationSource } from './migrations.js';

export type { IgnoredObject } from './backup-rows.js';

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
  /**
   * SHA-256 of the rows of the known tables (the store's and ADK's), hex: written into the backup
   * by `backup`, checked by `restore`. Undefined for a backup made before backups carried it.
   */
  readonly rowsDigest: string | undefined;
  /** What the file holds besides the known tables' rows (triggers, views, extra tables, columns, indexes, pragmas): never restored. */
  readonly ignored: readonly IgnoredObject[];
}

export interface Db {
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
export const close = (db: Db) => new Promise<void>((resolve) => db.close(() => resolve()));

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
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


const allOf =
  (db: Db): All =>
  <T>(sql: string, params: unknown[] = []) =>
    all<T>(db, sql, params);

/** A backup file checked whole, open for reading: its report's first part and its migrations. */
export interface Opened {
  readonly db: Db;
  readonly bytes: number;
  readonly tables: BackupTable[];
  readonly applied: string[];
}

/**
 * Opens a backup file and checks it whole: a SQLite database that passes SQLite's integrity
 * check, holds the store's migrations table, and whose migrations are this build's, in order (none
 * newer than this build's). The caller closes `db`.
 *
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` for a missing, truncated, corrupt or foreign file, or one from a newer schema.
 */
export async function openBackup(file: string): Promise<Opened> {
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
    if (applied.some((name, i) => known[i] !== name)) throw invalid(file, `its migrations (${applied.join(', ')}) are not this build's, in order`);
    return { db, bytes: info.size, tables, applied };
  } catch (err) {
    await close(db);
    throw err;
  }
}

/** The rows' digest and its format as the backup's {@link BACKUP_META_TABLE} holds them, or undefined. */
async function storedDigest(db: Db): Promise<{ digest: string; format: string } | undefined> {
  const [has] = await all<{ n: number }>(db, "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?", [BACKUP_META_TABLE]);
  if ((has?.n ?? 0) === 0) return undefined;
  const rows = await all<{ key: unknown; value: unknown }>(db, `SELECT key, value FROM ${quoted(BACKUP_META_TABLE)}`).catch(() => []);
  const get = (key: string) => rows.find((r) => r.key === key)?.value;
  const digest = get('rows_sha256');
  const format = get('format');
  return typeof digest === 'string' && typeof format === 'string' ? { digest, format } : undefined;
}

/** @internal A fresh store in a private temporary folder (0700): its file, its knex connection and its known schema. */
export interface Fresh {
  readonly file: string;
  readonly db: Knex;
  readonly known: { tables: KnownTable[]; indexes: Set<string> };
}

/**
 * Builds a fresh store at the migration level `level` (ADK's tables too when `adk`), runs `work`
 * on it, and removes it. Nothing of a backup is read to build it.
 */
export async function withFresh<T>(level: number, adk: boolean, work: (fresh: Fresh) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'a2ad-restore-'));
  await chmod(dir, 0o700);
  const file = join(dir, 'fresh.sqlite');
  const { default: knexFactory } = await import('knex');
  const db = knexFactory({
    client: 'sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    pool: { min: 1, max: 1 },
    log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
  });
  try {
    const openAdk = adk
      ? async () => {
          let sessions: { close(): Promise<void> };
          try {
            const { openAdkSessionService } = await import('./adk-sessions.js');
            sessions = await openAdkSessionService(`sqlite:${file}`);
          } catch (err) {
            throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `the backup holds ADK's conversations, and ADK's session tables cannot be created here (${(err as Error).message}): install @google/adk and @mikro-orm/sqlite`, { cause: err, stage: 'store' });
          }
          await sessions.close();
        }
      : undefined;
    await buildFresh(db, level, openAdk);
    const known = await knownSchema(<R>(sql: string, params: unknown[] = []) => db.raw(sql, params as Knex.RawBinding[]) as unknown as Promise<R[]>);
    return await work({ file, db, known });
  } finally {
    await db.destroy().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

const hasAdkTables = (tables: readonly BackupTable[]) => tables.some((t) => (ADK_TABLES as readonly string[]).includes(t.name));

/** @internal Refuses a backup file that exists, or whose folder does not. */
export async function checkOut(out: string): Promise<void> {
  if (await stat(out).then(() => true, () => false)) throw new DiscoveryError('ERR_USAGE', `${out} already exists: choose a new backup file`);
  const folder = dirname(out);
  if (!(await stat(folder).then((s) => s.isDirectory(), () => false))) {
    throw new DiscoveryError('ERR_USAGE', `the folder ${folder} does not exist (or is not a folder): create it first, a backup creates no folder; nothing was written`);
  }
}

/**
 * Copies a SQLite store file, consistently, while a service may be writing it: SQLite's
 * `VACUUM INTO` on a read connection, into a temporary name next to `out`, made private (0600),
 * checked, given the digest of its rows, then renamed. `out`'s folder must exist: a backup
 * creates no folder.
 *
 * @throws DiscoveryError `ERR_USAGE` when `out` exists or its folder does not, `ERR_STORE_UNAVAILABLE` when the store cannot be read or copied.
 */
export async function backupSqliteStore(file: string, out: string): Promise<BackupReport> {
  await checkOut(out);
  await stat(file).catch((err: unknown) => {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `no SQLite store at ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  });
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
    const opened = await openBackup(partial);
    let digested: { digest: string; ignored: IgnoredObject[] };
    try {
      digested = await withFresh(opened.applied.length, hasAdkTables(opened.tables), async (fresh) => {
        const { plans, ignored } = await planOf(allOf(opened.db), fresh.known);
        return { digest: await rowsDigest(allOf(opened.db), plans), ignored };
      });
    } finally {
      await close(opened.db);
    }
    // The digest goes in the copy's own table (one a store's own `a2ad_backup`, if it had one, is replaced).
    await writeDigest(partial, digested.digest);
    const bytes = (await stat(partial)).size;
    const report: BackupReport = { file: out, bytes, sha256: await sha256Of(partial), schema: opened.applied.at(-1) ?? '(none)', tables: opened.tables, rowsDigest: digested.digest, ignored: digested.ignored };
    await rename(partial, out);
    return report;
  } finally {
    await rm(partial, { force: true });
  }
}

/** @internal Writes the rows' digest into the backup file's own {@link BACKUP_META_TABLE} (replacing one the file had). */
export async function writeDigest(file: string, digest: string): Promise<void> {
  const rw = await openDb(file, 'write');
  try {
    await exec(
      rw,
      `BEGIN; DROP TABLE IF EXISTS ${quoted(BACKUP_META_TABLE)}; CREATE TABLE ${quoted(BACKUP_META_TABLE)} (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL); ` +
        `INSERT INTO ${quoted(BACKUP_META_TABLE)} (key, value) VALUES ('format', '${DIGEST_FORMAT}'), ('rows_sha256', '${digest}'); COMMIT;`,
    );
  } finally {
    await close(rw);
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

/** Options of {@link restoreSqliteStore}. */
export interface RestoreOptions {
  /** Replace a store that has tables. */
  force?: boolean;
  /** Restore a backup that carries no rows' digest (made before backups did), unverified. */
  allowUnverified?: boolean;
  /** The rows' digest the backup must have (as `backup` printed it), hex. */
  expectDigest?: string;
}

/** What {@link restoreSqliteStore} did. */
export interface RestoreReport {
  /** The backup read: its file, tables, rows' digest and what it holds that was not restored (`ignored`). */
  readonly backup: BackupReport;
  /** The store file written. */
  readonly store: string;
  /** Whether a store with tables was there and replaced (`force`). */
  readonly replaced: boolean;
  /** Whether the rows matched the digest the backup carries; false only with `allowUnverified` for a backup without one. */
  readonly verified: boolean;
  /** Rows copied, in all. */
  readonly rows: number;
}

/** SQLite's bound-variable limit, with room: rows per INSERT of `columns` columns. */
const rowsPerInsert = (columns: number) => Math.max(1, Math.min(PAGE, Math.floor(900 / Math.max(1, columns))));

/** References between the known tables a store always keeps: rows whose target is missing are refused. */
const REFERENCES: ReadonlyArray<{ from: string; columns: readonly string[]; to: string; as: readonly string[] }> = [
  { from: 'a2ad_snapshot_cards', columns: ['digest'], to: 'a2ad_snapshots', as: ['digest'] },
  { from: 'a2ad_snapshot_cards', columns: ['raw_sha256'], to: 'a2ad_cards', as: ['raw_sha256'] },
  { from: 'events', columns: ['app_name', 'user_id', 'session_id'], to: 'sessions', as: ['app_name', 'user_id', 'id'] },
];

/** Copies the backup's rows of `plans` into the fresh store, each value checked against its column; returns the rows copied. */
export async function copyRows(from: string, backup: All, fresh: Fresh, plans: readonly TablePlan[]): Promise<number> {
  let copied = 0;
  await fresh.db.transaction(async (trx) => {
    for (const plan of plans) {
      // What the migrations wrote (the leader row, ADK's schema version) gives way to the backup's rows.
      const before = (await trx(plan.table.name).select('*')) as Array<Record<string, unknown>>;
      if (plan.table.name === 'adk_internal_metadata') {
        const mine = before.find((r) => r.key === 'schema_version')?.value;
        const [theirs] = await backup<{ value: unknown }>(`SELECT value FROM ${quoted(plan.table.name)} WHERE key = 'schema_version'`).catch(() => []);
        if (mine !== undefined && theirs !== undefined && String(theirs.value) !== String(mine)) {
          throw invalid(from, `its conversations are in ADK's session schema version ${String(theirs.value)}, and this build's ADK writes version ${String(mine)}`);
        }
      }
      await trx(plan.table.name).delete();
      let n = 0;
      for await (const page of rowsOf(backup, plan)) {
        const objects = page.map((row) => {
          n++;
          const o: Record<string, unknown> = {};
          plan.columns.forEach((c, i) => {
            const why = misfit(c, row[i]);
            if (why !== undefined) throw invalid(from, `row ${n} of ${plan.table.name}: ${c.name} ${why}`);
            o[c.name] = row[i];
          });
          return o;
        });
        const step = rowsPerInsert(plan.columns.length);
        for (let i = 0; i < objects.length; i += step) await trx(plan.table.name).insert(objects.slice(i, i + step));
      }
      copied += n;
    }
    const present = new Set(plans.map((p) => p.table.name));
    for (const ref of REFERENCES) {
      if (!present.has(ref.from)) continue;
      const target = present.has(ref.to) ? `NOT EXISTS (SELECT 1 FROM ${quoted(ref.to)} t WHERE ${ref.as.map((c, i) => `t.${quoted(c)} = f.${quoted(ref.columns[i]!)}`).join(' AND ')})` : '1';
      const dangling = (await trx.raw(`SELECT COUNT(*) AS n FROM ${quoted(ref.from)} f WHERE ${target}`)) as Array<{ n: number }>;
      const n = dangling[0]?.n ?? 0;
      if (n > 0) throw invalid(from, `${n} row${n === 1 ? '' : 's'} of ${ref.from} name${n === 1 ? 's' : ''} ${ref.to} rows that are not there (${ref.columns.join(', ')})`);
    }
  });
  return copied;
}

/**
 * Restores a backup into the SQLite store file `file`. Checks the backup first (integrity, our
 * migrations, the rows' digest), rebuilds it in a private temporary folder (a fresh store from
 * this build's migrations, the known tables' rows copied in and checked: types, sizes,
 * references; nothing else of the backup, which the report lists as `backup.ignored`), so nothing
 * is written when it is unusable; then takes the store's lock (refused while a service holds the
 * file), refuses a store that has tables unless `force`, and copies the fresh store in with
 * SQLite's backup API.
 *
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` for an unusable backup (a rows' digest that does
 *   not match included), `ERR_STORE_LOCKED` while a service holds the store, `ERR_USAGE` for a
 *   store that is not empty without `force`, or a backup without a rows' digest without `allowUnverified`.
 */
export async function restoreSqliteStore(from: string, file: string, options: RestoreOptions = {}): Promise<RestoreReport> {
  return rebuildBackup(from, options, async (fresh) => {
    const check = (await fresh.db.raw('PRAGMA integrity_check')) as Array<{ integrity_check: string }>;
    if (check.some((r) => r.integrity_check !== 'ok')) throw invalid(from, 'the rebuilt store fails SQLite\'s integrity check');
    await fresh.db.destroy();
    return writeInto(from, fresh.file, file, options.force === true);
  });
}

/**
 * @internal The checks and the rebuild every restore shares (SQLite's and PostgreSQL's): opens the
 * backup and checks it whole, builds a fresh SQLite store, checks the rows' digest (as the backup
 * records it, or `expectDigest`), copies the known tables' rows into the fresh store (values and
 * references checked), runs this build's newer migrations, then hands the fresh store to `write`.
 */
export async function rebuildBackup(from: string, options: RestoreOptions, write: (fresh: Fresh, adk: boolean) => Promise<{ store: string; replaced: boolean }>): Promise<RestoreReport> {
  const opened = await openBackup(from);
  try {
    const stored = await storedDigest(opened.db);
    if (stored === undefined && options.allowUnverified !== true) {
      throw new DiscoveryError(
        'ERR_USAGE',
        `${from} carries no digest of its rows (a backup made before backups did, or not by a2a-discovery backup), so its rows cannot be verified: pass --allow-unverified to restore it anyway (its schema objects are still ignored); nothing was written`,
      );
    }
    if (stored !== undefined && !DIGEST_FORMATS.includes(stored.format)) throw invalid(from, `its rows' digest is of a format this build does not know (${stored.format})`);
    const sha256 = await sha256Of(from);
    const backupAll = allOf(opened.db);
    const adk = hasAdkTables(opened.tables);
    const result = await withFresh(opened.applied.length, adk, async (fresh) => {
      const { plans, ignored } = await planOf(backupAll, fresh.known);
      const digest = await rowsDigest(backupAll, plans, stored?.format ?? DIGEST_FORMAT);
      if (stored !== undefined && stored.digest !== digest) throw invalid(from, `its rows do not match the digest it carries (rows ${digest}, recorded ${stored.digest}): it was changed after it was written`);
      if (options.expectDigest !== undefined && options.expectDigest.toLowerCase() !== digest) throw invalid(from, `its rows' digest is ${digest}, not the expected ${options.expectDigest}`);
      const copied = await copyRows(from, backupAll, fresh, plans);
      // Then this build's newer migrations, as serve would run them (an older backup's rows move with them).
      await migrate(fresh.db);
      const report: BackupReport = { file: from, bytes: opened.bytes, sha256, schema: opened.applied.at(-1) ?? '(none)', tables: opened.tables, rowsDigest: digest, ignored };
      const written = await write(fresh, adk);
      return { report, copied, written };
    });
    return { backup: result.report, store: result.written.store, replaced: result.written.replaced, verified: stored !== undefined, rows: result.copied };
  } finally {
    await close(opened.db);
  }
}

/** Copies the fresh store `fresh` into the store file `file`, under its lock. */
async function writeInto(from: string, fresh: string, file: string, force: boolean): Promise<{ store: string; replaced: boolean }> {
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
      if (present.length > 0 && !force) {
        throw new DiscoveryError(
          'ERR_USAGE',
          `the store ${file} is not empty (${present.length} tables, ${present.reduce((n, t) => n + t.rows, 0)} rows): restore into a new data directory, or pass --force to replace it`,
        );
      }
      await exec(db, 'PRAGMA busy_timeout = 10000');
      await copyInto(db, fresh).catch((err: unknown) => {
        throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot restore ${from} into ${file}: ${(err as Error).message}`, { cause: err, stage: 'store' });
      });
      return { store: lock.file, replaced: present.length > 0 };
    } finally {
      await close(db);
    }
  } finally {
    await lock.release();
  }
}
