/**
 * The service's metrics, defined once ({@link METRICS}) and written to two outputs:
 *
 * - Prometheus (`/metrics`), on a registry of our own (never prom-client's global one);
 * - the OpenTelemetry metrics API (`metrics.getMeter('a2a-discovery')`): counters, histograms,
 *   observable counters and gauges. Without a MeterProvider registered (before the service starts)
 *   that side is a no-op.
 *
 * Both are fed by the discovery event stream plus readings taken at collection (a scrape, or a
 * metric reader's collection). The OpenTelemetry name follows from the Prometheus one
 * ({@link otelName}): `a2a_discovery.` for the prefix, no `_total` on a counter, no `_seconds` on
 * an instrument of unit `s` — so an OpenTelemetry → Prometheus export (dots to underscores, the
 * unit and `_total` suffixes added) gives the same series. docs/observability.md "Metrics".
 */
import { metrics as otelMetrics } from '@opentelemetry/api';
import type { Attributes, Counter as OtelCounter, Histogram as OtelHistogram, Meter, ObservableCallback, ObservableCounter, ObservableGauge } from '@opentelemetry/api';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentCallHealth, CardCache, DiscoveryLoop } from 'a2a-discovery';
import type { OriginBudgetStats } from 'a2a-discovery/internal';
import { DiscoveryError, type DiscoveryEvent, type EventStream } from 'a2a-discovery';
import { INSTRUMENTATION_SCOPE, occurrences } from 'a2a-discovery/internal';
import type { TreeFactory } from 'a2a-discovery/adk';
import type { StoreStatus, ReplicaStatus } from '@a2a-discovery/store';
import type { RefusalReason } from '../http/limits.js';

/**
 * How a metric is fed and what it is in each output: `counter` and `histogram` are fed by events;
 * `gauge` and `observed-counter` (a cumulative count kept elsewhere, a monotonic observable counter
 * in OpenTelemetry) are read at collection.
 */
type MetricKind = 'counter' | 'histogram' | 'gauge' | 'observed-counter';

interface MetricDefinition {
  /** The Prometheus name; a counter's ends in `_total`, one of unit `s` in `_seconds`. */
  readonly name: string;
  readonly help: string;
  readonly kind: MetricKind;
  /** The UCUM unit of the OpenTelemetry instrument (`s`: seconds); none for counts and ratios. */
  readonly unit?: 's';
  /** Label names in Prometheus, attribute keys in OpenTelemetry. */
  readonly labels?: readonly string[];
  /** Histogram bucket bounds (Prometheus buckets, OpenTelemetry explicit bucket boundaries advice). */
  readonly buckets?: readonly number[];
}

const P = 'a2a_discovery_';

/** Every metric of the service, once. */
const METRICS = {
  cardFetches: { name: `${P}card_fetches_total`, kind: 'counter', help: 'Card cache decisions that reached the network, by outcome.', labels: ['outcome'] },
  cardCacheHits: { name: `${P}card_cache_hits_total`, kind: 'counter', help: 'Card reads served fresh from the cache without a request.' },
  cardNotModified: { name: `${P}card_not_modified_total`, kind: 'counter', help: 'Conditional card requests answered 304 Not Modified.' },
  cardFailures: { name: `${P}card_failures_total`, kind: 'counter', help: 'Failed card refreshes, by error code.', labels: ['code'] },
  cardFetchDuration: { name: `${P}card_fetch_duration_seconds`, kind: 'histogram', unit: 's', help: 'Duration of card requests.', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] },
  snapshotPublications: { name: `${P}snapshot_publications_total`, kind: 'counter', help: 'Snapshots published.' },
  snapshotsHeld: { name: `${P}snapshots_held_total`, kind: 'counter', help: 'Snapshots held back by a guard.' },
  alerts: { name: `${P}alerts_total`, kind: 'counter', help: 'Alerts raised, by kind.', labels: ['kind'] },
  treeEvictions: { name: `${P}tree_evictions_total`, kind: 'counter', help: 'Agent trees evicted after their last pinned session.' },
  alertsResolved: { name: `${P}alerts_resolved_total`, kind: 'counter', help: 'Alert conditions that cleared, by kind.', labels: ['kind'] },
  sessionEvents: {
    name: `${P}session_events_total`,
    kind: 'counter',
    help: 'Session lifecycle events: pinned, upgraded, ended, expired (idle, history deleted), restarted (returned after expiry).',
    labels: ['event'],
  },
  storeUp: { name: `${P}store_up`, kind: 'gauge', help: 'Whether the state store answered its last read or write (1) or failed (0), by engine.', labels: ['kind'] },
  storeWrites: { name: `${P}store_writes`, kind: 'gauge', help: 'Write transactions the state store completed since the process started (a batch of card entries is one).' },
  storeFailedWrites: { name: `${P}store_failed_writes`, kind: 'gauge', help: 'Writes the state store failed since the process started.' },
  journalPruned: {
    name: `${P}journal_pruned_total`,
    kind: 'observed-counter',
    help: 'Journal rows deleted before their age to keep a type\'s quota (retention.journalMaxEventsPerType) or the total cap (retention.journalMaxEvents), by event type.',
    labels: ['type'],
  },
  journalDroppedEvents: { name: `${P}journal_dropped_events`, kind: 'gauge', help: 'Journal events dropped because the state store could not keep up.' },
  activityEndpoints: { name: `${P}activity_endpoints`, kind: 'gauge', help: 'Endpoints whose cache chatter /api/activity counts now (freed when discovery evicts them).' },
  activityEndpointsDropped: { name: `${P}activity_endpoints_dropped`, kind: 'gauge', help: 'Endpoints whose activity counters were dropped to make room for another: idle for the whole five-minute window while the bound (server.limits.activityEndpoints) was reached.' },
  activityEventsUncounted: {
    name: `${P}activity_events_uncounted_total`,
    kind: 'observed-counter',
    help: 'Cache chatter events of endpoints /api/activity does not count: the bound (server.limits.activityEndpoints) was reached and no endpoint counted was idle.',
  },
  // Labelled by caller (discovery, inspector), not by origin: a wildcard allowlist admits origins without bound.
  upstreamBudgetExhausted: {
    name: `${P}upstream_budget_exhausted_total`,
    kind: 'observed-counter',
    help: 'Upstream requests not made because their origin\'s request budget (cache.originRequestsPerSecond, cache.originBurst) was spent, by caller.',
    labels: ['caller'],
  },
  upstreamBudgetWaits: { name: `${P}upstream_budget_waits_total`, kind: 'observed-counter', help: 'Upstream requests that waited for their origin\'s turn under the request budget, by caller.', labels: ['caller'] },
  upstreamBudgetOrigins: { name: `${P}upstream_budget_origins`, kind: 'gauge', help: 'Origins whose request budget is tracked now (idle ones are freed).' },
  upstreamBudgetOriginsDropped: {
    name: `${P}upstream_budget_origins_dropped_total`,
    kind: 'observed-counter',
    help: 'Origin budgets dropped before they were idle because more origins were tracked than the bound allows.',
  },
  // Labelled by the peer's origin: only configured `credentials:` entries request tokens, so the set is bounded.
  peerTokenRequests: {
    name: `${P}peer_token_requests_total`,
    kind: 'observed-counter',
    help: 'Token requests of the peers\' credentials (oauth2, google-id-token), by peer origin and outcome (issued, failed).',
    labels: ['origin', 'outcome'],
  },
  federationRequests: {
    name: `${P}federation_requests_total`,
    kind: 'observed-counter',
    help: 'Registries a federated search (federation: auto) asked or passed over, by outcome (answered, failed, timeout, refused, skipped).',
    labels: ['outcome'],
  },
  replicaLeader: { name: `${P}replica_leader`, kind: 'gauge', help: 'Whether this replica leads (1: it runs the sources and refreshes cards) or follows (0).' },
  replicaEpoch: { name: `${P}replica_epoch`, kind: 'gauge', help: 'The fencing epoch: this replica\'s while it leads, else the last one read from the database.' },
  replicaLag: { name: `${P}replica_lag_seconds`, kind: 'gauge', unit: 's', help: 'How long this replica has served another snapshot than the database\'s current one (0 in sync).' },
  replicaInSync: { name: `${P}replica_in_sync`, kind: 'gauge', help: 'Whether this replica serves the database\'s current snapshot (1) or not yet (0).' },
  replicaConnected: { name: `${P}replica_connected`, kind: 'gauge', help: 'Whether the replica\'s dedicated PostgreSQL connection (leader lock, LISTEN) is up.' },
  replicaRefusesToLead: { name: `${P}replica_refuses_to_lead`, kind: 'gauge', help: 'Whether this replica refuses to lead (1) because the database\'s schema is newer than its build (a rolling upgrade: /readyz says why).' },
  activeAlerts: { name: `${P}active_alerts`, kind: 'gauge', help: 'Alert conditions that hold now (raised and not yet resolved).' },
  builtTrees: { name: `${P}built_trees`, kind: 'gauge', help: 'Agent trees built and kept (current, pinned, or about to be published).' },
  lookalikeIndexBytes: { name: `${P}lookalike_index_bytes`, kind: 'gauge', help: 'Bytes the lookalike index\'s lists of postings reserve (typed arrays, outside the JavaScript heap; freed as agents leave).' },
  routingAccuracy: { name: `${P}routing_accuracy`, kind: 'gauge', help: 'Routing accuracy (0-1) of the current snapshot on the labelled cases; absent when routing is not evaluated.' },
  catalogReads: {
    name: `${P}catalog_reads_total`,
    kind: 'counter',
    help: 'AI Catalog documents read with a request (or refused), by outcome (changed, unchanged, revalidated, stale, invalid, failed, refused).',
    labels: ['outcome'],
  },
  routingEvaluations: { name: `${P}routing_evaluations_total`, kind: 'counter', help: 'Routing evaluations of candidate snapshots, by result (passed, failed, held).', labels: ['result'] },
  snapshotVersion: { name: `${P}snapshot_version`, kind: 'gauge', help: 'Version of the current snapshot (0 before the first).' },
  cardStaleEntries: { name: `${P}card_stale_entries`, kind: 'gauge', help: 'Cached cards currently served stale.' },
  cardFetchesInFlight: {
    name: `${P}card_fetches_in_flight`,
    kind: 'gauge',
    help: 'Card fetches in flight now (at most cache.maxConcurrentFetches; cache.maxConcurrentFetchesDuringTurns start while a conversation turn runs).',
  },
  cardFetchesWaiting: { name: `${P}card_fetches_waiting`, kind: 'gauge', help: 'Card refreshes waiting for a fetch slot now.' },
  pinnedSessions: { name: `${P}pinned_sessions`, kind: 'gauge', help: 'Sessions pinned to a snapshot.' },
  retainedSnapshots: { name: `${P}retained_snapshots`, kind: 'gauge', help: 'Snapshots retained (current plus pinned).' },
  httpRefusals: { name: `${P}http_refusals_total`, kind: 'counter', help: 'Requests refused or cut by the service\'s checks and limits, by reason (docs/security.md).', labels: ['reason'] },
  registryEntries: { name: `${P}registry_entries`, kind: 'gauge', help: 'Entries in the registry index (admitted cards; docs/registry-api.md).' },
  registryLeftOut: { name: `${P}registry_left_out`, kind: 'gauge', help: 'Admitted cards the registry index leaves out past server.registry.maxEntries.' },
  sseStreams: { name: `${P}sse_streams`, kind: 'gauge', help: 'Open /api/stream connections.' },
  configReloads: { name: `${P}config_reloads_total`, kind: 'counter', help: 'Configuration reloads (SIGHUP, POST /api/config/reload, config.watch), by result (applied, refused).', labels: ['result'] },
  draining: { name: `${P}draining`, kind: 'gauge', help: 'Whether the service is draining (1: shutting down, /readyz unready, new sessions and turns refused) or not (0).' },
  drainAbortedTurns: { name: `${P}drain_aborted_turns_total`, kind: 'observed-counter', help: 'Chat turns aborted because they did not finish within server.drainTimeoutMs of a drain.' },
  rolloutDecisions: {
    name: `${P}rollout_decisions_total`,
    kind: 'counter',
    help: 'Decisions of staged rollouts (docs/rollouts.md), by action (started, advanced, held, resumed, promoted, rolled-back, superseded, withdrawn).',
    labels: ['action'],
  },
  rolloutShare: { name: `${P}rollout_share`, kind: 'gauge', help: 'Share of new sessions (percent) assigned to the candidate of the rollout in progress; 0 without one.' },
  rolloutStep: { name: `${P}rollout_step`, kind: 'gauge', help: 'Step (1-based) of the rollout in progress; 0 without one.' },
  // Labelled by the agent's local name: the agents discovery holds (freed when it forgets one).
  agentCalls: { name: `${P}agent_calls_total`, kind: 'observed-counter', help: 'A2A calls of each agent (turns and active checks), by outcome (ok, error).', labels: ['agent', 'outcome'] },
  agentCallFailuresInARow: { name: `${P}agent_call_failures_in_a_row`, kind: 'gauge', help: "Failed A2A calls in a row of each agent (health.callLeaveAfter of them leave new snapshots).", labels: ['agent'] },
} as const satisfies Record<string, MetricDefinition>;

/**
 * The OpenTelemetry instrument name of a metric: the `a2a_discovery.` namespace, without the
 * Prometheus `_total` suffix of a counter and the `_seconds` suffix of unit `s` (the exporter
 * adds both back). Throws on a definition whose name and kind or unit disagree.
 */
function otelName(d: MetricDefinition): string {
  const counter = d.kind === 'counter' || d.kind === 'observed-counter';
  let name = d.name;
  if (!name.startsWith(P)) throw new DiscoveryError('ERR_INTERNAL', `metric ${name}: the name must start with ${P}`);
  if (counter !== name.endsWith('_total')) throw new DiscoveryError('ERR_INTERNAL', `metric ${name}: a counter's name ends in _total, no other's does`);
  if (counter) name = name.slice(0, -'_total'.length);
  if ((d.unit === 's') !== name.endsWith('_seconds')) throw new DiscoveryError('ERR_INTERNAL', `metric ${name}: unit s and the _seconds suffix go together`);
  if (d.unit === 's') name = name.slice(0, -'_seconds'.length);
  return `a2a_discovery.${name.slice(P.length)}`;
}

/** Label values by name (Prometheus labels, OpenTelemetry attributes). */
type Labels = Readonly<Record<string, string>>;
/**
 * What a metric read at collection reports: one number, one number per label set, or nothing
 * (no series; a Prometheus gauge without labels still shows 0).
 */
type Reading = number | ReadonlyArray<readonly [Labels, number]> | undefined;

/** The two outputs every metric is written to: a Prometheus registry and an OpenTelemetry meter. */
class Outputs {
  readonly #registry: Registry;
  readonly #meter: Meter;
  readonly #observed: Array<[ObservableGauge | ObservableCounter, ObservableCallback]> = [];

  constructor(registry: Registry, meter: Meter) {
    this.#registry = registry;
    this.#meter = meter;
  }

  /** A counter fed by events: `add(n, labels)` counts in both outputs (n default 1). */
  counter(d: MetricDefinition): (n?: number, labels?: Labels) => void {
    const prom = new Counter({ name: d.name, help: d.help, labelNames: [...(d.labels ?? [])], registers: [this.#registry] });
    const otel: OtelCounter = this.#meter.createCounter(otelName(d), { description: d.help, ...(d.unit !== undefined && { unit: d.unit }) });
    // A counter without labels is a series at 0 in Prometheus from the start; the same in OpenTelemetry.
    if (d.labels === undefined) otel.add(0);
    return (n = 1, labels) => {
      if (labels === undefined) prom.inc(n);
      else prom.inc(labels, n);
      otel.add(n, labels as Attributes | undefined);
    };
  }

  /** A histogram fed by events: `observe(value)` records in both outputs. */
  histogram(d: MetricDefinition): (value: number) => void {
    const prom = new Histogram({ name: d.name, help: d.help, buckets: [...(d.buckets ?? [])], registers: [this.#registry] });
    const otel: OtelHistogram = this.#meter.createHistogram(otelName(d), {
      description: d.help,
      ...(d.unit !== undefined && { unit: d.unit }),
      ...(d.buckets !== undefined && { advice: { explicitBucketBoundaries: [...d.buckets] } }),
    });
    return (value) => {
      prom.observe(value);
      otel.record(value);
    };
  }

  /** A gauge or observed counter: `read()` at each scrape and each OpenTelemetry collection. */
  observed(d: MetricDefinition, read: () => Reading | Promise<Reading>): void {
    const labelNames = [...(d.labels ?? [])];
    async function collect(this: Gauge | Counter): Promise<void> {
      const r = await read();
      this.reset();
      if (typeof r === 'number') {
        if (this instanceof Gauge) this.set(r);
        else this.inc(r);
      } else if (r !== undefined) {
        for (const [labels, v] of r) {
          if (this instanceof Gauge) this.set(labels, v);
          else this.inc(labels, v);
        }
      }
    }
    if (d.kind === 'gauge') new Gauge({ name: d.name, help: d.help, labelNames, registers: [this.#registry], collect });
    else new Counter({ name: d.name, help: d.help, labelNames, registers: [this.#registry], collect });
    const options = { description: d.help, ...(d.unit !== undefined && { unit: d.unit }) };
    const instrument = d.kind === 'gauge' ? this.#meter.createObservableGauge(otelName(d), options) : this.#meter.createObservableCounter(otelName(d), options);
    const callback: ObservableCallback = async (result) => {
      const r = await read();
      if (typeof r === 'number') result.observe(r);
      else if (r !== undefined) for (const [labels, v] of r) result.observe(v, labels);
    };
    instrument.addCallback(callback);
    this.#observed.push([instrument, callback]);
  }

  /** Stops the OpenTelemetry callbacks (a closed service reports nothing more). */
  close(): void {
    for (const [instrument, callback] of this.#observed) instrument.removeCallback(callback);
    this.#observed.length = 0;
  }
}

export interface MetricsSources {
  events: EventStream;
  cache: CardCache;
  loop: DiscoveryLoop;
  trees?: TreeFactory;
  /** Open event streams, read at scrape time. */
  openStreams?: () => number;
  /** The state store's status, read at scrape time. */
  store?: () => StoreStatus;
  /** Several replicas: this one's role, epoch and lag. */
  replica?: () => ReplicaStatus;
  /** Journal events the store writer dropped because the store could not keep up. */
  journalDropped?: () => number;
  /** Endpoints whose chatter `/api/activity` counts now, those dropped to make room, and the events not counted past its bound (JournalReader.activityStats). */
  activity?: () => { endpoints: number; dropped: number; uncounted: number };
  /** The upstream request budget per origin (OriginBudget.stats), read at scrape time. */
  upstreamBudget?: () => OriginBudgetStats;
  /** Token requests of the peers' credential providers (ResolvedSecrets.tokenRequests), read at scrape time. */
  peerTokenRequests?: () => ReadonlyArray<{ readonly origin: string; readonly outcome: string; readonly count: number }>;
  /** Registries a `federation: auto` search asked (or did not), by outcome (Federation.stats), read at scrape time. */
  federation?: () => ReadonlyArray<{ readonly outcome: string; readonly count: number }>;
  /** The registry index's entries, the admitted cards `server.registry.maxEntries` leaves out, and its tombstones (RegistryIndex.stats). */
  registryIndex?: () => { entries: number; leftOut: number; tombstones: number };
  /** The graceful drain: whether it began, and the turns it aborted (drain.ts). */
  drain?: () => { readonly draining: boolean; readonly abortedTurns: number };
  /** Health from real calls: each agent's figures, read at scrape time. */
  calls?: () => readonly AgentCallHealth[];
}

/** Label sets of a `Record<value, count>` under one label. */
const byLabel = (label: string, counts: Readonly<Record<string, number>>): Array<[Labels, number]> => Object.entries(counts).map(([value, n]) => [{ [label]: value }, n]);

/**
 * The metrics of one service: the Prometheus registry `/metrics` serves, and the same metrics on
 * the OpenTelemetry meter of the MeterProvider registered when this is called (none: a no-op).
 * Each area registers its own in turn; the order is the order `/metrics` lists them in.
 */
export function createMetrics({ events, cache, loop, trees, openStreams, store, journalDropped, replica, activity, upstreamBudget, peerTokenRequests, federation, registryIndex, drain, calls }: MetricsSources): { registry: Registry; refusal(reason: RefusalReason): void; close(): void } {
  const registry = new Registry();
  const out = new Outputs(registry, otelMetrics.getMeter(INSTRUMENTATION_SCOPE));
  const counted = cardAndLifecycleCounters(out);
  if (store) storeMetrics(out, store, journalDropped);
  upstreamMetrics(out, { activity, upstreamBudget, peerTokenRequests, federation });
  if (replica) replicaMetrics(out, replica);
  const discovery = discoveryMetrics(out, { cache, loop, trees });
  const service = serviceMetrics(out, { openStreams, registryIndex, drain });
  const rollouts = rolloutMetrics(out, { loop, calls });
  // Built once: a cycle's results are thousands of events, each counted here.
  const counters: EventCounters = { ...counted, ...discovery, reloads: service.reloads, rolloutDecisions: rollouts.decisions };
  const unsubscribe = events.subscribe((e) => countEvent(e, counters));
  const offEvict = trees?.onEvict(() => counted.evictions());
  return {
    registry,
    refusal: (reason) => service.refusals(1, { reason }),
    close() {
      unsubscribe();
      offEvict?.();
      out.close();
    },
  };
}

/** A counter's `add(n, labels)` (see {@link Outputs.counter}). */
type Count = ReturnType<Outputs['counter']>;

/** The counters fed by the cache's card results, the snapshots, the alerts, tree evictions and sessions. */
function cardAndLifecycleCounters(out: Outputs) {
  const M = METRICS;
  return {
    fetches: out.counter(M.cardFetches),
    hits: out.counter(M.cardCacheHits),
    notModified: out.counter(M.cardNotModified),
    failures: out.counter(M.cardFailures),
    latency: out.histogram(M.cardFetchDuration),
    publications: out.counter(M.snapshotPublications),
    held: out.counter(M.snapshotsHeld),
    alerts: out.counter(M.alerts),
    evictions: out.counter(M.treeEvictions),
    resolved: out.counter(M.alertsResolved),
    sessionChanges: out.counter(M.sessionEvents),
  };
}

/** The state store's health and writes, and its journal's pruned and dropped rows. */
function storeMetrics(out: Outputs, store: NonNullable<MetricsSources['store']>, journalDropped: MetricsSources['journalDropped']): void {
  const M = METRICS;
  out.observed(M.storeUp, () => {
    const s = store();
    return [[{ kind: s.kind }, s.ok ? 1 : 0]];
  });
  out.observed(M.storeWrites, () => store().writes);
  out.observed(M.storeFailedWrites, () => store().failedWrites);
  // Rows a type's quota or the journal's total cap deleted before their age (journal.ts): under
  // churn, the high-volume kinds; a protected kind here means the cap is too small for it.
  // The store's count per type may start over (a reopened store): only its increases add up.
  const seen = new Map<string, number>();
  const pruned = new Map<string, number>();
  out.observed(M.journalPruned, () => {
    for (const [type, n] of Object.entries(store().journalPruned ?? {})) {
      const last = seen.get(type) ?? 0;
      if (n > last) pruned.set(type, (pruned.get(type) ?? 0) + n - last);
      seen.set(type, n);
    }
    return [...pruned].map(([type, n]) => [{ type }, n]);
  });
  out.observed(M.journalDroppedEvents, () => journalDropped?.() ?? 0);
}

/** What the service asks of others: the cache chatter counted, the request budget per origin, the peers' tokens, federation. */
function upstreamMetrics(out: Outputs, s: Pick<MetricsSources, 'activity' | 'upstreamBudget' | 'peerTokenRequests' | 'federation'>): void {
  const M = METRICS;
  const { activity, upstreamBudget, peerTokenRequests, federation } = s;
  if (activity) {
    out.observed(M.activityEndpoints, () => activity().endpoints);
    out.observed(M.activityEndpointsDropped, () => activity().dropped);
    out.observed(M.activityEventsUncounted, () => activity().uncounted);
  }
  if (upstreamBudget) {
    out.observed(M.upstreamBudgetExhausted, () => byLabel('caller', upstreamBudget().exhausted));
    out.observed(M.upstreamBudgetWaits, () => byLabel('caller', upstreamBudget().waited));
    out.observed(M.upstreamBudgetOrigins, () => upstreamBudget().origins);
    out.observed(M.upstreamBudgetOriginsDropped, () => upstreamBudget().originsDropped);
  }
  if (peerTokenRequests) out.observed(M.peerTokenRequests, () => peerTokenRequests().map(({ origin, outcome, count }) => [{ origin, outcome }, count]));
  if (federation) out.observed(M.federationRequests, () => federation().map(({ outcome, count }) => [{ outcome }, count]));
}

/** Several replicas: this one's role, epoch, lag and connection. */
function replicaMetrics(out: Outputs, replica: NonNullable<MetricsSources['replica']>): void {
  const M = METRICS;
  out.observed(M.replicaLeader, () => (replica().role === 'leader' ? 1 : 0));
  out.observed(M.replicaEpoch, () => replica().epoch);
  out.observed(M.replicaLag, () => replica().lagMs / 1000);
  out.observed(M.replicaInSync, () => (replica().inSync ? 1 : 0));
  out.observed(M.replicaConnected, () => (replica().connected ? 1 : 0));
  out.observed(M.replicaRefusesToLead, () => (replica().refusesToLead !== null ? 1 : 0));
}

/** The loop's alerts, trees, routing, catalogs and snapshots, and the cache's stale cards; returns the counters events feed. */
function discoveryMetrics(out: Outputs, s: Pick<MetricsSources, 'cache' | 'loop' | 'trees'>): { catalogReads: Count; routingEvaluations: Count } {
  const M = METRICS;
  const { cache, loop, trees } = s;
  out.observed(M.activeAlerts, () => loop.activeAlerts.length);
  out.observed(M.builtTrees, () => trees?.builtDigests.length ?? 0);
  out.observed(M.lookalikeIndexBytes, () => loop.lookalikeBytes);
  out.observed(M.routingAccuracy, () => {
    const digest = loop.current()?.digest;
    return digest !== undefined ? loop.routingOf(digest)?.accuracy : undefined;
  });
  const catalogReads = out.counter(M.catalogReads);
  const routingEvaluations = out.counter(M.routingEvaluations);
  out.observed(M.snapshotVersion, () => loop.current()?.version ?? 0);
  out.observed(M.cardStaleEntries, async () => (await cache.entries()).filter((e) => e.stale).length);
  out.observed(M.cardFetchesInFlight, () => cache.concurrency.running);
  out.observed(M.cardFetchesWaiting, () => cache.concurrency.waiting);
  out.observed(M.pinnedSessions, () => trees?.sessions().length ?? 0);
  out.observed(M.retainedSnapshots, () => loop.snapshots.retained().length);
  return { catalogReads, routingEvaluations };
}

/** Staged rollouts (their decisions, the share and step in progress) and each agent's real calls; returns the decisions' counter. */
function rolloutMetrics(out: Outputs, s: Pick<MetricsSources, 'loop' | 'calls'>): { decisions: Count } {
  const M = METRICS;
  const { loop, calls } = s;
  const decisions = out.counter(M.rolloutDecisions);
  out.observed(M.rolloutShare, () => loop.rollouts?.active?.share ?? 0);
  out.observed(M.rolloutStep, () => {
    const active = loop.rollouts?.active;
    return active === undefined ? 0 : active.step + 1;
  });
  if (calls) {
    out.observed(M.agentCalls, () => calls().flatMap((a) => [[{ agent: a.agent, outcome: 'ok' }, a.all.calls - a.all.errors] as [Labels, number], [{ agent: a.agent, outcome: 'error' }, a.all.errors] as [Labels, number]]));
    out.observed(M.agentCallFailuresInARow, () => calls().map((a) => [{ agent: a.agent }, a.consecutiveFailures] as [Labels, number]));
  }
  return { decisions };
}

/** The service's own side: refused requests, the registry index, open streams, reloads and the drain; returns the counters. */
function serviceMetrics(out: Outputs, s: Pick<MetricsSources, 'openStreams' | 'registryIndex' | 'drain'>): { refusals: Count; reloads: Count } {
  const M = METRICS;
  const { openStreams, registryIndex, drain } = s;
  const refusals = out.counter(M.httpRefusals);
  if (registryIndex) {
    out.observed(M.registryEntries, () => registryIndex().entries);
    out.observed(M.registryLeftOut, () => registryIndex().leftOut);
  }
  out.observed(M.sseStreams, () => openStreams?.() ?? 0);
  const reloads = out.counter(M.configReloads);
  if (drain) {
    out.observed(M.draining, () => (drain().draining ? 1 : 0));
    out.observed(M.drainAbortedTurns, () => drain().abortedTurns);
  }
  return { refusals, reloads };
}

/** The counters one discovery event feeds. */
type EventCounters = Omit<ReturnType<typeof cardAndLifecycleCounters>, 'evictions'> & { catalogReads: Count; routingEvaluations: Count; reloads: Count; rolloutDecisions: Count };

/** Counts one event of the stream in the counters it feeds (most feed none). */
function countEvent(e: DiscoveryEvent, c: EventCounters): void {
  switch (e.type) {
    case 'card.result':
      if (e.outcome === 'hit') c.hits(occurrences(e));
      else c.fetches(1, { outcome: e.outcome });
      if (e.outcome === 'revalidated') c.notModified();
      if (e.code !== undefined) c.failures(1, { code: e.code });
      if (e.durationMs !== undefined) c.latency(e.durationMs / 1000);
      break;
    case 'snapshot.published':
      c.publications();
      break;
    case 'snapshot.held':
      c.held();
      break;
    case 'routing.evaluated':
      c.routingEvaluations(1, { result: e.held ? 'held' : e.passed ? 'passed' : 'failed' });
      break;
    case 'catalog.read':
      c.catalogReads(1, { outcome: e.outcome });
      break;
    case 'alert':
      c.alerts(1, { kind: e.kind });
      break;
    case 'alert.resolved':
      c.resolved(1, { kind: e.kind });
      break;
    case 'session.pinned':
    case 'session.upgraded':
    case 'session.ended':
    case 'session.expired':
    case 'session.restarted':
      c.sessionChanges(1, { event: e.type.slice('session.'.length) });
      break;
    case 'config.reloaded':
    case 'config.refused':
      c.reloads(1, { result: e.type === 'config.reloaded' ? 'applied' : 'refused' });
      break;
    case 'rollout.started':
    case 'rollout.advanced':
    case 'rollout.held':
    case 'rollout.resumed':
    case 'rollout.promoted':
    case 'rollout.rolled-back':
    case 'rollout.superseded':
    case 'rollout.withdrawn':
      c.rolloutDecisions(1, { action: e.type.slice('rollout.'.length) });
      break;
    default:
      break;
  }
}
