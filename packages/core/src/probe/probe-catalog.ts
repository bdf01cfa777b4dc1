/**
 * Probing a registry catalog: each entry read the way the registry source reads it, admitted or
 * refused by the host policy the way the resolver admits it (duplicates merged by endpoint
 * identity), and every admitted endpoint probed like one URL. Answers "what would discovery
 * decide about each agent this catalog proposes?".
 */
import type { Problem } from '../errors.js';
import { isDiscoveryError } from '../errors.js';
import type { RegistryAdapter } from '../sources/index.js';
import { recordFromEntry, simpleCatalogAdapter } from '../sources/index.js';
import type { ProbeEndpointOptions } from './probe-endpoint.js';
import { probeEndpoint } from './probe-endpoint.js';
import type { ProbeReport } from './probe-report.js';
import { refusedReport } from './probe-report.js';
import type { Lookalike } from '../rules/lookalike.js';
import { flagLookalikes } from './probe-lookalikes.js';

/** Inputs of {@link probeCatalog}. */
export interface ProbeCatalogOptions extends ProbeEndpointOptions {
  /** The catalog format. Default {@link simpleCatalogAdapter}. */
  adapter?: RegistryAdapter;
  /** Where the catalog came from, for messages. Default `the pasted catalog`. */
  label?: string;
  /** Entries probed at most; later ones are listed as not probed. Default 20. */
  maxEntries?: number;
  /** Entries probed at the same time. Default 4. */
  concurrency?: number;
}

/** What discovery would decide about one catalog entry. */
export interface CatalogEntryReport {
  /** The entry's index in the catalog's list (`agents[2]` in the simple format). */
  index: number;
  name?: string;
  /** The URL as the catalog gives it (`url` or `cardUrl`). */
  url?: string;
  /** The endpoint's identity once admitted (the normalized base or card URL). */
  endpoint?: string;
  /** The index of an earlier entry naming the same endpoint: the resolver merges them, the report is that entry's. */
  duplicateOf?: number;
  /** The decision, stage by stage; absent when the entry was not probed (see `skipped`). */
  report?: ProbeReport;
  /** Why the entry was not probed (past `maxEntries`, or the caller's signal aborted first). */
  skipped?: string;
  /** An accepted entry whose name looks like an earlier entry's of another origin. */
  lookalike?: Lookalike;
}

/** The result of {@link probeCatalog}. */
export interface CatalogReport {
  source: string;
  /** The catalog as a whole is unreadable (not JSON, not the adapter's shape): every problem, nothing probed. */
  problems: Problem[];
  /** Things said about the catalog that decide nothing (a `next` page that is not followed). */
  notes: string[];
  entries: CatalogEntryReport[];
  /** Entries whose report is accepted / refused (duplicates counted once per entry). */
  accepted: number;
  refused: number;
  /** Present when the report was cut (the service's inspector bounds its answer): one sentence per bound that bit. */
  truncated?: string[];
}

/** Entries a catalog probe probes at most by default (this one and the AI Catalog probe). */
export const DEFAULT_PROBE_ENTRIES = 20;
/** Entries a catalog probe probes at the same time by default. */
export const DEFAULT_PROBE_CONCURRENCY = 4;
/** The simple adapter resolves a relative `next` against the page URL; a pasted catalog has none. */
const PASTED_PAGE_URL = 'https://pasted-catalog.invalid/';

/**
 * Probes every entry of one catalog page (`body`, its bytes or text). A `next` page is not
 * followed (noted). Never throws for bad input: an unreadable catalog is a report with problems.
 *
 * @example
 * const r = await probeCatalog(text, { policy, fetcher, interfacePolicy: policy });
 * for (const e of r.entries) console.log(e.name, e.report?.stage ?? e.skipped);
 */
export async function probeCatalog(body: Uint8Array | string, o: ProbeCatalogOptions): Promise<CatalogReport> {
  const adapter = o.adapter ?? simpleCatalogAdapter;
  const label = o.label ?? 'the pasted catalog';
  const maxEntries = o.maxEntries ?? DEFAULT_PROBE_ENTRIES;
  const result: CatalogReport = { source: label, problems: [], notes: [], entries: [], accepted: 0, refused: 0 };
  let page;
  try {
    page = adapter.parse(Buffer.from(body), PASTED_PAGE_URL);
  } catch (err) {
    result.problems = isDiscoveryError(err) && err.problems.length > 0 ? [...err.problems] : [{ path: '$', message: err instanceof Error ? err.message : String(err) }];
    return result;
  }
  if (page.next !== undefined) result.notes.push('the catalog links a next page; only this page is inspected (discovery reads up to registry maxPages pages)');

  const hostsJudged = o.interfacePolicy !== undefined;
  const firstByEndpoint = new Map<string, number>();
  const work: Array<{ entry: CatalogEntryReport; target: string }> = [];
  page.records.forEach((raw, index) => {
    const entry: CatalogEntryReport = { index };
    result.entries.push(entry);
    const at = `agents[${index}]`;
    const read = recordFromEntry(raw, { at, pageUrl: label, source: 'inspector', adapter: adapter.name });
    if ('problem' in read) {
      if (typeof raw?.name === 'string') entry.name = raw.name;
      entry.report = refusedReport(raw?.cardUrl ?? raw?.url ?? at, 'source', read.problem, hostsJudged);
      return;
    }
    entry.name = read.record.name;
    entry.url = read.record.baseUrl;
    let endpoint: string | undefined;
    try {
      endpoint = o.policy.normalizeEndpoint(read.record.baseUrl);
    } catch {
      // Refused by the allowlist: probeEndpoint reports it at `source`, without a request.
    }
    if (endpoint !== undefined) {
      entry.endpoint = endpoint;
      const first = firstByEndpoint.get(endpoint);
      if (first !== undefined) {
        entry.duplicateOf = first;
        return;
      }
      firstByEndpoint.set(endpoint, index);
    }
    if (work.length >= maxEntries) entry.skipped = `not probed: the inspector probes the first ${maxEntries} endpoints of a catalog`;
    else work.push({ entry, target: read.record.baseUrl });
  });

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < work.length) {
      const { entry, target } = work[next++]!;
      if (o.signal?.aborted) {
        entry.skipped = `not probed: ${reasonText(o.signal.reason)}`;
        continue;
      }
      entry.report = await probeEndpoint(target, o);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? DEFAULT_PROBE_CONCURRENCY, work.length)) }, worker));

  for (const entry of result.entries) {
    if (entry.duplicateOf !== undefined) {
      const first = result.entries[entry.duplicateOf]!;
      if (first.report) entry.report = first.report;
      else if (first.skipped !== undefined) entry.skipped = first.skipped;
    }
    if (entry.report) {
      if (entry.report.accepted) result.accepted++;
      else result.refused++;
    }
  }
  const accepted = result.entries.filter((e) => e.report?.accepted === true && e.duplicateOf === undefined);
  flagLookalikes(accepted.map((e) => ({ url: e.endpoint ?? e.url, names: [e.name, e.report?.name], flag: (l: Lookalike) => (e.lookalike = l) })));
  return result;
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}
