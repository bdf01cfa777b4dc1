/**
 * The control loop. Discovery runs in the background; the request path only reads the
 * published, immutable snapshot. One cycle:
 *
 * 1. poll the sources that are due (watched sources push their changes and trigger a cycle);
 * 2. resolve: merge, dedupe by normalized base URL, admit through the allowlist;
 * 3. refresh due cards through the cache (single-flight, bounded concurrency, at most one
 *    request per origin), plus a periodic unconditional resync per endpoint;
 * 4. health: one observation per endpoint, with hysteresis;
 * 5. select: needs, policies, local names, the cap;
 * 6. publish a new snapshot only when the digest changes, unless a guard holds it (mass
 *    removal, critical agent lost) or the `beforePublish` hook (tree warm-up) refuses it.
 *
 * Cycles never overlap. The first one is bounded by `startupTimeoutMs`: if peers hang, the loop
 * publishes from what it has and becomes ready anyway.
 */
import type { CacheEntry, CardCache } from '../cache/index.js';
import type { Clock, Random, TimerHandle } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { HostPolicy } from '../fetch/index.js';
import type { HealthOptions, HealthStatus } from '../health/index.js';
import { HealthTracker, isMember } from '../health/index.js';
import type { Candidate, MatchMemo, ReviewedAgent, SelectOptions, Verdict } from '../match/index.js';
import { selectAgents } from '../match/index.js';
import type { AdmittedEndpoint, RefusedRecord } from '../resolve/index.js';
import { resolveEndpoints } from '../resolve/index.js';
import type { Snapshot, SnapshotAgent, SnapshotDiff, SnapshotSummary } from '../snapshot/index.js';
import { buildSnapshot, diffSnapshots, SnapshotStore, toSnapshotAgents } from '../snapshot/index.js';
import type { EndpointRecord, Source } from '../sources/index.js';
import { AlertBook } from './alert-book.js';

export interface DiscoveryLoopOptions {
  sources: readonly Source[];
  hostPolicy: HostPolicy;
  cache: CardCache;
  /** Needs, vocabulary, required capabilities, tenant policy, cap. */
  select: Omit<SelectOptions, 'reviewed'>;
  /** Entry and leave thresholds (see {@link HealthTracker}); `enterAfter` also damps alert resolution. */
  health?: HealthOptions;
  /** Good observations before a static (reviewed) agent enters. Default 1. */
  staticEnterAfter?: number;
  clock?: Clock;
  random?: Random;
  events?: EventStream;
  snapshots?: SnapshotStore;
  /** Time between cycles. Default 5,000. */
  cycleIntervalMs?: number;
  /** Unconditional refetch of each endpoint this often (jittered), catching wrong 304s. Default 3,600,000. */
  resyncIntervalMs?: number;
  /** Bound on the first cycle: publish and become ready by then even if peers hang. Default 10,000. */
  startupTimeoutMs?: number;
  /**
   * An endpoint no source proposes any more is not requested again; its cached card and state
   * are forgotten after this long (a source that drops it briefly loses nothing). Default 600,000.
   */
  removalGraceMs?: number;
  /** Hold back the removal of more than this share of the current agents at once. Default 0.5. */
  maxRemovalShare?: number;
  /** At most one publication per this many ms (a quiet window). Default 0. */
  minPublishIntervalMs?: number;
  /** Warm-up before publishing (build and check the tree); throwing keeps the current snapshot. */
  beforePublish?: (next: Snapshot, previous: Snapshot | undefined) => void | Promise<void>;
  /**
   * Routing evaluation before publication (docs/routing.md): run on each candidate whose agent
   * set, tags or domain layout differ from the last evaluated one. Below the threshold an alert
   * (`routing-accuracy`) is raised; with `gate`, the candidate is held and the routing of the
   * current snapshot kept, while card updates of its agents still go out.
   */
  routing?: {
    evaluate: (candidate: Snapshot) => RoutingVerdict | Promise<RoutingVerdict>;
    /** Hold a candidate that fails. Default false (alert only). */
    gate?: boolean;
  };
}

/** What a routing evaluation says about a candidate snapshot (see `evaluateRouting`). */
export interface RoutingVerdict {
  /** 0–1. */
  readonly accuracy: number;
  readonly minAccuracy: number;
  readonly passed: boolean;
  /** Cases counted. */
  readonly evaluated: number;
  /** One line for the alert, e.g. the worst labels. */
  readonly summary?: string;
}

/**
 * The one verdict shown for an endpoint, from the first stage that decides it: `refused`
 * (allowlist), `gone` (no source proposes it; forgotten after the grace period), `pending`
 * (no usable card yet, or not enough good observations), `removed` (failed and its card is past
 * its allowed staleness), `unsuitable` / `excluded` (matcher), `held` (its removal is held back
 * by the guard: still in the published snapshot), `degraded` (selected, its card served stale),
 * `selected`.
 */
export type EndpointVerdict = 'refused' | 'gone' | 'pending' | 'removed' | 'unsuitable' | 'excluded' | 'held' | 'degraded' | 'selected';

export interface EndpointState {
  readonly verdict: EndpointVerdict;
  readonly reason: string;
  /** Epoch ms when the endpoint entered this verdict. */
  readonly since: number;
}

/** Everything known about one endpoint, for the API and the dashboard. */
export interface EndpointStatus {
  /** The verdict to show; the fields below are the details behind it. */
  readonly state: EndpointState;
  readonly baseUrl: string;
  readonly sources: readonly string[];
  readonly names: readonly string[];
  /**
   * What each proposing source said about the endpoint: its record's name and metadata (an AI
   * Catalog entry's identifier, version, displayName, description and tags; registry tags; the
   * Kubernetes namespace). Third-party text, for display only: never a reviewed description.
   */
  readonly proposals: ReadonlyArray<{ readonly source: string; readonly name: string; readonly metadata: Readonly<Record<string, string>> }>;
  readonly admitted: boolean;
  readonly refusal?: { code: string; reason: string };
  /** `expiresInMs`: time left before the card is due (negative once expired). */
  readonly cache?: { expiresInMs: number } & Pick<CacheEntry, 'etag' | 'expiresAt' | 'failures' | 'stale' | 'usable' | 'lastOutcome' | 'lastError' | 'rawSha256' | 'canonicalSha256' | 'fetchedAtWall' | 'validatedAtWall' | 'protocolVersion'>;
  readonly lastFailure?: { code: string; message: string; failures: number };
  readonly health?: HealthStatus;
  readonly verdict?: Verdict;
}

export type SnapshotListener = (snapshot: Snapshot, diff: SnapshotDiff) => void;

/**
 * @example
 * const loop = new DiscoveryLoop({ sources, hostPolicy, cache, select: { needs, vocabulary } });
 * await loop.start();          // bounded by startupTimeoutMs
 * loop.current();              // the published snapshot (no I/O)
 * await loop.stop();
 */
export class DiscoveryLoop {
  readonly #o: DiscoveryLoopOptions;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #health: HealthTracker;
  readonly #store: SnapshotStore;
  readonly #listeners = new Set<SnapshotListener>();
  readonly #unsubscribes: Array<() => void> = [];
  readonly #nextPollAt = new Map<string, number>();
  readonly #nextResyncAt = new Map<string, number>();
  #admitted: readonly AdmittedEndpoint[] = [];
  #refused: readonly RefusedRecord[] = [];
  #verdicts: ReadonlyMap<string, Verdict> = new Map();
  /** One verdict per endpoint (admitted, gone or refused), with the time it was entered. */
  #states = new Map<string, EndpointState>();
  /** Endpoints no source proposes any more: when they left (monotonic ms) and their last record. */
  readonly #gone = new Map<string, { at: number; endpoint: AdmittedEndpoint }>();
  readonly #alerts: AlertBook;
  /** Local names of the previous snapshot kept by the removal guard in the current one. */
  #heldNames: readonly string[] = [];
  // Unchanged (same object) cards are matched once, not every cycle; the select options are fixed.
  readonly #matchMemo: MatchMemo = new WeakMap();
  /** The sources' record lists the current admission was resolved from (unchanged lists: same result). */
  #resolvedFrom: ReadonlyArray<readonly EndpointRecord[]> | undefined;
  /**
   * Per source id, the restored snapshot's agents it had proposed, standing in for its records
   * until it lists for the first time (a catalog host down at restart removes nothing); dropped
   * once it has.
   */
  readonly #restoredRecords = new Map<string, readonly EndpointRecord[]>();
  /**
   * The last evaluation's inputs and selection, reused while nothing it depends on changed and its
   * publication settled (nothing held, deferred or refused): a cycle with nothing due then costs
   * the per-endpoint health and alert bookkeeping, not a selection and a snapshot build.
   */
  #lastEvaluation: { candidates: Candidate[]; degraded: boolean[]; reviewed: ReviewedAgent[]; selection: ReturnType<typeof selectAgents>; settledDigest: string | undefined } | undefined;
  /** Endpoints admitted, refused or gone changed since the states were last rebuilt. */
  #membershipChanged = true;
  #publishedMemo: { snapshot: Snapshot | undefined; heldNames: readonly string[]; published: ReadonlySet<string>; held: ReadonlySet<string>; selectedReason: string } | undefined;
  #reviewedCache: { from: ReadonlyArray<readonly EndpointRecord[]>; list: ReviewedAgent[] } | undefined;
  #heldDigest: string | undefined;
  /** The held digest a `snapshot.held` event was last emitted for (one event per held candidate). */
  #lastHeldDigest: string | undefined;
  #confirmRemovals = false;
  /** Routing verdicts by routing key (agents' names, tags and domains, and the layout); the last few. */
  readonly #routingByKey = new Map<string, RoutingVerdict>();
  /** Verdicts of published snapshots, by digest. */
  readonly #routingByDigest = new Map<string, RoutingVerdict>();
  /** The candidate the routing gate last emitted `snapshot.held` for. */
  #lastRoutingHeld: string | undefined;
  #lastPublishAt = Number.NEGATIVE_INFINITY;
  #chain: Promise<unknown> = Promise.resolve();
  #timer: TimerHandle | undefined;
  #ready = false;
  #started = false;
  #stopped = false;
  /** A follower replica's loop, or a leader's that lost its leadership: no cycle runs. */
  #paused = false;
  #pendingTrigger = false;

  constructor(options: DiscoveryLoopOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
    this.#health = new HealthTracker(options.health, this.#clock);
    this.#store = options.snapshots ?? new SnapshotStore();
    this.#alerts = new AlertBook(options.events, { clearAfter: options.health?.enterAfter ?? 2 });
  }

  /** The published snapshot, or undefined before the first publication. Never does I/O. */
  current(): Snapshot | undefined {
    return this.#store.current;
  }

  /** The snapshot store (retention, history, references for pinned sessions). */
  get snapshots(): SnapshotStore {
    return this.#store;
  }

  /** True once the first cycle finished or the startup bound passed. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Listens for publications; returns the unsubscribe function. */
  subscribe(listener: SnapshotListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Restores the published state of an earlier process (from a durable store) before
   * {@link start}: the current snapshot and the version history, and the current snapshot's
   * endpoints as members, so a peer that is down at restart keeps being served from its last
   * good card (stale) under the usual health rules. The next publication continues the versions.
   * Until a source lists for the first time (`synced`), the agents it proposed in that snapshot
   * stand in for its records: a source that cannot list at restart removes nothing.
   */
  restore(state: { current?: Snapshot | undefined; history?: readonly SnapshotSummary[] }): void {
    if (this.#started) throw new DiscoveryError('ERR_INTERNAL', 'restore() must be called before start()');
    this.#store.restore(state);
    const ids = new Set(this.#o.sources.map((s) => s.id));
    const bySource = new Map<string, EndpointRecord[]>();
    for (const a of state.current?.agents ?? []) {
      this.#health.restore(a.baseUrl, { critical: a.critical });
      for (const id of a.sources) {
        if (!ids.has(id)) continue;
        const metadata = { restored: 'true', ...(a.identifier !== undefined && { identifier: a.identifier }) };
        // Its local name as the record's name: the naming rule gives it back unchanged.
        const records = bySource.get(id) ?? [];
        records.push(Object.freeze({ name: a.localName, baseUrl: a.baseUrl, source: id, metadata: Object.freeze(metadata) }));
        bySource.set(id, records);
      }
    }
    for (const [id, records] of bySource) this.#restoredRecords.set(id, Object.freeze(records));
  }

  /**
   * Makes a snapshot another replica published current here (a follower: it runs no cycle), after
   * the `beforePublish` warm-up, with the same event and listeners as a publication of its own.
   * The database's current snapshot is the truth: any other digest is adopted. Returns whether
   * it became current; the loop is ready once it holds a snapshot this way.
   */
  async adopt(snapshot: Snapshot): Promise<boolean> {
    const previous = this.#store.current;
    if (previous && previous.digest === snapshot.digest) {
      this.#ready = true;
      return false;
    }
    try {
      await this.#o.beforePublish?.(snapshot, previous);
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_INTERNAL', { stage: 'build' });
      this.#alerts.raise('publish-refused', { kind: 'publish-refused', message: `snapshot ${snapshot.digest.slice(0, 12)} from the store was not adopted: ${e.message}` });
      return false;
    }
    if (this.#store.current !== previous) return false;
    this.#store.publish(snapshot);
    // Its agents are members: a follower that takes over keeps serving them under the usual rules.
    for (const a of snapshot.agents) this.#health.restore(a.baseUrl, { critical: a.critical });
    this.#ready = true;
    const diff = diffSnapshots(previous, snapshot);
    this.#o.events?.emit({ type: 'snapshot.published', version: snapshot.version, digest: snapshot.digest, ...(previous && { previousDigest: previous.digest }), agents: snapshot.agents.map((a) => a.localName) });
    for (const listener of this.#listeners) {
      try {
        listener(snapshot, diff);
      } catch {
        // A listener's failure never affects discovery.
      }
    }
    return true;
  }

  /**
   * Stops cycling without closing the sources (a leader replica that lost its leadership, or a
   * follower before it starts); {@link start} starts or resumes. Waits for the cycle in progress.
   */
  async pause(): Promise<void> {
    this.#paused = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#chain.catch(() => undefined);
  }

  /** False while paused (or never started): this loop refreshes nothing. */
  get running(): boolean {
    return this.#started && !this.#paused && !this.#stopped;
  }

  /** Starts the sources and runs the first cycle (bounded by `startupTimeoutMs`), then keeps cycling. */
  async start(): Promise<void> {
    if (this.#started && this.#paused && !this.#stopped) {
      // Resumed (a replica that leads again): one cycle now, then the usual schedule.
      this.#paused = false;
      void this.#enqueue(() => this.#cycle(true)).finally(() => this.#schedule());
      return;
    }
    if (this.#started) return;
    this.#started = true;
    this.#paused = false;
    for (const source of this.#o.sources) {
      this.#unsubscribes.push(source.subscribe(() => this.#trigger()));
    }
    await Promise.all(this.#o.sources.map((s) => s.start()));
    const first = this.#enqueue(() => this.#cycle(true));
    const bound = this.#o.startupTimeoutMs ?? 10_000;
    let timedOut = false;
    const timeout = new Promise<void>((resolve) => {
      const t = this.#clock.setTimer(() => {
        timedOut = true;
        resolve();
      }, bound);
      void first.finally(() => t.cancel());
    });
    await Promise.race([first, timeout]);
    if (timedOut && !this.#ready) {
      // Peers are slow: publish from what the cache already holds, without waiting for them.
      await this.#evaluate();
      this.#ready = true;
      this.#o.events?.emit({ type: 'alert', kind: 'startup-timeout', message: `discovery became ready after ${bound} ms without waiting for every peer` });
    }
    void first.finally(() => this.#schedule());
  }

  /** Runs one cycle now (after the one in progress, if any) and returns the current snapshot. */
  /** The sources the loop polls, in priority order (for the API: their state, problems and reports). */
  get sources(): readonly Source[] {
    return this.#o.sources;
  }

  async refreshNow(): Promise<Snapshot | undefined> {
    await this.#enqueue(() => this.#cycle(false));
    return this.current();
  }

  /** Publishes a snapshot the mass-removal guard is holding back, at the next cycle. */
  async confirmRemovals(): Promise<Snapshot | undefined> {
    this.#confirmRemovals = true;
    return this.refreshNow();
  }

  /**
   * The digest of the snapshot a guard is holding back (the one `confirmRemovals` would
   * publish), if any. Meanwhile the published snapshot carries every other change.
   */
  get held(): string | undefined {
    return this.#heldDigest;
  }

  /** The routing verdict of a published snapshot (when `routing` is configured; the last 64 publications). */
  routingOf(digest: string): RoutingVerdict | undefined {
    return this.#routingByDigest.get(digest);
  }

  /**
   * Forgets every routing verdict, so the next cycle evaluates again: call it when what routing
   * depends on outside the snapshot changed (the vocabulary's keywords and examples, the cases).
   */
  reevaluateRouting(): void {
    this.#routingByKey.clear();
  }

  /**
   * Keys of the alert conditions that hold now (each was raised once and is not resolved yet),
   * including `source-error:<id>` for each failing source (sources raise and resolve those).
   */
  get activeAlerts(): string[] {
    return [...this.#alerts.active, ...this.#o.sources.filter((s) => !s.current().ok).map((s) => `source-error:${s.id}`)];
  }

  /** Stops cycling, waits for the cycle in progress and closes the sources it started. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    for (const u of this.#unsubscribes.splice(0)) u();
    await this.#chain.catch(() => undefined);
    await Promise.all(this.#o.sources.map((s) => s.close()));
  }

  /** Everything known about each endpoint (admitted, gone within its grace period, or refused). */
  async status(): Promise<EndpointStatus[]> {
    const out: EndpointStatus[] = [];
    const now = this.#clock.now();
    const describe = async (ep: AdmittedEndpoint): Promise<EndpointStatus> => {
      const entry = await this.#o.cache.peek(ep.baseUrl);
      const failure = this.#o.cache.lastFailure(ep.baseUrl);
      const health = this.#health.get(ep.baseUrl);
      const verdict = this.#verdicts.get(ep.baseUrl);
      return {
        state: this.#states.get(ep.baseUrl) ?? { verdict: 'pending', reason: 'not evaluated yet', since: this.#clock.wallNow() },
        baseUrl: ep.baseUrl,
        sources: ep.sources,
        names: ep.records.map((r) => r.name),
        proposals: ep.records.map(proposalOf),
        admitted: true,
        ...(entry && {
          cache: {
            etag: entry.etag,
            expiresAt: entry.expiresAt,
            expiresInMs: Math.round(entry.expiresAt - now),
            failures: entry.failures,
            stale: entry.stale,
            usable: entry.usable,
            lastOutcome: entry.lastOutcome,
            lastError: entry.lastError,
            rawSha256: entry.rawSha256,
            canonicalSha256: entry.canonicalSha256,
            fetchedAtWall: entry.fetchedAtWall,
            validatedAtWall: entry.validatedAtWall,
            protocolVersion: entry.protocolVersion,
          },
        }),
        ...(failure && { lastFailure: { code: failure.error.code, message: failure.error.message, failures: failure.failures } }),
        ...(health && { health }),
        ...(verdict && { verdict }),
      };
    };
    for (const ep of this.#admitted) out.push(await describe(ep));
    for (const { endpoint } of this.#gone.values()) out.push(await describe(endpoint));
    for (const r of this.#refused) {
      out.push({
        state: this.#states.get(r.record.baseUrl) ?? { verdict: 'refused', reason: r.reason, since: this.#clock.wallNow() },
        baseUrl: r.record.baseUrl,
        sources: [r.record.source],
        names: [r.record.name],
        proposals: [proposalOf(r.record)],
        admitted: false,
        refusal: { code: r.code, reason: r.reason },
      });
    }
    return out;
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work, work);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  #schedule(): void {
    if (this.#stopped || this.#paused) return;
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(() => {
      void this.#enqueue(() => this.#cycle(false)).finally(() => this.#schedule());
    }, this.#o.cycleIntervalMs ?? 5_000);
  }

  /** A source changed: run a cycle soon, coalescing bursts. */
  #trigger(): void {
    if (this.#stopped || this.#paused || !this.#started || this.#pendingTrigger) return;
    this.#pendingTrigger = true;
    void this.#enqueue(async () => {
      this.#pendingTrigger = false;
      await this.#cycle(false);
    });
  }

  async #cycle(first: boolean): Promise<void> {
    if (this.#stopped || this.#paused) return;
    try {
      await this.#pollSources(first);
      this.#resolve();
      const entries = await this.#refreshCards();
      await this.#evaluate(entries);
      this.#ready = true;
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_INTERNAL');
      this.#o.events?.emit({ type: 'alert', kind: 'cycle-failed', message: `discovery cycle failed: ${e.message}` });
    }
  }

  async #pollSources(first: boolean): Promise<void> {
    const now = this.#clock.now();
    await Promise.all(
      this.#o.sources.map(async (source) => {
        const interval = source.pollIntervalMs;
        const due = this.#nextPollAt.get(source.id) ?? Number.NEGATIVE_INFINITY;
        if (!first && (interval === undefined || now < due)) return;
        if (first && source.current().synced) return;
        await source.refresh();
        if (interval !== undefined) this.#nextPollAt.set(source.id, now + interval);
      }),
    );
  }

  #resolve(): void {
    const inputs = this.#o.sources.map((s) => this.#recordsOf(s));
    if (sameLists(inputs, this.#resolvedFrom)) {
      // The same records resolve to the same admission: only the grace of gone endpoints runs on.
      this.#evictGone(this.#clock.now());
      return;
    }
    this.#resolvedFrom = inputs;
    this.#membershipChanged = true;
    const before = new Map(this.#admitted.map((e) => [e.baseUrl, e]));
    const refusedBefore = new Set(this.#refused.map((r) => `${r.record.source}\u0000${r.record.baseUrl}`));
    const { admitted, refused } = resolveEndpoints(inputs, this.#o.hostPolicy);
    const events = this.#o.events;
    const now = this.#clock.now();
    for (const ep of admitted) {
      if (this.#gone.delete(ep.baseUrl)) events?.emit({ type: 'endpoint.admitted', endpoint: ep.baseUrl, sources: ep.sources, reason: 'proposed again within its grace period; its cached card is kept' });
      else if (!before.has(ep.baseUrl)) events?.emit({ type: 'endpoint.admitted', endpoint: ep.baseUrl, sources: ep.sources });
      before.delete(ep.baseUrl);
    }
    for (const r of refused) {
      if (!refusedBefore.has(`${r.record.source}\u0000${r.record.baseUrl}`)) {
        events?.emit({ type: 'endpoint.refused', endpoint: r.record.baseUrl, sources: [r.record.source], code: r.code, reason: r.reason });
      }
    }
    // An endpoint no source proposes is never requested again; it is forgotten after the grace.
    for (const gone of before.values()) {
      events?.emit({ type: 'endpoint.gone', endpoint: gone.baseUrl, sources: gone.sources });
      this.#gone.set(gone.baseUrl, { at: now, endpoint: gone });
    }
    this.#admitted = admitted;
    this.#refused = refused;
    this.#evictGone(now);
  }

  /** A source's records, or the restored ones standing in for them until it has listed once. */
  #recordsOf(source: Source): readonly EndpointRecord[] {
    const state = source.current();
    if (this.#restoredRecords.size === 0) return state.records;
    const restored = this.#restoredRecords.get(source.id);
    if (restored === undefined) return state.records;
    if (!state.synced) return restored;
    this.#restoredRecords.delete(source.id);
    return state.records;
  }

  /** Forgets the endpoints gone for longer than the removal grace. */
  #evictGone(now: number): void {
    const events = this.#o.events;
    const grace = this.#o.removalGraceMs ?? 600_000;
    for (const [url, { at, endpoint }] of this.#gone) {
      if (now - at < grace) continue;
      this.#gone.delete(url);
      this.#membershipChanged = true;
      this.#health.forget(url);
      this.#nextResyncAt.delete(url);
      this.#states.delete(url);
      this.#alerts.resolveEndpoint(url);
      events?.emit({ type: 'endpoint.evicted', endpoint: url, sources: endpoint.sources });
      this.#o.cache.evict(url).catch((err: unknown) => {
        events?.emit({ type: 'alert', kind: 'cycle-failed', endpoint: url, message: `could not forget ${url}: ${err instanceof Error ? err.message : String(err)}` });
      });
    }
  }

  /**
   * Brings every admitted endpoint's card up to date (a fresh one is a hit) and returns the
   * entries, aligned with the admitted list (undefined where no card was ever obtained).
   */
  async #refreshCards(): Promise<{ admitted: readonly AdmittedEndpoint[]; entries: Array<CacheEntry | undefined> }> {
    const { cache } = this.#o;
    const resyncEvery = this.#o.resyncIntervalMs ?? 3_600_000;
    const now = this.#clock.now();
    const admitted = this.#admitted;
    const entries = new Array<CacheEntry | undefined>(admitted.length);
    const pending: Array<Promise<unknown>> = [];
    const keep = (i: number, p: Promise<CacheEntry>) => pending.push(p.then((e) => (entries[i] = e), () => undefined));
    for (let i = 0; i < admitted.length; i++) {
      const url = admitted[i]!.baseUrl;
      let resyncAt = this.#nextResyncAt.get(url);
      if (resyncAt === undefined) {
        // Spread resyncs over [0.5, 1] × the interval so they never come together.
        resyncAt = now + resyncEvery * (0.5 + 0.5 * this.#random());
        this.#nextResyncAt.set(url, resyncAt);
      }
      if (now >= resyncAt) {
        keep(
          i,
          cache.peek(url).then((seen) => {
            if (seen === undefined) return cache.get(url);
            this.#nextResyncAt.set(url, now + resyncEvery);
            return cache.refresh(url, { unconditional: true });
          }),
        );
      } else {
        // A fresh card needs no promise (most endpoints, most cycles).
        const fresh = cache.fresh(url);
        if (fresh !== undefined) entries[i] = fresh;
        else keep(i, cache.get(url));
      }
    }
    await Promise.all(pending);
    return { admitted, entries };
  }

  /** Reviewed agents: the records of static sources (their metadata carries description, tags, critical). */
  #reviewedAgents(): ReviewedAgent[] {
    const from = this.#o.sources.filter((s) => s.kind === 'static').map((s) => s.current().records);
    if (this.#reviewedCache !== undefined && sameLists(from, this.#reviewedCache.from)) return this.#reviewedCache.list;
    const list = this.#readReviewedAgents();
    this.#reviewedCache = { from, list };
    return list;
  }

  #readReviewedAgents(): ReviewedAgent[] {
    const out = new Map<string, ReviewedAgent>();
    for (const source of this.#o.sources) {
      if (source.kind !== 'static') continue;
      for (const r of source.current().records) {
        if (out.has(r.name)) continue;
        out.set(r.name, {
          source: r.source,
          name: r.name,
          description: r.metadata.description ?? '',
          tags: (r.metadata.tags ?? '').split(',').filter(Boolean),
          critical: r.metadata.critical === 'true',
        });
      }
    }
    return [...out.values()];
  }

  /** `known`: the cycle's entries from {@link refreshCards} (otherwise each is read from the cache). */
  async #evaluate(known?: { admitted: readonly AdmittedEndpoint[]; entries: ReadonlyArray<CacheEntry | undefined> }): Promise<void> {
    const { cache, events } = this.#o;
    const alerts = this.#alerts;
    const reviewedList = this.#reviewedAgents();
    const reviewed = new Map(reviewedList.map((r) => [r.name, r]));
    const staticEnter = this.#o.staticEnterAfter ?? 1;
    const candidates: Candidate[] = [];
    const admitted = this.#admitted;
    const entries = known !== undefined && known.admitted === admitted ? known.entries : undefined;
    for (let i = 0; i < admitted.length; i++) {
      const ep = admitted[i]!;
      const entry = entries !== undefined ? entries[i] : await cache.peek(ep.baseUrl);
      const reviewedRecord = ep.records.find((r) => reviewed.get(r.name)?.source === r.source);
      const critical = reviewedRecord ? reviewed.get(reviewedRecord.name)!.critical : false;
      // Failures are the cache's count of failed fetches: a cycle spent in backoff adds none.
      const failures = entry?.failures ?? cache.lastFailure(ep.baseUrl)?.failures ?? 0;
      const t = this.#health.observe(ep.baseUrl, { failures, usable: entry?.usable ?? false }, reviewedRecord ? { critical, enterAfter: staticEnter } : critical ? CRITICAL : NOT_CRITICAL);
      if (t) events?.emit({ type: 'health.changed', endpoint: ep.baseUrl, from: t.from, to: t.to, successes: t.status.successes, failures: t.status.failures });
      const status = this.#health.get(ep.baseUrl)!;
      if (status.state === 'removed') {
        alerts.raise(`removed:${ep.baseUrl}`, { kind: 'repeated-failures', endpoint: ep.baseUrl, message: `${ep.baseUrl} left new snapshots: ${status.reason}` });
      }
      if (critical && status.failures > 0) {
        const member = isMember(status.state);
        const kind = member ? 'critical-degraded' : 'critical-unavailable';
        alerts.raise(`${kind}:${ep.baseUrl}`, {
          kind,
          endpoint: ep.baseUrl,
          message: member
            ? `critical agent at ${ep.baseUrl} is degraded (${status.reason}); it stays in snapshots`
            : `critical agent at ${ep.baseUrl} has no usable card yet (${status.failures} failures); it joins as soon as one arrives`,
        });
      }
      // A member keeps its last card while it is degraded, even past the card's staleness when
      // it has not failed often enough to leave (or is critical).
      if (entry !== undefined && isMember(status.state)) candidates.push({ endpoint: ep, entry });
    }

    const degraded = candidates.map((c) => this.#health.get(c.endpoint.baseUrl)?.state === 'degraded');
    const last = this.#lastEvaluation;
    if (
      last !== undefined &&
      last.settledDigest !== undefined &&
      last.settledDigest === this.#store.current?.digest &&
      !this.#confirmRemovals &&
      last.reviewed === reviewedList &&
      sameCandidates(last.candidates, candidates) &&
      sameLists(last.degraded, degraded)
    ) {
      // Nothing the selection depends on changed: the same verdicts, the same snapshot, whose
      // lasting alerts (selection, routing) are raised again as an evaluation would.
      for (const a of last.selection.alerts) {
        alerts.raise(`${a.kind}:${a.endpoint ?? ''}`, { kind: a.kind, message: a.message, ...(a.endpoint !== undefined && { endpoint: a.endpoint }) });
      }
      await this.#routingOfCurrent(this.#store.current);
      this.#updateStates();
      alerts.settle();
      return;
    }
    const selection = selectAgents(candidates, { ...this.#o.select, reviewed: reviewedList, memo: this.#matchMemo });
    for (const [url, v] of selection.verdicts) {
      const prev = this.#verdicts.get(url);
      if (!prev || prev.verdict !== v.verdict || prev.localName !== v.localName) {
        events?.emit({
          type: 'match.verdict',
          endpoint: url,
          verdict: v.verdict,
          ...(v.localName !== undefined && { localName: v.localName }),
          ...('reason' in v && { reason: v.reason }),
        });
      }
    }
    this.#verdicts = selection.verdicts;
    for (const a of selection.alerts) {
      alerts.raise(`${a.kind}:${a.endpoint ?? ''}`, { kind: a.kind, message: a.message, ...(a.endpoint !== undefined && { endpoint: a.endpoint }) });
    }

    const settledDigest = await this.#publish(toSnapshotAgents(selection.selected, (url) => ({ degraded: this.#health.get(url)?.state === 'degraded' })));
    this.#lastEvaluation = { candidates, degraded, reviewed: reviewedList, selection, settledDigest };
    this.#updateStates();
    alerts.settle();
  }

  /**
   * Publishes the selection when its digest differs, holding back guarded removals only. Returns
   * the digest now current when that is the whole outcome (nothing held, deferred or refused), so
   * the next cycle may skip an identical evaluation; otherwise undefined.
   */
  async #publish(selected: SnapshotAgent[]): Promise<string | undefined> {
    const { events } = this.#o;
    const previous = this.#store.current;
    const version = (previous?.version ?? 0) + 1;
    const domains = this.#o.select.domains;
    const full = buildSnapshot(selected, version, this.#clock.wallNow(), domains);
    const confirmed = this.#confirmRemovals;
    const hold = this.#confirmRemovals ? undefined : this.#guard(previous, full);
    this.#confirmRemovals = false;
    // A held removal holds only the agents it concerns: they stay as they were published, and
    // every other addition and change goes out.
    let candidate = hold ? buildSnapshot([...selected, ...hold.keep], version, this.#clock.wallNow(), domains) : full;
    this.#heldDigest = hold ? full.digest : undefined;
    this.#heldNames = hold ? hold.keep.map((a) => a.localName) : NO_NAMES;
    if (hold) {
      this.#alerts.raise(`held:${this.#heldNames.join(',')}`, {
        kind: 'mass-removal',
        message: `${hold.reason}; held: ${this.#heldNames.join(', ')} stay in snapshots until an operator confirms (other changes are published)`,
        detail: { held: this.#heldNames },
      });
      if (this.#lastHeldDigest !== full.digest) {
        this.#lastHeldDigest = full.digest;
        events?.emit({ type: 'snapshot.held', version, digest: full.digest, ...(previous && { previousDigest: previous.digest }), agents: full.agents.map((a) => a.localName), reason: hold.reason });
      }
    } else this.#lastHeldDigest = undefined;
    await this.#routingOfCurrent(previous);
    if (previous && candidate.digest === previous.digest) {
      this.#lastRoutingHeld = undefined;
      return hold ? undefined : previous.digest;
    }
    const routing = await this.#routing(candidate, previous, confirmed);
    if (this.#clock.now() - this.#lastPublishAt < (this.#o.minPublishIntervalMs ?? 0)) return undefined;
    if (routing.hold) {
      // The gate keeps the current routing: the candidate is held, and only the card updates of
      // the current agents (same names, tags and domains) go out.
      if (!hold) this.#heldDigest = candidate.digest;
      if (!previous) return undefined;
      candidate = this.#withRoutingOf(previous, candidate, version);
      if (candidate.digest === previous.digest) return undefined;
    }
    try {
      await this.#o.beforePublish?.(candidate, previous);
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_INTERNAL', { stage: 'build' });
      this.#alerts.raise('publish-refused', { kind: 'publish-refused', message: `snapshot ${candidate.digest.slice(0, 12)} was not published: ${e.message}` });
      return undefined;
    }
    this.#lastPublishAt = this.#clock.now();
    this.#store.publish(candidate);
    const verdict = this.#routingByKey.get(routingKey(candidate)) ?? (previous && this.#routingByDigest.get(previous.digest));
    if (verdict) this.#routingByDigest.set(candidate.digest, verdict);
    // Kept for the last 64 publications (the API shows archived snapshots too), oldest dropped first.
    for (const digest of this.#routingByDigest.keys()) {
      if (this.#routingByDigest.size <= 64) break;
      this.#routingByDigest.delete(digest);
    }
    const diff = diffSnapshots(previous, candidate);
    events?.emit({ type: 'snapshot.published', version: candidate.version, digest: candidate.digest, ...(previous && { previousDigest: previous.digest }), agents: candidate.agents.map((a) => a.localName) });
    for (const c of diff.changed) {
      if (c.skillsAdded.length + c.skillsRemoved.length + c.skillsModified.length > 0) {
        events?.emit({
          type: 'alert',
          kind: 'skills-changed',
          message: `${c.localName}: skills changed (added ${c.skillsAdded.join(', ') || 'none'}; removed ${c.skillsRemoved.join(', ') || 'none'}; modified ${c.skillsModified.join(', ') || 'none'})`,
          detail: { ...c },
        });
      }
      if (c.endpointChanged) events?.emit({ type: 'alert', kind: 'endpoint-changed', message: `${c.localName}: interfaces changed`, detail: { ...c.endpointChanged } });
      if (c.securityChanged) events?.emit({ type: 'alert', kind: 'security-changed', message: `${c.localName}: security schemes or requirements changed` });
    }
    for (const listener of this.#listeners) {
      try {
        listener(candidate, diff);
      } catch {
        // A listener's failure never affects discovery.
      }
    }
    return hold || routing.hold ? undefined : candidate.digest;
  }

  /**
   * The routing verdict of `snapshot`, evaluated unless a snapshot with the same routing (names,
   * tags, domains, layout) was evaluated already; undefined without `routing` or when the
   * evaluation failed (alerted). `fresh` when it was evaluated now.
   */
  async #verdictFor(snapshot: Snapshot): Promise<{ verdict: RoutingVerdict; fresh: boolean } | undefined> {
    const check = this.#o.routing;
    if (!check) return undefined;
    const key = routingKey(snapshot);
    const known = this.#routingByKey.get(key);
    if (known) return { verdict: known, fresh: false };
    let verdict: RoutingVerdict;
    try {
      verdict = await check.evaluate(snapshot);
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_INTERNAL');
      this.#alerts.raise('routing-evaluation-failed', { kind: 'routing-evaluation-failed', message: `routing of snapshot ${snapshot.digest.slice(0, 12)} could not be evaluated: ${e.message}` });
      return undefined;
    }
    this.#routingByKey.set(key, verdict);
    for (const k of this.#routingByKey.keys()) {
      if (this.#routingByKey.size <= 16) break;
      this.#routingByKey.delete(k);
    }
    return { verdict, fresh: true };
  }

  /** Raises `routing-accuracy` for a failing verdict (in every evaluation while it holds). */
  #raiseRouting(snapshot: Snapshot, verdict: RoutingVerdict, held: boolean): void {
    if (verdict.passed) return;
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    this.#alerts.raise('routing-accuracy', {
      kind: 'routing-accuracy',
      message:
        `routing accuracy of snapshot ${snapshot.digest.slice(0, 12)} is ${pct(verdict.accuracy)} on ${verdict.evaluated} cases, below ${pct(verdict.minAccuracy)}` +
        `${verdict.summary ? ` (${verdict.summary})` : ''}${held ? '; held: the current routing stays until an operator confirms (card updates are published)' : ''}`,
      detail: { digest: snapshot.digest, accuracy: verdict.accuracy, minAccuracy: verdict.minAccuracy, held },
    });
  }

  /** The published snapshot's verdict: evaluated again after {@link reevaluateRouting}, alerted while it fails. */
  async #routingOfCurrent(current: Snapshot | undefined): Promise<void> {
    if (!current || !this.#o.routing) return;
    const r = await this.#verdictFor(current);
    if (!r) return;
    this.#routingByDigest.set(current.digest, r.verdict);
    if (r.fresh) this.#emitRouting(current, r.verdict, false);
    this.#raiseRouting(current, r.verdict, false);
  }

  #emitRouting(snapshot: Snapshot, verdict: RoutingVerdict, held: boolean): void {
    this.#o.events?.emit({
      type: 'routing.evaluated',
      version: snapshot.version,
      digest: snapshot.digest,
      accuracy: verdict.accuracy,
      minAccuracy: verdict.minAccuracy,
      passed: verdict.passed,
      evaluated: verdict.evaluated,
      held,
    });
  }

  /** Evaluates a candidate; returns whether the gate holds it (never without a current snapshot, nor once confirmed). */
  async #routing(candidate: Snapshot, previous: Snapshot | undefined, confirmed: boolean): Promise<{ hold: boolean }> {
    const r = await this.#verdictFor(candidate);
    if (!r) return { hold: false };
    const hold = !r.verdict.passed && this.#o.routing?.gate === true && previous !== undefined && !confirmed;
    if (r.fresh) this.#emitRouting(candidate, r.verdict, hold);
    this.#raiseRouting(candidate, r.verdict, hold);
    if (!hold) {
      this.#lastRoutingHeld = undefined;
    } else if (this.#lastRoutingHeld !== candidate.digest) {
      this.#lastRoutingHeld = candidate.digest;
      this.#o.events?.emit({
        type: 'snapshot.held',
        version: candidate.version,
        digest: candidate.digest,
        ...(previous && { previousDigest: previous.digest }),
        agents: candidate.agents.map((a) => a.localName),
        reason: `routing accuracy ${(r.verdict.accuracy * 100).toFixed(1)}% is below ${(r.verdict.minAccuracy * 100).toFixed(1)}%`,
      });
    }
    return { hold };
  }

  /** `previous`'s agents and layout, each agent with its card from `candidate` when its routing is unchanged there. */
  #withRoutingOf(previous: Snapshot, candidate: Snapshot, version: number): Snapshot {
    const next = new Map(candidate.agents.map((a) => [a.localName, a]));
    const agents = previous.agents.map((a) => {
      const n = next.get(a.localName);
      return n && n.domain === a.domain && n.tags.join('\u0000') === a.tags.join('\u0000') ? n : a;
    });
    return buildSnapshot(agents, version, this.#clock.wallNow(), previous.domains);
  }

  /** Which agents of `previous` must not be dropped yet (P12), and why; undefined to publish all. */
  #guard(previous: Snapshot | undefined, next: Snapshot): { reason: string; keep: SnapshotAgent[] } | undefined {
    if (!previous) return undefined;
    const kept = new Set(next.agents.map((a) => a.localName));
    const removed = previous.agents.filter((a) => !kept.has(a.localName));
    const share = this.#o.maxRemovalShare ?? 0.5;
    if (removed.length >= 2 && removed.length / previous.agents.length > share) {
      return {
        reason: `the new snapshot would drop ${removed.length} of ${previous.agents.length} agents (${removed.map((a) => a.localName).join(', ')}), more than ${Math.round(share * 100)}%`,
        keep: removed,
      };
    }
    const critical = removed.filter((a) => a.critical);
    if (critical.length > 0) return { reason: `the new snapshot would drop critical agent(s) ${critical.map((a) => a.localName).join(', ')}`, keep: critical };
    return undefined;
  }

  /** One verdict per endpoint, keeping the time each was entered. */
  #updateStates(): void {
    // While the endpoints stay the same, only the states that changed are written (most cycles
    // change none); otherwise the map is rebuilt. Both read the previous states only.
    if (!this.#membershipChanged && this.#computeStates(true)) return;
    this.#computeStates(false);
    this.#membershipChanged = false;
  }

  /**
   * Computes every endpoint's state from the previous ones. `inPlace`: writes only the changed
   * states, and only when every endpoint was set exactly once (otherwise returns false, nothing
   * written); else replaces the map.
   */
  #computeStates(inPlace: boolean): boolean {
    const wallNow = this.#clock.wallNow();
    const next = inPlace ? undefined : new Map<string, EndpointState>();
    const changes: Array<[string, EndpointState]> = [];
    let calls = 0;
    const set = (url: string, verdict: EndpointVerdict, reason: string) => {
      calls++;
      const prev = this.#states.get(url);
      // An unchanged state keeps its object.
      const state = prev !== undefined && prev.verdict === verdict && prev.reason === reason ? prev : { verdict, reason, since: prev?.verdict === verdict ? prev.since : wallNow };
      if (next !== undefined) next.set(url, state);
      else if (state !== prev) changes.push([url, state]);
    };
    const { published, held, selectedReason } = this.#publishedSets();
    const grace = this.#o.removalGraceMs ?? 600_000;
    for (const r of this.#refused) set(r.record.baseUrl, 'refused', r.reason);
    for (const [url, { at }] of this.#gone) {
      set(url, held.has(url) ? 'held' : 'gone', `no source proposes it any more; it is not requested and is forgotten in ${Math.max(0, Math.round((at + grace - this.#clock.now()) / 1000))} s`);
    }
    for (const ep of this.#admitted) {
      const url = ep.baseUrl;
      const health = this.#health.get(url);
      const v = this.#verdicts.get(url);
      if (held.has(url)) set(url, 'held', `its removal is held back by the guard (${health?.reason ?? 'not selected'}); confirm to publish it`);
      else if (!health || health.state === 'pending') set(url, 'pending', health?.reason ?? 'not evaluated yet');
      else if (health.state === 'removed') set(url, 'removed', health.reason);
      else if (v && v.verdict !== 'selected') set(url, v.verdict, 'reason' in v && v.reason !== undefined ? v.reason : v.verdict);
      else if (!published.has(url)) set(url, 'pending', 'selected; waiting for the next publication');
      else if (health.state === 'degraded') set(url, 'degraded', health.reason);
      else set(url, 'selected', selectedReason);
    }
    if (next !== undefined) {
      this.#states = next;
      return true;
    }
    if (calls !== this.#states.size) return false;
    for (const [url, state] of changes) this.#states.set(url, state);
    return true;
  }

  /** The current snapshot's endpoints and those held back, computed once per snapshot and hold. */
  #publishedSets(): { published: ReadonlySet<string>; held: ReadonlySet<string>; selectedReason: string } {
    const current = this.#store.current;
    const memo = this.#publishedMemo;
    if (memo !== undefined && memo.snapshot === current && memo.heldNames === this.#heldNames) return memo;
    const heldNames = this.#heldNames;
    this.#publishedMemo = {
      snapshot: current,
      heldNames,
      published: new Set(current?.agents.map((a) => a.baseUrl)),
      held: new Set(current?.agents.filter((a) => heldNames.includes(a.localName)).map((a) => a.baseUrl)),
      selectedReason: `in snapshot v${current?.version ?? 0}`,
    };
    return this.#publishedMemo;
  }
}

/** What routing depends on in a snapshot: agents' names, tags, criticality and domains, and the layout. */
function routingKey(snapshot: Snapshot): string {
  return JSON.stringify([snapshot.agents.map((a) => [a.localName, a.tags, a.critical, a.domain ?? null]), (snapshot.domains ?? []).map((d) => [d.name, d.description])]);
}

const NO_NAMES: readonly string[] = Object.freeze([]);
const CRITICAL = Object.freeze({ critical: true });
const NOT_CRITICAL = Object.freeze({ critical: false });

/** Whether two lists hold the same items (by identity) in the same order. */
function sameLists<T>(a: readonly T[], b: readonly T[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether two candidate lists name the same endpoints with the same cache entries. */
function sameCandidates(a: readonly Candidate[], b: readonly Candidate[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.endpoint !== b[i]!.endpoint || a[i]!.entry !== b[i]!.entry) return false;
  return true;
}

/** A record as the status shows it. */
function proposalOf(r: EndpointRecord): EndpointStatus['proposals'][number] {
  return { source: r.source, name: r.name, metadata: r.metadata };
}
