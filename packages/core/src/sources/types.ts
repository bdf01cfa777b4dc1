/**
 * The shapes every discovery source shares: the endpoint record a source proposes, the state it
 * keeps, and the {@link Source} interface the control loop drives.
 *
 * @module
 */
import type { DiscoveryError, Problem } from '../errors.js';
import type { TransportOptions } from './transport-options.js';

/** The kinds of source this library ships. */
export type SourceKind = 'static' | 'well-known' | 'registry' | 'kubernetes' | 'ai-catalog' | 'ard' | 'dns';

/**
 * One endpoint proposed by a source. A proposal only: the resolver normalizes the base URL and
 * the allowlist decides whether it is admitted.
 */
export interface EndpointRecord {
  /**
   * The name the source proposes: static → the configured local name; well-known → the domain;
   * registry → the entry's name; kubernetes → `<namespace>/<service>`; ai-catalog → the trailing
   * segment of the entry's identifier (or the host, for a host without a catalog). Local names are decided
   * later (the matcher), never taken from card text.
   */
  readonly name: string;
  /**
   * The base URL as proposed, or the card's own URL for an endpoint given by its card URL (a path
   * ending in `.json`, see `isCardUrl`: fetched exactly there, no well-known path appended). Not
   * normalized and not allowlisted here; only syntactically impossible URLs are dropped by a
   * source (with a reported problem).
   */
  readonly baseUrl: string;
  /** The id of the source that proposed it, e.g. `'static'`, `'partners'`. */
  readonly source: string;
  /**
   * Source-specific facts (registry tags comma-joined, Kubernetes namespace and service, ...).
   * Data for display and filtering only: never trusted, never put into a prompt.
   */
  readonly metadata: Readonly<Record<string, string>>;
  /**
   * How the remote agent calls this endpoint (`streaming: false`, extra headers, a timeout, a
   * tenant), when the static entry or registry record says so. Reviewed configuration or
   * registry data, never card text; part of the snapshot digest.
   */
  readonly transport?: TransportOptions;
}

/** What a source knows right now. Frozen; a new object on every change. */
export interface SourceState {
  /** The last good list. A failure never empties it. */
  readonly records: readonly EndpointRecord[];
  /** False when the last refresh failed (`records` are then the previous good list). */
  readonly ok: boolean;
  /** The failure of the last refresh, when `ok` is false. */
  readonly error?: DiscoveryError;
  /** `clock.wallNow()` (epoch ms) of the last successful refresh or list change. */
  readonly updatedAt?: number;
  /** True after the first successful list (like an informer's HasSynced). */
  readonly synced: boolean;
  /**
   * Entries skipped by the last successful list, each with where and why (a registry entry
   * whose URL cannot be parsed, a Service with no usable port). Absent when there were none.
   */
  readonly problems?: readonly Problem[];
}

/** A listener of {@link Source.subscribe}. */
export type SourceListener = (state: SourceState) => void;

/**
 * A discovery source. Constructors do no I/O; `refresh()` and `start()` do.
 *
 * @example
 * const source = registrySource({ id: 'catalog', url: 'https://registry.example.com/agents', fetcher });
 * const off = source.subscribe((state) => resolver.update(source.id, state.records));
 * await source.refresh();          // never throws for remote failures
 * if (!source.current().ok) console.warn(source.current().error?.message);
 * off(); await source.close();
 */
export interface Source {
  /** The id given in the options; appears as `EndpointRecord.source`. */
  readonly id: string;
  readonly kind: SourceKind;
  /**
   * One poll or re-list. Never throws for remote failures: keeps the last good list, sets
   * `error`, emits a `source-error` alert. Rejects only for configuration errors discovered
   * late (`ERR_CONFIG_INVALID`, e.g. an optional dependency that is not installed).
   */
  refresh(): Promise<SourceState>;
  /** The current state, no I/O. */
  current(): SourceState;
  /**
   * Calls `listener` on every change of the record list (pushed for watches; after a refresh
   * that changed it for polled sources). A listener that throws is isolated. Returns the
   * function that unsubscribes.
   */
  subscribe(listener: SourceListener): () => void;
  /** Starts background work (the Kubernetes watch); a no-op for polled sources. */
  start(): Promise<void>;
  /** Stops background work and aborts I/O in flight. Idempotent. */
  close(): Promise<void>;
  /** Suggested poll interval in ms (undefined = only on demand). */
  readonly pollIntervalMs?: number;
  /**
   * Takes over this source's `source-error` alert that an earlier process (or the previous leader
   * replica) raised and did not resolve: the next failure does not raise it again; the next good
   * list resolves it, with `raisedAt`. Optional: a source without it raises its error again.
   */
  carryError?(alert: { raisedAt: number; message: string }): void;
}
