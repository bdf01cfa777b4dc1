/**
 * The tree factory: one ADK root per snapshot digest, built once and cached, and every session
 * pinned to the digest current when it started. `rootFor(sessionId)` is the request path: two
 * map lookups, no I/O, never waiting on discovery.
 *
 * A session keeps its tree until it ends, its pin idles out, or it is explicitly upgraded at a
 * turn boundary (refused when its history names an agent the new tree lacks, unless forced).
 * Idle pins are released by a timer; an idled-out session that comes back starts anew on the
 * current snapshot (reported, never silent: its history is dropped with its pin). A root is
 * evicted once its snapshot is neither current nor pinned by any live session.
 */
import type { BaseAgent } from '@google/adk';
import type { Clock, TimerHandle } from '../clock/index.js';
import { systemClock } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import { SESSION_DEFAULTS } from '../rules/defaults.js';
import type { Snapshot, SnapshotAgent, SnapshotStore } from '../snapshot/index.js';
import { ATTR, SPAN } from '../telemetry/attributes.js';
import { withSpan } from '../telemetry/otel.js';

/** Session ids: 1–128 characters of letters, digits and `_ . : -`. The one rule for every route. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Throws `ERR_SESSION_INVALID` unless `sessionId` follows {@link SESSION_ID_PATTERN}. */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
    const shown = typeof sessionId === 'string' ? JSON.stringify(sessionId.length > 40 ? `${sessionId.slice(0, 40)}…` : sessionId) : typeof sessionId;
    throw new DiscoveryError('ERR_SESSION_INVALID', `session id ${shown} must be 1–128 letters, digits, "_", ".", ":" or "-"`);
  }
}

export interface TreeFactoryOptions {
  /** Where published snapshots live (the loop's store): pins are references in it. */
  snapshots: SnapshotStore;
  /** Builds (and checks) the root for a snapshot. Must not perform I/O: cards are cached. */
  buildRoot: (snapshot: Snapshot) => BaseAgent;
  /** A pin unused this long is released (with its history). Default 3,600,000 (1 h); 0 disables. */
  idleTimeoutMs?: number;
  /** Most pinned sessions at once; a new session beyond it is refused (`ERR_SESSION_LIMIT`). Default 10,000. */
  maxSessions?: number;
  /** Idled-out session ids remembered (to report a return), oldest forgotten first. Default 10,000. */
  maxExpiredRemembered?: number;
  clock?: Clock;
  events?: EventStream;
  /**
   * Several replicas: before pins idle here are expired (their history deleted), asks where else
   * they were used. Given the candidates (idle by this replica's clock), resolves with the last
   * use recorded anywhere (epoch ms; the shared store's pins) of those used since on another
   * replica; a session missing from the answer is expired as usual. A session used elsewhere is
   * not expired: its pin here is renewed to that last use, or dropped (nothing deleted) when the
   * other replica moved it to another digest. When the question fails, the candidates are kept
   * and asked about again at the next check. Absent (one process): idle pins expire by this clock.
   */
  /**
   * A staged rollout: the digest a NEW session starts on instead of the current snapshot's (the
   * rollout's candidate), or undefined for the current one. Must be stable per session id.
   */
  assign?: (sessionId: string) => string | undefined;
  usedElsewhere?: (candidates: ReadonlyArray<{ sessionId: string; digest: string; lastUsedAtWall: number }>) => Promise<ReadonlyMap<string, { digest: string; lastUsedAtWall: number }>>;
}

interface Pin {
  digest: string;
  /** Monotonic ms of the last use, exact from pin(); see `used`. */
  lastUsedAt: number;
  /**
   * Used by rootFor() since `lastUsedAt` was last settled. rootFor() reads no clock (it is the
   * request path); the next idle check or query settles the use at its own time, so a session's
   * recorded last use is never earlier than its real one: idle expiry may come up to one check
   * interval late, never early.
   */
  used: boolean;
}

/** Settles a pin's pending use at `now` and returns its last use. */
function lastUse(pin: Pin, now: number): number {
  if (pin.used) {
    pin.used = false;
    pin.lastUsedAt = now;
  }
  return pin.lastUsedAt;
}

export interface PinnedSession {
  readonly sessionId: string;
  readonly digest: string;
  readonly version: number;
  readonly idleMs: number;
}

/** What {@link TreeFactory.pin} resolved for a turn. */
export interface SessionPin {
  readonly root: BaseAgent;
  readonly digest: string;
  /** Set when the session had idled out and now starts anew: the digest it was pinned to. */
  readonly restartedFrom?: string;
}

/**
 * Why a pin went away: ended by its owner, idled out, or dropped here because another replica
 * serves the session (`elsewhere`: nothing is deleted, neither its history nor its stored pin).
 */
export type PinRelease = 'ended' | 'expired' | 'elsewhere';

/**
 * @example
 * const trees = new TreeFactory({ snapshots: loop.snapshots, buildRoot });
 * const loop = new DiscoveryLoop({ ..., beforePublish: (next) => trees.prepare(next) });
 * const root = trees.rootFor(sessionId); // the same object for the session's whole life
 * trees.close();                          // stops the idle timer, releases every pin
 */
export class TreeFactory {
  readonly #o: TreeFactoryOptions;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #roots = new Map<string, BaseAgent>();
  readonly #pins = new Map<string, Pin>();
  /** Idled-out sessions: id → the digest it was pinned to (insertion order = age). */
  readonly #expired = new Map<string, string>();
  readonly #evictListeners = new Set<(digest: string) => void>();
  readonly #releaseListeners = new Set<(sessionId: string, why: PinRelease) => void>();
  readonly #pinListeners = new Set<(sessionId: string) => void>();
  #builds = 0;
  /** The digest built last, until its snapshot is retained: kept by sweeps before publication. */
  #warming: string | undefined;
  #expiredTotal = 0;
  #keptElsewhere = 0;
  /** The check of idle pins with other replicas in progress (see `usedElsewhere`). */
  #checking: Promise<string[]> | undefined;
  #timer: TimerHandle | undefined;
  #closed = false;

  constructor(options: TreeFactoryOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#idleMs = options.idleTimeoutMs ?? SESSION_DEFAULTS.idleTimeoutMs;
  }

  /**
   * Builds the root for `snapshot` if it is not built yet (warm-up before publication: use it
   * as the loop's `beforePublish`). Throws the build's error, so a bad tree is never published.
   * Roots whose snapshot is no longer retained are evicted on the way.
   */
  prepare(snapshot: Snapshot): BaseAgent {
    // A warm-up (beforePublish) is for a snapshot that is not published yet: its root must
    // survive every sweep until it is (a session released in between sweeps too). The loop warms
    // its newest candidate only, so an earlier candidate that was never published (held, or
    // replaced by a digest already built) loses that protection here, even when this root exists.
    this.#warming = snapshot.digest;
    const root = this.#build(snapshot);
    // A candidate whose root is still built (an earlier digest coming back) builds nothing, so
    // sweep here too: roots of snapshots released since the last build go now, not at some later one.
    this.sweep();
    return root;
  }

  /** The root of `snapshot`, built (and older roots swept) when it is not built yet. */
  #build(snapshot: Snapshot): BaseAgent {
    const existing = this.#roots.get(snapshot.digest);
    if (existing) return existing;
    const attributes = { [ATTR.snapshotDigest]: snapshot.digest, [ATTR.snapshotVersion]: snapshot.version, [ATTR.agentCount]: snapshot.agents.length };
    const root = withSpan(SPAN.treeBuild, { attributes }, () => {
      try {
        return this.#o.buildRoot(snapshot);
      } catch (err) {
        throw toDiscoveryError(err, 'ERR_REGISTRY_INVALID', { stage: 'build' });
      }
    });
    this.#builds++;
    this.sweep();
    this.#roots.set(snapshot.digest, root);
    this.#o.events?.emit({ type: 'tree.built', digest: snapshot.digest });
    return root;
  }

  /**
   * The root serving `sessionId`. A new session is pinned to the current snapshot. No I/O; throws
   * `ERR_NOT_READY` before the first publication, `ERR_SESSION_INVALID` for a malformed id and
   * `ERR_SESSION_LIMIT` when `maxSessions` are pinned.
   */
  rootFor(sessionId: string): BaseAgent {
    // The request path: a pinned session whose tree is built costs two map reads, no clock read
    // and no validation (only valid ids are ever pinned).
    const pin = this.#pins.get(sessionId);
    const root = pin && this.#roots.get(pin.digest);
    if (root === undefined) return this.pin(sessionId).root;
    pin!.used = true;
    if (this.#pinListeners.size > 0) this.#pinChanged(sessionId);
    return root;
  }

  /**
   * Like {@link rootFor}, and says whether an idled-out session started anew. `startOn`: a NEW
   * session starts on the retained snapshot with this digest instead of the current one (to
   * compare how two snapshots answer); `ERR_SESSION_INVALID` when that snapshot is not retained
   * here or the session is already pinned elsewhere.
   */
  pin(sessionId: string, options: { startOn?: string } = {}): SessionPin {
    checkSessionId(sessionId);
    const now = this.#clock.now();
    const pin = this.#pins.get(sessionId);
    if (pin) {
      if (options.startOn !== undefined && options.startOn !== pin.digest) {
        throw new DiscoveryError('ERR_SESSION_INVALID', `session ${sessionId} is already pinned to ${pin.digest.slice(0, 12)}; only a new session can start on another snapshot`);
      }
      pin.lastUsedAt = now;
      pin.used = false;
      this.#pinChanged(sessionId);
      const root = this.#roots.get(pin.digest);
      if (root) return { root, digest: pin.digest };
      // Pinned but not built here yet (e.g. a pin restored from a shared store): build it now.
      const snapshot = this.#o.snapshots.get(pin.digest);
      if (!snapshot) throw new DiscoveryError('ERR_INTERNAL', `session ${sessionId} is pinned to ${pin.digest}, which is no longer retained`);
      return { root: this.#build(snapshot), digest: pin.digest };
    }
    const assigned = options.startOn === undefined ? this.#o.assign?.(sessionId) : undefined;
    const current = options.startOn === undefined ? ((assigned !== undefined ? this.#o.snapshots.get(assigned) : undefined) ?? this.#o.snapshots.current) : this.#o.snapshots.get(options.startOn);
    if (!current) {
      if (options.startOn !== undefined) throw new DiscoveryError('ERR_SESSION_INVALID', `snapshot ${options.startOn.slice(0, 12)} is not retained here: a new session can start on the current snapshot or on one that is still retained`);
      throw new DiscoveryError('ERR_NOT_READY', 'no snapshot has been published yet');
    }
    const max = this.maxSessions;
    if (this.#pins.size >= max) throw new DiscoveryError('ERR_SESSION_LIMIT', `${max} sessions are pinned (sessions.maxSessions); end one or wait for idle ones to expire`);
    const root = this.#build(current);
    this.#o.snapshots.retain(current.digest);
    this.#pins.set(sessionId, { digest: current.digest, lastUsedAt: now, used: false });
    this.#pinChanged(sessionId);
    this.#armIdleTimer();
    const restartedFrom = this.#expired.get(sessionId);
    if (restartedFrom !== undefined) {
      this.#expired.delete(sessionId);
      this.#o.events?.emit({ type: 'session.restarted', sessionId, digest: current.digest, previousDigest: restartedFrom });
      return { root, digest: current.digest, restartedFrom };
    }
    this.#o.events?.emit({ type: 'session.pinned', sessionId, digest: current.digest });
    return { root, digest: current.digest };
  }

  /**
   * Restores a pin recorded by an earlier process (a durable store), before serving: the session
   * keeps its digest, and its idle time continues from `lastUsedAtWall` (epoch ms). `snapshot` is
   * the stored snapshot it is pinned to; its tree is built on the session's next turn.
   */
  restorePin(sessionId: string, snapshot: Snapshot, lastUsedAtWall: number): void {
    checkSessionId(sessionId);
    if (this.#pins.has(sessionId)) return;
    this.#o.snapshots.retainRestored(snapshot);
    const idleMs = Math.max(0, this.#clock.wallNow() - lastUsedAtWall);
    this.#pins.set(sessionId, { digest: snapshot.digest, lastUsedAt: this.#clock.now() - idleMs, used: false });
    this.#armIdleTimer();
  }

  /** A session's pin: its digest and last use (monotonic ms), if pinned. */
  pinOf(sessionId: string): { readonly digest: string; readonly lastUsedAt: number } | undefined {
    const pin = this.#pins.get(sessionId);
    return pin && { digest: pin.digest, lastUsedAt: lastUse(pin, this.#clock.now()) };
  }

  /** Called whenever a session's pin is created, used, moved or released (a durable store follows it). */
  onPinChange(listener: (sessionId: string) => void): () => void {
    this.#pinListeners.add(listener);
    return () => this.#pinListeners.delete(listener);
  }

  /** The version of the retained snapshot with this digest, if it is retained. */
  versionOf(digest: string): number | undefined {
    return this.#o.snapshots.get(digest)?.version;
  }

  /** The agent with local name `name` in the retained snapshot `digest` (a binary search: agents are sorted). */
  agentOf(digest: string, name: string): SnapshotAgent | undefined {
    const agents = this.#o.snapshots.get(digest)?.agents;
    if (agents === undefined) return undefined;
    let lo = 0;
    let hi = agents.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const n = agents[mid]!.localName;
      if (n === name) return agents[mid];
      if (n < name) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The digest a session is pinned to, if any. */
  digestOf(sessionId: string): string | undefined {
    return this.#pins.get(sessionId)?.digest;
  }

  /** Ends a session: releases its pin, evicting its tree when nothing else needs it. */
  endSession(sessionId: string): void {
    this.#release(sessionId, 'ended');
    this.sweep();
  }

  /**
   * Re-pins a session to the current snapshot at a turn boundary. `authors` are the agent names
   * the session's history contains (event authors); when one of them is missing from the new
   * tree the upgrade is refused (`ERR_UPGRADE_REFUSED`) unless `force` is set, because ADK
   * resolves the next agent from stored authors by name. Only a pinned session can be upgraded.
   */
  upgrade(sessionId: string, options: { authors?: readonly string[]; force?: boolean } = {}): { from: string; to: string; changed: boolean } {
    checkSessionId(sessionId);
    const current = this.#o.snapshots.current;
    if (!current) throw new DiscoveryError('ERR_NOT_READY', 'no snapshot has been published yet');
    const pin = this.#pins.get(sessionId);
    if (!pin) throw new DiscoveryError('ERR_UPGRADE_REFUSED', `session ${sessionId} is not pinned (it never started, ended, or idled out)`);
    if (pin.digest === current.digest) return { from: pin.digest, to: current.digest, changed: false };
    const root = this.#build(current);
    if (!options.force) {
      const missing = [...new Set(options.authors ?? [])].filter((name) => name !== 'user' && root.findAgent(name) === undefined);
      if (missing.length > 0) {
        throw new DiscoveryError(
          'ERR_UPGRADE_REFUSED',
          `session ${sessionId} cannot move to snapshot v${current.version}: its history names ${missing.join(', ')}, which the new tree does not have (force to upgrade anyway)`,
        );
      }
    }
    const from = pin.digest;
    this.#o.snapshots.retain(current.digest);
    this.#pins.set(sessionId, { digest: current.digest, lastUsedAt: this.#clock.now(), used: false });
    this.#pinChanged(sessionId);
    this.#o.snapshots.release(from);
    this.#o.events?.emit({ type: 'session.upgraded', sessionId, digest: current.digest, previousDigest: from });
    this.sweep();
    return { from, to: current.digest, changed: true };
  }

  /** Drops roots whose snapshot is no longer retained (neither current nor pinned). */
  sweep(): string[] {
    const evicted: string[] = [];
    // Once the warm-up's snapshot is retained (published), the ordinary rule applies to it.
    if (this.#warming !== undefined && this.#o.snapshots.get(this.#warming) !== undefined) this.#warming = undefined;
    for (const digest of [...this.#roots.keys()]) {
      if (this.#o.snapshots.get(digest) === undefined && digest !== this.#warming) {
        this.#roots.delete(digest);
        evicted.push(digest);
        this.#o.events?.emit({ type: 'tree.evicted', digest });
        for (const l of this.#evictListeners) l(digest);
      }
    }
    return evicted;
  }

  /**
   * Releases pins idle for longer than `idleTimeoutMs` (the timer calls it; callable by hand) and
   * returns their ids. With `usedElsewhere` (replicas) nothing is expired at once: the check runs
   * in the background (see {@link expireIdleEverywhere}) and this returns an empty list.
   */
  expireIdle(): string[] {
    if (this.#idleMs <= 0) return [];
    if (this.#o.usedElsewhere) {
      void this.expireIdleEverywhere();
      return [];
    }
    const now = this.#clock.now();
    const expired: string[] = [];
    for (const [sessionId, pin] of this.#pins) {
      if (now - lastUse(pin, now) <= this.#idleMs) continue;
      this.#release(sessionId, 'expired');
      expired.push(sessionId);
    }
    if (expired.length > 0) this.sweep();
    return expired;
  }

  /**
   * Expires the pins idle everywhere: those idle here are checked with `usedElsewhere` first;
   * one used on another replica since is renewed here (or dropped, when it moved to another
   * digest) and keeps its history. Resolves with the ids expired. One check at a time: a call
   * during a check joins it. Without `usedElsewhere`, the same as {@link expireIdle}.
   */
  expireIdleEverywhere(): Promise<string[]> {
    const ask = this.#o.usedElsewhere;
    if (!ask || this.#idleMs <= 0) return Promise.resolve(this.expireIdle());
    if (this.#checking) return this.#checking;
    const check = this.#checkIdle(ask).finally(() => {
      if (this.#checking === check) this.#checking = undefined;
    });
    this.#checking = check;
    return check;
  }

  async #checkIdle(ask: NonNullable<TreeFactoryOptions['usedElsewhere']>): Promise<string[]> {
    const wallNow = this.#clock.wallNow();
    const now = this.#clock.now();
    const candidates: Array<{ sessionId: string; digest: string; lastUsedAtWall: number }> = [];
    for (const [sessionId, pin] of this.#pins) {
      if (now - lastUse(pin, now) > this.#idleMs) candidates.push({ sessionId, digest: pin.digest, lastUsedAtWall: wallNow - (now - pin.lastUsedAt) });
    }
    if (candidates.length === 0) return [];
    let elsewhere: ReadonlyMap<string, { digest: string; lastUsedAtWall: number }>;
    try {
      elsewhere = await ask(candidates);
    } catch {
      // Cannot tell (the store is unreachable): keep them, ask again at the next check.
      return [];
    }
    const expired: string[] = [];
    let dropped = false;
    const later = this.#clock.now();
    const laterWall = this.#clock.wallNow();
    for (const c of candidates) {
      const pin = this.#pins.get(c.sessionId);
      // Used here meanwhile, moved or released: not idle any more, or not ours to expire.
      if (!pin || pin.digest !== c.digest || later - lastUse(pin, later) <= this.#idleMs) continue;
      const other = elsewhere.get(c.sessionId);
      if (other === undefined || laterWall - other.lastUsedAtWall > this.#idleMs) {
        this.#release(c.sessionId, 'expired');
        expired.push(c.sessionId);
      } else if (other.digest === pin.digest) {
        // Served on another replica since: idle here only. Its idle time runs from that use.
        this.#keptElsewhere++;
        pin.lastUsedAt = Math.max(pin.lastUsedAt, later - Math.max(0, laterWall - other.lastUsedAtWall));
      } else {
        // Another replica moved it to another digest: this pin is outdated; the store has the new one.
        this.#keptElsewhere++;
        this.#release(c.sessionId, 'elsewhere');
        dropped = true;
      }
    }
    if (expired.length > 0 || dropped) this.sweep();
    return expired;
  }

  /** Called with each evicted digest (the runner helper drops its runner). */
  onEvict(listener: (digest: string) => void): () => void {
    this.#evictListeners.add(listener);
    return () => this.#evictListeners.delete(listener);
  }

  /** Called when a pin is released, ended or expired (the runner deletes the session's history). */
  onRelease(listener: (sessionId: string, why: PinRelease) => void): () => void {
    this.#releaseListeners.add(listener);
    return () => this.#releaseListeners.delete(listener);
  }

  /** Pinned sessions with their digests. */
  sessions(): PinnedSession[] {
    const now = this.#clock.now();
    return [...this.#pins.entries()].map(([sessionId, p]) => ({
      sessionId,
      digest: p.digest,
      version: this.#o.snapshots.get(p.digest)?.version ?? -1,
      idleMs: now - lastUse(p, now),
    }));
  }

  /**
   * Counts for metrics: pinned sessions, built roots, sessions expired so far, and (replicas)
   * idle pins kept because another replica served the session since.
   */
  get stats(): { pinned: number; roots: number; builds: number; expired: number; keptElsewhere: number } {
    return { pinned: this.#pins.size, roots: this.#roots.size, builds: this.#builds, expired: this.#expiredTotal, keptElsewhere: this.#keptElsewhere };
  }

  /** The most sessions pinned at once (`maxSessions`, `sessions.maxSessions`); a new one beyond is `ERR_SESSION_LIMIT`. */
  get maxSessions(): number {
    return this.#o.maxSessions ?? SESSION_DEFAULTS.maxSessions;
  }

  /** Digests with a built root. */
  get builtDigests(): string[] {
    return [...this.#roots.keys()];
  }

  /** How many roots were built in total (each digest once). */
  get builds(): number {
    return this.#builds;
  }

  /** Stops the idle timer, releases every pin and drops every root. */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    for (const sessionId of [...this.#pins.keys()]) this.#release(sessionId, 'ended');
    this.#roots.clear();
  }

  #release(sessionId: string, why: PinRelease): void {
    const pin = this.#pins.get(sessionId);
    if (!pin) return;
    this.#pins.delete(sessionId);
    this.#o.snapshots.release(pin.digest);
    if (this.#pins.size === 0) {
      this.#timer?.cancel();
      this.#timer = undefined;
    }
    if (why === 'expired') {
      this.#expiredTotal++;
      this.#expired.set(sessionId, pin.digest);
      const max = this.#o.maxExpiredRemembered ?? 10_000;
      for (const oldest of this.#expired.keys()) {
        if (this.#expired.size <= max) break;
        this.#expired.delete(oldest);
      }
    }
    // Dropped here for another replica: the session goes on there; its stored pin is not ours to delete.
    if (why !== 'elsewhere') this.#o.events?.emit({ type: why === 'expired' ? 'session.expired' : 'session.ended', sessionId, digest: pin.digest });
    for (const l of this.#releaseListeners) l(sessionId, why);
    if (why !== 'elsewhere') this.#pinChanged(sessionId);
  }

  #pinChanged(sessionId: string): void {
    for (const l of this.#pinListeners) l(sessionId);
  }

  /** One timer while sessions are pinned: checks for idle pins every quarter idle time (≤ 1 min). */
  #armIdleTimer(): void {
    if (this.#timer || this.#closed || this.#idleMs <= 0) return;
    const every = Math.max(1, Math.min(this.#idleMs / 4, 60_000));
    const tick = () => {
      this.#timer = undefined;
      this.expireIdle();
      if (this.#pins.size > 0) this.#armIdleTimer();
    };
    this.#timer = this.#clock.setTimer(tick, every);
  }
}
