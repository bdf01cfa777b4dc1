/**
 * Rendering configuration problems the way compilers and linters do, one per line:
 * `file:line:col path: message`, so editors and CI annotate the right line.
 *
 * @module
 */
import type { DiscoveryError, Problem } from '../errors.js';

/**
 * One line per problem of `err`: `file:line:col path: message`. Without `file` the line starts at
 * `line:col`; a problem without a position prints as `file: path: message`. An error without
 * problems prints its message.
 *
 * @example
 * formatProblems(err, 'discovery.yaml');
 * // discovery.yaml:12:7 static[1].name: duplicate name "billing_agent", already used by static[0]
 */
export function formatProblems(err: DiscoveryError, file?: string): string {
  if (err.problems.length === 0) return file === undefined ? err.message : `${file}: ${err.message}`;
  return err.problems.map((p) => formatProblem(p, file)).join('\n');
}

function formatProblem(p: Problem, file: string | undefined): string {
  const position = p.line === undefined ? undefined : `${p.line}:${p.column ?? 1}`;
  const where = [file, position].filter((s) => s !== undefined).join(':');
  return where === '' ? `${p.path}: ${p.message}` : position === undefined ? `${where}: ${p.path}: ${p.message}` : `${where} ${p.path}: ${p.message}`;
}
