/**
 * `a2a-discovery serve --config <file>` and `a2a-discovery demo`: the long-running commands.
 * Both stop cleanly on SIGINT/SIGTERM: the loop stops, in-flight work finishes and every server
 * closes within a bound; `serve` drains first (docs/operations.md "Graceful drain").
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { isDiscoveryError } from 'a2a-discovery';
import type { Logger } from '../telemetry/logger.js';
import type { Telemetry } from '../telemetry/telemetry.js';

// The service and the demo load ADK JS, Express and the HTTP stack: imported only when these
// commands run, so `probe`, `trace` and `validate` start fast.

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

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

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * Starts OpenTelemetry when the OTEL_* variables ask for it (undefined when they do not); a
 * malformed variable is reported and the command exits 1 (false).
 */
async function withTelemetry(io: Io, logger?: Logger): Promise<Telemetry | undefined | false> {
  const { startTelemetry } = await import('../telemetry/telemetry.js');
  try {
    return await startTelemetry(process.env, { ...(logger !== undefined && { logger }) });
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') {
      io.err(`${err.message}\n`);
      process.exitCode = 1;
      return false;
    }
    throw err;
  }
}

// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export function registerServeCommands(program: Command, io: Io): void {
  program
    .command('serve')
    .description('Run discovery, the agent trees and the HTTP API (with the dashboard) from a configuration file.')
    .requiredOption('--config <file>', 'the discovery.yaml configuration')
    .option('--port <n>', 'override server.port (0 picks a free port)', port)
    .option('--host <host>', 'override server.host (anything but loopback requires a token)')
    .option('--log-level <level>', 'trace, debug, info, warn or error', 'info')
    .addHelpText(
      'after',
      `
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
  a2a-discovery serve --config discovery.yaml`,
    )
    // eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
    .action(async (opts: { config: string; port?: number; host?: string; logLevel: string }) => {
      const { formatProblems, loadConfig, resolveSecrets } = await import('a2a-discovery/config');
      const { serviceOptionsFromConfig, createLogger, startService } = await import('../index.js');
      const { ConfigReloader } = await import('../assembly/reload.js');
      const { ReloadableCredentials } = await import('../assembly/reloadable-credentials.js');
      let config;
      try {
        config = await loadConfig(opts.config);
      } catch (err) {
        if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') {
          io.err(`${formatProblems(err, opts.config)}\n`);
          process.exitCode = 1;
          return;
        }
        throw err;
      }
      const resolved = await resolveSecrets(config);
      // The peers' credentials, read again on each reload (reloadable-credentials.ts).
      const credentials = new ReloadableCredentials(resolved);
      const secrets = { ...resolved, credentials, tokenRequests: credentials.tokenRequests };
      // The trusted keys and the replica key running now (a reload compares the keys it reads with them).
      const trusted = { keys: resolved.keys, replicaKey: resolved.replicaKey };
      const logger = createLogger({ level: opts.logLevel });
      // OpenTelemetry from the OTEL_* variables, before anything that makes spans (telemetry.ts).
      const telemetry = await withTelemetry(io, logger);
      if (telemetry === false) return;
      // Reload (docs/operations.md "Reload"): SIGHUP, POST /api/config/reload, config.watch.
      const reloaderRef: { current?: InstanceType<typeof ConfigReloader> } = {};
      const notYet = { applied: false, sha256: '', changed: [], problems: ['the service is still starting; reload again once it serves'] };
      // Installed before the start, so an early SIGHUP does not end the process (Node's default).
      const onHangup = () => {
        const reloader = reloaderRef.current;
        if (reloader === undefined) {
          logger.warn('SIGHUP while starting: ignored; send it again once the service serves');
          return;
        }
        void reloader.reload('signal').then((r) => {
          if (r.applied) logger.info({ changed: r.changed, sha256: r.sha256 }, 'configuration reloaded');
          else logger.warn({ problems: r.problems, sha256: r.sha256 }, 'configuration reload refused; the running configuration stays');
        });
      };
      process.on('SIGHUP', onHangup);
      let service;
      try {
        service = await startService({
          ...serviceOptionsFromConfig(config, secrets),
          // Always given, even empty: a reload may add the first peer credential.
          credentials,
          ...(opts.port !== undefined && { port: opts.port }),
          ...(opts.host !== undefined && { host: opts.host }),
          logger,
          reload: () => reloaderRef.current?.reload('api') ?? Promise.resolve(notYet),
        });
      } catch (err) {
        process.off('SIGHUP', onHangup);
        await telemetry?.shutdown(2_000);
        throw err;
      }
      const running = service;
      const reloader = (reloaderRef.current = new ConfigReloader({
        file: opts.config,
        config,
        // Secrets read again at each reload: the peers' credentials are swapped in place, trusted keys
        // whose files changed count as a change of `signatures.keys`.
        prepare: async (next) => {
          const fresh = await resolveSecrets(next);
          return {
            options: { ...serviceOptionsFromConfig(next, { ...fresh, credentials, tokenRequests: credentials.tokenRequests }), credentials },
            changed: [...(JSON.stringify(fresh.keys) === JSON.stringify(trusted.keys) ? [] : ['signatures.keys']), ...(fresh.replicaKey === trusted.replicaKey ? [] : ['replica.key'])],
            commit: () => {
              credentials.replace(fresh);
              trusted.keys = fresh.keys;
              trusted.replicaKey = fresh.replicaKey;
            },
            discard: () => fresh.credentials.close(),
          };
        },
        apply: async (next, changed) => running.reconfigure(next, changed),
        events: service.events,
        log: logger,
      }));
      reloader.watchAsConfigured();
      io.out(`a2a-discovery serving ${service.url}/ (dashboard), ${service.url}/api, ${service.url}/metrics\n`);
      const signal = await untilSignal();
      process.off('SIGHUP', onHangup);
      reloader.close();
      // The drain (docs/operations.md "Graceful drain"); a second signal cuts it short, exiting as
      // a process killed by that signal does (130 for SIGINT, 143 for SIGTERM).
      logger.info({ signal }, 'stopping: draining first (a second SIGINT or SIGTERM stops at once)');
      const again = (second: NodeJS.Signals) => {
        logger.warn({ signal: second }, 'second signal during the drain: stopping at once');
        process.exit(second === 'SIGINT' ? 130 : 143);
      };
      process.once('SIGINT', again);
      process.once('SIGTERM', again);
      await service.close(5_000);
      // What the last requests and the final cycle traced is flushed to the collector, within a bound.
      await telemetry?.shutdown(5_000);
      process.off('SIGINT', again);
      process.off('SIGTERM', again);
      process.exitCode = 0;
    });

  program
    .command('demo')
    .description('Run the whole product on loopback: real A2A agents, a registry catalog, the service and a downstream instance discovering through its AI Catalog, playing the "morning of changes".')
    .option('--speed <n>', 'scenario minutes per real second (default 1: the morning takes about 40 s)', positive, 1)
    .option('--no-scenario', 'start the agents and the service, but play no changes')
    .option('--port <n>', 'service port (0 picks a free one)', port, 7340)
    .addHelpText(
      'after',
      `
No external service and no model key: the billing and returns agents run on ADK JS (A2A 0.3) and the
warranty agent on the A2A JS SDK 1.x (A2A 1.0 only), with deterministic scripted replies. The demo
prints the dashboard's URL, then narrates each snapshot, alert and pinned session, stamped with the
scenario's clock and the wall clock the dashboard shows: [10:07 (model) · 16:42:03]. After the morning
it prints a summary, the dashboard URL and the chat hint again, then goes quiet: only new snapshots
and alerts, an endpoint that starts failing (said once, then at most every 5 minutes) and its
recovery. Ctrl-C stops it.

Example:
  a2a-discovery demo --speed 2`,
    )
    .action(async (opts: { speed: number; scenario: boolean; port: number }) => {
      const { runDemo } = await import('../demo/index.js');
      const telemetry = await withTelemetry(io);
      if (telemetry === false) return;
      const demo = await runDemo({ speed: opts.speed, scenario: opts.scenario, port: opts.port, out: (line) => io.out(`${line}\n`) });
      await untilSignal();
      io.out('stopping…\n');
      await demo.close();
      await telemetry?.shutdown(5_000);
      process.exitCode = 0;
    });
}
