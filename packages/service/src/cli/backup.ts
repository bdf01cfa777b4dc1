/**
 * `a2a-discovery backup --config <file> --out <file>` and `a2a-discovery restore --config <file>
 * --from <file>`: the state of a service (snapshots, pins, the journal, the card cache and, with
 * `sessions.history: store`, ADK's conversations) copied out of its store and back into a new data
 * directory (docs/operations.md, "Backup and restore").
 *
 * SQLite (the default store): one file, copied with SQLite's own consistent copy while the service
 * keeps running, restored with SQLite's backup API. PostgreSQL: the database's own tool,
 * `pg_dump` / `pg_restore`; these commands print the exact command lines (no password) and write
 * nothing, because a dump of a shared database is the database operator's job (credentials,
 * format, where it goes).
 */
import type { Command } from 'commander';
import { DiscoveryError } from 'a2a-discovery';
import type { DiscoveryConfig } from 'a2a-discovery/config';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

interface Table {
  readonly name: string;
  readonly rows: number;
}

/** `a2ad_pins 2 rows, events 6 rows, ...`: every table, ours first. */
function describeTables(tables: readonly Table[]): string {
  const ours = tables.filter((t) => t.name.startsWith('a2ad_'));
  const adk = tables.filter((t) => !t.name.startsWith('a2ad_'));
  return [...ours, ...adk].map((t) => `  ${t.name.padEnd(28)} ${t.rows}`).join('\n');
}

async function loadForStore(file: string): Promise<DiscoveryConfig> {
  const { formatProblems, loadConfig } = await import('a2a-discovery/config');
  const { isDiscoveryError } = await import('a2a-discovery');
  try {
    return await loadConfig(file);
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') throw new DiscoveryError('ERR_CONFIG_INVALID', `invalid configuration:\n${formatProblems(err, file)}`, { problems: err.problems });
    throw err;
  }
}

/** The SQLite file of the configuration's store, or a refusal naming what to do for the others. */
async function sqliteFileOf(config: DiscoveryConfig, command: 'backup' | 'restore', target: string): Promise<string> {
  const { parseStoreSpec, sqliteFilePath } = await import('a2a-discovery/config');
  const spec = parseStoreSpec(config.store);
  if ('problem' in spec) throw new DiscoveryError('ERR_CONFIG_INVALID', `store: ${spec.problem}`);
  if (spec.kind === 'sqlite' && spec.file !== ':memory:') return sqliteFilePath(spec.file, config.dataDir);
  if (spec.kind === 'postgres') {
    // A command line to run, so the URL as configured: it carries no password (parseStoreSpec refuses one, in userinfo or query).
    const url = spec.url;
    const password = config.storePasswordEnv !== undefined ? ` (set PGPASSWORD from $${config.storePasswordEnv})` : config.storePasswordFile !== undefined ? ` (set PGPASSWORD from ${config.storePasswordFile})` : '';
    const line =
      command === 'backup'
        ? `pg_dump --format=custom --schema=public --no-owner --file='${target}' '${url}'`
        : `pg_restore --clean --if-exists --no-owner --exit-on-error --dbname='${url}' '${target}'`;
    throw new DiscoveryError(
      'ERR_USAGE',
      `the store is PostgreSQL: ${command === 'backup' ? 'back it up' : 'restore it'} with the database's own tool${password}, nothing was written:\n  ${line}\n` +
        (command === 'backup' ? 'It holds the store (a2ad_*) and ADK\'s session tables (sessions, events, app_states, user_states, adk_internal_metadata).' : 'Stop every replica first; see docs/operations.md.'),
    );
  }
  throw new DiscoveryError('ERR_USAGE', `the store is in memory (store: ${config.store}): there is nothing to ${command}`);
}

export function registerBackupCommands(program: Command, io: Io): void {
  program
    .command('backup')
    .description("Copy the service's state (snapshots, pins, journal, card cache, conversations) out of its SQLite store into one file, while the service runs.")
    .requiredOption('--config <file>', 'the discovery.yaml whose store to back up')
    .requiredOption('--out <file>', 'the backup file to write (must not exist)')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
SQLite (the default store, <dataDir>/a2a-discovery.sqlite): SQLite's own consistent copy (VACUUM INTO)
on a read connection, so a running serve is neither stopped nor blocked. The file holds the store's
tables and, with sessions.history: store (the default), ADK's conversations. The copy is checked
(SQLite's integrity check) before it takes its name. Prints every table with its rows, the bytes and
the SHA-256 of the file.

PostgreSQL: prints the pg_dump command line to run (the password is never printed) and writes nothing.

Exit codes: 0 written, 1 a failure (nothing written), 2 usage error (the out file exists, a PostgreSQL
or memory store, an invalid configuration).

Examples:
  a2a-discovery backup --config discovery.yaml --out /backups/a2a-$(date +%F).sqlite
  a2a-discovery backup --config discovery.yaml --out backup.sqlite --json`,
    )
    .action(async (opts: { config: string; out: string; json: boolean }) => {
      const config = await loadForStore(opts.config);
      const file = await sqliteFileOf(config, 'backup', opts.out);
      const { backupSqliteStore } = await import('@a2a-discovery/store');
      const report = await backupSqliteStore(file, opts.out);
      const history = config.sessions.history === 'store' ? 'included' : 'not kept (sessions.history: memory)';
      if (opts.json) {
        io.out(`${JSON.stringify({ store: file, ...report, history }, null, 2)}\n`);
      } else {
        io.out(
          `backed up ${file}\n    to ${report.file}: ${report.bytes} bytes, sha256 ${report.sha256}\n  schema ${report.schema}; conversations ${history}\n${describeTables(report.tables)}\n`,
        );
      }
    });

  program
    .command('restore')
    .description("Restore a backup into the configuration's SQLite store: a new or empty data directory, with no service running on it.")
    .requiredOption('--config <file>', 'the discovery.yaml whose store to restore into')
    .requiredOption('--from <file>', 'the backup file written by a2a-discovery backup')
    .option('--force', 'replace a store that already has tables', false)
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
The backup is checked whole before anything is written: SQLite's integrity check (a truncated or damaged
file is refused), the store's migrations table, and a schema this build understands (a backup from a
newer version is refused; an older one is migrated when serve opens it). The store's lock is taken, so a
running serve on the same file refuses the restore, and no serve can start during it. A store that
already has tables is refused unless --force. Then start serve on the configuration: it serves the same
current snapshot, history, pins with their conversations, and journal.

PostgreSQL: prints the pg_restore command line to run and writes nothing.

Exit codes: 0 restored, 1 a failure (an unusable backup, the store in use; nothing written), 2 usage
error (a non-empty store without --force, a PostgreSQL or memory store, an invalid configuration).

Examples:
  a2a-discovery restore --config discovery.yaml --from /backups/a2a-2026-12-01.sqlite
  a2a-discovery restore --config discovery.yaml --from backup.sqlite --force`,
    )
    .action(async (opts: { config: string; from: string; force: boolean; json: boolean }) => {
      const config = await loadForStore(opts.config);
      const file = await sqliteFileOf(config, 'restore', opts.from);
      const { restoreSqliteStore } = await import('@a2a-discovery/store');
      const report = await restoreSqliteStore(opts.from, file, { force: opts.force });
      if (opts.json) {
        io.out(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        io.out(
          `restored ${report.backup.file} (${report.backup.bytes} bytes, sha256 ${report.backup.sha256}, schema ${report.backup.schema})\n    into ${report.store}${report.replaced ? ' (replaced the store that was there)' : ''}\n${describeTables(report.backup.tables)}\n`,
        );
      }
    });
}
