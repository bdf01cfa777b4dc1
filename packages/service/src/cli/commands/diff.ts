/**
 * `a2a-discovery diff <a> <b>`: its arguments, options and help. What it does (diff.ts) loads when
 * it runs, so `diff --help` loads neither the library nor the service.
 *
 * @module
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { COMMANDS, positiveInt, type Io } from '../flags.js';
import type { DiffFlags } from '../diff.js';

const DIFF_HELP = `
<a> and <b> are two agent card JSON files (any protocol version the library reads), or two snapshot
digests of a running service (12 or more hex digits: a prefix is looked up in its history; a file
whose name looks like a digest is written ./name). Cards are compared by the library's rules, the
same the service applies to every published snapshot (docs/pipeline.md, "What a change breaks").

Breaking: a skill, tag, or input/output mode removed; a security requirement added or changed; the
chosen interface's URL, binding or protocol version changed or gone; the tenant changed; streaming
removed; an agent that left the snapshot. Everything else (a skill added, texts, examples, version)
is compatible.

Exit codes: 0 every change is compatible (or nothing changed), 3 something is breaking, 1 an error
(a file that is not an agent card, named with the JSON path of each problem; a service that refuses
or cannot be reached; an unknown digest), 2 usage error (unreadable file, a file and a digest).
With --json every outcome is one JSON object on stdout, with these exit codes: the verdict, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
JSON fields: cards: from {file}, to {file}, impact (breaking, compatible), reasons; digests: the
service's diff (from, to, added, removed, changed [{localName, impact, reasons, ...}], breaking, impacts).

Examples:
  a2a-discovery diff returns-v1.json returns-v2.json
  a2a-discovery diff 3f9a1c2b7d4e 8be0f6a9c1d2 --url https://discovery.internal:7340 --json`;

/** Adds `diff` to the program. */
export function registerDiffCommand(program: Command, io: Io): void {
  program
    .command('diff')
    .description(COMMANDS.diff.description)
    .argument('<a>', 'the card file or snapshot digest before')
    .argument('<b>', 'the card file or snapshot digest after')
    .addOption(new Option('--url <url>', 'digests: the service (default A2A_DISCOVERY_URL, else http://127.0.0.1:7340)'))
    .addOption(new Option('--token-file <file>', 'digests: a file holding the bearer token (default A2A_DISCOVERY_TOKEN); the token is never printed'))
    .option('--max-bytes <n>', 'cards: largest card file read, in bytes (default 65536)', positiveInt)
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', DIFF_HELP)
    .action(async (a: string, b: string, flags: DiffFlags) => {
      const { runDiff } = await import('../diff.js');
      process.exitCode = await runDiff(a, b, flags, io);
    });
}
