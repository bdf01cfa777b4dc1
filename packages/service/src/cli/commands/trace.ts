/**
 * `a2a-discovery trace`: its options and help. The explorer's run (trace.ts, the library's cache
 * on a virtual clock) loads when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { TRACE_CONDITIONS, TRACE_ROLLOUT_TRIGGERS } from 'a2a-discovery/vocabulary';
import { COMMANDS, type Io } from '../flags.js';
import type { TraceFlags } from '../trace.js';

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  if (n < 0) throw new InvalidArgumentError('must not be negative');
  return n;
}

function wholeNumber(value: string): number {
  const n = number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number');
  return n;
}

/**
 * Adds the `trace` subcommand to the program.
 *
 * @example registerTraceCommand(program, { out: (s) => process.stdout.write(s) });
 */
export function registerTraceCommand(program: Command, io: Pick<Io, 'out'>): Command {
  return program
    .command('trace')
    .description(COMMANDS.trace.description)
    .addOption(new Option('--condition <condition>', 'endpoint / card condition').choices([...TRACE_CONDITIONS]).default('healthy'))
    .option('--credentials', 'supply discovery credentials (simulated: a placeholder header)', false)
    .option('--max-age <s>', 'Cache-Control max-age the endpoint sends, whole seconds (default 10; 0 = revalidate every time)', wholeNumber)
    .addOption(new Option('--publish-v2-at <s>', 'model time at which card v2 is published (default 12)').argParser(number).conflicts('v2'))
    .option('--no-v2', 'never publish card v2 (v1 throughout)')
    .option('--require-streaming', 'the client requires the streaming capability', false)
    .option('--no-card-streaming', 'the card does not advertise streaming')
    .option('--interval <s>', 'seconds between attempts (default 6)', number)
    .option('--rtt <ms>', 'network round trip in milliseconds, at least 1 (default 100)', number)
    .option('--attempts <n>', 'number of attempts (default 5)', wholeNumber)
    .option('--backoff', "the library's capped exponential backoff after failures (5 s doubling to 300 s)", false)
    .option('--stale-on-error', 'serve a card seen before when a refresh fails, within --max-stale', false)
    .option('--fail-from <s>', 'the condition applies only from this model time; healthy before (default: from the start)', number)
    .option('--max-stale <s>', 'with --stale-on-error: how long past expiry a stale card may be used (default 3600)', number)
    .option('--jitter', "the library's expiry jitter (10 %) and backoff jitter (50 %), from a seeded random source", false)
    .option('--seed <n>', 'seed of the random source used by --jitter (default 1)', wholeNumber)
    .option('--calls <script>', 'the agent\'s A2A calls, one per attempt: ok, an HTTP status 400-599, network or -, optionally @<ms>, e.g. "ok ok 500 500 500 500 500 ok ok"; shows its health after each attempt')
    .option('--enter-after <n>', 'health: good observations in a row before the agent enters snapshots (default 2)', wholeNumber)
    .option('--call-leave-after <n>', 'health: failed calls in a row before the agent leaves new snapshots (default 5)', wholeNumber)
    .option('--v2-breaking', 'card v2 renames its skill (order-status → order-tracking): a breaking change', false)
    .option('--rollout', 'explain how the change from card v1 to v2 rolls out (the library\'s Rollouts on a model clock)', false)
    .addOption(new Option('--rollout-trigger <trigger>', 'which changes roll out by stages (default breaking)').choices([...TRACE_ROLLOUT_TRIGGERS]))
    .option('--rollout-steps <shares>', 'shares of new sessions in percent, ascending (default "5 25 100")')
    .option('--rollout-hold <s>', 'each step lasts at least this many model seconds (default 600)', number)
    .option('--rollout-min-turns <n>', 'each step lasts at least this many turns on the candidate (default 20)', wholeNumber)
    .option('--rollout-min-samples <n>', 'turns on the candidate before its figures are judged (default 10)', wholeNumber)
    .option('--rollout-max-error-increase <rate>', 'how much higher the candidate\'s turn error rate may be, a fraction (default 0.05)', number)
    .option('--candidate-calls <pattern>', 'what turns on the candidate come to, repeated: e.g. "ok 500" fails 50 % (default ok)')
    .option('--current-calls <pattern>', 'what turns on the current snapshot come to, repeated (default ok)')
    .option('--sessions <n>', 'new sessions during the rollout, one a model second, one turn each (default 2000)', wholeNumber)
    .option('--json', 'print the whole result as one JSON object (attempts, stats, inputs, events, cacheStates...)', false)
    .addHelpText(
      'after',
      `
Defaults reproduce the seed's healthy run: five attempts six seconds apart, max-age 10 s, v2 at 12 s,
round trip 100 ms, a 1,200-byte card, backoff, stale-on-error and jitter off:
3 network fetches, 2 cache hits (one fetch is a 304), 5 accepted selections v1, v1, v2, v2, v2.

The table has one row per attempt: its start, action, the If-None-Match it sent, why it went to the
network (or not), the status, the card used, the outcome, and where it was rejected — by lane, in the
explorer's names (Cache lookup, Request, Validation, Cache store, Selection), with the library's stage
where it adds one, e.g. "Validation (parse)" — or why v2 stayed hidden; then when v2 was first used.

JSON (schema a2a-discovery/trace@2): attempts [{index, at (s), action "cache-hit"|"fetch"|"backoff",
trigger, why, status, conditional, ifNoneMatch, cardVersion "v1"|"v2", serverVersion,
outcome "accepted"|"rejected", stage, lane, reason, hiddenNewer, ...}], stats {networkFetches, cacheHits,
notModified, bytesTransferred, accepted, rejected, backoffSkips, staleSelections}, events (each with its
lane), freshness, plus inputs, model, library, cacheStates and summary; with --calls, health {settings,
steps [{attempt, call, callOutcome, observation, state "pending"|"healthy"|"degraded"|"removed", reason,
member, transition}], lines}; with --rollout, rollout {change {impact, reasons}, staged, policy, status,
decisions [{at (s), action, by, reason, step, share}], steps, figures, alert, samples, sentence}.
Exit codes: 0 ran (whatever the outcomes), 2 usage error.
With --json every outcome is one JSON object on stdout, with these exit codes: the result, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.

Examples:
  a2a-discovery trace
  a2a-discovery trace --condition malformed --max-age 30
  a2a-discovery trace --condition unauthorized --credentials --json
  a2a-discovery trace --condition unavailable --fail-from 11 --stale-on-error
  a2a-discovery trace --attempts 9 --calls "ok ok 500 500 500 500 500 ok ok"
  a2a-discovery trace --rollout --v2-breaking --candidate-calls "ok 500"`,
    )
    .action(async (flags: TraceFlags) => {
      await (await import('../trace.js')).runTraceCommand(flags, io);
      process.exitCode = 0;
    });
}
