/**
 * `a2a-discovery backup --config <file> --out <file>` and `a2a-discovery restore --config <file>
 * --from <file>`: the state of a service (snapshots, pins, the journal, the card cache and, with
 * `sessions.history: store`, ADK's conversations) copied out of its store and back into a new data
 * directory (docs/operations.md, "Backup and restore").
 *
 * SQLite (the default store): one file, copied with SQLite's own consistent copy while the service
 * keeps running, restored with SQLite's backup API. PostgreSQL: the same portable backup file (the
 * known tables' rows and their digest), read in one consistent transaction while the replicas run;
 * restored by building the schema fresh and swapping it in, refused while a replica leads.
 */
import type { Command } from 'commander';
import { DiscoveryError } from 'a2a-discovery';
import type { DiscoveryConfig } from 'a2a-discovery/config';
import { COMMANDS } from './flags.js';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

interface Table {
  readonly name: string;
  readonly rows: number;
}

interface Ignored {
  readonly kind: string;
  readonly name: string;
  readonly sql?: string;
}

/** What a backup holds besides its rows, one line each (or nothing). */
function describeIgnored(ignored: readonly Ignored[], lead: (things: string) => string): string {
  if (ignored.length === 0) return '';
  return `${lead(`${ignored.length} thing${ignored.length === 1 ? '' : 's'}`)}:\n${ignored.map((o) => `  ${o.kind} ${o.name}${o.sql === undefined ? '' : `: ${o.sql}`}`).join('\n')}\n`;
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

/** The configuration's store: a SQLite file or a PostgreSQL database (its password resolved as serve does), or a refusal for memory. */
async function storeOf(config: DiscoveryConfig, command: 'backup' | 'restore'): Promise<{ kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; password?: string }> {
  const { parseStoreSpec, sqliteFilePath } = await import('a2a-discovery/config');
  const spec = parseStoreSpec(config.store);
  if ('problem' in spec) throw new DiscoveryError('ERR_CONFIG_INVALID', `store: ${spec.problem}`);
  if (spec.kind === 'sqlite' && spec.file !== ':memory:') return { kind: 'sqlite', file: sqliteFilePath(spec.file, config.dataDir) };
  if (spec.kind === 'postgres') {
    const { resolveSecrets } = await import('a2a-discovery/config');
    const { storePassword } = await resolveSecrets(config);
    return { kind: 'postgres', url: spec.url, ...(storePassword !== undefined && { password: storePassword }) };
  }
  throw new DiscoveryError('ERR_USAGE', `the store is in memory (store: ${config.store}): there is nothing to ${command}`);
}

/** The flags of `backup`, as commander parses them. */
interface BackupFlags {
  config: string;
  out: string;
  json: boolean;
}

/** The flags of `restore`, as commander parses them. */
interface RestoreFlags {
  config: string;
  from: string;
  force: boolean;
  allowUnverified: boolean;
  digest?: string;
  json: boolean;
}

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

/** Copies the configuration's store into `--out` and prints what it wrote (and, on stderr, what it left out). */
async function runBackup(opts: BackupFlags, io: Io): Promise<void> {
  const config = await loadForStore(opts.config);
  const store = await storeOf(config, 'backup');
  const { backupPostgresStore, backupSqliteStore } = await import('@a2a-discovery/store');
  const { redactUrl } = await import('a2a-discovery/config');
  const file = store.kind === 'sqlite' ? store.file : redactUrl(store.url);
  const report = store.kind === 'sqlite' ? await backupSqliteStore(store.file, opts.out) : await backupPostgresStore(store, opts.out);
  const history = config.sessions.history === 'store' ? 'included' : 'not kept (sessions.history: memory)';
  if (opts.json) {
    io.out(`${JSON.stringify({ store: file, ...report, history }, null, 2)}\n`);
  } else {
    io.out(
      `backed up ${file}\n    to ${report.file}: ${report.bytes} bytes, sha256 ${report.sha256}\n  rows sha256 ${report.rowsDigest ?? '(none)'}\n  schema ${report.schema}; conversations ${history}\n${describeTables(report.tables)}\n`,
    );
    const ignored = describeIgnored(report.ignored, (things) => `warning: the store holds ${things} besides its rows (not of this release's schema: a restore will not take them)`);
    if (ignored !== '') io.err(ignored);
  }
}

/** Restores `--from` into the configuration's store and prints what it did (warnings and what it ignored on stderr). */
async function runRestore(opts: RestoreFlags, io: Io): Promise<void> {
  const config = await loadForStore(opts.config);
  const store = await storeOf(config, 'restore');
  const { restorePostgresStore, restoreSqliteStore } = await import('@a2a-discovery/store');
  const options = { force: opts.force, allowUnverified: opts.allowUnverified, ...(opts.digest !== undefined && { expectDigest: opts.digest }) };
  const report = store.kind === 'sqlite' ? await restoreSqliteStore(opts.from, store.file, options) : await restorePostgresStore(opts.from, store, options);
  if (!report.verified) io.err(`warning: ${report.backup.file} carries no digest of its rows: restored UNVERIFIED (--allow-unverified); its rows are as the file holds them\n`);
  const ignored = describeIgnored(report.backup.ignored, (things) => `ignored ${things} the backup holds besides the store's rows (not restored)`);
  if (ignored !== '') io.err(ignored);
  if (opts.json) {
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.out(
      `restored ${report.backup.file} (${report.backup.bytes} bytes, sha256 ${report.backup.sha256}, schema ${report.backup.schema})\n    into ${report.store}${report.replaced ? ' (replaced the store that was there)' : ''}\n  rows sha256 ${report.backup.rowsDigest ?? '(none)'} (${report.verified ? 'verified' : 'UNVERIFIED'}), ${report.rows} rows copied into a store built by this release\n${describeTables(report.backup.tables)}\n`,
    );
  }
}

/** Adds `backup` to the program. */
function registerBackupCommand(program: Command, io: Io): void {
  program
    .command('backup')
    .description(COMMANDS.backup.description)
    .requiredOption('--config <file>', 'the discovery.yaml whose store to back up')
    .requiredOption('--out <file>', 'the backup file to write (must not exist)')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', BACKUP_HELP)
    .action((opts: BackupFlags) => runBackup(opts, io));
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
    .action((opts: RestoreFlags) => runRestore(opts, io));
}

/** Adds `backup` and `restore` to the program. */
export function registerBackupCommands(program: Command, io: Io): void {
  registerBackupCommand(program, io);
  registerRestoreCommand(program, io);
}
