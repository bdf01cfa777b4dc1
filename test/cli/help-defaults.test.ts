/**
 * Every command's `--help`: an option's default is stated once. Commander appends "(default: x)"
 * to an option that has a default value; a description that also says "(default x)" printed it
 * twice (`dns-records --help` showed "the records' TTL (default 3600) (default: 3600)").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildProgram } from '../../packages/service/src/cli/main.js';
import { runCli } from '../helpers/cli.js';

type Command = Awaited<ReturnType<typeof buildProgram>>;

/** The program's commands, nested ones included. */
function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

/** A description that names a default in its own words, before commander's "(default: …)". */
const STATED_TWICE = /\(default\b[^:][^)]*\).*\(default: /;

test('no option or argument of any command states its default twice in --help', async () => {
  const program = await buildProgram({ out: () => {}, err: () => {} });
  const commands = allCommands(program);
  assert.ok(commands.length > 10, 'every command of the CLI is walked');
  const twice: string[] = [];
  for (const command of commands) {
    const help = command.createHelp();
    for (const option of help.visibleOptions(command)) {
      const text = help.optionDescription(option);
      if (STATED_TWICE.test(text)) twice.push(`${command.name()} ${option.flags}: ${text}`);
    }
    for (const argument of help.visibleArguments(command)) {
      const text = help.argumentDescription(argument);
      if (STATED_TWICE.test(text)) twice.push(`${command.name()} <${argument.name()}>: ${text}`);
    }
  }
  assert.deepEqual(twice, []);
});

test('dns-records --help states the TTL default once, as commander prints it', async () => {
  const { code, stdout } = await runCli(['dns-records', '--help']);
  assert.equal(code, 0);
  const flat = stdout.replace(/\s+/g, ' ');
  assert.match(flat, /--ttl <seconds> the records' TTL \(default: 3600\)/);
  assert.doesNotMatch(flat, /\(default 3600\)/);
});
