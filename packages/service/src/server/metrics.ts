/**
 * Prometheus metrics, on a registry of our own (never prom-client's global one), fed by the
 * discovery event stream plus a few gauges read at scrape time.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CardCache, DiscoveryLoop, OriginBudgetStats } from 'a2a-discovery';
import { occurrences, type EventStream } from 'a2a-discovery';
import type { TreeFactory } from 'a2a-discovery/adk';
import type { StoreStatus, ReplicaStatus } from '@a2a-discovery/store';
import type { RefusalReason } from './limits.js';

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
  /** Endpoints whose chatter `/api/activity` counts now, and those dropped past its bound (JournalReader.activityStats). */
  activity?: () => { endpoints: number; dropped: number };
  /** The upstream request budget per origin (OriginBudget.stats), read at scrape time. */
  upstreamBudget?: () => OriginBudgetStats;
  /** Token requests of the peers' credential providers (ResolvedSecrets.tokenRequests), read at scrape time. */
  peerTokenRequests?: () => ReadonlyArray<{ readonly origin: string; readonly outcome: string; readonly count: number }>;
  /** Registries a `federation: auto` search asked (or did not), by outcome (Federation.stats), read at scrape time. */
  federation?: () => ReadonlyArray<{ readonly outcome: string; readonly count: number }>;
  /** The registry index's entries, the admitted cards `server.registry.maxEntries` leaves out, and its tombstones (RegistryIndex.stats). */
  registryIndex?: () => { entries: number; leftOut: number; tombstones: number };
}

export function createMetrics({ events, cache, loop, trees, openStreams, store, journalDropped, replica, activity, upstreamBudget, peerTokenRequests, federation, registryIndex }: MetricsSources): { registry: Registry; refusal(reason: RefusalReason): void; close(): void } {
  const registry = new Registry();
  const p = 'a2a_discovery_';
  const fetches = new Counter({ name: `${p}card_fetches_total`, help: 'Card cache decisions that reached the network, by outcome.', labelNames: ['outcome'], registers: [registry] });
  const hits = new Counter({ name: `${p}card_cache_hits_total`, help: 'Card reads served fresh from the cache without a request.', registers: [registry] });
  const notModified = new Counter({ name: `${p}card_not_modified_total`, help: 'Conditional card requests answered 304 Not Modified.', registers: [registry] });
  const failures = new Counter({ name: `${p}card_failures_total`, help: 'Failed card refreshes, by error code.', labelNames: ['code'], registers: [registry] });
  const latency = new Histogram({
    name: `${p}card_fetch_duration_seconds`,
    help: 'Duration of card requests.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const publications = new Counter({ name: `${p}snapshot_publications_total`, help: 'Snapshots published.', registers: [registry] });
  const held = new Counter({ name: `${p}snapshots_held_total`, help: 'Snapshots held back by a guard.', registers: [registry] });
  const alerts = new Counter({ name: `${p}alerts_total`, help: 'Alerts raised, by kind.', labelNames: ['kind'], registers: [registry] });
  const evictions = new Counter({ name: `${p}tree_evictions_total`, help: 'Agent trees evicted after their last pinned session.', registers: [registry] });
  const resolved = new Counter({ name: `${p}alerts_resolved_total`, help: 'Alert conditions that cleared, by kind.', labelNames: ['kind'], registers: [registry] });
  const sessionChanges = new Counter({
    name: `${p}session_events_total`,
    help: 'Session lifecycle events: pinned, upgraded, ended, expired (idle, history deleted), restarted (returned after expiry).',
    labelNames: ['event'],
    registers: [registry],
  });
  if (store) {
    new Gauge({
      name: `${p}store_up`,
      help: 'Whether the state store answered its last read or write (1) or failed (0), by engine.',
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        const s = store();
        this.reset();
        this.set({ kind: s.kind }, s.ok ? 1 : 0);
      },
    });
    new Gauge({
      name: `${p}store_writes`,
      help: 'Writes the state store completed since the process started.',
      registers: [registry],
      collect() {
        this.set(store().writes);
      },
    });
    new Gauge({
      name: `${p}store_failed_writes`,
      help: 'Writes the state store failed since the process started.',
      registers: [registry],
      collect() {
        this.set(store().failedWrites);
      },
    });
    // Rows a type's quota or the journal's total cap deleted before their age (journal.ts): under
    // churn, the high-volume kinds; a protected kind here means the cap is too small for it.
    const pruned = new Map<string, number>();
    new Counter({
      name: `${p}journal_pruned_total`,
      help: 'Journal rows deleted before their age to keep a type\'s quota (retention.journalMaxEventsPerType) or the total cap (retention.journalMaxEvents), by event type.',
      labelNames: ['type'],
      registers: [registry],
      collect() {
        for (const [type, n] of Object.entries(store().journalPruned ?? {})) {
          const seen = pruned.get(type) ?? 0;
          if (n > seen) this.inc({ type }, n - seen);
          pruned.set(type, n);
        }
      },
    });
    new Gauge({
      name: `${p}journal_dropped_events`,
      help: 'Journal events dropped because the state store could not keep up.',
      registers: [registry],
      collect() {
        this.set(journalDropped?.() ?? 0);
      },
    });
  }
  if (activity) {
    new Gauge({
      name: `${p}activity_endpoints`,
      help: 'Endpoints whose cache chatter /api/activity counts now (freed when discovery evicts them).',
      registers: [registry],
      collect() {
        this.set(activity().endpoints);
      },
    });
    new Gauge({
      name: `${p}activity_endpoints_dropped`,
      help: 'Endpoints whose activity counters were dropped because more endpoints chattered than the bound allows.',
      registers: [registry],
      collect() {
        this.set(activity().dropped);
      },
    });
  }
  if (upstreamBudget) {
    // Labelled by caller (discovery, inspector), not by origin: a wildcard allowlist admits origins without bound.
    new Counter({
      name: `${p}upstream_budget_exhausted_total`,
      help: 'Upstream requests not made because their origin\'s request budget (cache.originRequestsPerSecond, cache.originBurst) was spent, by caller.',
      labelNames: ['caller'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [caller, n] of Object.entries(upstreamBudget().exhausted)) this.inc({ caller }, n);
      },
    });
    new Counter({
      name: `${p}upstream_budget_waits_total`,
      help: 'Upstream requests that waited for their origin\'s turn under the request budget, by caller.',
      labelNames: ['caller'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [caller, n] of Object.entries(upstreamBudget().waited)) this.inc({ caller }, n);
      },
    });
    new Gauge({
      name: `${p}upstream_budget_origins`,
      help: 'Origins whose request budget is tracked now (idle ones are freed).',
      registers: [registry],
      collect() {
        this.set(upstreamBudget().origins);
      },
    });
    new Counter({
      name: `${p}upstream_budget_origins_dropped_total`,
      help: 'Origin budgets dropped before they were idle because more origins were tracked than the bound allows.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(upstreamBudget().originsDropped);
      },
    });
  }
  if (peerTokenRequests) {
    // Labelled by the peer's origin: only configured `credentials:` entries request tokens, so the set is bounded.
    new Counter({
      name: `${p}peer_token_requests_total`,
      help: 'Token requests of the peers\' credentials (oauth2, google-id-token), by peer origin and outcome (issued, failed).',
      labelNames: ['origin', 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { origin, outcome, count } of peerTokenRequests()) this.inc({ origin, outcome }, count);
      },
    });
  }
  if (federation) {
    new Counter({
      name: `${p}federation_requests_total`,
      help: 'Registries a federated search (federation: auto) asked or passed over, by outcome (answered, failed, timeout, refused, skipped).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { outcome, count } of federation()) this.inc({ outcome }, count);
      },
    });
  }
  if (replica) {
    new Gauge({
      name: `${p}replica_leader`,
      help: 'Whether this replica leads (1: it runs the sources and refreshes cards) or follows (0).',
      registers: [registry],
      collect() {
        this.set(replica().role === 'leader' ? 1 : 0);
      },
    });
    new Gauge({
      name: `${p}replica_epoch`,
      help: 'The fencing epoch: this replica\'s while it leads, else the last one read from the database.',
      registers: [registry],
      collect() {
        this.set(replica().epoch);
      },
    });
    new Gauge({
      name: `${p}replica_lag_seconds`,
      help: 'How long this replica has served another snapshot than the database\'s current one (0 in sync).',
      registers: [registry],
      collect() {
        this.set(replica().lagMs / 1000);
      },
    });
    new Gauge({
      name: `${p}replica_in_sync`,
      help: 'Whether this replica serves the database\'s current snapshot (1) or not yet (0).',
      registers: [registry],
      collect() {
        this.set(replica().inSync ? 1 : 0);
      },
    });
    new Gauge({
      name: `${p}replica_connected`,
      help: 'Whether the replica\'s dedicated PostgreSQL connection (leader lock, LISTEN) is up.',
      registers: [registry],
      collect() {
        this.set(replica().connected ? 1 : 0);
      },
    });
  }
  new Gauge({
    name: `${p}active_alerts`,
    help: 'Alert conditions that hold now (raised and not yet resolved).',
    registers: [registry],
    collect() {
      this.set(loop.activeAlerts.length);
    },
  });
  new Gauge({
    name: `${p}built_trees`,
    help: 'Agent trees built and kept (current, pinned, or about to be published).',
    registers: [registry],
    collect() {
      this.set(trees?.builtDigests.length ?? 0);
    },
  });
  new Gauge({
    name: `${p}routing_accuracy`,
    help: 'Routing accuracy (0-1) of the current snapshot on the labelled cases; absent when routing is not evaluated.',
    registers: [registry],
    collect() {
      this.reset();
      const digest = loop.current()?.digest;
      const verdict = digest !== undefined ? loop.routingOf(digest) : undefined;
      if (verdict) this.set(verdict.accuracy);
    },
  });
  const catalogReads = new Counter({
    name: `${p}catalog_reads_total`,
    help: 'AI Catalog documents read with a request (or refused), by outcome (changed, unchanged, revalidated, stale, invalid, failed, refused).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const routingEvaluations = new Counter({ name: `${p}routing_evaluations_total`, help: 'Routing evaluations of candidate snapshots, by result (passed, failed, held).', labelNames: ['result'], registers: [registry] });
  new Gauge({
    name: `${p}snapshot_version`,
    help: 'Version of the current snapshot (0 before the first).',
    registers: [registry],
    collect() {
      this.set(loop.current()?.version ?? 0);
    },
  });
  new Gauge({
    name: `${p}card_stale_entries`,
    help: 'Cached cards currently served stale.',
    registers: [registry],
    async collect() {
      this.set((await cache.entries()).filter((e) => e.stale).length);
    },
  });
  new Gauge({
    name: `${p}pinned_sessions`,
    help: 'Sessions pinned to a snapshot.',
    registers: [registry],
    collect() {
      this.set(trees?.sessions().length ?? 0);
    },
  });
  new Gauge({
    name: `${p}retained_snapshots`,
    help: 'Snapshots retained (current plus pinned).',
    registers: [registry],
    collect() {
      this.set(loop.snapshots.retained().length);
    },
  });
  const refusals = new Counter({
    name: `${p}http_refusals_total`,
    help: 'Requests refused or cut by the service\'s checks and limits, by reason (docs/security.md).',
    labelNames: ['reason'],
    registers: [registry],
  });
  if (registryIndex) {
    new Gauge({
      name: `${p}registry_entries`,
      help: 'Entries in the registry index (admitted cards; docs/registry-api.md).',
      registers: [registry],
      collect() {
        this.set(registryIndex().entries);
      },
    });
    new Gauge({
      name: `${p}registry_left_out`,
      help: 'Admitted cards the registry index leaves out past server.registry.maxEntries.',
      registers: [registry],
      collect() {
        this.set(registryIndex().leftOut);
      },
    });
  }
  new Gauge({
    name: `${p}sse_streams`,
    help: 'Open /api/stream connections.',
    registers: [registry],
    collect() {
      this.set(openStreams?.() ?? 0);
    },
  });
  const unsubscribe = events.subscribe((e) => {
    switch (e.type) {
      case 'card.result':
        if (e.outcome === 'hit') hits.inc(occurrences(e));
        else fetches.inc({ outcome: e.outcome });
        if (e.outcome === 'revalidated') notModified.inc();
        if (e.code !== undefined) failures.inc({ code: e.code });
        if (e.durationMs !== undefined) latency.observe(e.durationMs / 1000);
        break;
      case 'snapshot.published':
        publications.inc();
        break;
      case 'snapshot.held':
        held.inc();
        break;
      case 'routing.evaluated':
        routingEvaluations.inc({ result: e.held ? 'held' : e.passed ? 'passed' : 'failed' });
        break;
      case 'catalog.read':
        catalogReads.inc({ outcome: e.outcome });
        break;
      case 'alert':
        alerts.inc({ kind: e.kind });
        break;
      case 'alert.resolved':
        resolved.inc({ kind: e.kind });
        break;
      case 'session.pinned':
      case 'session.upgraded':
      case 'session.ended':
      case 'session.expired':
      case 'session.restarted':
        sessionChanges.inc({ event: e.type.slice('session.'.length) });
        break;
      default:
        break;
    }
  });
  const offEvict = trees?.onEvict(() => evictions.inc());
  return {
    registry,
    refusal: (reason) => refusals.inc({ reason }),
    close() {
      unsubscribe();
      offEvict?.();
    },
  };
}
