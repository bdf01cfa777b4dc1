/**
 * `a2a-discovery probe <target>`: its argument, options and help. The probe itself
 * (probe-command.ts, the library with it) loads when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { collect, COMMANDS, positiveInt, type Io } from '../flags.js';
import type { ProbeFlags } from '../probe-command.js';

const PROBE_HELP = `
DNS mode (dns:<domain> or dns:<record name>) reads what DNS announces as discovery's DNS source does:
the DNS-AID records of a domain's _index._agents list and its DNS-SD _a2a._tcp instances, or one
record (_billing._a2a._agents.example.com, research._a2a._tcp.example.com), asking --resolver. Each
record is shown with its TTL and DNSSEC status and its decision: admitted (by --allow), refused (why),
or pinned (its card fetched and equal to its capsha256; a differing card is refused).

URL mode fetches through the discovery fetcher (https only, public addresses only, no redirects,
64 KiB cap) and also reports HTTP caching: max-age, ETag, whether a conditional request gets 304, and
whether the ETag is stable. The target's own origin is always allowed; --allow judges the card's interfaces.

AI Catalogs (application/ai-catalog+json, or a JSON object with specVersion and entries; a URL whose
path ends in .json, a base URL with a path whose .well-known card paths answer 404, or a file) are
probed entry by entry: the catalog's fetch, parse, schema and
signature, then each entry's type (other types are ignored, nested catalogs followed up to depth 4,
never around a cycle), version decision and Trust Manifest verdict, and each card's own stages (at
most 20 cards, 4 at a time; catalog documents up to 1 MiB). Card hosts other than the catalog's own
origin must be named by --allow. In a file, url entries must be absolute and nested catalogs given by
URL are listed, not fetched.

Exit codes: 0 accepted, 1 refused (including input too large, too deep or not JSON), 2 usage error.
With --json every outcome is one JSON object on stdout, with these exit codes: the report, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
An AI Catalog is accepted when every document is usable, no entry is refused and there is no catalog problem.
JSON fields: accepted, stage (first refusing stage, "security" for an accepted card whose security requirements
cannot be met, or "selected"), selection {selected, reason} (as the last text line says), protocolVersion, problems [{path, message}],
warnings, skills [{id, name, tags, inputModes, outputModes}], urls, signature, rawSha256, canonicalSha256,
chosenInterface {url, binding, protocolVersion, tenant, client}, security {status (none, satisfied, unsatisfiable),
message, origin, credentialsConfigured, satisfiedBy, requirements, schemes [{name, type, needs, presentable, description}]},
and in URL mode http {status, headers, maxAgeSeconds, etag, notModifiedSupported, etagStable, notes}.
For an AI Catalog: kind "ai-catalog", accepted, documents [{url, via, depth, usable, stage, specVersion,
signature, problems, ...}], entries [{catalog, path, identifier, type, verdict, selection, trust, nested,
endpoint, problems, report (the card's, as above), skipped}], problems, notes, counts.

Examples:
  a2a-discovery probe examples/cards/billing-agent.json --allow https://billing.example.com
  a2a-discovery probe https://agents.example.com/ --json
  a2a-discovery probe http://127.0.0.1:8000/ --allow-loopback
  a2a-discovery probe https://agents.example.com/.well-known/ai-catalog.json --trust-key catalog-key.jwk.json
  a2a-discovery probe dns:example.com --resolver 127.0.0.1:53 --allow https://billing.example.com`;

/** Adds `probe` to the program. */
export function registerProbeCommand(program: Command, io: Io): void {
  program
    .command('probe')
    .description(COMMANDS.probe.description)
    .argument('<target>', 'path of an agent card or AI Catalog JSON file, or an http(s) URL to fetch')
    .option('--allow <origin>', "allowlisted origin, e.g. https://agents.example.com or https://*.example.com (repeatable); judges a card's interface hosts (without any, they are listed but not judged) and admits an AI Catalog's card hosts", collect, [])
    .option('--allow-loopback', 'development exemption: accept http: and loopback hosts (localhost, 127.0.0.0/8, ::1)', false)
    .addOption(new Option('--signature-mode <mode>', 'signature verification').choices(['off', 'if-present', 'required']).default('if-present'))
    .option('--trust-key <file>', 'a public JWK (with kid) or JWKS file trusted to sign cards, AI Catalogs and their Trust Manifests (repeatable)', collect, [])
    .option('--max-bytes <n>', 'largest card accepted, in bytes', positiveInt)
    .option('--timeout-ms <n>', 'URL mode: total deadline of each request, in milliseconds (default 5000)', positiveInt)
    .option('--config <file>', "a discovery.yaml whose credentials: are presented as discovery presents them (sent to their origins; the card's security requirements are judged against them)")
    .option('--resolver <address>', 'dns: mode: a resolver to ask, e.g. 127.0.0.1:53 or [::1]:53 (repeatable; required for dns:)', collect, [])
    .option('--require-dnssec', 'dns: mode: refuse answers the resolver did not validate (no AD bit)', false)
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText('after', PROBE_HELP)
    .action(async (target: string, opts: ProbeFlags) => (await import('../probe-command.js')).runProbe(target, opts, io));
}
