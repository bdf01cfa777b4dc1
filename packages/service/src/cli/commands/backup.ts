/**
 * `a2a-discovery backup` and `a2a-discovery restore`: their options and help. The copy itself
 * (backup.ts, and the store package's backup and restore) loads when a command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { COMMANDS, type Io } from '../flags.js';
import type { BackupFlags, RestoreFlags } from '../backup.js';

const BACKUP_HELP = `
SQLite (the default store, <dataDir>/a2a-discovery.sqlite): SQLite's own consistent copy (VACUUM INTO)
on a read connection, so a running serve is neither stopped nor blocked. The file holds the store's
tables and, with sessions.history: store (the default), ADK's conversations. The copy is checked
(SQLite's integrity check) and given the digest of its rows (SHA-256 over every known table's rows,
which restore checks) before it takes its name. Prints every table with its rows, the bytes and the
SHA-256 of the file, the rows' digest, and anything the store holds besides its rows (a trigger, a
view, a table or column of no release), which a restore will not take. The folder of --out must
exist: backup creates no folder.

PostgreSQL (store: postgres://…, the password from storePasswordEnv / storePasswordFile): the same
backup file, read in one consistent read-only transaction while the replicas keep running: the rows of
the store's tables and ADK's, nothing else of the schema (triggers, functions, views, rules, policies,
tables and columns of no release are listed on stderr). A backup of either engine restores into either.

Exit codes: 0 written, 1 a failure (nothing written), 2 usage error (the out file exists, its folder
does not, a memory store, an invalid configuration).

Examples:
  a2a-discovery backup --config discovery.yaml --out /backups/a2a-$(date +%F).sqlite
  a2a-discovery backup --config discovery.yaml --out backup.sqlite --json`;

const RESTORE_HELP = `
A restore rebuilds, it does not adopt: the backup is checked whole before anything is written (SQLite's
integrity check, the store's migrations table, a schema this build understands, the digest of its rows:
a row changed since the backup was written is refused), then a fresh store is built from this build's own
migrations (and ADK's session schema) and only the rows of the known tables are copied into it, each
value checked against its column (type, size) and the references between tables checked. Nothing else
of the file is taken: its triggers, views, indexes, extra tables and columns and pragmas are listed on
stderr and ignored. A backup with no digest (made before backups carried one) is refused unless
--allow-unverified, which restores it the same way with a warning. The store's lock is taken, so a
running serve on the same file refuses the restore, and no serve can start during it. A store that
already has tables is refused unless --force. Then start serve on the configuration: it serves the same
current snapshot, history, pins with their conversations, and journal.

PostgreSQL: the backup is checked and rebuilt the same way, then the store's tables are built fresh by
this release's migrations (and ADK's session service) in a new schema of their own, the rows copied in,
and the tables moved into the store's schema in one transaction. Refused while a replica leads (it holds
the leader lock): stop every replica first. A schema that has the store's tables is refused unless
--force, which drops them (CASCADE: their triggers, rules and views go with them) in that transaction.
The database's own triggers on other tables, functions and event triggers are not the store's and stay.

Exit codes: 0 restored, 1 a failure (an unusable or changed backup, the store in use: a serve on the SQLite
file or a replica leading the PostgreSQL store; nothing written), 2 usage error (a non-empty store without --force, a backup without a digest without --allow-unverified,
a memory store, an invalid configuration).

Examples:
  a2a-discovery restore --config discovery.yaml --from /backups/a2a-2026-12-01.sqlite
  a2a-discovery restore --config discovery.yaml --from backup.sqlite --force`;

/** Adds `backup` to the program. */
function registerBackupCommand(program: Command, io: Io): void {
  program
    .command('backup')
    .description(COMMANDS.backup.description)
    .requiredOption('--config <file>', 'the discovery.yaml whose store to back up')
    .requiredOption('--out <file>', 'the backup file to write (must not exist)')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', BACKUP_HELP)
    .action(async (opts: BackupFlags) => (await import('../backup.js')).runBackup(opts, io));
}

/** Adds `restore` to the program. */
function registerRestoreCommand(program: Command, io: Io): void {
  program
    .command('restore')
    .description(COMMANDS.restore.description)
    .requiredOption('--config <file>', 'the discovery.yaml whose store to restore into')
    .requiredOption('--from <file>', 'the backup file written by a2a-discovery backup')
    .option('--force', 'replace a store that already has tables (PostgreSQL: drop them, CASCADE)', false)
    .option('--allow-unverified', 'restore a backup that carries no digest of its rows (made before backups did), unverified', false)
    .option('--digest <sha256>', 'the rows digest the backup must have (as backup printed it: "rows sha256")')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', RESTORE_HELP)
    .action(async (opts: RestoreFlags) => (await import('../backup.js')).runRestore(opts, io));
}

/** Adds `backup` and `restore` to the program. */
export function registerBackupCommands(program: Command, io: Io): void {
  registerBackupCommand(program, io);
  registerRestoreCommand(program, io);
}
