/**
 * `a2a-discovery serve --config <file>` and `a2a-discovery demo`: the long-running commands, their
 * flags and their help (serve-run.ts runs them, loaded when one runs). Both stop cleanly on SIGINT/SIGTERM: the loop
 * stops, in-flight work finishes and every server closes within a bound; `serve` drains first
 * (docs/operations.md "Graceful drain").
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { DemoFlags, ServeFlags } from '../serve-run.js';
import { COMMANDS, type Io } from '../flags.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('must be a port number (0 picks a free one)');
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

const SERVE_HELP = `
Serves on 127.0.0.1:7340 by default: the dashboard at /, the JSON API under /api, Server-Sent Events
at /api/stream, Prometheus metrics at /metrics, /healthz and /readyz. Logs are JSON lines (short text
in a terminal).

SIGTERM or SIGINT drains, then stops: /readyz answers 503 (draining) at once, new sessions and chat
turns get 503 with Retry-After, event streams are told to reconnect elsewhere, a leading replica
steps down (another takes over at once), turns in flight finish within server.drainTimeoutMs
(default 25 s; past it they are aborted), the store is flushed, and the process exits 0. A second
SIGTERM or SIGINT during the drain exits at once (143 for SIGTERM, 130 for SIGINT).

SIGHUP (or POST /api/config/reload, admin; or config.watch: true) reads the file again: a valid file is
applied live (allowlist, needs, vocabulary, policies.maxAgents/requireStreaming/tenant, static agents,
sources (only those whose settings changed are rebuilt), credentials, signature keys (cached cards judged
again), routing thresholds and cases, most server.limits) without dropping sessions, pins, the cache or
event streams; an invalid
one, or one changing a setting that needs a restart (server.port, store, ...), is refused with every
problem and its line while the running configuration keeps serving (docs/operations.md "Reload").

Safe to leave running (docs/security.md): only the Host names it serves are answered (server.allowedHosts
adds a proxy's), state-changing calls need Content-Type: application/json and the service's own Origin
(server.allowedOrigins), bodies, event streams and socket timeouts are bounded (server.limits.*),
sessions belong to the caller that started them (cookie or X-Session-Secret; the server.token holder is
admin) and are capped (sessions.maxSessions). Every refusal is counted in
a2a_discovery_http_refusals_total{reason}.

OpenTelemetry (docs/observability.md): with OTEL_EXPORTER_OTLP_ENDPOINT set, traces and metrics are
exported over OTLP/HTTP (JSON) from the standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER,
OTEL_EXPORTER_OTLP_HEADERS, ...), flushed on stop; without it nothing is exported.

Exit codes: 0 stopped cleanly (drained), 1 invalid configuration (or OTEL_* value) or a failure at start,
2 usage error (a missing flag, an unreadable file, a port already in use), 130/143 a second
SIGINT/SIGTERM cut the drain short.

Example:
  a2a-discovery serve --config discovery.yaml`;

const DEMO_HELP = `
No external service and no model key: the billing and returns agents run on ADK JS (A2A 0.3) and the
warranty agent on the A2A JS SDK 1.x (A2A 1.0 only), with deterministic scripted replies. The demo
prints the dashboard's URL, then narrates each snapshot, alert and pinned session, stamped with the
scenario's clock and the wall clock the dashboard shows: [10:07 (model) · 16:42:03]. After the morning
it prints a summary, the dashboard URL and the chat hint again, then goes quiet: only new snapshots
and alerts, an endpoint that starts failing (said once, then at most every 5 minutes) and its
recovery. Ctrl-C stops it.

Example:
  a2a-discovery demo --speed 2`;

/** Adds `serve` to the program. */
function registerServeCommand(program: Command, io: Io): void {
  program
    .command('serve')
    .description(COMMANDS.serve.description)
    .requiredOption('--config <file>', 'the discovery.yaml configuration')
    .option('--port <n>', 'override server.port (0 picks a free port)', port)
    .option('--host <host>', 'override server.host (anything but loopback requires a token)')
    .option('--log-level <level>', 'trace, debug, info, warn or error', 'info')
    .addHelpText('after', SERVE_HELP)
    .action(async (opts: ServeFlags) => (await import('../serve-run.js')).runServe(opts, io));
}

/** Adds `demo` to the program. */
function registerDemoCommand(program: Command, io: Io): void {
  program
    .command('demo')
    .description(COMMANDS.demo.description)
    .option('--speed <n>', 'scenario minutes per real second; at 1 the morning takes about 40 s', positive, 1)
    .option('--no-scenario', 'start the agents and the service, but play no changes')
    .option('--port <n>', 'service port (0 picks a free one)', port, 7340)
    .addHelpText('after', DEMO_HELP)
    .action(async (opts: DemoFlags) => (await import('../serve-run.js')).playDemo(opts, io));
}

/** Adds `serve` and `demo` to the program. */
export function registerServeCommands(program: Command, io: Io): void {
  registerServeCommand(program, io);
  registerDemoCommand(program, io);
}
