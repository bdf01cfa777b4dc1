/**
 * Internal: the one way a polled source refreshes. {@link PeriodicSource} owns what every
 * periodic source (registry, ARD, AI Catalog, DNS) used to write for itself:
 *
 * - single flight: concurrent `refresh()` calls share one read;
 * - a timeout per refresh, on the injected clock, that aborts the read with the source's error;
 * - abort on close: `close()` aborts the read in flight, drops the listeners, waits for the read
 *   to settle and then releases what the source published ({@link PeriodicSource.released});
 * - stale on error: a read that throws keeps the last good list and records the error (the
 *   `source-error` alert and its resolution are {@link SourceCore}'s); a read that ends after
 *   `close()` changes nothing;
 * - the schedule: `pollIntervalMs`, the interval the control loop polls at, is the configured
 *   one, or what the last good read asked for (DNS TTLs), and the configured one again after a
 *   failure.
 *
 * A source says only what is its own: {@link PeriodicSource.read}, what to fetch and how it
 * becomes endpoint records.
 *
 * @module
 */
import { DiscoveryError, isDiscoveryError, type DiscoveryErrorCode, type Problem } from '../errors.js';
import type { TimerHandle } from '../clock/index.js';
import { SourceCore, type SourceCoreOptions } from './source-core.js';
import type { EndpointRecord, Source, SourceKind, SourceListener, SourceState } from './types.js';

/** What one good read gives. */
export interface Listing {
  /** The complete new list. */
  readonly records: readonly EndpointRecord[];
  /** Entries skipped, each with where and why. */
  readonly problems?: readonly Problem[];
  /** What else a good read changes (a cursor, published cards): run only when the list is taken, not after `close()`. */
  readonly commit?: () => void;
  /** The next poll interval this read asks for (DNS: its smallest TTL); default the configured one. */
  readonly pollIntervalMs?: number;
}

/** How a {@link PeriodicSource} runs. */
export interface PeriodicOptions extends SourceCoreOptions {
  id: string;
  kind: SourceKind;
  /** The poll interval, at start and after a failure. */
  pollIntervalMs: number;
  /** A bound on one whole refresh, and the error the refresh then fails with. */
  timeout?: { ms: number; error: () => DiscoveryError };
  /** Why a read in flight is aborted by `close()`, e.g. `the ARD source was closed`. */
  closedReason: string;
  /** A failure that is not a {@link DiscoveryError} becomes one with this code, `url` and message prefix (stage `source`). */
  failure: { code: DiscoveryErrorCode; url?: string; prefix?: string };
}

export abstract class PeriodicSource implements Source {
  readonly id: string;
  readonly kind: SourceKind;
  protected readonly core: SourceCore;
  readonly #o: PeriodicOptions;
  #pollIntervalMs: number;
  #inFlight: Promise<SourceState> | undefined;
  #controller: AbortController | undefined;
  #closed = false;

  constructor(options: PeriodicOptions) {
    this.#o = options;
    this.id = options.id;
    this.kind = options.kind;
    this.#pollIntervalMs = options.pollIntervalMs;
    this.core = new SourceCore(options.id, options.kind, { events: options.events, clock: options.clock });
  }

  /**
   * One read of the upstream into a complete list; throws to fail the refresh (the last good list
   * is kept). `signal` is aborted on timeout and on close. Undefined: nothing to take (closed meanwhile).
   */
  protected abstract read(signal: AbortSignal): Promise<Listing | undefined>;

  /** What `close()` releases once the read in flight settled (published cards, a cache). */
  protected released(): void | Promise<void> {}

  /** True once `close()` was called: a read stops early and its result is not taken. */
  protected get closed(): boolean {
    return this.#closed;
  }

  get pollIntervalMs(): number {
    return this.#pollIntervalMs;
  }

  /** Reads the upstream; concurrent calls share one read. Never rejects for remote failures (see {@link Source.refresh}). */
  refresh(): Promise<SourceState> {
    if (this.#closed) return Promise.resolve(this.core.state);
    this.#inFlight ??= this.#run().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  current(): SourceState {
    return this.core.state;
  }

  subscribe(listener: SourceListener): () => void {
    return this.core.subscribe(listener);
  }

  carryError(alert: { raisedAt: number }): void {
    this.core.carryError(alert);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#controller?.abort(new Error(this.#o.closedReason));
    this.core.clearListeners();
    await this.#inFlight?.catch(() => undefined);
    await this.released();
  }

  async #run(): Promise<SourceState> {
    const controller = new AbortController();
    this.#controller = controller;
    const { timeout } = this.#o;
    const timer: TimerHandle | undefined = timeout && this.core.clock.setTimer(() => controller.abort(timeout.error()), timeout.ms);
    try {
      const listing = await this.read(controller.signal);
      if (this.#closed || listing === undefined) return this.core.state;
      listing.commit?.();
      this.#pollIntervalMs = listing.pollIntervalMs ?? this.#o.pollIntervalMs;
      return this.core.succeed(listing.records, listing.problems);
    } catch (err) {
      if (this.#closed) return this.core.state;
      // A missing optional dependency is a configuration error: the refresh rejects (Source.refresh).
      if (isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID') throw err;
      this.#pollIntervalMs = this.#o.pollIntervalMs;
      return this.core.fail(this.#failure(controller.signal.aborted ? controller.signal.reason : err));
    } finally {
      timer?.cancel();
      if (this.#controller === controller) this.#controller = undefined;
    }
  }

  #failure(err: unknown): DiscoveryError {
    if (isDiscoveryError(err)) return err;
    const { code, url, prefix = '' } = this.#o.failure;
    return new DiscoveryError(code, `${prefix}${err instanceof Error ? err.message : String(err)}`, { ...(url !== undefined && { url }), stage: 'source', cause: err });
  }
}
