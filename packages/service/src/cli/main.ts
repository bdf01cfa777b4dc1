#!/usr/bin/env node
/**
 * The `a2a-discovery` command line. Exit codes: 0 success or an accepted card, 1 a refused
 * card or a failed check, 2 a usage error, 3 (`diff`) a breaking change. With `--json`, every outcome is one JSON object on
 * stdout: the command's report, or `{ error: {code, failure, message, ...}, exitCode }` for a
 * usage error or a failure (see {@link errorJson}), with the same exit codes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError, Help } from 'commander';
import { COMMANDS } from './flags.js';
import type { CommandName, Io } from './flags.js';
import { VERSION } from '../version.js';

const EXIT_OK = 0;
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

type Register = (program: Command, io: Io) => void;

/**
 * The module that declares each command (a module may declare several: its arguments, options and
 * help, in commands/), loaded only when one of its commands is named: `--version`, `--help` and a
 * mistyped command load none of them. A declaration imports commander and plain tables only; what
 * the command does loads from its action, when it runs. So every `--help` answers without loading
 * the library, the service, ADK, the store drivers or OpenTelemetry (test/cli/startup.test.ts
 * bounds what each loads).
 */
const MODULES: ReadonlyArray<{ readonly commands: readonly CommandName[]; readonly load: () => Promise<Register> }> = [
  { commands: ['probe'], load: async () => (await import('./commands/probe.js')).registerProbeCommand },
  { commands: ['trace'], load: async () => (await import('./commands/trace.js')).registerTraceCommand },
  { commands: ['serve', 'demo'], load: async () => (await import('./commands/serve.js')).registerServeCommands },
  { commands: ['eval-routing'], load: async () => (await import('./commands/eval-routing.js')).registerEvalRoutingCommand },
  { commands: ['dns-records'], load: async () => (await import('./commands/dns-records.js')).registerDnsRecordsCommand },
  { commands: ['backup', 'restore'], load: async () => (await import('./commands/backup.js')).registerBackupCommands },
  { commands: ['search', 'endpoints', 'events'], load: async () => (await import('./commands/search.js')).registerSearchCommands },
  { commands: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctorCommand },
  { commands: ['diff'], load: async () => (await import('./commands/diff.js')).registerDiffCommand },
  { commands: ['validate'], load: async () => (await import('./commands/validate.js')).registerValidateCommand },
];

/** The root command: its name, version and output. Errors are thrown (commander's `exitOverride`), not exits: {@link main} turns them into exit codes. */
function rootCommand(io: Io): Command {
  return new Command()
    .name('a2a-discovery')
    .description('Find A2A agents, keep their cards fresh, and explain why a card is accepted or refused.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
}

/** The program with every command loaded, in the order `--help` lists them (for tests that read every command's options). */
export async function buildProgram(io: Io): Promise<Command> {
  const program = rootCommand(io);
  for (const m of MODULES) (await m.load())(program, io);
  return program;
}

/** The command a command line names (`help <command>` included), or undefined (the root's own options, or no command). */
function commandNamed(argv: readonly string[]): string | undefined {
  const words = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : undefined).filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The program {@link main} runs: the named command's module alone; with no known command (the
 * root's `--help` or `--version`, no argument, a typo), every command listed from
 * {@link COMMANDS} with its term and description, none loaded (commander still suggests the
 * nearest name for a typo).
 */
async function programFor(argv: readonly string[], io: Io): Promise<Command> {
  const program = rootCommand(io);
  const name = commandNamed(argv);
  const m = MODULES.find((x) => x.commands.some((c) => c === name));
  if (m !== undefined) {
    (await m.load())(program, io);
    return program;
  }
  for (const [n, c] of Object.entries(COMMANDS)) program.command(n).description(c.description);
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => (Object.hasOwn(COMMANDS, cmd.name()) ? COMMANDS[cmd.name() as CommandName].term : help.subcommandTerm(cmd)) });
  return program;
}

/** True when the command line asks for JSON (`--json` before any `--`), even if it does not parse. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * The one JSON shape of an outcome that is not a command's report: a usage error (a bad flag, a
 * missing or unreadable file), or a failure. `error` is the DiscoveryError's own JSON (code,
 * failure, message, and url, stage, path, problems when known).
 */
async function errorJson(err: unknown, exitCode: number): Promise<string> {
  // The library loads here, on an error, not on every start.
  const { DiscoveryError } = await import('a2a-discovery');
  const { toDiscoveryError } = await import('a2a-discovery/internal');
  const error =
    err instanceof CommanderError
      ? new DiscoveryError('ERR_USAGE', err.message.replace(/^error: /, ''))
      : toDiscoveryError(err, exitCode === EXIT_USAGE ? 'ERR_USAGE' : 'ERR_INTERNAL');
  return `${JSON.stringify({ error: error.toJSON(), exitCode }, null, 2)}\n`;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s) };
  const program = await programFor(argv, io);
  process.exitCode = EXIT_OK;
  const failed = async (err: unknown, exitCode: number): Promise<number> => {
    if (wantsJson(argv)) io.out(await errorJson(err, exitCode));
    return exitCode;
  };
  try {
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? EXIT_OK);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has written the message (and the help hint) on stderr.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? EXIT_OK : await failed(err, EXIT_USAGE);
    }
    const { isDiscoveryError } = await import('a2a-discovery');
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
