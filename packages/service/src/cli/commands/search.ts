/**
 * `a2a-discovery search`, `endpoints` and `events`: their arguments, options and help. The
 * requests to the service (search.ts) load when a command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { ENDPOINT_VERDICTS } from 'a2a-discovery/vocabulary';
import { collect, COMMANDS, MAX_SEARCH_PAGES as MAX_PAGES, nonNegativeInt, positiveInt, type Io } from '../flags.js';
import type { EndpointsFlags, EventsFlags, SearchFlags } from '../search.js';

const urlOption = (): Option => new Option('--url <url>', 'the service (default A2A_DISCOVERY_URL, else http://127.0.0.1:7340)');
const tokenOption = (): Option => new Option('--token-file <file>', 'a file holding the bearer token (default A2A_DISCOVERY_TOKEN); the token is never printed');

/** A verdict `--verdict` accepts, or a usage error naming them all. */
function verdictFlag(value: string, previous: string[]): string[] {
  if (!Object.hasOwn(ENDPOINT_VERDICTS, value)) throw new InvalidArgumentError(`not a verdict; one of ${Object.keys(ENDPOINT_VERDICTS).join(', ')}`);
  return [...previous, value];
}

export function registerSearchCommands(program: Command, io: Io): void {
  program
    .command('search')
    .description(COMMANDS.search.description)
    .argument('<text>', 'what the agent should do, e.g. "warranty claim for a broken laptop"')
    .addOption(urlOption())
    .addOption(tokenOption())
    .option('--tag <tag>', 'only agents with this skill tag (repeatable: all of them)', collect, [])
    .option('--limit <n>', 'results per page (default 10)', positiveInt)
    .option('--all', `follow the next pages too (at most ${MAX_PAGES})`, false)
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
Needs the viewer role where a token or people are configured (or server.registry.anonymous).
--json prints {query, service, results: [{score, name, identifier, tags, url}], more}.
Exit codes: 0 answered (even with no result), 1 refused or unreachable, 2 usage error.

Examples:
  a2a-discovery search "is serial 123 under warranty?"
  a2a-discovery search invoices --tag billing --url https://discovery.internal --token-file ~/.a2a-token --json`,
    )
    .action(async (text: string, opts: SearchFlags) => (await import('../search.js')).runSearch(text, opts, io));

  program
    .command('endpoints')
    .description(COMMANDS.endpoints.description)
    .addOption(urlOption())
    .addOption(tokenOption())
    .option('--verdict <verdict>', `only endpoints with this verdict (repeatable: any of them); one of ${Object.keys(ENDPOINT_VERDICTS).join(', ')}`, verdictFlag, [])
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
Needs the viewer role where a token or people are configured. A card that was fetched and refused
reads "refused" with its cause (refused by a pin, signature refused, unauthorized, redirect
refused, interface host refused, ...), never "pending".
--json prints {service, endpoints: [{baseUrl, names, verdict, cause, causeWords, reason, since}]}.
Exit codes: 0 answered, 1 refused or unreachable, 2 usage error.

Examples:
  a2a-discovery endpoints
  a2a-discovery endpoints --verdict refused --verdict removed --url https://discovery.internal --token-file ~/.a2a-token`,
    )
    .action(async (opts: EndpointsFlags) => (await import('../search.js')).runEndpoints(opts, io));

  program
    .command('events')
    .description(COMMANDS.events.description)
    .addOption(urlOption())
    .addOption(tokenOption())
    .option('--follow', 'stay connected (GET /api/stream) and print events as they come; reconnects with Last-Event-ID, with backoff', false)
    .addOption(new Option('-o, --output <format>', 'text, or jsonl: one JSON object per line (the event and its id), nothing else on stdout').choices(['text', 'jsonl']).default('text'))
    .option('--since <id>', 'start after this event id (an id printed earlier: resume a previous run)', nonNegativeInt)
    .option('--types <list>', 'only these event types, comma-separated (e.g. snapshot.published,card.refused)')
    .option('--max-events <n>', 'stop after printing this many events', positiveInt)
    .addHelpText(
      'after',
      `
Needs the viewer role where a token or people are configured. Diagnostics (reconnections, a
draining service, a gap the service could not replay) go to stderr. Ctrl-C stops with exit 0.

Examples:
  a2a-discovery events --follow -o jsonl | jq 'select(.type == "snapshot.published")'
  a2a-discovery events --follow --since 4182 --types card.refused,endpoint.removed`,
    )
    .action(async (opts: EventsFlags) => (await import('../search.js')).runEventsCommand(opts, io));
}
