/**
 * `a2a-discovery eval-routing`: its options and help. The evaluation (eval-routing.ts, and ADK
 * with it) loads when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { COMMANDS, type Io } from '../flags.js';
import type { EvalRoutingFlags } from '../eval-routing.js';

export function registerEvalRoutingCommand(program: Command, io: Pick<Io, 'out'>): void {
  program
    .command('eval-routing')
    .description(COMMANDS['eval-routing'].description)
    .requiredOption('--config <file>', 'path of the YAML configuration file')
    .option('--cases <file>', 'a YAML list of { message, expect: tag | agent name }, besides the vocabulary examples and routing.cases')
    .option('--url <service>', "evaluate a running service's current snapshot (its API), instead of stand-in peers built from the configuration")
    .option('--digest <digest>', 'with --url: a retained or archived snapshot instead of the current one')
    .option('--min-accuracy <x>', 'threshold, 0-1 (default routing.minAccuracy, 0.9)', (v) => {
      const n = Number(v);
      if (v.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('--min-accuracy must be between 0 and 1');
      return n;
    })
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
Without --url the snapshot is built offline from the configuration: every static agent, plus one
stand-in agent (<tag>_agent) for each needed tag no static agent serves, through the real matcher,
cap and routing domains. A routed root is evaluated deterministically; a model root runs its real
routers through ADK (root.model resolved by ADK's model registry) over stand-in leaves.

Cases expecting a tag no agent serves (or an agent the snapshot lacks) are skipped, not counted.

Exit codes: 0 accuracy at or above the threshold, 1 below, 2 usage error.
With --json every outcome is one JSON object on stdout, with these exit codes: the report, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
JSON fields: source, version, digest, levels, rootKind, accuracy, minAccuracy, passed, total, evaluated,
correct, perLabel [{label, cases, correct, accuracy}], confusion {rows, columns, counts}, fallbacks,
mistakes, skipped, results.

Examples:
  a2a-discovery eval-routing --config discovery.yaml
  a2a-discovery eval-routing --config discovery.yaml --cases routing-cases.yaml --json
  a2a-discovery eval-routing --config discovery.yaml --url http://127.0.0.1:7340`,
    )
    .action(async (opts: EvalRoutingFlags) => {
      const { evalRouting } = await import('../eval-routing.js');
      const { report, source } = await evalRouting(opts);
      const { formatRoutingReport } = await import('a2a-discovery/routing');
      io.out(opts.json ? `${JSON.stringify({ source, ...report }, null, 2)}\n` : `${formatRoutingReport(report)}\n(snapshot: ${source})\n`);
      process.exitCode = report.passed ? 0 : 1;
    });
}
