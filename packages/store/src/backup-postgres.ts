/**
 * Backup and restore of a PostgreSQL store (docs/operations.md, "Backup and restore"), in the
 * same portable format as a SQLite store's: a backup is a SQLite file holding the known tables'
 * rows (ours, `a2ad_*`, and ADK's session tables) and their digest (backup-rows.ts), so a backup of
 * either engine restores into either.
 *
 * Backup: one read-only REPEATABLE READ transaction on the store's schema (a consistent view while
 * the replicas keep writing), the known tables' rows read into a fresh SQLite store built by this
 * build's migrations (values in the SQLite store's form: backup-rows.ts `fromPostgres`), each value
 * checked. Anything else of the schema — triggers, rules, policies, functions, views, tables and
 * columns of no release, the database's event triggers — is reported and never copied.
 *
 * Restore rebuilds, it does not adopt: the backup is checked and rebuilt as a SQLite restore does
 * (backup.ts `rebuildBackup`); then the store's schema is built fresh by this build's migrations
 * (and ADK's own session service) in a private new schema, the rows copied in, and the result
 * checked for triggers, rules and policies on its tables (an event trigger may plant one). Only
 * then, in one transaction that holds the replicas' leader lock (refused while a replica leads),
 * are the target's own tables of ours dropped (`--force`: CASCADE takes their triggers, rules and
 * views along) and the rebuilt tables moved into the target schema; the checks run again before it
 * commits. The new schema is dropped in every case.
 */
import { copyFile, chmod, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { DiscoveryError } from 'a2a-discovery';
import { redactUrl } from 'a2a-discovery/config';
import type { Knex } from 'knex';
import { ADK_TABLES, BACKUP_META_TABLE, PAGE, planOf, postgresAll, postgresPlanOf, postgresPlanted, quoted, rowsDigest, rowsOf, toPostgres, type All, type PgResult } from './backup-rows.js';
import { checkOut, close, copyRows, openBackup, rebuildBackup, sha256Of, withFresh, writeDigest, type BackupReport, type Fresh, type RestoreOptions, type RestoreReport } from './backup.js';
import { MIGRATIONS_TABLE, migrate, migrationSource } from './migrations.js';
import { postgresKnex } from './postgres-knex.js';

/** A PostgreSQL store, as the configuration names it. */
export interface PostgresStoreTarget {
  /** `postgres://user@host:5432/db?sslmode=…`, without password. */
  readonly url: string;
  /** The password, when it is not in the URL (the configuration's storePasswordEnv / storePasswordFile). */
  readonly password?: string;
  /** The schema of the store's tables. Default `public`. */
  readonly schema?: string;
}

function connect(target: PostgresStoreTarget, searchPath?: string): Promise<Knex> {
  return postgresKnex(target, { ...(searchPath !== undefined && { searchPath }), maxConnections: 2 });
}

const pgAll = (db: Knex | Knex.Transaction): All => postgresAll((sql, params) => db.raw(sql, params as Knex.RawBinding[]) as unknown as Promise<PgResult>);
const sqliteAll =
  (db: Knex): All =>
  <T>(sql: string, params: unknown[] = []) =>
    db.raw(sql, params as Knex.RawBinding[]) as unknown as Promise<T[]>;

const unavailable = (where: string, err: unknown) =>
  new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot reach the PostgreSQL store ${where}: ${(err as Error).message}; nothing was written`, { cause: err, stage: 'store' });

/** The store's migrations in schema `schema`, checked against this build's (none newer, in order). */
async function appliedMigrations(all: All, schema: string, where: string): Promise<string[]> {
  const [has] = await all<{ n: number }>("SELECT COUNT(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ? AND c.relkind = 'r'", [schema, MIGRATIONS_TABLE]);
  if ((has?.n ?? 0) === 0) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `${where} has no ${MIGRATIONS_TABLE} table in schema ${schema}: no a2a-discovery store there; nothing was written`, { stage: 'store' });
  const applied = (await all<{ name: string }>(`SELECT name FROM ${quoted(schema)}.${quoted(MIGRATIONS_TABLE)} ORDER BY name`)).map((r) => r.name);
  const known = await migrationSource.getMigrations([]);
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `${where} has a schema newer than this build (migrations ${unknown.join(', ')}): back it up with the release that runs it; nothing was written`, { stage: 'store' });
  }
  if (applied.some((name, i) => known[i] !== name)) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `${where}'s migrations (${applied.join(', ')}) are not this build's, in order; nothing was written`, { stage: 'store' });
  return applied;
}

/**
 * Backs up the PostgreSQL store `target` into the new file `out`: the portable backup format (a
 * SQLite file of the known tables' rows and their digest; module comment), read in one consistent
 * read-only transaction while the replicas keep running. What the schema holds besides the known
 * tables' rows is in the report's `ignored`, never in the file.
 *
 * @throws DiscoveryError `ERR_USAGE` when `out` exists or its folder does not, `ERR_STORE_UNAVAILABLE`
 *   when the database cannot be read, holds no store, a newer release's schema, or a value the
 *   store's schema does not declare.
 */
export async function backupPostgresStore(target: PostgresStoreTarget, out: string): Promise<BackupReport> {
  await checkOut(out);
  const schema = target.schema ?? 'public';
  const where = `${redactUrl(target.url)} (schema ${schema})`;
  const partial = `${out}.partial-${process.pid}`;
  await rm(partial, { force: true });
  const db = await connect(target, schema);
  try {
    const digested = await db
      .transaction(
        async (trx) => {
          const all = pgAll(trx);
          const applied = await appliedMigrations(all, schema, where);
          const present = await all<{ name: string }>("SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p')", [schema]);
          const adk = present.some((t) => (ADK_TABLES as readonly string[]).includes(t.name));
          return withFresh(applied.length, adk, async (fresh) => {
            const { plans, ignored } = await postgresPlanOf(all, schema, fresh.known);
            await copyRows(`the PostgreSQL store ${where}`, all, fresh, plans);
            const own = sqliteAll(fresh.db);
            const digest = await rowsDigest(own, (await planOf(own, fresh.known)).plans);
            await fresh.db.destroy();
            await copyFile(fresh.file, partial);
            // The store's rows (pins' owner secrets, conversations) are private.
            await chmod(partial, 0o600);
            return { digest, ignored, applied };
          });
        },
        { isolationLevel: 'repeatable read', readOnly: true },
      )
      .catch((err: unknown) => {
        if (err instanceof DiscoveryError) throw err;
        throw unavailable(where, err);
      });
    await writeDigest(partial, digested.digest);
    const opened = await openBackup(partial);
    await close(opened.db);
    const report: BackupReport = { file: out, bytes: opened.bytes, sha256: await sha256Of(partial), schema: digested.applied.at(-1) ?? '(none)', tables: opened.tables.filter((t) => t.name !== BACKUP_META_TABLE), rowsDigest: digested.digest, ignored: digested.ignored };
    await rename(partial, out);
    return report;
  } finally {
    await db.destroy().catch(() => undefined);
    await rm(partial, { force: true });
  }
}

/** The replicas' leader lock of `schema` (replica-coordinator.ts): taken for the transaction `trx`, or a refusal. */
async function holdLeaderLock(trx: Knex.Transaction, schema: string, where: string): Promise<void> {
  const got = (await trx.raw('SELECT pg_try_advisory_xact_lock(hashtext(?)) AS ok', [`a2ad:leader:${schema}`])) as PgResult;
  if (got.rows[0]?.ok !== true) {
    throw new DiscoveryError(
      'ERR_STORE_LOCKED',
      `a replica leads the store ${where} (it holds the leader lock): stop every replica on this database before a restore, a restore does not run underneath them; nothing was written`,
      { stage: 'store' },
    );
  }
}

/** Tables of ours (the known tables and the migrations' bookkeeping) that schema `schema` has. */
async function oursIn(all: All, schema: string, names: readonly string[]): Promise<string[]> {
  const rows = await all<{ name: string }>("SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p') ORDER BY c.relname", [schema]);
  return rows.map((r) => r.name).filter((n) => names.includes(n));
}

/** Refuses a restore the target does not allow: a replica leads, or a store is there and `force` was not given. */
async function checkTarget(trx: Knex.Transaction, schema: string, where: string, ours: readonly string[], force: boolean): Promise<string[]> {
  await holdLeaderLock(trx, schema, where);
  const there = await oursIn(pgAll(trx), schema, ours);
  if (there.length > 0 && !force) {
    throw new DiscoveryError('ERR_USAGE', `the store ${where} is not empty (${there.length} of its tables are there: ${there.slice(0, 4).join(', ')}${there.length > 4 ? ', …' : ''}): restore into a new schema or database, or pass --force to replace it; nothing was written`);
  }
  return there;
}

/** Copies the rebuilt store's rows into the tables of schema `schema` (built by this build's migrations), and moves their sequences past them. */
async function copyIntoPostgres(fresh: Fresh, db: Knex, schema: string): Promise<void> {
  const from = sqliteAll(fresh.db);
  const all = pgAll(db);
  await db.transaction(async (trx) => {
    for (const table of fresh.known.tables) {
      const columns = await all<{ name: string; type: string }>('SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = ? AND table_name = ?', [schema, table.name]);
      const types = new Map(columns.map((c) => [c.name, c.type]));
      const missing = table.columns.filter((c) => !types.has(c.name));
      if (missing.length > 0) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `the rebuilt PostgreSQL table ${table.name} has no column ${missing.map((c) => c.name).join(', ')}; nothing was written`, { stage: 'store' });
      const name = `${quoted(schema)}.${quoted(table.name)}`;
      await trx.raw(`DELETE FROM ${name}`);
      const step = Math.max(1, Math.floor(PAGE / Math.max(1, table.columns.length / 8)));
      for await (const page of rowsOf(from, { table, columns: table.columns })) {
        const objects = page.map((row) => Object.fromEntries(table.columns.map((c, i) => [c.name, toPostgres(row[i], types.get(c.name)!)])));
        for (let i = 0; i < objects.length; i += step) await trx.withSchema(schema).table(table.name).insert(objects.slice(i, i + step));
      }
      for (const c of table.columns) {
        const [seq] = (await trx.raw('SELECT pg_get_serial_sequence(?, ?) AS seq', [name, c.name])).rows as Array<{ seq: string | null }>;
        if (seq?.seq) await trx.raw(`SELECT setval(?, COALESCE((SELECT MAX(${quoted(c.name)}) FROM ${name}), 0) + 1, false)`, [seq.seq]);
      }
    }
  });
}

/**
 * Restores a backup (of a SQLite or a PostgreSQL store) into the PostgreSQL store `target`:
 * checked and rebuilt as `restoreSqliteStore` does, then built fresh in the database and swapped in
 * (module comment). Refused while a replica leads the store, and for a target that holds our
 * tables unless `force` (which drops them, CASCADE: their triggers, rules and views with them).
 *
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` for an unusable backup (a rows' digest that does
 *   not match included) or an unreachable database, `ERR_STORE_LOCKED` while a replica holds the
 *   leader lock, `ERR_USAGE` for a store that is not empty without `force`, or a backup without a
 *   rows' digest without `allowUnverified`. Nothing is written in the target when it throws.
 */
export async function restorePostgresStore(from: string, target: PostgresStoreTarget, options: RestoreOptions = {}): Promise<RestoreReport> {
  const schema = target.schema ?? 'public';
  const where = `${redactUrl(target.url)} (schema ${schema})`;
  const force = options.force === true;
  return rebuildBackup(from, options, async (fresh, adk) => {
    // The store's tables and ADK's (a target's conversations go too, even when the backup holds none: serve recreates the tables).
    const ours = [...new Set([...fresh.known.tables.map((t) => t.name), ...ADK_TABLES, MIGRATIONS_TABLE, `${MIGRATIONS_TABLE}_lock`])];
    const db = await connect(target);
    // A private schema of its own, named at random: nothing of the target's is in it.
    const staging = `a2ad_restore_${randomBytes(8).toString('hex')}`;
    let created = false;
    try {
      // Refuse early, before the work: the same checks run again, under the lock, at the swap.
      await db.transaction((trx) => checkTarget(trx, schema, where, ours, force)).catch((err: unknown) => {
        if (err instanceof DiscoveryError) throw err;
        throw unavailable(where, err);
      });
      await db.raw('CREATE SCHEMA ??', [staging]);
      created = true;
      const built = await connect(target, staging);
      try {
        const newer = await migrate(built, staging);
        if (newer.length > 0) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `the staging schema ${staging} has migrations this build does not have (${newer.join(', ')}); nothing was written`, { stage: 'store' });
      } finally {
        await built.destroy();
      }
      if (adk) {
        const { openAdkSessionService } = await import('./adk-sessions.js');
        const sessions = await openAdkSessionService(target.url, { schema: staging, ...(target.password !== undefined && { password: target.password }) });
        await sessions.close();
      }
      await copyIntoPostgres(fresh, db, staging);
      const all = pgAll(db);
      const moved = await oursIn(all, staging, ours);
      const planted = await postgresPlanted(all, staging, moved);
      if (planted.length > 0) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `the rebuilt tables carry what their migrations did not make (${planted.join(', ')}): an event trigger of the database? Nothing was written`, { stage: 'store' });
      const replaced = await db.transaction(async (trx) => {
        const there = await checkTarget(trx, schema, where, ours, force);
        await trx.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
        // CASCADE: their triggers, rules, policies and the views over them go with them.
        for (const table of there) await trx.raw('DROP TABLE ??.?? CASCADE', [schema, table]);
        for (const table of moved) await trx.raw('ALTER TABLE ??.?? SET SCHEMA ??', [staging, table, schema]);
        const after = await postgresPlanted(pgAll(trx), schema, moved);
        if (after.length > 0) throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `the restored tables carry what their migrations did not make (${after.join(', ')}): an event trigger of the database? Nothing was written`, { stage: 'store' });
        return there.length > 0;
      });
      return { store: where, replaced };
    } catch (err) {
      if (err instanceof DiscoveryError) throw err;
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot restore ${from} into ${where}: ${(err as Error).message}; nothing was written`, { cause: err, stage: 'store' });
    } finally {
      if (created) await db.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [staging]).catch(() => undefined);
      await db.destroy().catch(() => undefined);
    }
  });
}
