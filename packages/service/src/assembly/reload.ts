/**
 * Reload without restart (docs/operations.md "Reload"): `serve` reads its configuration file again
 * on SIGHUP, on `POST /api/config/reload` and, with `config.watch`, when the file changes. The
 * new file is validated whole, like at start; an invalid one, or one that changes a setting that
 * cannot change live ({@link LIVE_KEYS}), is refused and the running configuration keeps serving.
 * A valid one is applied in place: sessions, pins, the card cache and the event streams stay.
 * Either way the outcome is one event (`config.reloaded` or `config.refused`, journaled and
 * counted), and a refusal is also an alert.
 */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { DiscoveryConfig } from 'a2a-discovery/config';
import { formatProblems, parseConfig, readBoundedFile } from 'a2a-discovery/config';
import { isDiscoveryError, type EventStream } from 'a2a-discovery';
import { type ConfigReloadEvent } from 'a2a-discovery/internal';
import type { Logger } from '../telemetry/logger.js';
import type { ServiceOptions } from './service-options.js';
import type { ReloadResult } from './reload-result.js';

/**
 * The settings a reload applies live, as configuration keys (a key and everything under it).
 * Anything else that differs refuses the reload, naming the key: it needs a restart.
 */
const LIVE_KEYS: readonly string[] = Object.freeze([
  'allow',
  'allowCidrs',
  'needs',
  'vocabulary',
  'policies.maxAgents',
  'policies.requireStreaming',
  'policies.tenant',
  'static',
  // Built again when their settings change (service-sources.ts); the others keep running.
  'sources',
  // Trust keys, mode and algorithms: later cards, and every cached card at once (CardCache.recheck).
  'signatures',
  // Read again at each reload (reloadable-credentials.ts), added and removed too.
  'credentials',
  'routing.minAccuracy',
  'routing.gate',
  'routing.cases',
  'config.watch',
  // The replica key read again (the one before accepted for replica.keyGraceMs) and the leader URLs (replica-auth.ts).
  'replica.key',
  'replica.keyEnv',
  'replica.keyFile',
  'replica.leaderUrls',
  // Read at each request or new event stream (http/context.ts, routes/event-stream-route.ts); the socket timeouts,
  // the inspector's pool and bounds, the leader's and the activity bounds are fixed at start.
  ...[
    'maxBodyBytes',
    'maxTraceBodyBytes',
    'maxInspectBodyBytes',
    'maxInspectionsPerClient',
    'maxSessionsPerClient',
    'maxTurnsPerClient',
    'maxTurns',
    'queueLength',
    'queueWaitMs',
    'maxStreams',
    'maxStreamsPerClient',
    'streamQueueEvents',
    'streamStallMs',
    'maxReplayEvents',
  ].map((k) => `server.limits.${k}`),
]);

/** A configuration read for a reload, with its secrets. */
interface PreparedReload {
  readonly options: ServiceOptions;
  /** Keys whose secrets changed while the file did not (a trusted key's file rewritten): applied as changed. */
  readonly changed: readonly string[];
  /** Applies what the options do not carry (the peers' credentials), once the reload is applied. */
  commit(): void;
  /** Releases what was read, when the reload is refused. */
  discard(): Promise<void>;
}

export type { ReloadResult } from './reload-result.js';

export type ReloadTrigger = ConfigReloadEvent['trigger'];

export interface ConfigReloaderOptions {
  /** The configuration file `serve` was started with. */
  readonly file: string;
  /** The running configuration (read from `file` at start). */
  readonly config: DiscoveryConfig;
  /**
   * The service's options for the new configuration, its secrets read again (on every reload, an
   * unchanged file too: a secret file may have changed); a failure refuses the reload.
   */
  readonly prepare: (next: DiscoveryConfig) => Promise<PreparedReload>;
  /** Applies the live settings of the new options (RunningService.reconfigure). */
  readonly apply: (next: ServiceOptions, changed: readonly string[]) => Promise<{ version: number } | undefined>;
  readonly events: EventStream;
  readonly log: Logger;
  /** Debounce of `config.watch`: changes within this many ms make one reload. Default 300. */
  readonly watchDebounceMs?: number;
}

/**
 * Reads, validates, compares and applies the configuration file; one reload at a time (a reload
 * asked for during another runs after it, on the file as it is then).
 */
export class ConfigReloader {
  readonly #o: ConfigReloaderOptions;
  #config: DiscoveryConfig;
  #chain: Promise<unknown> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #debounce: NodeJS.Timeout | undefined;

  constructor(options: ConfigReloaderOptions) {
    this.#o = options;
    this.#config = options.config;
  }

  /** Reloads now; never throws (a failure is a refusal). */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const run = this.#chain.then(() => this.#reload(trigger));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Starts or stops watching the file, as `config.watch` says (called at start and after each applied reload). */
  watchAsConfigured(): void {
    const want = this.#config.config.watch;
    if (want && this.#watcher === undefined) {
      // The directory, not the file: editors and ConfigMap updates replace the file (a rename).
      const dir = dirname(resolve(this.#o.file));
      const name = basename(this.#o.file);
      this.#watcher = watch(dir, { persistent: false }, (_event, changed) => {
        if (changed !== null && changed !== name && !changed.startsWith('..')) return;
        clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => void this.reload('watch'), this.#o.watchDebounceMs ?? 300);
        this.#debounce.unref();
      });
      this.#watcher.on('error', (err) => this.#o.log.warn({ err: err.message }, 'watching the configuration file failed'));
    } else if (!want) this.close();
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  async #reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const file = this.#o.file;
    let text: string;
    try {
      text = (await readBoundedFile(file, 1024 * 1024)).toString('utf8');
    } catch (err) {
      return this.#refuse(trigger, '', [], [`${file}: cannot read the configuration file: ${(err as Error).message}`]);
    }
    const sha256 = createHash('sha256').update(text).digest('hex');
    let next: DiscoveryConfig;
    try {
      next = parseConfig(text, { file, baseDir: dirname(resolve(file)) });
    } catch (err) {
      if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') return this.#refuse(trigger, sha256, [], formatProblems(err, file).split('\n'));
      return this.#refuse(trigger, sha256, [], [`${file}: ${(err as Error).message}`]);
    }
    const changed = changedKeys(this.#config, next);
    const restart = changed.filter((k) => !isLive(k));
    if (restart.length > 0) return this.#refuse(trigger, sha256, changed, restart.map((k) => `${k} cannot change without a restart`));
    const problemsOf = (err: unknown): string[] => (isDiscoveryError(err) && err.problems.length > 0 ? formatProblems(err, file).split('\n') : [`${file}: ${(err as Error).message}`]);
    let prepared: PreparedReload;
    try {
      prepared = await this.#o.prepare(next);
    } catch (err) {
      return this.#refuse(trigger, sha256, changed, problemsOf(err));
    }
    const applied = [...new Set([...changed, ...prepared.changed])].sort();
    let version: number | undefined;
    if (applied.length > 0) {
      try {
        version = (await this.#o.apply(prepared.options, applied))?.version;
      } catch (err) {
        await prepared.discard().catch(() => undefined);
        return this.#refuse(trigger, sha256, applied, problemsOf(err));
      }
    }
    prepared.commit();
    this.#config = next;
    this.watchAsConfigured();
    this.#o.events.emit({ type: 'config.reloaded', trigger, sha256, changed: applied });
    return { applied: true, sha256, changed: applied, problems: [], ...(version !== undefined && { version }) };
  }

  #refuse(trigger: ReloadTrigger, sha256: string, changed: readonly string[], problems: string[]): ReloadResult {
    const { events } = this.#o;
    events.emit({ type: 'config.refused', trigger, sha256, changed: [...changed], problems });
    events.emit({ type: 'alert', kind: 'config-refused', message: `configuration reload refused; the running configuration stays: ${problems[0] ?? ''}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}` });
    return { applied: false, sha256, changed, problems };
  }
}

function isLive(key: string): boolean {
  return LIVE_KEYS.some((k) => key === k || key.startsWith(`${k}.`) || key.startsWith(`${k}[`));
}

/**
 * The keys whose values differ, as dotted paths: objects are compared key by key, lists and
 * values whole (`static`, `server.port`, `policies.maxAgents`).
 */
function changedKeys(before: unknown, after: unknown, path = ''): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => changedKeys(before[k], after[k], path === '' ? k : `${path}.${k}`));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [path];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
