/**
 * `a2a-discovery validate --config <file>`: checks a configuration the way the service would load
 * it (YAML syntax, schema, cross-field rules, the state store's description) and that every secret
 * it names can be read (the PostgreSQL store's password included), without ever printing a secret.
 * It does not open the store (that would create the SQLite file). Problems print as `file:line:col path: message`.
 * Exits 0 when the file is valid, 1 when it is not.
 */
import { isAbsolute, relative } from 'node:path';
import { formatProblems, loadConfig, resolveSecrets, type DiscoveryConfig } from 'a2a-discovery/config';
import { DiscoveryError, isDiscoveryError, type Problem } from 'a2a-discovery';
import type { Io } from './flags.js';

/** The outcome of {@link validateConfigFile}. */
export interface ValidateReport {
  readonly valid: boolean;
  /** Every problem, in file order; secret problems after the others. */
  readonly problems: readonly Problem[];
  /** The configuration, when it parsed. */
  readonly config?: DiscoveryConfig;
}

/**
 * Loads `file` and reads its secrets from `env`.
 *
 * @throws DiscoveryError `ERR_USAGE` when the file cannot be read.
 */
export async function validateConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ValidateReport> {
  let config: DiscoveryConfig;
  try {
    config = await loadConfig(file);
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') return { valid: false, problems: err.problems };
    throw err;
  }
  try {
    await resolveSecrets(config, env);
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') return { valid: false, problems: err.problems, config };
    throw err;
  }
  return { valid: true, problems: [], config };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `N static agents, M needs, sources: static, well-known partners, ...` */
function describeConfig(config: DiscoveryConfig): string {
  const sources = [
    ...(config.static.length > 0 ? ['static'] : []),
    ...(config.sources.wellKnown !== undefined ? [`well-known ${config.sources.wellKnown.id}${config.sources.wellKnown.catalogFirst ? ' (AI Catalog first)' : ''}`] : []),
    ...config.sources.aiCatalogs.map((c) => `ai-catalog ${c.id}`),
    ...config.sources.registries.map((r) => `registry ${r.id}`),
    ...config.sources.ard.map((a) => `ard ${a.id}`),
    ...config.sources.dns.map((d) => `dns ${d.id}`),
    ...(config.sources.kubernetes !== undefined ? [`kubernetes ${config.sources.kubernetes.id}`] : []),
  ];
  return `${plural(config.static.length, 'static agent')}, ${plural(config.needs.length, 'need')}, sources: ${sources.join(', ')}, store: ${describeStore(config.store)}`;
}

/** `memory`, `sqlite <path>` (relative to the working directory when under it) or the PostgreSQL URL. */
function describeStore(store: string): string {
  if (!store.startsWith('sqlite:')) return store;
  const file = store.slice('sqlite:'.length);
  const rel = relative(process.cwd(), file);
  return `sqlite ${rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file}`;
}

/**
 * Runs the command: prints the verdict on `io.out` (text or `--json`), a one-line summary of an
 * invalid file on `io.err`, and resolves to whether the file is valid.
 *
 * @throws DiscoveryError `ERR_USAGE` when the file cannot be read (exit code 2).
 */
export async function runValidate(file: string, options: { json: boolean; io: Io }): Promise<boolean> {
  const report = await validateConfigFile(file);
  const { io } = options;
  if (options.json) {
    const problems = report.problems.map((p) => ({ path: p.path, message: p.message, line: p.line ?? null, column: p.column ?? null }));
    io.out(`${JSON.stringify({ valid: report.valid, problems }, null, 2)}\n`);
  } else if (report.valid && report.config !== undefined) {
    io.out(`ok: ${file} (${describeConfig(report.config)})\n`);
  } else {
    io.out(`${formatProblems(new DiscoveryError('ERR_CONFIG_INVALID', 'invalid configuration', { problems: report.problems }), file)}\n`);
    io.err(`invalid: ${file} (${plural(report.problems.length, 'problem')})\n`);
  }
  return report.valid;
}
