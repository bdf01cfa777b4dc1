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
 *
 * This module holds the lifecycle and the cycle; its parts do the steps: `refresh-schedule` (1,
 * 3), `membership` (2), `evaluator` (4, 5), `publisher` (6) with the `routing-gate`, and
 * `endpoint-views` (the state of each endpoint for the API).
 */
import type { CardCache } from '../cache/index.js';
import type { Clock, Random, TimerHandle } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { EventStream, OpenAlert } from '../events/index.js';
import type { CredentialsInput, HostPolicy } from '../fetch/index.js';
import type { HealthOptions } from '../health/index.js';
import { HealthTracker } from '../health/index.js';
import type { SelectOptions } from '../match/index.js';
import type { AdmittedEndpoint } from '../resolve/index.js';
import type { Snapshot, SnapshotSummary } from '../snapshot/index.js';
import { SnapshotStore } from '../snapshot/index.js';
import type { Source } from '../sources/index.js';
import { AlertBook } from './alert-book.js';
import type { EndpointStatus } from './endpoint-views.js';
import { EndpointViews } from './endpoint-views.js';
import { Evaluator } from './evaluator.js';
import { Membership } from './membership.js';
import type { SnapshotListener } from './publisher.js';
import type { CallHealth } from '../health/index.js';
import type { RolloutPolicy, RolloutState } from '../rollout/rollouts.js';
import { Rollouts } from '../rollout/rollouts.js';
import { Publisher } from './publisher.js';
import type { RefreshedCards } from './refresh-schedule.js';
import { RefreshSchedule } from './refresh-schedule.js';
import type { RoutingVerdict } from './routing-gate.js';
import { RoutingGate } from './routing-gate.js';
import { HEALTH_DEFAULTS, LOOP_DEFAULTS } from '../rules/defaults.js';
import type { Lookalike, LookalikePolicy } from '../rules/lookalike.js';
import { ATTR, SPAN, spanError, withSpan } from '../telemetry/index.js';

export interface DiscoveryLoopOptions {
  sources: readonly Source[];
  hostPolicy: HostPolicy;
  cache: CardCache;
  /** Needs, vocabulary, required capabilities, tenant policy, cap. */
  select: Omit<SelectOptions, 'reviewed'>;
  /**
   * The peers' credentials, the same the card fetcher and the remote agents use: an agent whose
   * card requires a security scheme they cannot present to its chosen interface's origin is
   * excluded (`unauthorized: needs … for https://…`) instead of failing every chat. Without
   * credentials nothing can be presented, so only cards that require something are excluded.
   */
  credentials?: CredentialsInput;
  /** Entry and leave thresholds (see {@link HealthTracker}); `enterAfter` also damps alert resolution. */
  health?: HealthOptions;
  /** Good observations before a static (reviewed) agent enters. Default 1. */
  staticEnterAfter?: number;
  /**
   * Health from real calls: the figures the session runner (and the active check) record. Failing
   * calls degrade an agent and, after `health.callLeaveAfter` in a row, leave it out of new snapshots.
   */
  calls?: CallHealth;
  /**
   * Staged rollouts (docs/rollouts.md): a breaking change reaches new sessions step by step and is
   * rolled back when its calls fail. Absent (or `trigger: 'off'`): every change is published at once.
   */
  rollout?: Partial<RolloutPolicy>;
  /**
   * An agent whose name or identifier looks like one an earlier agent of another origin has
   * (docs/security.md): `flag` (default) raises a `lookalike` alert and sets its status'
   * `lookalike`; `exclude` also keeps it out of snapshots.
   */
  lookalikes?: LookalikePolicy;
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

/** What {@link DiscoveryLoop.reconfigure} changes; what is not given stays. */
export interface LoopReconfiguration {
  /** Needs, vocabulary, required capabilities, tenant policy, cap (the routing domains stay). */
  select?: Omit<SelectOptions, 'reviewed' | 'domains'>;
  /** The sources from now on, in priority order (the same objects for those that stay). */
  sources?: readonly Source[];
  /** True when the host policy was changed in place: every record is resolved again. */
  admission?: boolean;
  /** True when the peers' credentials were changed in place: what each card requires is judged again. */
  credentials?: boolean;
}

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
  readonly #health: HealthTracker;
  readonly #store: SnapshotStore;
  readonly #alerts: AlertBook;
  readonly #members: Membership;
  readonly #refresh: RefreshSchedule;
  readonly #gate: RoutingGate;
  readonly #publisher: Publisher;
  readonly #views: EndpointViews;
  readonly #evaluator: Evaluator;
  readonly #rollouts: Rollouts | undefined;
  #offCalls: (() => void) | undefined;
  /** Each source's unsubscription, by source. */
  readonly #unsubscribes = new Map<Source, () => void>();
  /** The sources in priority order; the parts read this one array, so {@link reconfigure} changes it in place. */
  readonly #sources: Source[];
  #chain: Promise<unknown> = Promise.resolve();
  /** The evaluation in progress (see {@link #evaluate}). */
  #evaluation: Promise<unknown> = Promise.resolve();
  #timer: TimerHandle | undefined;
  #ready = false;
  #started = false;
  #stopped = false;
  /** A follower replica's loop, or a leader's that lost its leadership: no cycle runs. */
  #paused = false;
  #pendingTrigger = false;

  constructor(options: DiscoveryLoopOptions) {
    this.#o = options;
    const { cache, events } = options;
    const sources = (this.#sources = [...options.sources]);
    const clock = (this.#clock = options.clock ?? systemClock);
    const removalGraceMs = options.removalGraceMs ?? LOOP_DEFAULTS.removalGraceMs;
    const health = (this.#health = new HealthTracker(options.health, clock));
    const store = (this.#store = options.snapshots ?? new SnapshotStore());
    const rollouts = options.rollout !== undefined && options.rollout.trigger !== 'off' ? (this.#rollouts = new Rollouts({ policy: options.rollout, snapshots: store, clock, events })) : undefined;
    if (rollouts !== undefined && options.calls !== undefined) this.#offCalls = options.calls.onCall((call) => rollouts.record(call));
    const alerts = (this.#alerts = new AlertBook(events, { clearAfter: options.health?.enterAfter ?? HEALTH_DEFAULTS.enterAfter }));
    const members = (this.#members = new Membership({ sources, hostPolicy: options.hostPolicy, clock, events, removalGraceMs }));
    this.#evaluator = new Evaluator({ sources, cache, select: options.select, ...(options.credentials !== undefined && { credentials: options.credentials }), health, alerts, events, ...(options.calls !== undefined && { calls: options.calls }), staticEnterAfter: options.staticEnterAfter ?? HEALTH_DEFAULTS.staticEnterAfter, ...(options.lookalikes !== undefined && { lookalikes: options.lookalikes }) });
    this.#refresh = new RefreshSchedule({ sources, cache, clock, random: options.random ?? systemRandom, resyncIntervalMs: options.resyncIntervalMs ?? LOOP_DEFAULTS.resyncIntervalMs });
    const gate = (this.#gate = new RoutingGate({ routing: options.routing, clock, events, alerts }));
    this.#publisher = new Publisher({
      store,
      gate,
      alerts,
      events,
      clock,
      domains: options.select.domains,
      maxRemovalShare: options.maxRemovalShare ?? LOOP_DEFAULTS.maxRemovalShare,
      minPublishIntervalMs: options.minPublishIntervalMs ?? LOOP_DEFAULTS.minPublishIntervalMs,
      beforePublish: (next, previous) => options.beforePublish?.(next, previous),
      rollouts,
    });
    const access = { judge: options.hostPolicy, ...(options.credentials !== undefined && { credentials: options.credentials }) };
    this.#views = new EndpointViews({ members, health, cache, store, clock, removalGraceMs, access });
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
    return this.#publisher.subscribe(listener);
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
    const agents = state.current?.agents ?? [];
    for (const a of agents) this.#health.restore(a.baseUrl, { critical: a.critical });
    this.#members.restore(agents);
  }

  /**
   * Makes a snapshot another replica published current here (a follower: it runs no cycle), after
   * the `beforePublish` warm-up, with the same event and listeners as a publication of its own.
   * The database's current snapshot is the truth: any other digest is adopted. Returns whether
   * it became current; the loop is ready once it holds a snapshot this way.
   */
  async adopt(snapshot: Snapshot): Promise<boolean> {
    if (this.#store.current?.digest === snapshot.digest) {
      this.#ready = true;
      return false;
    }
    return this.#publisher.adopt(snapshot, () => {
      // Its agents are members: a follower that takes over keeps serving them under the usual rules.
      for (const a of snapshot.agents) this.#health.restore(a.baseUrl, { critical: a.critical });
      this.#ready = true;
    });
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
    for (const source of this.#sources) this.#unsubscribes.set(source, source.subscribe(() => this.#trigger()));
    await Promise.all(this.#sources.map((s) => s.start()));
    const first = this.#enqueue(() => this.#cycle(true));
    const bound = this.#o.startupTimeoutMs ?? LOOP_DEFAULTS.startupTimeoutMs;
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

  /** The sources the loop polls, in priority order (for the API: their state, problems and reports). */
  get sources(): readonly Source[] {
    return this.#sources;
  }

  /** Runs one cycle now (after the one in progress, if any) and returns the current snapshot. */
  async refreshNow(): Promise<Snapshot | undefined> {
    await this.#enqueue(() => this.#cycle(false));
    return this.current();
  }

  /** The staged rollouts (undefined when every change is published at once). */
  get rollouts(): Rollouts | undefined {
    return this.#rollouts;
  }

  /**
   * An operator's decision on the rollout in progress: `hold` or `resume` its steps, `promote`
   * its candidate now, or `rollback`. Carried out in the loop's order (after the cycle in
   * progress). Returns the rollout as it stands after, or undefined when none is in progress.
   */
  async decideRollout(decision: 'hold' | 'resume' | 'promote' | 'rollback', by: string): Promise<RolloutState | undefined> {
    return this.#enqueue(async () => {
      const rollouts = this.#rollouts;
      const active = rollouts?.active;
      if (rollouts === undefined || active === undefined) return undefined;
      if (decision === 'hold' || decision === 'resume') return rollouts.hold(by, decision === 'hold');
      rollouts.request(decision, by);
      await this.#publisher.advanceRollout();
      return rollouts.history.at(-1);
    });
  }

  /** Publishes a snapshot the mass-removal guard is holding back, at the next cycle. */
  async confirmRemovals(): Promise<Snapshot | undefined> {
    this.#publisher.confirm();
    return this.refreshNow();
  }

  /**
   * The digest of the snapshot a guard is holding back (the one `confirmRemovals` would
   * publish), if any. Meanwhile the published snapshot carries every other change.
   */
  get held(): string | undefined {
    return this.#publisher.held;
  }

  /** The routing verdict of a published snapshot (when `routing` is configured; the last 64 publications). */
  routingOf(digest: string): RoutingVerdict | undefined {
    return this.#gate.verdictOf(digest);
  }

  /**
   * Forgets every routing verdict, so the next cycle evaluates again: call it when what routing
   * depends on outside the snapshot changed (the vocabulary's keywords and examples, the cases).
   */
  reevaluateRouting(): void {
    this.#gate.reevaluate();
  }

  /**
   * Applies new settings without a restart (a configuration reload), after the cycle in progress,
   * then runs a cycle and returns the current snapshot. `select`: needs, vocabulary, required
   * capabilities, tenant and cap from now on (routing domains stay as built); every card is
   * matched again and the routing evaluated again. `sources`: the sources from now on, in
   * priority order: new ones are started and listed, ones no longer given are closed, so their
   * endpoints leave by the usual rules (gone, then forgotten after the removal grace).
   * `admission`: the host policy's rules changed in place (`HostPolicy.update`), so every record
   * is resolved again: an endpoint no longer allowed leaves like one no source proposes.
   * Sessions stay pinned to their snapshots; the published one stays until a new one is.
   */
  async reconfigure(change: LoopReconfiguration): Promise<Snapshot | undefined> {
    await this.#enqueue(async () => {
      if (change.sources !== undefined) await this.#replaceSources(change.sources);
      if (change.select !== undefined) this.#evaluator.reselect({ ...change.select, ...(this.#o.select.domains !== undefined && { domains: this.#o.select.domains }) });
      if (change.admission === true || change.sources !== undefined) this.#members.invalidate();
      if (change.credentials === true) {
        this.#evaluator.rejudge();
        this.#views.forgetAccess();
      }
      this.#gate.reevaluate();
      // A follower's (or a paused leader's) loop runs no cycle: the leader publishes.
      await this.#cycle(true);
    });
    return this.current();
  }

  async #replaceSources(next: readonly Source[]): Promise<void> {
    const keep = new Set(next);
    const removed = this.#sources.filter((s) => !keep.has(s));
    const added = next.filter((s) => !this.#sources.includes(s));
    this.#sources.splice(0, this.#sources.length, ...next);
    for (const s of removed) {
      this.#unsubscribes.get(s)?.();
      this.#unsubscribes.delete(s);
    }
    await Promise.all(removed.map((s) => s.close()));
    if (!this.#started || this.#stopped) return;
    for (const s of added) this.#unsubscribes.set(s, s.subscribe(() => this.#trigger()));
    await Promise.all(added.map((s) => s.start()));
  }

  /**
   * Keys of the alert conditions that hold now (each was raised once and is not resolved yet),
   * including `source-error:<id>` for each failing source (sources raise and resolve those).
   */
  get activeAlerts(): string[] {
    return [...this.#alerts.active, ...this.#sources.filter((s) => !s.current().ok).map((s) => `source-error:${s.id}`)];
  }

  /**
   * Takes over the lasting alerts an earlier process raised and did not resolve, as a durable
   * journal holds them (the newest `alert` per key with no later `alert.resolved`): at a restart
   * (before {@link start}) or when a replica takes over as leader. None is raised again: a
   * condition that still holds stays one open alert; one that cleared meanwhile is resolved, with
   * its original `raisedAt`, after the usual absences — a `source-error:<id>` by its source's next
   * good list (a source with `carryError`; otherwise, or for a source no longer configured, like
   * the others). Replaces the loop's own open alerts: the journal is
   * the truth.
   */
  carryAlerts(open: readonly OpenAlert[]): void {
    const book: OpenAlert[] = [];
    for (const a of open) {
      // A source error goes to its source; one of a source no longer configured resolves here.
      const source = a.key.startsWith('source-error:') ? this.#sources.find((s) => `source-error:${s.id}` === a.key) : undefined;
      if (source?.carryError) source.carryError({ raisedAt: a.raisedAt, message: a.message });
      else book.push(a);
      // A repeated-failures endpoint stays out until it recovers (its alert holds until then).
      if (a.key.startsWith('removed:')) this.#health.restore(a.key.slice('removed:'.length), { removed: true });
    }
    this.#alerts.carry(book);
  }

  /** Stops cycling, waits for the cycle in progress and closes the sources it started. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    for (const u of this.#unsubscribes.values()) u();
    this.#unsubscribes.clear();
    await this.#chain.catch(() => undefined);
    this.#offCalls?.();
    this.#rollouts?.close();
    await Promise.all(this.#sources.map((s) => s.close()));
  }

  /**
   * Whether an agent of `origin` going by `names` (a card's name, a catalog identifier) looks like
   * an agent this loop admitted from another origin, one that arrived before it: the service's
   * inspector asks about a card nothing admitted yet. No I/O.
   */
  lookalikeOf(origin: string, names: readonly string[]): Lookalike | undefined {
    return this.#evaluator.lookalikeOf(origin, names);
  }

  /**
   * The bytes the lookalike index's lists of postings reserve: typed arrays, outside the
   * JavaScript heap, about 500 B per agent of two names (`a2a_discovery_lookalike_index_bytes`).
   */
  get lookalikeBytes(): number {
    return this.#evaluator.lookalikeBytes;
  }

  /** Everything known about each endpoint (admitted, gone within its grace period, or refused). */
  async status(): Promise<EndpointStatus[]> {
    return this.#views.status(this.#evaluator.verdicts, this.#evaluator.lookalikes);
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
    }, this.#o.cycleIntervalMs ?? LOOP_DEFAULTS.cycleIntervalMs);
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
    // A new trace per cycle (root), whatever started it: the timer, a source's change, refreshNow().
    await withSpan(SPAN.cycle, { root: true }, async (span) => {
      try {
        const sources = await this.#refresh.pollSources(first);
        for (const [url, { endpoint }] of await this.#members.resolve()) this.#forget(url, endpoint);
        const admitted = this.#members.admitted;
        const entries = await this.#refresh.refreshCards(admitted);
        if (span.recording) span.set({ [ATTR.dueSources]: sources, [ATTR.endpoints]: admitted.length, [ATTR.due]: admitted.length - entries.hits, [ATTR.cacheHits]: entries.hits });
        await this.#evaluate(entries);
        this.#ready = true;
      } catch (err) {
        const e = toDiscoveryError(err, 'ERR_INTERNAL');
        span.fail(spanError(e));
        this.#o.events?.emit({ type: 'alert', kind: 'cycle-failed', message: `discovery cycle failed: ${e.message}` });
      }
    });
  }

  /** Forgets an endpoint gone for longer than the removal grace: its health, schedule, state, whether it once fitted, alerts and cached card. */
  #forget(url: string, endpoint: AdmittedEndpoint): void {
    const events = this.#o.events;
    this.#health.forget(url);
    this.#o.calls?.forget(url);
    this.#refresh.forget(url);
    this.#views.forget(url);
    this.#evaluator.forget(url);
    this.#alerts.resolveEndpoint(url);
    events?.emit({ type: 'endpoint.evicted', endpoint: url, sources: endpoint.sources });
    this.#o.cache.evict(url).catch((err: unknown) => {
      events?.emit({ type: 'alert', kind: 'cycle-failed', endpoint: url, message: `could not forget ${url}: ${err instanceof Error ? err.message : String(err)}` });
    });
  }

  /** Health, selection and publication. `known`: the cycle's cards (otherwise each is read from the cache). */
  #evaluate(known?: RefreshedCards): Promise<void> {
    // One evaluation at a time: the startup bound's evaluation runs outside the cycles' order,
    // and an evaluation runs in slices (a cycle's could otherwise start between two of them).
    const run = this.#evaluation.then(() => this.#evaluateNow(known));
    this.#evaluation = run.catch(() => undefined);
    return run;
  }

  async #evaluateNow(known?: RefreshedCards): Promise<void> {
    const admitted = this.#members.admitted;
    const entries = known !== undefined && known.admitted === admitted ? known.entries : undefined;
    // The last selection is reused while its publication stands (and no confirmation is pending).
    const selected = await this.#evaluator.evaluate(admitted, entries, (settled) => settled === this.#store.current?.digest && !this.#publisher.confirming);
    if (selected === undefined) await this.#gate.checkCurrent(this.#store.current);
    else this.#evaluator.settle(await this.#publisher.publish(selected));
    if (this.#rollouts?.active !== undefined && (await this.#publisher.advanceRollout()) !== undefined) this.#evaluator.settle(undefined);
    await this.#views.update(this.#evaluator.verdicts, this.#publisher.heldNames);
    this.#alerts.settle();
  }
}
