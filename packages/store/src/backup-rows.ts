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
import { DiscoveryError } from 'a2a-discovery';
import { MIGRATIONS_TABLE, migrationSource } from './migrations.js';

/** The backup's own metadata table (key, value): the rows' digest and its format. */
export const BACKUP_META_TABLE = 'a2ad_backup';
/**
 * The digest's format, stored beside it. v2 reads a `json` column's text as its JSON value (keys
 * sorted), so the rows of ADK's tables digest the same from SQLite (the text ADK wrote) and from
 * PostgreSQL (`jsonb`, which keeps no key order or spacing). v1 (no such reading) is still checked.
 */
export const DIGEST_FORMAT = 'a2ad-rows-sha256-v2';
/** The formats a restore checks. */
export const DIGEST_FORMATS: readonly string[] = ['a2ad-rows-sha256-v1', DIGEST_FORMAT];
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

/** A JSON value with its objects' keys sorted. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]));
  return value;
}

/** A `json` column's text as its value with sorted keys (v2), or the text when it is not JSON. */
function jsonValue(value: unknown): unknown {
  if (typeof value !== 'string') return canonical(value);
  try {
    return { json: sortedKeys(JSON.parse(value)) };
  } catch {
    return value;
  }
}

/** The rows' digest (module comment) over `plans`, in the order given (by table name), in `format` (default this build's). */
export async function rowsDigest(all: All, plans: readonly TablePlan[], format: string = DIGEST_FORMAT): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`${format}\n`);
  const v1 = format === 'a2ad-rows-sha256-v1';
  for (const plan of plans) {
    hash.update(`${JSON.stringify([plan.table.name, plan.columns.map((c) => c.name)])}\n`);
    const forms = plan.columns.map((c) => (!v1 && c.type === 'json' ? jsonValue : canonical));
    for await (const page of rowsOf(all, plan)) for (const row of page) hash.update(`${JSON.stringify(row.map((v, i) => forms[i]!(v)))}\n`);
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

/** PostgreSQL type ids whose values node-postgres gives in a form the SQLite store does not write. */
const PG_INT8 = 20;
const PG_NUMERIC = 1700;
const PG_BOOL = 16;
const PG_JSON = new Set([114, 3802]);
const PG_TIME = new Set([1082, 1114, 1184]);

/**
 * A PostgreSQL value in the form a SQLite store holds it (what ADK and the store write there): a
 * `bigint` as a number (refused past 2^53), a boolean as 1/0, a `json`/`jsonb` value as its JSON
 * text, a timestamp as milliseconds since the epoch. So a backup of a PostgreSQL store is the same
 * file, digest included, as a backup of the same rows in SQLite.
 */
function fromPostgres(value: unknown, typeId: number, where: string): unknown {
  if (value === null || value === undefined) return null;
  if (typeId === PG_INT8 || typeId === PG_NUMERIC) {
    const n = Number(value);
    if (typeId === PG_INT8 && !Number.isSafeInteger(n)) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `${where} is ${String(value)}, past the integers a backup keeps exactly (2^53)`, { stage: 'store' });
    return n;
  }
  if (typeId === PG_BOOL) return value === true ? 1 : 0;
  if (PG_JSON.has(typeId)) return typeof value === 'string' ? value : JSON.stringify(value);
  if (PG_TIME.has(typeId)) return value instanceof Date ? value.getTime() : Date.parse(String(value));
  return value;
}

/** A PostgreSQL column's value from a SQLite store's (the reverse of {@link fromPostgres}), by the column's `data_type`. */
export function toPostgres(value: unknown, dataType: string): unknown {
  if (value === null || value === undefined) return null;
  if (dataType.startsWith('timestamp') || dataType === 'date') return typeof value === 'number' ? new Date(value) : value;
  if (dataType === 'boolean') return value === 1 || value === true || value === '1';
  if (dataType === 'json' || dataType === 'jsonb') return typeof value === 'string' ? value : JSON.stringify(value);
  return value;
}

/** Result of a PostgreSQL query as knex's `raw` gives it. */
export interface PgResult {
  readonly rows: Array<Record<string, unknown>>;
  readonly fields: ReadonlyArray<{ name: string; dataTypeID: number }>;
}

/** An {@link All} over PostgreSQL (`$n` placeholders are knex's `?`), its values read as a SQLite store holds them ({@link fromPostgres}). */
export function postgresAll(raw: (sql: string, params: unknown[]) => Promise<PgResult>): All {
  return async <T>(sql: string, params: unknown[] = []) => {
    const result = await raw(sql, params);
    const types = new Map(result.fields.map((f) => [f.name, f.dataTypeID]));
    return result.rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, fromPostgres(v, types.get(k) ?? 0, k)]))) as T[];
  };
}



/**
 * What a PostgreSQL store's schema `schema` holds of the known tables (with the columns it has) and
 * besides them: triggers and rules on any table of the schema, policies, functions and procedures,
 * views, sequences no column owns, tables and columns of no release, and the database's event
 * triggers (which fire on any schema's DDL). None of them is taken into a backup.
 */
export async function postgresPlanOf(all: All, schema: string, known: { tables: readonly KnownTable[] }): Promise<{ plans: TablePlan[]; ignored: IgnoredObject[] }> {
  const byName = new Map(known.tables.map((t) => [t.name, t]));
  const ignored: IgnoredObject[] = [];
  const short = (sql: unknown) => (typeof sql !== 'string' ? {} : { sql: sql.length > 200 ? `${sql.slice(0, 200)}…` : sql });
  const tables = await all<{ name: string; kind: string }>(
    "SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname",
    [schema],
  );
  const plans: TablePlan[] = [];
  for (const t of tables) {
    if (t.kind === 'v' || t.kind === 'm') {
      const [def] = await all<{ sql: string }>('SELECT pg_get_viewdef(c.oid) AS sql FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?', [schema, t.name]);
      ignored.push({ kind: t.kind === 'v' ? 'view' : 'materialized view', name: t.name, ...short(def?.sql) });
      continue;
    }
    if (isBookkeeping(t.name)) continue;
    const table = byName.get(t.name);
    if (!table || t.kind === 'f') {
      ignored.push({ kind: t.kind === 'f' ? 'foreign table' : 'table', name: t.name });
      continue;
    }
    const present = new Set((await all<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?', [schema, t.name])).map((c) => c.name));
    for (const c of [...present].sort()) if (!table.columns.some((k) => k.name === c)) ignored.push({ kind: 'column', name: `${t.name}.${c}` });
    plans.push({ table, columns: table.columns.filter((c) => present.has(c.name)) });
  }
  const triggers = await all<{ name: string; tbl: string; sql: string }>(
    'SELECT t.tgname AS name, c.relname AS tbl, pg_get_triggerdef(t.oid) AS sql FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal ORDER BY c.relname, t.tgname',
    [schema],
  );
  for (const t of triggers) ignored.push({ kind: 'trigger', name: `${t.tbl}.${t.name}`, ...short(t.sql) });
  const rules = await all<{ name: string; tbl: string; sql: string }>('SELECT rulename AS name, tablename AS tbl, definition AS sql FROM pg_rules WHERE schemaname = ? ORDER BY tablename, rulename', [schema]);
  for (const r of rules) ignored.push({ kind: 'rule', name: `${r.tbl}.${r.name}`, ...short(r.sql) });
  const policies = await all<{ name: string; tbl: string }>('SELECT policyname AS name, tablename AS tbl FROM pg_policies WHERE schemaname = ? ORDER BY tablename, policyname', [schema]);
  for (const p of policies) ignored.push({ kind: 'policy', name: `${p.tbl}.${p.name}` });
  const functions = await all<{ name: string; kind: string; sql: string }>(
    "SELECT p.proname AS name, p.prokind AS kind, pg_get_functiondef(p.oid) AS sql FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ? AND p.prokind IN ('f', 'p') ORDER BY p.proname",
    [schema],
  );
  for (const f of functions) ignored.push({ kind: f.kind === 'p' ? 'procedure' : 'function', name: f.name, ...short(f.sql) });
  const events = await all<{ name: string; event: string }>('SELECT evtname AS name, evtevent AS event FROM pg_event_trigger ORDER BY evtname').catch(() => []);
  for (const e of events) ignored.push({ kind: 'event trigger', name: e.name, sql: `ON ${e.event}` });
  plans.sort((a, b) => (a.table.name < b.table.name ? -1 : 1));
  return { plans, ignored };
}

/**
 * The objects on the tables `tables` of schema `schema` that make a restored store other than its
 * migrations built it: triggers, rules, policies (row security). A PostgreSQL restore checks its
 * rebuilt tables for them (an event trigger may have planted one while they were created or moved).
 */
export async function postgresPlanted(all: All, schema: string, tables: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const triggers = await all<{ name: string; tbl: string }>(
    'SELECT t.tgname AS name, c.relname AS tbl FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal AND c.relname = ANY(?)',
    [schema, tables],
  );
  found.push(...triggers.map((t) => `trigger ${t.tbl}.${t.name}`));
  const rules = await all<{ name: string; tbl: string }>('SELECT rulename AS name, tablename AS tbl FROM pg_rules WHERE schemaname = ? AND tablename = ANY(?)', [schema, tables]);
  found.push(...rules.map((r) => `rule ${r.tbl}.${r.name}`));
  const policies = await all<{ name: string; tbl: string }>('SELECT policyname AS name, tablename AS tbl FROM pg_policies WHERE schemaname = ? AND tablename = ANY(?)', [schema, tables]);
  found.push(...policies.map((p) => `policy ${p.tbl}.${p.name}`));
  const secured = await all<{ tbl: string }>('SELECT c.relname AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ANY(?) AND c.relrowsecurity', [schema, tables]);
  found.push(...secured.map((s) => `row security on ${s.tbl}`));
  return found;
}
