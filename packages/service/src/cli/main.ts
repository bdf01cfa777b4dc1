#!/usr/bin/env node
/**
 * The `a2a-discovery` command line. Exit codes: 0 success or an accepted card, 1 a refused
 * card or a failed check, 2 a usage error, 3 (`diff`) a breaking change. With `--json`, every outcome is one JSON object on
 * stdout: the command's report, or `{ error: {code, failure, message, ...}, exitCode }` for a
 * usage error or a failure (see {@link errorJson}), with the same exit codes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { toDiscoveryError } from 'a2a-discovery/internal';
import { registerProbeCommand } from './probe-command.js';
import { registerValidateCommand } from './validate.js';
import { registerTraceCommand } from './trace.js';
import { registerServeCommands } from './serve.js';
import { registerEvalRoutingCommand } from './eval-routing.js';
import { registerDnsRecordsCommand } from './dns-records.js';
import { registerBackupCommands } from './backup.js';
import { registerSearchCommands } from './search.js';
import { registerDoctorCommand } from './doctor.js';
import { registerDiffCommand } from './diff.js';
import { VERSION } from '../version.js';

const EXIT_OK = 0;
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

/**
 * The program: the root's name, version and output, then every command in the order `--help`
 * lists them. Errors are thrown (commander's `exitOverride`), not exits: {@link main} turns them
 * into exit codes.
 */
export function buildProgram(io: { out: (s: string) => void; err: (s: string) => void }): Command {
  const program = new Command();
  program
    .name('a2a-discovery')
    .description('Find A2A agents, keep their cards fresh, and explain why a card is accepted or refused.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  registerProbeCommand(program, io);
  registerTraceCommand(program, io);
  registerServeCommands(program, io);
  registerEvalRoutingCommand(program, io);
  registerDnsRecordsCommand(program, io);
  registerBackupCommands(program, io);
  registerSearchCommands(program, io);
  registerDoctorCommand(program, io);
  registerDiffCommand(program, io);
  registerValidateCommand(program, io);
  return program;
}

/** True when the command line asks for JSON (`--json` before any `--`), even if it does not parse. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * The one JSON shape of an outcome that is not a command's report: a usage error (a bad flag, a
 * missing or unreadable file), or a failure. `error` is the {@link DiscoveryError}'s own JSON
 * (code, failure, message, and url, stage, path, problems when known).
 */
function errorJson(err: unknown, exitCode: number): string {
  const error =
    err instanceof CommanderError
      ? new DiscoveryError('ERR_USAGE', err.message.replace(/^error: /, ''))
      : toDiscoveryError(err, exitCode === EXIT_USAGE ? 'ERR_USAGE' : 'ERR_INTERNAL');
  return `${JSON.stringify({ error: error.toJSON(), exitCode }, null, 2)}\n`;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s) };
  const program = buildProgram(io);
  process.exitCode = EXIT_OK;
  const failed = (err: unknown, exitCode: number): number => {
    if (wantsJson(argv)) io.out(errorJson(err, exitCode));
    return exitCode;
  };
  try {
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? EXIT_OK);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has written the message (and the help hint) on stderr.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? EXIT_OK : failed(err, EXIT_USAGE);
    }
    if (isDiscoveryError(err)) {
      io.err(`error: ${err.message}\n`);
      return failed(err, err.failure === 'config' ? EXIT_USAGE : EXIT_REFUSED);
    }
    io.err(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return failed(err, EXIT_REFUSED);
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    // The npm bin is a symlink: compare real paths.
    return pathToFileURL(realpathSync(script)).href === pathToFileURL(realpathSync(fileURLToPath(import.meta.url))).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv.slice(2));
}
