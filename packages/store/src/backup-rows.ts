/**
 * Internal: what a backup's rows are, apart from its schema (backup.ts, docs/operations.md
 * "Backup and restore"). A restore never adopts a backup's schema objects: it builds a fresh
 * store from this build's migrations (and ADK's own session schema), reads that fresh store's
 * tables and columns — the *known* schema — and copies only the backup's rows of those, each
 * value checked against its column. Everything else in the file is reported and ignored.
 *
 * The rows' digest: SHA-256 over every known table (by name) and its known columns (by name),
 * rows in primary-key order, each row one JSON array; written by `backup` into the backup's
 * {@link BACKUP_META_TABLE} and checked by `restore` before it copies anything.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { MIGRATIONS_TABLE, migrationSource } from './migrations.js';

/** The backup's own metadata table (key, value): the rows' digest and its format. */
export const BACKUP_META_TABLE = 'a2ad_backup';
/** The digest's format, stored beside it. */
export const DIGEST_FORMAT = 'a2ad-rows-sha256-v1';
/** ADK's session tables (adk-sessions.ts): known when the backup holds any of them. */
export const ADK_TABLES = ['adk_internal_metadata', 'app_states', 'events', 'sessions', 'user_states'] as const;
/** Rows read or written per statement. */
export const PAGE = 500;

/** A column of the known schema, as the fresh store declares it. */
export interface KnownColumn {
  readonly name: string;
  /** The declared type, lower case: `varchar(64)`, `text`, `bigint`, `integer`, `json`, `datetime`… */
  readonly type: string;
  readonly notNull: boolean;
}

export interface KnownTable {
  readonly name: string;
  /** By name. */
  readonly columns: readonly KnownColumn[];
  /** The primary key's columns, in key order. */
  readonly key: readonly string[];
}

/** Tables of the fresh store that are bookkeeping, never rows of a backup. */
function isBookkeeping(name: string): boolean {
  return name === MIGRATIONS_TABLE || name === `${MIGRATIONS_TABLE}_lock` || name === BACKUP_META_TABLE || name.startsWith('sqlite_');
}

/** Any SQLite connection's `all`, as a promise. */
export type All = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

export function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The known schema of a fresh SQLite store: its tables (bookkeeping left out), columns and keys; its index names. */
export async function knownSchema(all: All): Promise<{ tables: KnownTable[]; indexes: Set<string> }> {
  const names = await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  const tables: KnownTable[] = [];
  for (const { name } of names) {
    if (isBookkeeping(name)) continue;
    const info = await all<{ name: string; type: string; notnull: number; pk: number }>(`PRAGMA table_info(${quoted(name)})`);
    tables.push({
      name,
      columns: info.map((c) => ({ name: c.name, type: c.type.toLowerCase(), notNull: c.notnull === 1 || c.pk > 0 })).sort((a, b) => (a.name < b.name ? -1 : 1)),
      key: info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name),
    });
  }
  const indexes = new Set((await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index'")).map((r) => r.name));
  return { tables, indexes };
}

/** A value of a backup row as JSON (a BLOB as `{"blob": hex}`): the digest's and the messages' form. */
function canonical(value: unknown): unknown {
  return Buffer.isBuffer(value) ? { blob: value.toString('hex') } : value;
}

/**
 * Why `value` does not fit `column` (the fresh store's declaration: its type, its size for
 * `varchar(n)`, NOT NULL), or undefined when it fits. SQLite stores any value in any column; the
 * declaration is what the store writes and what PostgreSQL enforces.
 */
export function misfit(column: KnownColumn, value: unknown): string | undefined {
  if (value === null || value === undefined) return column.notNull ? 'is NULL in a NOT NULL column' : undefined;
  const t = column.type;
  const sized = /^(?:varchar|character varying|char|nvarchar)\((\d+)\)$/.exec(t);
  if (sized || t === 'text' || t === 'json' || t === 'uuid') {
    if (typeof value !== 'string') return `is a ${Buffer.isBuffer(value) ? 'BLOB' : typeof value} in a ${t} column`;
    if (sized && value.length > Number(sized[1])) return `is ${value.length} characters, over the column's ${sized[1]} (${t})`;
    return undefined;
  }
  if (t === 'integer' || t === 'bigint' || t === 'int' || t === 'smallint' || t === 'boolean') {
    return typeof value === 'number' && Number.isInteger(value) ? undefined : `is not an integer (${JSON.stringify(canonical(value))}) in a ${t} column`;
  }
  if (t === 'real' || t === 'float' || t === 'double' || t.startsWith('decimal') || t.startsWith('numeric')) {
    return typeof value === 'number' ? undefined : `is not a number in a ${t} column`;
  }
  if (t === 'datetime' || t === 'timestamp' || t === 'date') return typeof value === 'number' || typeof value === 'string' ? undefined : `is not a time in a ${t} column`;
  if (t === 'blob') return Buffer.isBuffer(value) ? undefined : `is not a BLOB in a blob column`;
  return `is in a column of a type this build does not check (${t})`;
}

/** What a backup holds of a known table: its known columns present in the file. */
export interface TablePlan {
  readonly table: KnownTable;
  /** Known columns the backup's table has, by name. */
  readonly columns: readonly KnownColumn[];
}

/** Reads the rows of `plan` from the backup, a page at a time, in primary-key order. */
export async function* rowsOf(all: All, plan: TablePlan): AsyncGenerator<unknown[][]> {
  const cols = plan.columns.map((c) => quoted(c.name)).join(', ');
  const order = (plan.table.key.length > 0 ? plan.table.key : plan.columns.map((c) => c.name)).map(quoted).join(', ');
  for (let offset = 0; ; offset += PAGE) {
    const rows = await all<Record<string, unknown>>(`SELECT ${cols} FROM ${quoted(plan.table.name)} ORDER BY ${order} LIMIT ${PAGE} OFFSET ${offset}`);
    if (rows.length === 0) return;
    yield rows.map((r) => plan.columns.map((c) => r[c.name]));
    if (rows.length < PAGE) return;
  }
}

/** The rows' digest (module comment) over `plans`, in the order given (by table name). */
export async function rowsDigest(all: All, plans: readonly TablePlan[]): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`${DIGEST_FORMAT}\n`);
  for (const plan of plans) {
    hash.update(`${JSON.stringify([plan.table.name, plan.columns.map((c) => c.name)])}\n`);
    for await (const page of rowsOf(all, plan)) for (const row of page) hash.update(`${JSON.stringify(row.map(canonical))}\n`);
  }
  return hash.digest('hex');
}

/** Something of the backup's that a restore does not take. */
export interface IgnoredObject {
  /** `trigger`, `view`, `index`, `table`, `column`, `pragma`. */
  readonly kind: string;
  /** Its name (`table.column` for a column, `name=value` for a pragma). */
  readonly name: string;
  /** Its SQL as the backup carries it, when it has some (shortened). */
  readonly sql?: string;
}

/** The backup's known tables (with the columns it has), what it holds besides them, and its migrations. */
export async function planOf(all: All, known: { tables: readonly KnownTable[]; indexes: ReadonlySet<string> }): Promise<{ plans: TablePlan[]; ignored: IgnoredObject[] }> {
  const objects = await all<{ type: string; name: string; tbl_name: string; sql: string | null }>('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name');
  const byName = new Map(known.tables.map((t) => [t.name, t]));
  const ignored: IgnoredObject[] = [];
  const short = (sql: string | null) => (sql === null ? {} : { sql: sql.length > 200 ? `${sql.slice(0, 200)}…` : sql });
  const plans: TablePlan[] = [];
  for (const o of objects) {
    if (o.type === 'table') {
      if (isBookkeeping(o.name)) continue;
      const table = byName.get(o.name);
      if (!table) {
        ignored.push({ kind: 'table', name: o.name, ...short(o.sql) });
        continue;
      }
      const present = new Set((await all<{ name: string }>(`PRAGMA table_info(${quoted(o.name)})`)).map((c) => c.name));
      for (const c of [...present].sort()) if (!table.columns.some((k) => k.name === c)) ignored.push({ kind: 'column', name: `${o.name}.${c}` });
      plans.push({ table, columns: table.columns.filter((c) => present.has(c.name)) });
    } else if (o.type === 'index') {
      if (o.name.startsWith('sqlite_autoindex_') || known.indexes.has(o.name)) continue;
      ignored.push({ kind: 'index', name: o.name, ...short(o.sql) });
    } else {
      ignored.push({ kind: o.type, name: o.name, ...short(o.sql) });
    }
  }
  for (const pragma of ['user_version', 'application_id'] as const) {
    const [row] = await all<Record<string, number>>(`PRAGMA ${pragma}`);
    const value = row?.[pragma] ?? 0;
    if (value !== 0) ignored.push({ kind: 'pragma', name: `${pragma}=${value}` });
  }
  plans.sort((a, b) => (a.table.name < b.table.name ? -1 : 1));
  return { plans, ignored };
}

/**
 * Builds a fresh store in the empty SQLite file behind `db`: this build's migrations, up to
 * `level` (the backup's newest migration), and, when `adk`, ADK's session tables through ADK's
 * own service (`openAdk`). Nothing of a backup is read.
 */
export async function buildFresh(db: Knex, level: number, openAdk: (() => Promise<void>) | undefined): Promise<void> {
  const config = { migrationSource, tableName: MIGRATIONS_TABLE };
  for (let applied = 0; applied < level; applied++) await db.migrate.up(config);
  if (openAdk) await openAdk();
}
