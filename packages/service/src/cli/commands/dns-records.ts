/**
 * `a2a-discovery dns-records`: its options and help. Reading the catalog and writing the zone
 * lines (dns-records.ts) load when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { DNS_AID_DEFAULT_TTL_SECONDS } from 'a2a-discovery/vocabulary';
import { COMMANDS, type Io } from '../flags.js';
import type { DnsRecordsFlags } from '../dns-records.js';

function ttlSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 2 ** 31 - 1) throw new InvalidArgumentError('must be a whole number of seconds from 0 to 2147483647');
  return n;
}

export function registerDnsRecordsCommand(program: Command, io: Io): void {
  program
    .command('dns-records')
    .description(COMMANDS['dns-records'].description)
    .requiredOption('--domain <domain>', 'the zone the records go in, e.g. example.com: each agent is published at _{label}._a2a._agents.{domain}')
    .option('--url <service>', "a running service's base URL: its AI Catalog (/.well-known/ai-catalog.json, server.catalog.enabled) lists the snapshot's agents")
    .option('--catalog <file>', 'a saved copy of that AI Catalog, instead of --url')
    .option('--ttl <seconds>', "the records' TTL", ttlSeconds, DNS_AID_DEFAULT_TTL_SECONDS)
    .option('--no-index', 'leave out the _index._agents.{domain} TXT list of the agents')
    .option('--json', 'print one JSON object instead of zone-file lines', false)
    .addHelpText(
      'after',
      `
Each agent of the catalog (an entry with a card URL and the card's SHA-256, which a2a-discovery's
catalog carries) gets, under its local name made a DNS label (billing_agent -> billing-agent):
  _billing-agent._a2a._agents.example.com. 3600 IN SVCB 1 billing.example.com. alpn=a2a port=443 key65400="<card URL>" key65401="<sha256>"
  _billing-agent._a2a._agents.example.com. 3600 IN TXT "v=1" "target=billing.example.com" "port=443" "alpn=a2a" "cap=<card URL>" "capsha256=<sha256>" "cap-sha256=<sha256>"
key65400 is DNS-AID's cap (where the card is), key65401 its capsha256 (the SHA-256 of the card's bytes,
which a reader's card cache pins: publish again when a card changes). The domain's index,
_index._agents.example.com TXT "agents=billing-agent:a2a,...", lists the labels. Entries that cannot be
published (a card carried inline, no digest, a name that makes no label or a taken one, a card URL
host that is no zone-file domain name, a value too long for TXT) are printed as ; comments with the
reason. Values are quoted (" as \\", \\ as \\\\, other bytes as \\DDD), comments escaped: whatever
the catalog holds, each line is one record or one comment, never a $ directive. Sign the zone
(DNSSEC) for readers that require validated answers (sources.dns requireDnssec).

Exit codes: 0 records printed, 1 no agent to publish, 2 usage error (no --domain, a bad domain or TTL,
the catalog unreadable or not published: 404 without server.catalog.enabled, 503 before the first snapshot).
With --json every outcome is one JSON object on stdout, with these exit codes: the report, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
JSON fields: domain, ttl, source, snapshot {digest, version}, records [{name, label, owner, svcb, txt}],
index, problems [{path, message}], lines.

Examples:
  a2a-discovery dns-records --domain example.com --url http://127.0.0.1:7340
  a2a-discovery dns-records --domain agents.example.com --catalog ai-catalog.json --ttl 300 --no-index`,
    )
    .action(async (opts: DnsRecordsFlags) => {
      const { runDnsRecords } = await import('../dns-records.js');
      process.exitCode = (await runDnsRecords(opts, io)) ? 0 : 1;
    });
}
