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
import { DiscoveryError } from 'a2a-discovery';
import type { DiscoveryConfig } from 'a2a-discovery/config';
import type { Io } from './flags.js';

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
export interface BackupFlags {
  config: string;
  out: string;
  json: boolean;
}

/** The flags of `restore`, as commander parses them. */
export interface RestoreFlags {
  config: string;
  from: string;
  force: boolean;
  allowUnverified: boolean;
  digest?: string;
  json: boolean;
}

/** Copies the configuration's store into `--out` and prints what it wrote (and, on stderr, what it left out). */
export async function runBackup(opts: BackupFlags, io: Io): Promise<void> {
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
export async function runRestore(opts: RestoreFlags, io: Io): Promise<void> {
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
