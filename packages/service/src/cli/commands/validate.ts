/**
 * `a2a-discovery validate --config <file>`: its options and help. The check itself (validate.ts)
 * loads when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { COMMANDS, type Io } from '../flags.js';

const VALIDATE_HELP = `
Every problem is printed as file:line:col path: message. Secrets (server.tokenEnv / tokenFile,
credentials valueEnv / valueFile, signatures.keys jwkFile) are read to check they exist; their values
are never printed. Relative paths resolve against the file's directory. See docs/configuration.md.

Exit codes: 0 valid, 1 invalid, 2 usage error (missing --config, unreadable file).
With --json every outcome is one JSON object on stdout, with these exit codes: the verdict, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
JSON fields: valid, problems [{path, message, line, column}].

Examples:
  a2a-discovery validate --config examples/discovery.yaml
  a2a-discovery validate --config /etc/a2a/discovery.yaml --json`;

/** Adds `validate` to the program. */
export function registerValidateCommand(program: Command, io: Io): void {
  program
    .command('validate')
    .description(COMMANDS.validate.description)
    .requiredOption('--config <file>', 'path of the YAML configuration file')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', VALIDATE_HELP)
    .action(async (opts: { config: string; json: boolean }) => {
      const { runValidate } = await import('../validate.js');
      process.exitCode = (await runValidate(opts.config, { json: opts.json, io })) ? 0 : 1;
    });
}
