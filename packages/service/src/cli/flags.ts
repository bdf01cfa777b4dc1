/**
 * What the commands' declarations share, light enough for every `--help`: option parsers (a bad
 * value is commander's usage error, exit 2, naming the option), the command table, and the bounds
 * a help text states.
 *
 * @module
 */
import { InvalidArgumentError } from 'commander';

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A whole number above zero. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** A whole number, zero or above (digits only). */
export function nonNegativeInt(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new InvalidArgumentError('must be a whole number, zero or above');
  return Number(value);
}

/**
 * Every command, in the order `--help` lists them: its help term and its description. The command
 * modules describe themselves from this table, and `main.ts` lists the commands from it without
 * loading them (a command's module, and what it imports, loads only when that command runs); a
 * test holds each term to the command's real arguments and options.
 */
export const COMMANDS = {
  probe: { term: "probe [options] <target>", description: "Explain, stage by stage, what a client would decide about an agent card, or about every entry of an AI Catalog: a local file, or a live endpoint (base URL, card URL or catalog URL)." },
  trace: { term: "trace [options]", description: "Run the discovery-trace explorer: sequential discovery attempts against a scripted endpoint, decided by the library's own card cache, validator and matcher on a virtual clock." },
  serve: { term: "serve [options]", description: "Run discovery, the agent trees and the HTTP API (with the dashboard) from a configuration file." },
  demo: { term: "demo [options]", description: "Run the whole product on loopback: real A2A agents, a registry catalog, the service and a downstream instance discovering through its AI Catalog, playing the \"morning of changes\"." },
  "eval-routing": { term: "eval-routing [options]", description: "Measure routing accuracy: run the root (and domain sub-routers) on labelled cases and report accuracy per tag, a confusion table and every fallback." },
  "dns-records": { term: "dns-records [options]", description: "Print DNS-AID zone-file records (SVCB with the card's URL and SHA-256, TXT fallback, _index._agents) for the agents of a service's current snapshot." },
  backup: { term: "backup [options]", description: "Copy the service's state (snapshots, pins, journal, card cache, conversations) out of its store (SQLite or PostgreSQL) into one file, while the service runs." },
  restore: { term: "restore [options]", description: "Restore a backup into the configuration's store (SQLite: a new or empty data directory; PostgreSQL: an empty schema), with no service running on it." },
  search: { term: "search [options] <text>", description: "Search a running service's registry for agents (POST /api/registry/search): ranked, with their identifiers and card URLs." },
  endpoints: { term: "endpoints [options]", description: "Every endpoint a running service knows (GET /api/endpoints): its verdict, the cause in words (docs/vocabulary.md) and the reason." },
  events: { term: "events [options]", description: "The change feed of a running service: its recent events, or with --follow each event as it happens, resuming where it stopped after a dropped connection." },
  doctor: { term: "doctor [options]", description: "Check a deployment for what new operators get wrong: configuration, store, token file, port, allowlist, loopback, OIDC issuer, each source’s reachability, the clock." },
  diff: { term: "diff [options] <a> <b>", description: "What a change breaks: compare two agent card files, or two snapshots of a running service by digest, and classify each change as breaking or compatible, with reasons." },
  validate: { term: "validate [options]", description: "Check a discovery.yaml configuration: YAML syntax, schema, cross-field rules, and that every secret it names can be read (values are never printed)." },
} as const satisfies Record<string, { term: string; description: string }>;

/** A command's name. */
export type CommandName = keyof typeof COMMANDS;

/** Where a command writes: its report on `out`, diagnostics on `err`. */
export interface Io {
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
}

/** Pages `search --all` follows at most (its help says so). */
export const MAX_SEARCH_PAGES = 20;

/** `doctor`'s bounds, which its help states: each request's deadline, all requests' together, and the clock difference past which it warns. */
export const DOCTOR_BOUNDS = Object.freeze({ requestTimeoutMs: 5_000, totalDeadlineMs: 15_000, maxSkewMs: 5_000 });
