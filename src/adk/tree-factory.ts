/**
 * The tree factory: one ADK root per snapshot digest, built once and cached, and every session
 * pinned to the digest current when it started. `rootFor(sessionId)` is the request path: two
 * map lookups, no I/O, never waiting on discovery.
 *
 * A session keeps its tree until it ends, its pin idles out, or it is explicitly upgraded at a
 * turn boundary (refused when its history names an agent the new tree lacks, unless forced).
 * A root is evicted once its snapshot is neither current nor pinned by any live session.
 */
import type { BaseAgent } from '@google/adk';
import type { Clock } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { Snapshot, SnapshotStore } from '../snapshot/index.js';

export interface TreeFactoryOptions {
  /** Where published snapshots live (the loop's store): pins are references in it. */
  snapshots: SnapshotStore;
  /** Builds (and checks) the root for a snapshot. Must not perform I/O: cards are cached. */
  buildRoot: (snapshot: Snapshot) => BaseAgent;
  /** A pin unused this long is released. Default 3,600,000 (1 h); 0 disables. */
  idleTimeoutMs?: number;
  clock?: Clock;
  events?: EventStream;
}

interface Pin {
  digest: string;
  lastUsedAt: number;
}

export interface PinnedSession {
  readonly sessionId: string;
  readonly digest: string;
  readonly version: number;
  readonly idleMs: number;
}

/**
 * @example
 * const trees = new TreeFactory({ snapshots: loop.snapshots, buildRoot });
 * const loop = new DiscoveryLoop({ ..., beforePublish: (next) => trees.prepare(next) });
 * const root = trees.rootFor(sessionId); // the same object for the session's whole life
 */
export class TreeFactory {
  readonly #o: TreeFactoryOptions;
  readonly #clock: Clock;
  readonly #roots = new Map<string, BaseAgent>();
  readonly #pins = new Map<string, Pin>();
  readonly #evictListeners = new Set<(digest: string) => void>();
  #builds = 0;
  #lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(options: TreeFactoryOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Builds the root for `snapshot` if it is not built yet (warm-up before publication: use it
   * as the loop's `beforePublish`). Throws the build's error, so a bad tree is never published.
   */
  prepare(snapshot: Snapshot): BaseAgent {
    const existing = this.#roots.get(snapshot.digest);
    if (existing) return existing;
    let root: BaseAgent;
    try {
      root = this.#o.buildRoot(snapshot);
    } catch (err) {
      throw toDiscoveryError(err, 'ERR_REGISTRY_INVALID', { stage: 'build' });
    }
    this.#builds++;
    this.#roots.set(snapshot.digest, root);
    return root;
  }

  /**
   * The root serving `sessionId`. A new session is pinned to the current snapshot. No I/O; throws
   * `ERR_NOT_READY` before the first publication.
   */
  rootFor(sessionId: string): BaseAgent {
    const now = this.#clock.now();
    const pin = this.#pins.get(sessionId);
    if (pin) {
      pin.lastUsedAt = now;
      const root = this.#roots.get(pin.digest);
      if (root) return root;
      // Pinned but not built here yet (e.g. a pin restored from a shared store): build it now.
      const snapshot = this.#o.snapshots.get(pin.digest);
      if (!snapshot) throw new DiscoveryError('ERR_INTERNAL', `session ${sessionId} is pinned to ${pin.digest}, which is no longer retained`);
      return this.prepare(snapshot);
    }
    const current = this.#o.snapshots.current;
    if (!current) throw new DiscoveryError('ERR_NOT_READY', 'no snapshot has been published yet');
    const root = this.prepare(current);
    this.#o.snapshots.retain(current.digest);
    this.#pins.set(sessionId, { digest: current.digest, lastUsedAt: now });
    this.#sweepIdle(now);
    return root;
  }

  /** The digest a session is pinned to, if any. */
  digestOf(sessionId: string): string | undefined {
    return this.#pins.get(sessionId)?.digest;
  }

  /** Ends a session: releases its pin, evicting its tree when nothing else needs it. */
  endSession(sessionId: string): void {
    const pin = this.#pins.get(sessionId);
    if (!pin) return;
    this.#pins.delete(sessionId);
    this.#o.snapshots.release(pin.digest);
    this.sweep();
  }

  /**
   * Re-pins a session to the current snapshot at a turn boundary. `authors` are the agent names
   * the session's history contains (event authors); when one of them is missing from the new
   * tree the upgrade is refused (`ERR_UPGRADE_REFUSED`) unless `force` is set, because ADK
   * resolves the next agent from stored authors by name.
   */
  upgrade(sessionId: string, options: { authors?: readonly string[]; force?: boolean } = {}): { from?: string; to: string; changed: boolean } {
    const current = this.#o.snapshots.current;
    if (!current) throw new DiscoveryError('ERR_NOT_READY', 'no snapshot has been published yet');
    const pin = this.#pins.get(sessionId);
    if (pin?.digest === current.digest) return { from: pin.digest, to: current.digest, changed: false };
    const root = this.prepare(current);
    if (!options.force) {
      const missing = [...new Set(options.authors ?? [])].filter((name) => name !== 'user' && root.findAgent(name) === undefined);
      if (missing.length > 0) {
        throw new DiscoveryError(
          'ERR_UPGRADE_REFUSED',
          `session ${sessionId} cannot move to snapshot v${current.version}: its history names ${missing.join(', ')}, which the new tree does not have (force to upgrade anyway)`,
        );
      }
    }
    this.#o.snapshots.retain(current.digest);
    this.#pins.set(sessionId, { digest: current.digest, lastUsedAt: this.#clock.now() });
    if (pin) this.#o.snapshots.release(pin.digest);
    this.sweep();
    return { ...(pin && { from: pin.digest }), to: current.digest, changed: true };
  }

  /** Drops roots whose snapshot is no longer retained (neither current nor pinned). */
  sweep(): string[] {
    const evicted: string[] = [];
    for (const digest of [...this.#roots.keys()]) {
      if (this.#o.snapshots.get(digest) === undefined) {
        this.#roots.delete(digest);
        evicted.push(digest);
        for (const l of this.#evictListeners) l(digest);
      }
    }
    return evicted;
  }

  /** Called with each evicted digest (the runner helper drops its runner). */
  onEvict(listener: (digest: string) => void): () => void {
    this.#evictListeners.add(listener);
    return () => this.#evictListeners.delete(listener);
  }

  /** Pinned sessions with their digests. */
  sessions(): PinnedSession[] {
    const now = this.#clock.now();
    return [...this.#pins.entries()].map(([sessionId, p]) => ({
      sessionId,
      digest: p.digest,
      version: this.#o.snapshots.get(p.digest)?.version ?? -1,
      idleMs: now - p.lastUsedAt,
    }));
  }

  /** Digests with a built root. */
  get builtDigests(): string[] {
    return [...this.#roots.keys()];
  }

  /** How many roots were built in total (each digest once). */
  get builds(): number {
    return this.#builds;
  }

  /** Releases every pin and drops every root. */
  close(): void {
    for (const [sessionId] of this.#pins) this.endSession(sessionId);
    this.#roots.clear();
  }

  #sweepIdle(now: number): void {
    const idle = this.#o.idleTimeoutMs ?? 3_600_000;
    // This runs on the request path: walk the pins at most once per quarter of the idle time
    // (capped at a minute), not on every new session.
    if (idle <= 0 || now - this.#lastSweepAt < Math.min(idle / 4, 60_000)) return;
    this.#lastSweepAt = now;
    for (const [sessionId, pin] of this.#pins) {
      if (now - pin.lastUsedAt > idle) {
        this.#pins.delete(sessionId);
        this.#o.snapshots.release(pin.digest);
        this.#o.events?.emit({ type: 'alert', kind: 'session-expired', message: `session ${sessionId} idled out; its pin on ${pin.digest.slice(0, 12)} was released` });
      }
    }
    this.sweep();
  }
}
