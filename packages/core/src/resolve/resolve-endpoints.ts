/**
 * The resolver: merges the records of every source, keeps each record's provenance, removes
 * duplicates by normalized endpoint URL (base URL, or the card URL of an endpoint given by its
 * card URL), and applies the host policy. A source can propose an
 * endpoint; only the allowlist admits it. Pure: no I/O, no events (the loop reports changes).
 */
import type { DiscoveryErrorCode } from '../errors.js';
import { isDiscoveryError } from '../errors.js';
import type { HostPolicy } from '../fetch/index.js';
import type { EndpointRecord } from '../sources/index.js';
import { runPaced, runSteps, sortSteps, type Pacer } from '../clock/pacer.js';
import { compareCodeUnits } from '../text.js';

/** One admitted endpoint and every record that proposed it. */
export interface AdmittedEndpoint {
  /**
   * The endpoint's identity everywhere: the normalized base URL (origin + path ending in `/`),
   * or, for an endpoint given by its card URL (a path ending in `.json`), the normalized card
   * URL (origin + path), which is fetched exactly there.
   */
  readonly baseUrl: string;
  /** Records in source order; the first is the primary proposal. */
  readonly records: readonly EndpointRecord[];
  /** Distinct source ids, in source order. */
  readonly sources: readonly string[];
}

export interface RefusedRecord {
  readonly record: EndpointRecord;
  readonly code: DiscoveryErrorCode;
  readonly reason: string;
}

export interface ResolveResult {
  /** Sorted by base URL, so every later stage is deterministic. */
  readonly admitted: readonly AdmittedEndpoint[];
  readonly refused: readonly RefusedRecord[];
}

/**
 * Merges, dedupes and admits. `recordLists` come in source priority order (static first).
 *
 * @example
 * const { admitted, refused } = resolveEndpoints([staticState.records, k8sState.records], hostPolicy);
 */
export function resolveEndpoints(recordLists: ReadonlyArray<readonly EndpointRecord[]>, hostPolicy: HostPolicy): ResolveResult {
  return runSteps(resolveSteps(recordLists, hostPolicy));
}

/**
 * {@link resolveEndpoints} in slices: the same result, the records judged between `pacer` ticks
 * (100,000 of them on a first cycle). `known`: the string an endpoint was admitted under before,
 * if it was (the same text): its key stays that very string when its source gives the URL as a new
 * one (a registry's page read again), so every map keyed by it (the card cache's, health's) finds
 * it by identity instead of comparing characters (see `HostPolicy`'s `asGiven`).
 */
export function resolveEndpointsPaced(
  recordLists: ReadonlyArray<readonly EndpointRecord[]>,
  hostPolicy: HostPolicy,
  pacer: Pacer,
  known?: (key: string) => string | undefined,
): Promise<ResolveResult> {
  return runPaced(resolveSteps(recordLists, hostPolicy, known), pacer);
}

/** Records judged between two yields of {@link resolveSteps}. */
const RECORDS_PER_STEP = 256;

/** The resolution, yielding every {@link RECORDS_PER_STEP} records (where a paced caller lets the event loop run). */
function* resolveSteps(recordLists: ReadonlyArray<readonly EndpointRecord[]>, hostPolicy: HostPolicy, known?: (key: string) => string | undefined): Generator<void, ResolveResult> {
  const byUrl = new Map<string, EndpointRecord[]>();
  const refused: RefusedRecord[] = [];
  let judged = 0;
  for (const list of recordLists) {
    for (const record of list) {
      if (++judged % RECORDS_PER_STEP === 0) yield;
      let key: string;
      try {
        key = hostPolicy.normalizeEndpoint(record.baseUrl);
        if (known !== undefined) key = known(key) ?? key;
      } catch (err) {
        refused.push(Object.freeze({
          record,
          code: isDiscoveryError(err) ? err.code : 'ERR_HOST_NOT_ALLOWED',
          reason: err instanceof Error ? err.message : String(err),
        }));
        continue;
      }
      const group = byUrl.get(key);
      if (group) group.push(record);
      else byUrl.set(key, [record]);
    }
  }
  yield;
  // By UTF-16 code units, in slices (one sort of 100,000 URLs held the event loop about 60 ms).
  const sorted = yield* sortSteps([...byUrl.keys()], compareCodeUnits);
  const admitted: AdmittedEndpoint[] = [];
  // An endpoint one source proposes (most of a fleet) shares that source's list: one per source, not per endpoint.
  const single = new Map<string, readonly string[]>();
  for (const baseUrl of sorted) {
    if (admitted.length % RECORDS_PER_STEP === 0) yield;
    const records = byUrl.get(baseUrl)!;
    let sources: readonly string[];
    if (records.length === 1) {
      const source = records[0]!.source;
      let shared = single.get(source);
      if (shared === undefined) single.set(source, (shared = Object.freeze([source])));
      sources = shared;
    } else sources = Object.freeze([...new Set(records.map((r) => r.source))]);
    admitted.push(Object.freeze({ baseUrl, records: Object.freeze(records), sources }));
  }
  return Object.freeze({ admitted: Object.freeze(admitted), refused: Object.freeze(refused) });
}
