/**
 * Endpoint-state views, for the API and the dashboard: one verdict per endpoint (admitted, gone
 * or refused) from the first stage that decides it, with the time it was entered, and the full
 * status behind it (sources, cache entry, last failure, health, matcher verdict).
 */
import type { CacheEntry, CardCache, EntryError } from '../cache/index.js';
import { cardKindOf, effectiveEntry, extendedCardChange } from '../cache/index.js';
import type { ExtendedCardChange } from '../cache/index.js';
import { cardIdentity } from '../cache/cache-entries.js';
import type { CardAccess, UrlJudge } from '../card/index.js';
import { cardAccess } from '../card/index.js';
import type { Clock } from '../clock/index.js';
import type { CredentialsInput } from '../fetch/index.js';
import type { EndpointCause, HealthStatus, HealthTracker } from '../health/index.js';
import { causeOf, causeRefuses } from '../health/index.js';
import type { Verdict } from '../match/index.js';
import type { AdmittedEndpoint } from '../resolve/index.js';
import type { Snapshot, SnapshotStore } from '../snapshot/index.js';
import type { EndpointRecord } from '../sources/index.js';
import type { Lookalike } from '../rules/lookalike.js';
import type { Membership } from './membership.js';
import type { EndpointVerdict } from '../health/endpoint-causes.js';
import { Pacer, runPaced } from '../clock/pacer.js';

/** Endpoints whose state is computed between two yields of the views' steps. */
const STATES_PER_STEP = 256;


export interface EndpointState {
  readonly verdict: EndpointVerdict;
  readonly reason: string;
  /**
   * What caused a `refused` verdict, or the failures behind `pending` and `removed`, in the
   * vocabulary of docs/vocabulary.md (`allowlist`, `pin`, `unauthorized`, `unreachable`, …).
   */
  readonly cause?: EndpointCause;
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
  readonly cache?: { expiresInMs: number } & Pick<CacheEntry, 'cardUrl' | 'etag' | 'expiresAt' | 'failures' | 'stale' | 'usable' | 'lastOutcome' | 'lastError' | 'rawSha256' | 'canonicalSha256' | 'fetchedAtWall' | 'validatedAtWall' | 'protocolVersion'> & {
      /** The card matching and trees use: the public one, or the extended card of `identity`. */
      cardKind: 'public' | 'extended';
      identity?: string;
      /** Why the last extended card call failed (URL and reason), while it does. */
      extendedError?: EntryError;
      /**
       * How the good extended card differs from the public card in name, skills and tags, and
       * whether it is adopted (`adopted: false`, a rename or a retag: `cardKind` stays `public`).
       */
      extendedChange?: ExtendedCardChange;
    };
  readonly lastFailure?: { code: string; message: string; failures: number };
  readonly health?: HealthStatus;
  readonly verdict?: Verdict;
  /**
   * From its card: the interface a client here calls (with its tenant), and the card's security
   * schemes and requirements with whether the configured credentials can satisfy them. Scheme
   * names and descriptions are card text (display only); no credential is ever in it.
   */
  readonly access?: CardAccess;
  /** Set when its name or identifier looks like an earlier agent's of another origin (the same shape as `ArdVerified.lookalike`). */
  readonly lookalike?: Lookalike;
}

export interface EndpointViewsOptions {
  members: Membership;
  health: HealthTracker;
  cache: CardCache;
  store: SnapshotStore;
  clock: Clock;
  /** How long a gone endpoint is kept (its state says when it is forgotten). */
  removalGraceMs: number;
  /** For {@link EndpointStatus.access}: the peers' credentials (only to judge; none is sent) and the interface judge. */
  access?: { readonly credentials?: CredentialsInput; readonly judge?: UrlJudge };
}

export class EndpointViews {
  readonly #o: EndpointViewsOptions;
  /** One verdict per endpoint (admitted, gone or refused), with the time it was entered. */
  #states = new Map<string, EndpointState>();
  /** The membership revision the states were last rebuilt for. */
  #revision: number | undefined;
  /** What the states were last computed from: while it is the same (and nothing is gone), they stand. */
  #inputs: { members: number; health: number; verdicts: ReadonlyMap<string, Verdict>; heldNames: readonly string[]; snapshot: Snapshot | undefined } | undefined;
  #publishedMemo: { snapshot: Snapshot | undefined; heldNames: readonly string[]; published: ReadonlySet<string>; held: ReadonlySet<string>; selectedReason: string } | undefined;

  constructor(options: EndpointViewsOptions) {
    this.#o = options;
  }

  /** The access of each card, computed once per card (see `cardIdentity`) until the credentials change ({@link forgetAccess}). */
  #access = new WeakMap<object, CardAccess>();

  /** The credentials changed in place (a reload): each card's access is judged again when next shown. */
  forgetAccess(): void {
    this.#access = new WeakMap();
  }

  async #accessOf(entry: CacheEntry): Promise<CardAccess> {
    const card = cardIdentity(entry);
    let access = this.#access.get(card);
    if (access === undefined) {
      access = await cardAccess(entry.card, entry.cardUrl, this.#o.access?.credentials, this.#o.access?.judge);
      this.#access.set(card, access);
    }
    return access;
  }

  /** Forgets the state of an endpoint discovery forgot. */
  forget(url: string): void {
    this.#states.delete(url);
    this.#inputs = undefined;
  }

  /**
   * One verdict per endpoint, keeping the time each was entered. `verdicts`: the matcher's;
   * `heldNames`: the local names the removal guard keeps in the current snapshot.
   */
  async update(verdicts: ReadonlyMap<string, Verdict>, heldNames: readonly string[]): Promise<void> {
    // While the endpoints stay the same, only the states that changed are written (most cycles
    // change none); otherwise the map is rebuilt. Both read the previous states only.
    const revision = this.#o.members.revision;
    // The same endpoints, statuses, verdicts and snapshot give the same states: a cycle with
    // nothing due computes none. (A gone endpoint's reason counts down its grace: computed.)
    const inputs = { members: revision, health: this.#o.health.revision, verdicts, heldNames, snapshot: this.#o.store.current };
    const last = this.#inputs;
    this.#inputs = inputs;
    if (
      last !== undefined &&
      this.#o.members.gone.size === 0 &&
      last.members === inputs.members &&
      last.health === inputs.health &&
      last.verdicts === verdicts &&
      last.heldNames === heldNames &&
      last.snapshot === inputs.snapshot
    ) {
      return;
    }
    // In slices (100,000 endpoints on a first cycle); the states change at once at the end.
    const pacer = new Pacer();
    if (this.#revision === revision && (await runPaced(this.#stateSteps(true, verdicts, heldNames), pacer))) return;
    await runPaced(this.#stateSteps(false, verdicts, heldNames), pacer);
    this.#revision = revision;
  }

  /** Everything known about each endpoint (admitted, gone within its grace period, or refused). */
  async status(verdicts: ReadonlyMap<string, Verdict>, lookalikes?: ReadonlyMap<string, Lookalike>): Promise<EndpointStatus[]> {
    const { cache, clock, health: tracker, members } = this.#o;
    const out: EndpointStatus[] = [];
    const now = clock.now();
    const describe = async (ep: AdmittedEndpoint): Promise<EndpointStatus> => {
      const entry = await cache.peek(ep.baseUrl);
      const failure = cache.lastFailure(ep.baseUrl);
      const health = tracker.get(ep.baseUrl);
      const verdict = verdicts.get(ep.baseUrl);
      const access = entry && (await this.#accessOf(entry));
      const lookalike = lookalikes?.get(ep.baseUrl);
      const extendedChange = entry && extendedCardChange(entry);
      return {
        state: this.#states.get(ep.baseUrl) ?? { verdict: 'pending', reason: 'not evaluated yet', since: clock.wallNow() },
        baseUrl: ep.baseUrl,
        sources: ep.sources,
        names: ep.records.map((r) => r.name),
        proposals: ep.records.map(proposalOf),
        admitted: true,
        ...(entry && {
          cache: {
            // The URL that answered: the card URL, or the 0.2 path (`/.well-known/agent.json`) a legacy peer answered at.
            cardUrl: entry.cardUrl,
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
            ...cardKindOf(effectiveEntry(entry)),
            ...(entry.extended?.lastError !== undefined && { extendedError: entry.extended.lastError }),
            ...(extendedChange !== undefined && { extendedChange }),
          },
        }),
        ...(failure && { lastFailure: { code: failure.error.code, message: failure.error.message, failures: failure.failures } }),
        ...(health && { health }),
        ...(verdict && { verdict }),
        ...(access && { access }),
        ...(lookalike && { lookalike }),
      };
    };
    // In slices: a fleet of 10,000 endpoints is about 100 ms of work (a card's access, its model).
    const pacer = new Pacer();
    for (const ep of members.admitted) {
      if (pacer.due) await pacer.tick();
      out.push(await describe(ep));
    }
    for (const { endpoint } of [...members.gone.values()]) {
      if (pacer.due) await pacer.tick();
      out.push(await describe(endpoint));
    }
    for (const r of members.refused) {
      out.push({
        state: this.#states.get(r.record.baseUrl) ?? { verdict: 'refused', reason: r.reason, since: clock.wallNow() },
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

  /**
   * Computes every endpoint's state from the previous ones, yielding every {@link STATES_PER_STEP}
   * endpoints (where a paced caller lets the event loop run). `inPlace`: writes only the changed
   * states, and only when every endpoint was set exactly once (otherwise returns false, nothing
   * written); else replaces the map.
   */
  *#stateSteps(inPlace: boolean, verdicts: ReadonlyMap<string, Verdict>, heldNames: readonly string[]): Generator<void, boolean> {
    const { clock, health: tracker, members } = this.#o;
    const wallNow = clock.wallNow();
    const next = inPlace ? undefined : new Map<string, EndpointState>();
    const changes: Array<[string, EndpointState]> = [];
    let calls = 0;
    let visited = 0;
    const set = (url: string, verdict: EndpointVerdict, reason: string, cause?: EndpointCause) => {
      calls++;
      const prev = this.#states.get(url);
      // An unchanged state keeps its object.
      const state =
        prev !== undefined && prev.verdict === verdict && prev.reason === reason && prev.cause === cause
          ? prev
          : { verdict, reason, ...(cause !== undefined && { cause }), since: prev?.verdict === verdict ? prev.since : wallNow };
      if (next !== undefined) next.set(url, state);
      else if (state !== prev) changes.push([url, state]);
    };
    const { published, held, selectedReason } = yield* this.#publishedSets(heldNames);
    const grace = this.#o.removalGraceMs;
    for (const r of members.refused) set(r.record.baseUrl, 'refused', r.reason, causeOf({ code: r.code, stage: 'resolve' }));
    for (const [url, { at }] of members.gone) {
      set(url, held.has(url) ? 'held' : 'gone', `no source proposes it any more; it is not requested and is forgotten in ${Math.max(0, Math.round((at + grace - clock.now()) / 1000))} s`);
    }
    for (const ep of members.admitted) {
      if (++visited % STATES_PER_STEP === 0) yield;
      const url = ep.baseUrl;
      const health = tracker.get(url);
      const v = verdicts.get(url);
      if (held.has(url)) set(url, 'held', `its removal is held back by the guard (${health?.reason ?? 'not selected'}); confirm to publish it`);
      // Fetched and refused (a pin, a signature, 401/403, …) with no usable card: refused, not pending.
      else if (health?.state === 'pending' && !health.usable && causeRefuses(health.cause)) set(url, 'refused', health.reason, health.cause);
      else if (!health || health.state === 'pending') set(url, 'pending', health?.reason ?? 'not evaluated yet', health?.cause);
      else if (health.state === 'removed') set(url, 'removed', health.reason, health.cause);
      else if (v && v.verdict !== 'selected') set(url, v.verdict, v.reason, v.cause);
      else if (!published.has(url)) set(url, 'pending', 'selected; waiting for the next publication');
      else if (health.state === 'degraded') set(url, 'degraded', `${health.reason}${extendedNote(health)}`);
      else set(url, 'selected', `${selectedReason}${extendedNote(health)}`);
    }
    if (next !== undefined) {
      this.#states = next;
      return true;
    }
    if (calls !== this.#states.size) return false;
    for (const [url, state] of changes) this.#states.set(url, state);
    return true;
  }

  /** The current snapshot's endpoints and those held back, computed once per snapshot and hold (in slices: 100,000 agents on a first publication). */
  *#publishedSets(heldNames: readonly string[]): Generator<void, { published: ReadonlySet<string>; held: ReadonlySet<string>; selectedReason: string }> {
    const current = this.#o.store.current;
    const memo = this.#publishedMemo;
    if (memo !== undefined && memo.snapshot === current && memo.heldNames === heldNames) return memo;
    const published = new Set<string>();
    const held = new Set<string>();
    const holding = new Set(heldNames);
    let read = 0;
    for (const a of current?.agents ?? []) {
      if (++read % STATES_PER_STEP === 0) yield;
      published.add(a.baseUrl);
      if (holding.has(a.localName)) held.add(a.baseUrl);
    }
    this.#publishedMemo = { snapshot: current, heldNames, published, held, selectedReason: `in snapshot v${current?.version ?? 0}` };
    return this.#publishedMemo;
  }
}

/** `; its extended card could not be used (for <identity>: <why>; <which card is used>)`, while that lasts. */
function extendedNote(health: HealthStatus): string {
  return health.extendedCard === undefined ? '' : `; its extended card could not be used (${health.extendedCard})`;
}

/** A record as the status shows it. */
function proposalOf(r: EndpointRecord): EndpointStatus['proposals'][number] {
  return { source: r.source, name: r.name, metadata: r.metadata };
}
