/**
 * Health and selection: one evaluation of the admitted endpoints. Each gets a health observation
 * (with its lasting alerts: repeated failures, a critical agent degraded or unavailable); the
 * members with a card are then selected against the reviewed agents of static sources. An
 * unchanged evaluation whose publication stands is reused instead of selected again.
 */
import type { CacheEntry, CardCache } from '../cache/index.js';
import { cardKindOf, describeExtendedCardChange, effectiveEntry, extendedCardChange } from '../cache/index.js';
import { cardFacts, cardIdentity } from '../cache/cache-entries.js';
import type { EventStream } from '../events/index.js';
import { presentableSchemes, securityOrigin, sha256Hex } from '../card/index.js';
import type { CredentialsInput, PresentableScheme } from '../fetch/index.js';
import type { CallHealth, HealthObservation, HealthStatus, HealthTracker } from '../health/index.js';
import { isMember } from '../health/index.js';
import type { Candidate, MatchMemo, ReviewedAgent, Selection, SelectOptions, Verdict } from '../match/index.js';
import { calledCard, selectAgentsPaced } from '../match/select-agents.js';
import { Pacer, runPaced } from '../clock/pacer.js';
import type { AdmittedEndpoint } from '../resolve/index.js';
import type { SnapshotAgent } from '../snapshot/index.js';
import { toSnapshotAgents } from '../snapshot/index.js';
import type { EndpointRecord, Source } from '../sources/index.js';
import { transportOf, type TransportOptions } from '../sources/transport-options.js';
import type { Lookalike, LookalikePolicy } from '../rules/lookalike.js';
import { identifierName, LookalikeIndex } from '../rules/lookalike.js';
import { originOf } from '../rules/origins.js';
import type { AlertBook, AlertInput } from './alert-book.js';
import { sameLists } from './same-lists.js';
import { ATTR, SPAN, withSpan } from '../telemetry/index.js';

export interface EvaluatorOptions {
  sources: readonly Source[];
  cache: CardCache;
  /** Needs, vocabulary, required capabilities, tenant policy, cap (replaced by {@link Evaluator.reselect}). */
  select: Omit<SelectOptions, 'reviewed'>;
  /** The peers' credentials: what they can present decides whether a card's security requirements are met. */
  credentials?: CredentialsInput;
  health: HealthTracker;
  /** Health from real calls: failed calls in a row count beside failed fetches. */
  calls?: CallHealth;
  alerts: AlertBook;
  events: EventStream | undefined;
  /** Good observations before a static (reviewed) agent enters. */
  staticEnterAfter: number;
  /** A lookalike of an earlier agent from another origin: flagged (default), or also excluded from snapshots. */
  lookalikes?: LookalikePolicy;
}

/** Snapshot agents made between two checks of the evaluation's pacer. */
const AGENTS_PER_SLICE = 256;
const CRITICAL = Object.freeze({ critical: true });
const NOT_CRITICAL = Object.freeze({ critical: false });
/** The observations of most endpoints on most cycles, shared (none allocated per endpoint). */
const FRESH: HealthObservation = Object.freeze({ failures: 0, usable: true });
const NO_CARD: HealthObservation = Object.freeze({ failures: 0, usable: false });

export class Evaluator {
  readonly #o: EvaluatorOptions;
  #verdicts: ReadonlyMap<string, Verdict> = new Map();
  // The agents with a card, in arrival order (the first is the original), and who looks like whom.
  readonly #lookalikeIndex = new LookalikeIndex();
  #lookalikes = new Map<string, Lookalike>();
  /** The key of the agent each lookalike looks like (a removal judges again those that looked like it). */
  readonly #lookalikeOf = new Map<string, string>();
  /** What the lookalike index was last given, per candidate: its endpoint and card (the names come from them). */
  #lookalikeInputs: { readonly endpoints: readonly object[]; readonly cards: readonly object[] } = { endpoints: [], cards: [] };
  // Unchanged (same object) cards are matched once, not every cycle, while the select options stand.
  #matchMemo: MatchMemo = new WeakMap();
  // Static agents whose card once fitted (by base URL), so only they "no longer fit"; an
  // endpoint's URL leaves with the endpoint ({@link forget}).
  readonly #fitted = new Set<string>();
  #reviewedCache: { from: ReadonlyArray<readonly EndpointRecord[]>; list: ReviewedAgent[]; byName: ReadonlyMap<string, ReviewedAgent> } | undefined;
  /**
   * The last evaluation's inputs and selection, reused while nothing it depends on changed and its
   * publication settled (nothing held, deferred or refused): a cycle with nothing due then costs
   * the per-endpoint health and alert bookkeeping, not a selection and a snapshot build.
   */
  #lastEvaluation: Evaluation | undefined;
  /** The evaluation whose publication is under way (see {@link settle}). */
  #pending: Omit<Evaluation, 'settledDigest'> | undefined;
  /** The last pass, when it reused the selection and its observations changed no health status (see {@link SteadyPass}). */
  #steady: SteadyPass | undefined;
  /** Each selection's alerts as {@link AlertBook.raise} takes them (see {@link #raiseSelectionAlerts}). */
  readonly #selectionAlerts = new WeakMap<Selection['alerts'], ReadonlyArray<readonly [string, AlertInput]>>();

  constructor(options: EvaluatorOptions) {
    this.#o = options;
  }

  /** What the credentials can present to the origin of each candidate whose card requires something. */
  async #presentable(candidates: readonly Candidate[], pacer: Pacer): Promise<(origin: string) => readonly PresentableScheme[]> {
    const known = new Map<string, readonly PresentableScheme[]>();
    for (const c of candidates) {
      // Only a card with security requirements has a security origin (its model is read then).
      // The interface it calls: a static entry's interfaceUrl included.
      if (pacer.due) await pacer.tick();
      const origin = cardFacts(c.entry).secured ? securityOrigin(calledCard(c).card, c.endpoint.baseUrl) : undefined;
      if (origin !== undefined && !known.has(origin)) known.set(origin, await presentableSchemes(this.#o.credentials, origin));
    }
    return (origin) => known.get(origin) ?? [];
  }

  /** New select options (a reload): every card is matched again at the next evaluation. */
  reselect(select: Omit<SelectOptions, 'reviewed'>): void {
    this.#o.select = select;
    this.#reviewedCache = undefined;
    this.rejudge();
  }

  /** The credentials changed in place (a reload): every card is matched again at the next evaluation. */
  rejudge(): void {
    this.#matchMemo = new WeakMap();
    this.#lastEvaluation = undefined;
    this.#steady = undefined;
  }

  /** The lookalikes among the agents with a card, by base URL: the earlier agent of another origin each looks like. */
  get lookalikes(): ReadonlyMap<string, Lookalike> {
    return this.#lookalikes;
  }

  /** The bytes the lookalike index's lists reserve (typed arrays, outside the JavaScript heap). */
  get lookalikeBytes(): number {
    return this.#lookalikeIndex.listBytes;
  }

  /** Whether an agent of `origin` going by `names` looks like one with a card here, from another origin (see `LookalikeIndex.judge`). */
  lookalikeOf(origin: string, names: readonly string[]): Lookalike | undefined {
    const found = this.#lookalikeIndex.judge({ origin, names });
    return found && { of: found.of, origin: found.origin, reason: found.reason };
  }

  /** The matcher's verdicts by base URL, from the last selection. */
  get verdicts(): ReadonlyMap<string, Verdict> {
    return this.#verdicts;
  }

  /**
   * Observes each admitted endpoint's health and selects. `entries`: the cycle's cards, aligned
   * with `admitted` (otherwise each is read from the cache). `stands(settledDigest)`: whether the
   * publication that settled at that digest still stands. Returns the agents to publish, or
   * undefined when the last selection was reused (its lasting alerts raised again); after a
   * publication, call {@link settle}.
   */
  async evaluate(admitted: readonly AdmittedEndpoint[], entries: ReadonlyArray<CacheEntry | undefined> | undefined, stands: (settledDigest: string) => boolean): Promise<SnapshotAgent[] | undefined> {
    const { cache, events, health } = this.#o;
    // A first cycle at 100,000 endpoints is tens of seconds of work: it runs in slices, the event
    // loop turning between them (the service's /healthz and requests are answered meanwhile).
    const pacer = new Pacer();
    const { list: reviewedList, byName: reviewed } = await this.#reviewedAgents(pacer);
    const callsRevision = this.#o.calls?.revision ?? 0;
    const steady = this.#steady;
    this.#steady = undefined;
    if (steady !== undefined && this.#repeats(steady, admitted, entries, reviewedList, callsRevision, stands)) {
      // The same endpoints, cards, reviewed agents, calls and statuses as a pass that changed no
      // status: its observations would change none again. Count them, keep its alerts up.
      health.repeatGood(steady.statuses);
      for (const [key, alert] of steady.alerts) this.#o.alerts.raise(key, alert);
      await this.#raiseSelectionAlerts(this.#lastEvaluation!, pacer);
      this.#steady = steady;
      return undefined;
    }
    const healthBefore = health.revision;
    const statuses: HealthStatus[] = [];
    /** The alerts this pass raises (a steady pass raises them again without observing). */
    const raised: Array<readonly [string, AlertInput]> = [];
    const raise = (key: string, alert: AlertInput): void => {
      raised.push([key, alert]);
      this.#o.alerts.raise(key, alert);
    };
    const isReviewed = (r: EndpointRecord): boolean => reviewed.get(r.name)?.source === r.source;
    const staticEnter = this.#o.staticEnterAfter;
    const candidates: Candidate[] = [];
    /** Per candidate, whether it is degraded (read with its status, not looked up again). */
    const degraded: boolean[] = [];
    for (let i = 0; i < admitted.length; i++) {
      // The clock read every 64 endpoints: a wave's cycle observes every one of them.
      if ((i & 63) === 63 && pacer.due) await pacer.tick();
      const ep = admitted[i]!;
      const entry = entries !== undefined ? entries[i] : await cache.peek(ep.baseUrl);
      const reviewedRecord = reviewed.size === 0 ? undefined : ep.records.find(isReviewed);
      const critical = reviewedRecord ? reviewed.get(reviewedRecord.name)!.critical : false;
      // Failures are the cache's count of failed fetches: a cycle spent in backoff adds none.
      const neverSeen = entry === undefined ? cache.lastFailure(ep.baseUrl) : undefined;
      const failures = entry?.failures ?? neverSeen?.failures ?? 0;
      // The cause, as the cache classified it, so the verdict names it (a refused interface host, a failed token request).
      const lastError = entry?.lastError ?? neverSeen?.error;
      const extendedCard = extendedCardNote(entry);
      const callStreak = this.#o.calls?.streak(ep.baseUrl);
      const usable = entry?.usable ?? false;
      const observation =
        lastError === undefined && extendedCard === undefined && callStreak === undefined
          ? failures === 0
            ? usable
              ? FRESH
              : NO_CARD
            : { failures, usable }
          : {
              failures,
              usable,
              ...(lastError !== undefined && { cause: { message: lastError.message, code: lastError.code, ...(lastError.stage !== undefined && { stage: lastError.stage }), ...(lastError.status !== undefined && { status: lastError.status }) } }),
              ...(extendedCard !== undefined && { extendedCard }),
              ...(callStreak !== undefined && { calls: callStreak }),
            };
      const t = health.observe(ep.baseUrl, observation, reviewedRecord ? { critical, enterAfter: staticEnter } : critical ? CRITICAL : NOT_CRITICAL);
      if (t) events?.emit({ type: 'health.changed', endpoint: ep.baseUrl, from: t.from, to: t.to, successes: t.status.successes, failures: t.status.failures });
      const status = health.get(ep.baseUrl)!;
      statuses.push(status);
      if (status.state === 'removed') {
        raise(`removed:${ep.baseUrl}`, { kind: 'repeated-failures', endpoint: ep.baseUrl, message: `${ep.baseUrl} left new snapshots: ${status.reason}` });
      }
      if (critical && status.failures > 0) {
        const member = isMember(status.state);
        const kind = member ? 'critical-degraded' : 'critical-unavailable';
        raise(`${kind}:${ep.baseUrl}`, {
          kind,
          endpoint: ep.baseUrl,
          message: member
            ? `critical agent at ${ep.baseUrl} is degraded (${status.reason}); it stays in snapshots`
            : `critical agent at ${ep.baseUrl} has no usable card yet (${status.failures} failures); it joins as soon as one arrives`,
        });
      }
      // An extended card that could not be fetched: reported while it lasts (the last good one, or
      // the public card, stays in use).
      if (extendedCard !== undefined) {
        raise(`extended-card:${ep.baseUrl}`, { kind: 'extended-card', endpoint: ep.baseUrl, message: `extended card of ${ep.baseUrl} ${extendedCard}` });
      }
      // An extended card that renames the agent, or changes its skills or their tags: reported
      // while it lasts (a rename or a retag is not adopted; see extendedCardChange). The key
      // carries what changed, so another change later is a new alert.
      const change = entry === undefined ? undefined : extendedCardChange(entry);
      if (change !== undefined) {
        const what = describeExtendedCardChange(change);
        raise(`extended-card-differs:${ep.baseUrl}:${sha256Hex(what).slice(0, 16)}`, {
          kind: 'extended-card-differs',
          endpoint: ep.baseUrl,
          message: `extended card of ${ep.baseUrl} (agent ${JSON.stringify(entry!.card.name)}) for ${entry!.extended!.identity} differs from its public card: ${what}`,
          detail: { identity: entry!.extended!.identity, ...change },
        });
      }
      // A member keeps its last card while it is degraded, even past the card's staleness when
      // it has not failed often enough to leave (or is critical). Matched and published: its
      // extended card when it has a good one (the same entry gives the same effective entry).
      if (entry !== undefined && isMember(status.state)) {
        candidates.push({ endpoint: ep, entry: effectiveEntry(entry) });
        degraded.push(status.state === 'degraded');
      }
    }

    for (const [url, l] of await this.#findLookalikes(candidates, pacer)) {
      raise(`lookalike:${url}`, { kind: 'lookalike', endpoint: url, message: `${url}: ${l.reason}`, detail: { of: l.of, origin: l.origin } });
    }
    const last = this.#lastEvaluation;
    if (
      last !== undefined &&
      last.settledDigest !== undefined &&
      stands(last.settledDigest) &&
      last.reviewed === reviewedList &&
      sameCandidates(last.candidates, candidates) &&
      sameLists(last.degraded, degraded)
    ) {
      // Nothing the selection depends on changed: the same verdicts, the same snapshot, whose
      // lasting alerts (selection, routing) are raised again as an evaluation would. The cycle's
      // candidates take the place of the last ones: after a wave of revalidations they hold the
      // cache's new entries, and the replaced ones are let go.
      await this.#raiseSelectionAlerts(last, pacer);
      this.#lastEvaluation = { ...last, candidates };
      if (health.revision === healthBefore && entries !== undefined && !entries.includes(undefined)) {
        this.#steady = { admitted, entries, reviewed: reviewedList, calls: callsRevision, health: healthBefore, statuses, alerts: raised };
      }
      return undefined;
    }
    const presentable = this.#o.select.presentable ?? (await this.#presentable(candidates, pacer));
    const excluded = this.#o.lookalikes === 'exclude' ? new Map([...this.#lookalikes].map(([url, l]) => [url, `lookalike: ${l.reason}`])) : undefined;
    const selection = await withSpan(SPAN.match, { attributes: { [ATTR.endpoints]: candidates.length } }, async (span) => {
      const s = await selectAgentsPaced(candidates, { ...this.#o.select, reviewed: reviewedList, memo: this.#matchMemo, fitted: this.#fitted, presentable, ...(excluded && { excluded }) }, pacer);
      if (span.recording) {
        let unsuitable = 0;
        let excludedCount = 0;
        for (const v of s.verdicts.values()) {
          if (v.verdict === 'unsuitable') unsuitable++;
          else if (v.verdict === 'excluded') excludedCount++;
        }
        span.set({ [ATTR.agentsSelected]: s.selected.length, [ATTR.agentsUnsuitable]: unsuitable, [ATTR.agentsExcluded]: excludedCount });
      }
      return s;
    });
    for (const [url, v] of selection.verdicts) {
      if (pacer.due) await pacer.tick();
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
    await this.#raiseSelectionAlerts({ selection }, pacer);
    this.#pending = { candidates, degraded, reviewed: reviewedList, selection };
    // Transport options travel from the first record of the endpoint that carries them.
    const transports = new Map<string, TransportOptions | undefined>();
    for (let i = 0; i < candidates.length; i++) {
      if (i % AGENTS_PER_SLICE === 0 && pacer.due) await pacer.tick();
      transports.set(candidates[i]!.endpoint.baseUrl, transportOf(candidates[i]!.endpoint.records));
    }
    const flags = (url: string): { degraded: boolean; transport?: TransportOptions } => {
      const transport = transports.get(url);
      return { degraded: health.get(url)?.state === 'degraded', ...(transport !== undefined && { transport }) };
    };
    const agents: SnapshotAgent[] = [];
    for (let i = 0; i < selection.selected.length; i += AGENTS_PER_SLICE) {
      if (pacer.due) await pacer.tick();
      for (const agent of toSnapshotAgents(selection.selected.slice(i, i + AGENTS_PER_SLICE), flags)) agents.push(agent);
    }
    return agents;
  }

  /**
   * Brings the lookalike index to the candidates (an agent that left is dropped; one that arrived
   * is added after the others) and, when it changed, finds the lookalikes again: in slices on
   * `pacer` (100,000 arrivals on a first cycle), the new lookalikes taking the place of the last
   * ones only once all are found.
   */
  async #findLookalikes(candidates: readonly Candidate[], pacer: Pacer): Promise<ReadonlyMap<string, Lookalike>> {
    // The same endpoints (records) with the same cards: the same names, the same lookalikes (a
    // cycle with nothing due, or revalidations, costs a comparison per candidate, not an index pass).
    // Compared in place: a cycle with nothing due allocates nothing here.
    const last = this.#lookalikeInputs;
    let same = last.endpoints.length === candidates.length;
    for (let i = 0; same && i < candidates.length; i++) {
      if (i % AGENTS_PER_SLICE === 0 && pacer.due) await pacer.tick();
      same = candidates[i]!.endpoint === last.endpoints[i] && cardIdentity(candidates[i]!.entry) === last.cards[i];
    }
    if (same) return this.#lookalikes;
    const endpoints: object[] = [];
    const cards: object[] = [];
    const present = new Set<string>();
    for (let i = 0; i < candidates.length; i++) {
      if (i % AGENTS_PER_SLICE === 0 && pacer.due) await pacer.tick();
      const { endpoint, entry } = candidates[i]!;
      endpoints.push(endpoint);
      cards.push(cardIdentity(entry));
      present.add(endpoint.baseUrl);
    }
    this.#lookalikeInputs = { endpoints, cards };
    const index = this.#lookalikeIndex;
    const removed = new Set<string>();
    for (const key of [...index.keys()]) {
      if (pacer.due) await pacer.tick();
      if (!present.has(key) && index.delete(key)) removed.add(key);
    }
    const arrived: string[] = [];
    let renamed = false;
    for (const { endpoint, entry } of candidates) {
      if (pacer.due) await pacer.tick();
      const key = endpoint.baseUrl;
      const known = index.has(key);
      const names = [cardFacts(entry).name, ...endpoint.records.flatMap((r) => [r.name, identifierName(r.metadata['identifier'] ?? '') ?? []].flat())];
      if (!index.set({ key, origin: originOf(key) ?? key, names })) continue;
      if (known) renamed = true;
      else arrived.push(key);
    }
    if (removed.size === 0 && arrived.length === 0 && !renamed) return this.#lookalikes;
    // The lookalikes others read are replaced once all are found; who looks like whom is read only
    // here, and changes in place.
    const next = renamed ? new Map<string, Lookalike>() : new Map(this.#lookalikes);
    const lookalikeOf = this.#lookalikeOf;
    const judge = (key: string): void => {
      const found = index.find(key);
      if (found === undefined) {
        next.delete(key);
        lookalikeOf.delete(key);
      } else {
        next.set(key, { of: found.of, origin: found.origin, reason: found.reason });
        lookalikeOf.set(key, found.key);
      }
    };
    const judgeAll = async (keys: Iterable<string>): Promise<void> => {
      for (const key of keys) {
        if (pacer.due) await pacer.tick();
        judge(key);
      }
    };
    if (renamed) {
      // An agent that changed its names keeps its place: later ones may look like it now, or no
      // longer. Every agent is judged again (rare: names seldom change).
      lookalikeOf.clear();
      await judgeAll([...index.keys()]);
    } else {
      // An agent only looks like one that arrived before it: an arrival changes no earlier agent's
      // verdict, and a removal only those of the agents that looked like it.
      for (const key of removed) {
        next.delete(key);
        lookalikeOf.delete(key);
      }
      await judgeAll([...lookalikeOf].filter(([, of]) => removed.has(of)).map(([key]) => key));
      await judgeAll(arrived);
    }
    this.#lookalikes = next;
    return next;
  }

  /** Forgets what is known of an endpoint that left discovery (whether its card once fitted). */
  forget(url: string): void {
    this.#fitted.delete(url);
    this.#steady = undefined;
  }

  /** The lasting alerts of a selection (selection, routing), raised again while it stands. */
  async #raiseSelectionAlerts(evaluation: Pick<Evaluation, 'selection'>, pacer: Pacer): Promise<void> {
    const alerts = evaluation.selection.alerts;
    // Built once per selection: a selection that stands is raised again every cycle, and a fleet
    // can have an alert per endpoint (a key and an alert each, every cycle, otherwise).
    let raised = this.#selectionAlerts.get(alerts);
    if (raised === undefined) {
      raised = alerts.map((a) => [`${a.kind}:${a.endpoint ?? ''}`, { kind: a.kind, message: a.message, ...(a.endpoint !== undefined && { endpoint: a.endpoint }) }] as const);
      this.#selectionAlerts.set(alerts, raised);
    }
    // In slices: a first selection over 10,000 endpoints raises (and logs, and journals) 10,000 at once.
    for (let i = 0; i < raised.length; i++) {
      if (i % AGENTS_PER_SLICE === AGENTS_PER_SLICE - 1 && pacer.due) await pacer.tick();
      const [key, alert] = raised[i]!;
      this.#o.alerts.raise(key, alert);
    }
  }

  /**
   * Whether this pass would repeat `steady` exactly: every input of its observations is the same
   * object or revision (the admitted endpoints, each cycle's card entry, the reviewed agents, the
   * calls' health and every health status), and its selection still stands.
   */
  #repeats(
    steady: SteadyPass,
    admitted: readonly AdmittedEndpoint[],
    entries: ReadonlyArray<CacheEntry | undefined> | undefined,
    reviewed: readonly ReviewedAgent[],
    calls: number,
    stands: (settledDigest: string) => boolean,
  ): boolean {
    const last = this.#lastEvaluation;
    return (
      entries !== undefined &&
      steady.admitted === admitted &&
      steady.reviewed === reviewed &&
      steady.calls === calls &&
      steady.health === this.#o.health.revision &&
      last !== undefined &&
      last.settledDigest !== undefined &&
      last.reviewed === reviewed &&
      stands(last.settledDigest) &&
      sameLists(steady.entries, entries)
    );
  }

  /**
   * The publication of the last selection ended: `settledDigest` is the digest now current when
   * that was its whole outcome, undefined when something was held, deferred or refused.
   */
  settle(settledDigest: string | undefined): void {
    if (this.#pending === undefined) return;
    // Only the selection's lasting alerts are read again: its selected agents (each with the entry
    // it was selected from) are not kept past the publication.
    const { candidates, degraded, reviewed, selection } = this.#pending;
    this.#lastEvaluation = { candidates, degraded, reviewed, selection: { alerts: selection.alerts }, settledDigest };
    this.#pending = undefined;
  }

  /** Reviewed agents: the records of static sources (their metadata carries description, tags or routingTags, critical). */
  async #reviewedAgents(pacer: Pacer): Promise<{ list: ReviewedAgent[]; byName: ReadonlyMap<string, ReviewedAgent> }> {
    const from = this.#o.sources.filter((s) => s.kind === 'static').map((s) => s.current().records);
    if (this.#reviewedCache !== undefined && sameLists(from, this.#reviewedCache.from)) return this.#reviewedCache;
    const list = await runPaced(reviewedSteps(from), pacer);
    // By name, made once per change of the static sources (each cycle looks up every endpoint's records).
    this.#reviewedCache = { from, list, byName: new Map(list.map((r) => [r.name, r])) };
    return this.#reviewedCache;
  }
}

/** `for <identity>: <why it failed>; <which card is used>`, while an extended card cannot be fetched. */
function extendedCardNote(entry: CacheEntry | undefined): string | undefined {
  const extended = entry?.extended;
  if (extended?.lastError === undefined) return undefined;
  return `for ${extended.identity}: ${extended.lastError.message}; ${extended.accepted !== undefined ? 'the last good extended card stays in use' : 'the public card is used'}`;
}

/**
 * A pass that reused the last selection and whose observations changed no health status but the
 * count of good observations, with what it observed from and the alerts it raised. While every
 * input is the same, the next pass would observe the same and change nothing either: it counts the
 * good observations, raises the same alerts and reuses the selection, without visiting each
 * endpoint's card, health and alerts (a cycle with nothing due).
 */
interface SteadyPass {
  readonly admitted: readonly AdmittedEndpoint[];
  /** Each admitted endpoint's entry (every one has a card: a never-seen endpoint's failures count on outside its entry). */
  readonly entries: ReadonlyArray<CacheEntry | undefined>;
  readonly reviewed: readonly ReviewedAgent[];
  /** The calls' health revision (`CallHealth.revision`; 0 without it). */
  readonly calls: number;
  /** The health tracker's revision, unchanged by the pass. */
  readonly health: number;
  /** Each admitted endpoint's status, in order. */
  readonly statuses: readonly HealthStatus[];
  readonly alerts: ReadonlyArray<readonly [string, AlertInput]>;
}

interface Evaluation {
  readonly candidates: Candidate[];
  readonly degraded: boolean[];
  readonly reviewed: ReviewedAgent[];
  readonly selection: Pick<Selection, 'alerts'>;
  readonly settledDigest: string | undefined;
}

/** The reviewed agents of the static sources' records, yielding every {@link AGENTS_PER_SLICE} records. */
function* reviewedSteps(staticRecords: ReadonlyArray<readonly EndpointRecord[]>): Generator<void, ReviewedAgent[]> {
  const out = new Map<string, ReviewedAgent>();
  // One frozen list per distinct tag list (a fleet's static entries share a few): a list per agent was 56 B each.
  const tagLists = new Map<string, readonly string[]>();
  let read = 0;
  for (const records of staticRecords) {
    for (const r of records) {
      if (++read % AGENTS_PER_SLICE === 0) yield;
      if (out.has(r.name)) continue;
      const listed = r.metadata.routingTags ?? r.metadata.tags ?? '';
      let tags = tagLists.get(listed);
      if (tags === undefined) tagLists.set(listed, (tags = Object.freeze(listed.split(',').filter(Boolean))));
      out.set(r.name, {
        source: r.source,
        name: r.name,
        description: r.metadata.description ?? '',
        // An entry's routingTags route it whatever its card's skills are tagged.
        tags,
        ...(r.metadata.routingTags !== undefined && { byRoutingTags: true }),
        critical: r.metadata.critical === 'true',
      });
    }
  }
  return [...out.values()];
}

/** Whether two candidate lists name the same endpoints with entries that select and publish alike. */
function sameCandidates(a: readonly Candidate[], b: readonly Candidate[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.endpoint !== b[i]!.endpoint || !sameForSelection(a[i]!.entry, b[i]!.entry)) return false;
  return true;
}

/**
 * Whether two entries of an endpoint give the same selection and the same snapshot agent: the
 * same card (selection reads nothing else of an entry) and the same fields a snapshot agent
 * copies. A revalidation (a 304) makes a new entry with new freshness and the same card: a cycle
 * after a wave of them reuses the last selection instead of selecting and building a snapshot
 * again over every endpoint, only to find the same digest.
 */
function sameForSelection(a: CacheEntry, b: CacheEntry): boolean {
  if (a === b) return true;
  if (cardIdentity(a) !== cardIdentity(b) || a.rawSha256 !== b.rawSha256 || a.stale !== b.stale || a.cardUrl !== b.cardUrl) return false;
  // The same raw hash: the same body (a snapshot agent's text).
  if (a.canonicalSha256 !== b.canonicalSha256 || a.protocolVersion !== b.protocolVersion) return false;
  const ka = cardKindOf(a);
  const kb = cardKindOf(b);
  return ka.cardKind === kb.cardKind && (ka.cardKind === 'public' || ka.identity === (kb as typeof ka).identity);
}
