#!/usr/bin/env node
/**
 * The `a2a-discovery` command line. Exit codes: 0 success or an accepted card, 1 a refused
 * card or a failed check, 2 a usage error. With `--json`, every outcome is one JSON object on
 * stdout: the command's report, or `{ error: {code, failure, message, ...}, exitCode }` for a
 * usage error or a failure (see {@link errorJson}), with the same exit codes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { toDiscoveryError } from 'a2a-discovery/internal';
import type { SignatureMode } from 'a2a-discovery';
import { renderAiCatalogProbe, renderDnsProbe, renderProbe } from 'a2a-discovery/probe';
import { credentialsFromConfig, probeFile } from './probe.js';
import { probeDnsTarget, probeUrlTarget } from './probe-url.js';
import { runValidate } from './validate.js';
import { registerTraceCommand } from './trace.js';
import { registerServeCommands } from './serve.js';
import { registerEvalRoutingCommand } from './eval-routing.js';
import { registerDnsRecordsCommand } from './dns-records.js';
import { registerBackupCommands } from './backup.js';
import { registerSearchCommands } from './search.js';
import { collect, positiveInt } from './flags.js';
import { registerDoctorCommand } from './doctor.js';
import { VERSION } from '../version.js';

const EXIT_OK = 0;
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;


interface ProbeFlags {
  allow: string[];
  allowLoopback: boolean;
  signatureMode: SignatureMode;
  trustKey: string[];
  maxBytes?: number;
  timeoutMs?: number;
  config?: string;
  resolver: string[];
  requireDnssec: boolean;
  json: boolean;
}

// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function buildProgram(io: { out: (s: string) => void; err: (s: string) => void }): Command {
  const program = new Command();
  program
    .name('a2a-discovery')
    .description('Find A2A agents, keep their cards fresh, and explain why a card is accepted or refused.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program
    .command('probe')
    .description('Explain, stage by stage, what a client would decide about an agent card, or about every entry of an AI Catalog: a local file, or a live endpoint (base URL, card URL or catalog URL).')
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
    .addHelpText(
      'after',
      `
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
  a2a-discovery probe dns:example.com --resolver 127.0.0.1:53 --allow https://billing.example.com`,
    )
    .action(async (target: string, opts: ProbeFlags) => {
      const common = {
        allow: opts.allow,
        allowLoopback: opts.allowLoopback,
        signatureMode: opts.signatureMode,
        trustKeys: opts.trustKey,
        ...(opts.maxBytes !== undefined && { maxBytes: opts.maxBytes }),
        ...(opts.config !== undefined && { credentials: await credentialsFromConfig(opts.config) }),
      };
      const timeout = opts.timeoutMs !== undefined ? { totalTimeoutMs: opts.timeoutMs } : {};
      if (/^dns:/i.test(target)) {
        const dns = await probeDnsTarget(target, { ...common, ...timeout, resolvers: opts.resolver, requireDnssec: opts.requireDnssec });
        io.out(opts.json ? `${JSON.stringify(dns, null, 2)}\n` : `${renderDnsProbe(dns)}\n`);
        process.exitCode = dns.accepted ? EXIT_OK : EXIT_REFUSED;
        return;
      }
      const result = /^https?:\/\//i.test(target) ? await probeUrlTarget(target, { ...common, ...timeout }) : await probeFile(target, { ...common, ...timeout });
      const report = result.kind === 'card' ? result.report : result.catalog;
      const text = result.kind === 'card' ? renderProbe(result.report) : renderAiCatalogProbe(result.catalog);
      io.out(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${text}\n`);
      process.exitCode = report.accepted ? EXIT_OK : EXIT_REFUSED;
    });

  registerTraceCommand(program, io);
  registerServeCommands(program, io);
  registerEvalRoutingCommand(program, io);
  registerDnsRecordsCommand(program, io);
  registerBackupCommands(program, io);
  registerSearchCommands(program, io);
  registerDoctorCommand(program, io);

  program
    .command('validate')
    .description('Check a discovery.yaml configuration: YAML syntax, schema, cross-field rules, and that every secret it names can be read (values are never printed).')
    .requiredOption('--config <file>', 'path of the YAML configuration file')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
Every problem is printed as file:line:col path: message. Secrets (server.tokenEnv / tokenFile,
credentials valueEnv / valueFile, signatures.keys jwkFile) are read to check they exist; their values
are never printed. Relative paths resolve against the file's directory. See docs/configuration.md.

Exit codes: 0 valid, 1 invalid, 2 usage error (missing --config, unreadable file).
With --json every outcome is one JSON object on stdout, with these exit codes: the verdict, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.
JSON fields: valid, problems [{path, message, line, column}].

Examples:
  a2a-discovery validate --config examples/discovery.yaml
  a2a-discovery validate --config /etc/a2a/discovery.yaml --json`,
    )
    .action(async (opts: { config: string; json: boolean }) => {
      process.exitCode = (await runValidate(opts.config, { json: opts.json, io })) ? EXIT_OK : EXIT_REFUSED;
    });

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
