/**
 * Resolution: which endpoints discovery knows. Resolves the sources' records through the
 * allowlist into admitted and refused endpoints, keeps those no source proposes any more as gone
 * for the removal grace, and lets a restored snapshot's agents stand in for a source's records
 * until it lists for the first time.
 */
import type { Clock } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import type { HostPolicy } from '../fetch/index.js';
import type { AdmittedEndpoint, RefusedRecord } from '../resolve/index.js';
import { resolveEndpointsPaced } from '../resolve/resolve-endpoints.js';
import { Pacer } from '../clock/pacer.js';
import type { SnapshotAgent } from '../snapshot/index.js';
import type { EndpointRecord, Source } from '../sources/index.js';
import { sameLists } from './same-lists.js';

export interface MembershipOptions {
  sources: readonly Source[];
  hostPolicy: HostPolicy;
  clock: Clock;
  events: EventStream | undefined;
  /** How long a gone endpoint is kept before it is forgotten. */
  removalGraceMs: number;
}

/** An endpoint no source proposes any more: when it left (monotonic ms) and its last record. */
export interface GoneEndpoint {
  readonly at: number;
  readonly endpoint: AdmittedEndpoint;
}

export class Membership {
  readonly #o: MembershipOptions;
  #admitted: readonly AdmittedEndpoint[] = [];
  #refused: readonly RefusedRecord[] = [];
  readonly #gone = new Map<string, GoneEndpoint>();
  /** The sources' record lists the current admission was resolved from (unchanged lists: same result). */
  #resolvedFrom: ReadonlyArray<readonly EndpointRecord[]> | undefined;
  /**
   * Per source id, the restored snapshot's agents it had proposed, standing in for its records
   * until it lists for the first time (a catalog host down at restart removes nothing); dropped
   * once it has.
   */
  readonly #restoredRecords = new Map<string, readonly EndpointRecord[]>();
  #revision = 0;

  constructor(options: MembershipOptions) {
    this.#o = options;
  }

  /** The admitted endpoints (a new list whenever the admission changes). */
  get admitted(): readonly AdmittedEndpoint[] {
    return this.#admitted;
  }

  get refused(): readonly RefusedRecord[] {
    return this.#refused;
  }

  /** Gone endpoints by base URL, until the grace passes. */
  get gone(): ReadonlyMap<string, GoneEndpoint> {
    return this.#gone;
  }

  /** Increases whenever an endpoint is admitted, refused, gone or forgotten. */
  get revision(): number {
    return this.#revision;
  }

  /** The allowlist or the sources changed: the next {@link resolve} resolves every record again. */
  invalidate(): void {
    this.#resolvedFrom = undefined;
  }

  /** A restored snapshot's agents stand in for the records of the sources that proposed them. */
  restore(agents: readonly SnapshotAgent[]): void {
    const ids = new Set(this.#o.sources.map((s) => s.id));
    const bySource = new Map<string, EndpointRecord[]>();
    for (const a of agents) {
      for (const id of a.sources) {
        if (!ids.has(id)) continue;
        const metadata = { restored: 'true', ...(a.identifier !== undefined && { identifier: a.identifier }) };
        // Its local name as the record's name: the naming rule gives it back unchanged.
        const records = bySource.get(id) ?? [];
        // Its transport options too, so the restored snapshot's digest stands until the source lists again.
        const transport = a.transport === undefined ? {} : { transport: a.transport };
        records.push(Object.freeze({ name: a.localName, baseUrl: a.baseUrl, source: id, metadata: Object.freeze(metadata), ...transport }));
        bySource.set(id, records);
      }
    }
    for (const [id, records] of bySource) this.#restoredRecords.set(id, Object.freeze(records));
  }

  /**
   * Resolves the sources' current records (emitting `endpoint.admitted`, `endpoint.refused` and
   * `endpoint.gone` for the changes) and returns the gone endpoints forgotten now, past the grace.
   */
  async resolve(): Promise<Array<[string, GoneEndpoint]>> {
    const inputs = this.#o.sources.map((s) => this.#recordsOf(s));
    if (sameLists(inputs, this.#resolvedFrom)) {
      // The same records resolve to the same admission: only the grace of gone endpoints runs on.
      return this.#evictGone(this.#o.clock.now());
    }
    const before = new Map(this.#admitted.map((e) => [e.baseUrl, e]));
    const refusedBefore = new Set(this.#refused.map((r) => `${r.record.source}\u0000${r.record.baseUrl}`));
    // In slices: a first listing of 100,000 records lets the event loop run while it is judged.
    const pacer = new Pacer();
    // An endpoint admitted before (or gone within its grace) keeps the very string it was keyed by.
    const known = (key: string): string | undefined => before.get(key)?.baseUrl ?? this.#gone.get(key)?.endpoint.baseUrl;
    const { admitted, refused } = await resolveEndpointsPaced(inputs, this.#o.hostPolicy, pacer, known);
    const events = this.#o.events;
    const now = this.#o.clock.now();
    // The events go out in slices; the state changes at once at the end (a reader between two
    // slices sees the last admission, whole).
    const back: string[] = [];
    for (const ep of admitted) {
      if (pacer.due) await pacer.tick();
      if (this.#gone.has(ep.baseUrl)) {
        back.push(ep.baseUrl);
        events?.emit({ type: 'endpoint.admitted', endpoint: ep.baseUrl, sources: ep.sources, reason: 'proposed again within its grace period; its cached card is kept' });
      } else if (!before.has(ep.baseUrl)) events?.emit({ type: 'endpoint.admitted', endpoint: ep.baseUrl, sources: ep.sources });
      before.delete(ep.baseUrl);
    }
    for (const r of refused) {
      if (pacer.due) await pacer.tick();
      if (!refusedBefore.has(`${r.record.source}\u0000${r.record.baseUrl}`)) {
        events?.emit({ type: 'endpoint.refused', endpoint: r.record.baseUrl, sources: [r.record.source], code: r.code, reason: r.reason });
      }
    }
    // An endpoint no source proposes is never requested again; it is forgotten after the grace.
    for (const gone of before.values()) events?.emit({ type: 'endpoint.gone', endpoint: gone.baseUrl, sources: gone.sources });
    for (const url of back) this.#gone.delete(url);
    for (const gone of before.values()) this.#gone.set(gone.baseUrl, { at: now, endpoint: gone });
    this.#resolvedFrom = inputs;
    this.#admitted = admitted;
    this.#refused = refused;
    // Counted once the new admission is in place (a reader between two slices sees the last one, whole).
    this.#revision++;
    return this.#evictGone(now);
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

  /** Drops the endpoints gone for longer than the removal grace, and returns them. */
  #evictGone(now: number): Array<[string, GoneEndpoint]> {
    const evicted: Array<[string, GoneEndpoint]> = [];
    for (const [url, gone] of this.#gone) {
      if (now - gone.at < this.#o.removalGraceMs) continue;
      this.#gone.delete(url);
      this.#revision++;
      evicted.push([url, gone]);
    }
    return evicted;
  }
}
