/**
 * What `a2a-discovery serve` and `a2a-discovery demo` do once their flags are parsed (serve.ts
 * declares them). `serve` reads the configuration and its secrets, starts OpenTelemetry and the
 * service, reloads the configuration on SIGHUP, the API and `config.watch` (docs/operations.md
 * "Reload"), and drains on SIGINT/SIGTERM (docs/operations.md "Graceful drain"). `demo` runs
 * until the first SIGINT/SIGTERM, then closes.
 *
 * @module
 */
import { isDiscoveryError } from 'a2a-discovery';
import { formatProblems, loadConfig, resolveSecrets } from 'a2a-discovery/config';
import type { DiscoveryConfig, ResolvedSecrets } from 'a2a-discovery/config';
import type { ConfigReloader } from '../assembly/reload.js';
import type { ReloadResult } from '../assembly/reload-result.js';
import type { ReloadableCredentials } from '../assembly/reloadable-credentials.js';
import type { RunningService, ServiceOptions } from '../assembly/service.js';
import type { Logger } from '../telemetry/logger.js';
import type { Io } from './flags.js';
import { setHeapGrowth } from './heap-growth.js';
import type { Telemetry } from '../telemetry/telemetry.js';

// The service and the demo load ADK JS, Express and the HTTP stack: imported only when these
// commands run, so `probe`, `trace` and `validate` start fast.

/** The flags of `serve`, as commander parses them. */
export interface ServeFlags {
  config: string;
  port?: number;
  host?: string;
  logLevel: string;
}

/** The flags of `demo`, as commander parses them. */
export interface DemoFlags {
  speed: number;
  scenario: boolean;
  port: number;
}

/** What the phases of a running `serve` share. */
interface Serving {
  readonly logger: Logger;
  readonly telemetry: Telemetry | undefined;
  /** The peers' credentials, read again on each reload (reloadable-credentials.ts). */
  readonly credentials: ReloadableCredentials;
  /** The trusted keys and the replica key running now (a reload compares the keys it reads with them). */
  readonly trusted: { keys: ResolvedSecrets['keys']; replicaKey: ResolvedSecrets['replicaKey'] };
  /** The service's options for a configuration and its secrets, with the reloadable credentials. */
  readonly optionsFor: (config: DiscoveryConfig, secrets: ResolvedSecrets) => ServiceOptions;
  /** The reloader, once the service runs (a reload asked for before is refused). */
  readonly reloader: { current?: ConfigReloader };
}

/** The answer to a reload asked for through the API before the service serves. */
const NOT_YET: ReloadResult = { applied: false, sha256: '', changed: [], problems: ['the service is still starting; reload again once it serves'] };

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

/** The configuration file, or undefined once its problems are printed (the command exits 1). */
async function readServeConfig(file: string, io: Io): Promise<DiscoveryConfig | undefined> {
  try {
    return await loadConfig(file);
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') {
      io.err(`${formatProblems(err, file)}\n`);
      process.exitCode = 1;
      return undefined;
    }
    throw err;
  }
}

/** The SIGHUP handler: reloads the configuration once the service serves, and logs the outcome. */
function reloadOnHangup(serving: Serving): () => void {
  const { logger } = serving;
  return () => {
    const reloader = serving.reloader.current;
    if (reloader === undefined) {
      logger.warn('SIGHUP while starting: ignored; send it again once the service serves');
      return;
    }
    void reloader.reload('signal').then((r) => {
      if (r.applied) logger.info({ changed: r.changed, sha256: r.sha256 }, 'configuration reloaded');
      else logger.warn({ problems: r.problems, sha256: r.sha256 }, 'configuration reload refused; the running configuration stays');
    });
  };
}

/**
 * A reload's secrets, read again: the peers' credentials are swapped in place once it is applied,
 * and trusted keys whose files changed count as a change of `signatures.keys`.
 */
async function prepareReload(serving: Serving, next: DiscoveryConfig) {
  const { credentials, trusted } = serving;
  const fresh = await resolveSecrets(next);
  return {
    options: serving.optionsFor(next, fresh),
    changed: [...(JSON.stringify(fresh.keys) === JSON.stringify(trusted.keys) ? [] : ['signatures.keys']), ...(fresh.replicaKey === trusted.replicaKey ? [] : ['replica.key'])],
    commit: () => {
      credentials.replace(fresh);
      trusted.keys = fresh.keys;
      trusted.replicaKey = fresh.replicaKey;
    },
    discard: () => fresh.credentials.close(),
  };
}

/**
 * The drain (docs/operations.md "Graceful drain"): the service closes, then what the last requests
 * and the final cycle traced is flushed, each within a bound. A second signal cuts it short,
 * exiting as a process killed by that signal does (130 for SIGINT, 143 for SIGTERM).
 */
async function drain(serving: Serving, service: RunningService, signal: NodeJS.Signals): Promise<void> {
  const { logger, telemetry } = serving;
  logger.info({ signal }, 'stopping: draining first (a second SIGINT or SIGTERM stops at once)');
  const again = (second: NodeJS.Signals) => {
    logger.warn({ signal: second }, 'second signal during the drain: stopping at once');
    process.exit(second === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
  await service.close(5_000);
  await telemetry?.shutdown(5_000);
  process.off('SIGINT', again);
  process.off('SIGTERM', again);
  process.exitCode = 0;
}

/**
 * Runs `serve` until SIGINT or SIGTERM, then drains. An invalid configuration (or OTEL_* value) is
 * printed and exits 1; a failure at start stops what was started and is thrown.
 */
export async function runServe(flags: ServeFlags, io: Io): Promise<void> {
  const { serviceOptionsFromConfig, createLogger, startService } = await import('../index.js');
  const { ConfigReloader } = await import('../assembly/reload.js');
  const { ReloadableCredentials } = await import('../assembly/reloadable-credentials.js');
  const config = await readServeConfig(flags.config, io);
  if (config === undefined) return;
  const resolved = await resolveSecrets(config);
  const credentials = new ReloadableCredentials(resolved);
  const trusted = { keys: resolved.keys, replicaKey: resolved.replicaKey };
  const logger = createLogger({ level: flags.logLevel });
  // Process-wide, so serve's and not the library's (docs/operations.md "Memory"); 0 leaves V8's
  // own growth, or the one a `node --heap-growing-percent` flag gave.
  const growth = config.server.heapGrowthPercent;
  if (growth > 0) {
    setHeapGrowth(growth);
    logger.info({ heapGrowthPercent: growth }, `V8's heap grows at most ${growth} % past what its last full collection kept (server.heapGrowthPercent)`);
  }
  // OpenTelemetry from the OTEL_* variables, before anything that makes spans (telemetry.ts).
  const telemetry = await withTelemetry(io, logger);
  if (telemetry === false) return;
  const serving: Serving = {
    logger,
    telemetry,
    credentials,
    trusted,
    // Always given, even empty: a reload may add the first peer credential.
    optionsFor: (next, secrets) => ({ ...serviceOptionsFromConfig(next, { ...secrets, credentials, tokenRequests: credentials.tokenRequests }), credentials }),
    reloader: {},
  };
  // Installed before the start, so an early SIGHUP does not end the process (Node's default).
  const onHangup = reloadOnHangup(serving);
  process.on('SIGHUP', onHangup);
  let service: RunningService;
  try {
    service = await startService({
      ...serving.optionsFor(config, resolved),
      ...(flags.port !== undefined && { port: flags.port }),
      ...(flags.host !== undefined && { host: flags.host }),
      logger,
      reload: () => serving.reloader.current?.reload('api') ?? Promise.resolve(NOT_YET),
    });
  } catch (err) {
    process.off('SIGHUP', onHangup);
    await telemetry?.shutdown(2_000);
    throw err;
  }
  const running = service;
  // Reload (docs/operations.md "Reload"): SIGHUP, POST /api/config/reload, config.watch.
  const reloader = (serving.reloader.current = new ConfigReloader({
    file: flags.config,
    config,
    prepare: (next) => prepareReload(serving, next),
    apply: async (next, changed) => running.reconfigure(next, changed),
    events: service.events,
    log: logger,
  }));
  reloader.watchAsConfigured();
  io.out(`a2a-discovery serving ${service.url}/ (dashboard), ${service.url}/api, ${service.url}/metrics\n`);
  const signal = await untilSignal();
  process.off('SIGHUP', onHangup);
  reloader.close();
  await drain(serving, service, signal);
}

/** Runs `demo` until SIGINT or SIGTERM, then closes it. */
export async function playDemo(flags: DemoFlags, io: Io): Promise<void> {
  const { runDemo } = await import('../demo/index.js');
  const telemetry = await withTelemetry(io);
  if (telemetry === false) return;
  const demo = await runDemo({ speed: flags.speed, scenario: flags.scenario, port: flags.port, out: (line) => io.out(`${line}\n`) });
  await untilSignal();
  io.out('stopping…\n');
  await demo.close();
  await telemetry?.shutdown(5_000);
  process.exitCode = 0;
}
