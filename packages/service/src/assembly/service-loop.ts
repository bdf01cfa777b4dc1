/**
 * The discovery loop (what the service selects and publishes: needs, vocabulary, tenant, domains,
 * the routing evaluation before a publication) and the trees built from its snapshots, which the
 * sessions are pinned to.
 */
import type { BaseSessionService } from '@google/adk';
import type { Foreground, PolicyFetch, RouteHints } from 'a2a-discovery/adk';
import { SessionRunner, snapshotTreeBuilder, TreeFactory } from 'a2a-discovery/adk';
import type { CardCache, Clock, EventStream, HostPolicy, DiscoveryLoopOptions, RoutingDomain, Source, CallHealth, Snapshot, SnapshotAgent } from 'a2a-discovery';
import type { LoopReconfiguration, OriginBudget } from 'a2a-discovery/internal';
import { ActiveCheck } from 'a2a-discovery/internal';
import { HEALTH_DEFAULTS } from 'a2a-discovery/config';
import { DiscoveryLoop, TagVocabulary, SnapshotStore } from 'a2a-discovery';
import type { RoutingCase } from 'a2a-discovery/routing';
import { casesFromVocabulary, evaluateRouting, loadCases } from 'a2a-discovery/routing';
import type { StateStore } from '@a2a-discovery/store';
import { usedElsewhere } from './persistence.js';
import type { ServiceOptions } from './service-options.js';
import { SessionOwners } from '../auth/session-owners.js';

/**
 * What routing reads at each evaluation and each tree build, from `vocabulary` and `routing`: a
 * reload replaces it ({@link RoutingSettings.update}); the routed root's hints are one array,
 * changed in place, so the next tree built routes by the new keywords and examples.
 */
export class RoutingSettings {
  readonly hints: RouteHints[] = [];
  cases: RoutingCase[] = [];
  tags: string[] = [];
  gate = false;
  minAccuracy: number | undefined;

  /** Reads the settings of `o` (the cases file too) and makes them current. */
  async update(o: ServiceOptions): Promise<void> {
    (await this.prepare(o)).commit();
  }

  /**
   * Reads the settings of `o` (the cases file too) without making them current: `evaluates` says
   * whether they have labelled cases (the loop evaluates routing only if it was built with some).
   */
  async prepare(o: ServiceOptions): Promise<{ evaluates: boolean; commit: () => void }> {
    const cases = [...casesFromVocabulary(o.vocabulary), ...(o.routing?.cases ?? []), ...(o.routing?.casesFile !== undefined ? await loadCases(o.routing.casesFile) : [])];
    return {
      evaluates: cases.length > 0,
      commit: () => {
        this.cases = cases;
        this.tags = o.vocabulary.map((v) => v.tag);
        this.gate = o.routing?.gate ?? false;
        this.minAccuracy = o.routing?.minAccuracy;
        this.hints.splice(0, this.hints.length, ...routeHints(o));
      },
    };
  }
}

/**
 * The published snapshots, made before the tree factory and the loop that both read them: the
 * trees are built over it, then the loop publishes into it (and warms the trees up first).
 */
export function buildSnapshots(o: ServiceOptions): SnapshotStore {
  return new SnapshotStore({ ...(o.storeOptions?.retention?.history !== undefined && { historyLimit: o.storeOptions.retention.history }) });
}

/** Builds the loop (not started) over `snapshots`. `beforePublish` warms the next snapshot's tree up. */
export async function buildLoop(
  o: ServiceOptions,
  p: { sources: Source[]; policy: HostPolicy; cache: CardCache; snapshots: SnapshotStore; clock: Clock; events: EventStream; routing: RoutingSettings; calls: CallHealth; beforePublish: NonNullable<DiscoveryLoopOptions['beforePublish']> },
): Promise<DiscoveryLoop> {
  const maxAgents = o.maxAgents ?? 16;
  const domains: RoutingDomain[] = (o.domains ?? []).map((d) => ({ ...d, maxAgents: d.maxAgents ?? maxAgents }));
  const live = p.routing;
  await live.update(o);
  const rootSpec = rootOf(o);
  const evaluationRoot =
    rootSpec.kind === 'model'
      ? { kind: 'model' as const, model: rootSpec.model, ...(rootSpec.name !== undefined && { rootName: rootSpec.name }) }
      : { kind: 'routed' as const, hints: live.hints, ...(rootSpec.fallback !== undefined && { fallback: rootSpec.fallback }) };
  return new DiscoveryLoop({
    sources: p.sources,
    hostPolicy: p.policy,
    cache: p.cache,
    snapshots: p.snapshots,
    clock: p.clock,
    events: p.events,
    calls: p.calls,
    rollout: o.rollout ?? {},
    // The fetcher's credentials: cards requiring what they cannot present are a verdict, not a failing chat.
    ...(o.credentials !== undefined && { credentials: o.credentials }),
    ...(o.lookalikes !== undefined && { lookalikes: o.lookalikes }),
    select: { ...selectOptions(o), ...(domains.length > 0 && { domains }) },
    // Routing accuracy on the labelled cases before each publication that changes routing.
    ...(live.cases.length > 0 && {
      routing: {
        get gate() {
          return live.gate;
        },
        evaluate: async (candidate) => {
          const report = await evaluateRouting(candidate, {
            root: evaluationRoot,
            cases: live.cases,
            tags: live.tags,
            ...(live.minAccuracy !== undefined && { minAccuracy: live.minAccuracy }),
          });
          const worst = report.perLabel.filter((l) => l.accuracy < 1).sort((a, b) => a.accuracy - b.accuracy).slice(0, 3);
          return {
            accuracy: report.accuracy,
            minAccuracy: report.minAccuracy,
            passed: report.passed,
            evaluated: report.evaluated,
            ...(worst.length > 0 && { summary: `worst: ${worst.map((l) => `${l.label} ${l.correct}/${l.cases}`).join(', ')}` }),
          };
        },
      },
    }),
    ...(o.health && { health: o.health }),
    ...(o.health?.staticEnterAfter !== undefined && { staticEnterAfter: o.health.staticEnterAfter }),
    ...o.loop,
    // Warm-up: a snapshot whose tree does not build and pass the checks is never published.
    beforePublish: p.beforePublish,
  });
}

/** The loop's select options of `o`: needs, vocabulary, required capabilities, tenant, cap (the routing domains apart). */
export function selectOptions(o: ServiceOptions): NonNullable<LoopReconfiguration['select']> {
  return {
    needs: o.needs,
    vocabulary: new TagVocabulary(o.vocabulary.map((v) => ({ tag: v.tag, description: v.description }))),
    ...(o.requireStreaming && { required: { streaming: true } }),
    ...(o.tenant && { tenant: o.tenant }),
    ...(o.maxAgents !== undefined && { maxAgents: o.maxAgents }),
  };
}

export interface ServiceTrees {
  readonly trees: TreeFactory;
  readonly sessions: SessionRunner;
  readonly owners: SessionOwners;
  /** Stops releasing owners when trees release sessions. */
  readonly offOwners: () => void;
}

/** The tree factory over the published snapshots, the session runner and who owns each session. */
export function buildTrees(
  o: ServiceOptions,
  p: {
    snapshots: SnapshotStore;
    policy: HostPolicy;
    policyFetch: PolicyFetch;
    store: StateStore;
    ownStore: boolean;
    sessionService: BaseSessionService;
    clock: Clock;
    events: EventStream;
    routing: RoutingSettings;
    calls: CallHealth;
    assign: (sessionId: string) => string | undefined;
    foreground: Foreground;
  },
): ServiceTrees {
  const rootSpec = rootOf(o);
  const trees = new TreeFactory({
    snapshots: p.snapshots,
    clock: p.clock,
    events: p.events,
    assign: p.assign,
    ...(o.sessions?.idleTimeoutMs !== undefined && { idleTimeoutMs: o.sessions.idleTimeoutMs }),
    ...(o.sessions?.maxSessions !== undefined && { maxSessions: o.sessions.maxSessions }),
    // Replicas: a session idle here but served on another replica since keeps its history.
    ...(p.ownStore && p.store.kind === 'postgres' && { usedElsewhere: usedElsewhere(p.store) }),
    buildRoot: snapshotTreeBuilder({
      ...(rootSpec.name !== undefined && { rootName: rootSpec.name }),
      root: rootSpec.kind === 'model' ? { kind: 'model', model: rootSpec.model } : { kind: 'routed', hints: p.routing.hints, record: (baseUrl) => p.calls.score(baseUrl), ...(rootSpec.fallback !== undefined && { fallback: rootSpec.fallback }) },
      policy: p.policy,
      fetchImpl: p.policyFetch,
      ...(o.sessions?.allowAdkMetadata !== undefined && { allowAdkMetadata: o.sessions.allowAdkMetadata }),
    }),
  });
  const sessions = new SessionRunner({ trees, events: p.events, sessionService: p.sessionService, calls: p.calls, foreground: p.foreground });
  const owners = new SessionOwners();
  const offOwners = trees.onRelease((sessionId) => owners.release(sessionId));
  return { trees, sessions, owners, offOwners };
}

function rootOf(o: ServiceOptions): NonNullable<ServiceOptions['root']> {
  return o.root ?? { kind: 'routed' };
}

/** The routed root's hints: each vocabulary tag with its keywords and examples. */
function routeHints(o: ServiceOptions): RouteHints[] {
  return o.vocabulary.map((v) => ({ tag: v.tag, ...(v.keywords && { keywords: v.keywords }), ...(v.examples && { examples: v.examples }) }));
}

/**
 * The active check (`health.activeCheck`, docs/rollouts.md "Active checks"): a side-effect-free
 * A2A request to each agent on a schedule, through the remote agents' own policy fetch and within
 * the origin budget, its results counted as calls. Enabled: every agent of the current snapshot.
 * Otherwise only the agents their failed calls put out of new snapshots (their last published
 * form), so a good answer can bring them back. Only a running loop's agents are checked: a
 * follower's loop runs no cycle (the leader judges health).
 */
export function buildActiveCheck(
  o: ServiceOptions,
  p: { loop: DiscoveryLoop; calls: CallHealth; policy: HostPolicy; policyFetch: PolicyFetch; budget: OriginBudget; clock: Clock; events: EventStream },
): { readonly check: ActiveCheck; close(): Promise<void> } {
  const settings = { ...HEALTH_DEFAULTS.activeCheck, ...o.health?.activeCheck };
  // Agents out because of their calls: their form in the snapshot they left (bounded by the agents discovery holds).
  const out = new Map<string, SnapshotAgent>();
  let last: Snapshot | undefined;
  const off = p.loop.subscribe((next) => {
    const kept = new Set(next.agents.map((a) => a.baseUrl));
    for (const a of last?.agents ?? []) if (!kept.has(a.baseUrl) && (p.calls.streak(a.baseUrl)?.failures ?? 0) > 0) out.set(a.baseUrl, a);
    for (const url of [...out.keys()]) if (kept.has(url) || p.calls.streak(url) === undefined) out.delete(url);
    last = next;
  });
  const check = new ActiveCheck({
    targets: () => (!p.loop.running ? [] : [...(settings.enabled ? (p.loop.current()?.agents ?? []) : []), ...out.values()]),
    policy: p.policy,
    fetch: p.policyFetch,
    clock: p.clock,
    intervalMs: settings.intervalMs,
    timeoutMs: settings.timeoutMs,
    maxConcurrent: settings.maxConcurrent,
    originBudget: p.budget,
    events: p.events,
    onResult: (r) =>
      p.calls.record({
        agent: r.localName,
        baseUrl: r.baseUrl,
        ok: r.ok,
        latencyMs: r.latencyMs,
        source: 'check',
        interfaceUrl: r.interfaceUrl,
        ...(r.errorClass !== undefined && { errorClass: r.errorClass }),
        ...(r.message !== undefined && { message: r.message }),
      }),
  });
  return {
    check,
    close: async () => {
      off();
      await check.close();
    },
  };
}
