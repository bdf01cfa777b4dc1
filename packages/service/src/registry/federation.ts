/**
 * Federation of `POST /search` (ARD §8): the registries this one knows — the configured peers
 * (`server.registry.peers`) and those the AI Catalogs of discovery announce
 * (`application/ai-registry+json` entries) — are referred to (`federation: referrals`) or asked
 * (`federation: auto`), each judged by the allowlist first.
 *
 * `auto` asks each known registry `POST <base>/search` with the same query and `federation:
 * "none"` (a registry asked never asks further, so two instances that know each other do not
 * loop; this registry never asks itself), through one guarded fetcher of its own (allowlist,
 * address guard, no redirects, a body cap, a per-request deadline), at most `maxRegistries` of
 * them at once, all under one overall deadline. Their first pages are merged after the local
 * results, de-duplicated by `identifier` (ours first, then the registries in the order they are
 * known; `urn:ai:x` and `urn:air:x` are one identifier, taken in its `urn:air:` form; a result
 * with a relative identifier is refused, ARD 0.91), each taken result's `source` naming the
 * registry that answered. The answer's
 * `federation` member says how each registry answered and which duplicates were dropped; a
 * registry that failed is named there and never fails the search.
 *
 * Registry answers are data: their text is shown and searched, never trusted or put in a prompt.
 *
 * @module
 */
import type { CardFetcher, CardFetcherOptions, HostPolicy } from 'a2a-discovery';
import { AI_REGISTRY_MEDIA_TYPE, relativeIdentifierProblem } from 'a2a-discovery/internal';
import type { AnnouncedRegistry, ArdFederationReport, ArdReferral, ArdSearchRequest, ArdSearchResponse, ArdSearchResult } from 'a2a-discovery/internal';
import { canonicalIdentifier, createCardFetcher, isDiscoveryError } from 'a2a-discovery';
import { FEDERATION_DEFAULTS } from 'a2a-discovery/config';

/** A configured peer registry (`server.registry.peers[]`): its API base and a name to show. */
export interface FederationPeer {
  readonly url: string;
  readonly name?: string;
}

/** Inputs of {@link createFederation}. Durations in milliseconds, sizes in bytes. */
export interface FederationOptions {
  /** The allowlist: a registry it does not admit is neither referred to nor asked. */
  policy: HostPolicy;
  /** Configured peers, in order. */
  peers?: readonly FederationPeer[];
  /** The registries discovery's AI Catalogs announce now (read at each search). */
  announced?: () => readonly AnnouncedRegistry[];
  /** True for an API base that is this registry itself (never referred to nor asked). */
  isSelf?: (url: string) => boolean;
  /**
   * The guarded fetcher's other options (credentials per origin, the upstream budget, a DNS
   * override); the policy, body cap and per-request deadline are the federation's own.
   */
  fetcher?: Omit<CardFetcherOptions, 'policy' | 'maxBodyBytes' | 'totalTimeoutMs'>;
  /** Registries asked by one search. Default 8. */
  maxRegistries?: number;
  /** One registry's answer. Default 2,000. */
  requestTimeoutMs?: number;
  /** Every registry together. Default 3,000. */
  timeoutMs?: number;
  /** One registry's answer. Default 1 MiB. */
  maxBytes?: number;
}

type Outcome = ArdFederationReport['registries'][number]['outcome'];

/** The federation hook of the search route, and its counters. */
export interface Federation {
  /** `local` as the request's `federation` asks: unchanged for `none`, with `referrals` for `referrals`, merged with the registries' answers for `auto` (the default). Never rejects. */
  federate(request: ArdSearchRequest, local: ArdSearchResponse): Promise<ArdSearchResponse>;
  /** Registries asked (or not) since start, by outcome (the metric `a2a_discovery_federation_requests_total`). */
  stats(): ReadonlyArray<{ readonly outcome: Outcome; readonly count: number }>;
  /** Closes the fetcher; requests in flight fail (and are named as failed). */
  close(): Promise<void>;
}

/** A known registry: a configured peer or an announced one. */
interface Known {
  url: string;
  name?: string;
  identifier: string;
  description?: string;
}

type Entry = ArdFederationReport['registries'][number];

/** A known registry and, when it is not asked, why (this registry itself, or not on the allowlist). */
interface Judged {
  readonly registry: Known;
  readonly refusal?: string;
}

/** One registry's answer: its line of the report and the results it gave. */
interface Answer {
  readonly entry: Entry;
  readonly results: ArdSearchResult[];
}

/** What asking the registries needs: the guarded fetcher and the bounds of one search. */
interface Asking {
  readonly fetcher: CardFetcher;
  readonly maxRegistries: number;
  readonly timeoutMs: number;
}

/**
 * Creates the federation. No I/O until a search asks.
 *
 * @example
 * const federation = createFederation({ policy, peers: [{ url: 'https://registry.partner.example/ard', name: 'partner' }] });
 * const answer = await federation.federate({ query: { text: 'warranty' }, federation: 'auto' }, local);
 */
export function createFederation(options: FederationOptions): Federation {
  const asking: Asking = {
    maxRegistries: options.maxRegistries ?? FEDERATION_DEFAULTS.maxRegistries,
    timeoutMs: options.timeoutMs ?? FEDERATION_DEFAULTS.timeoutMs,
    fetcher: createCardFetcher({
      ...options.fetcher,
      policy: options.policy,
      maxBodyBytes: options.maxBytes ?? FEDERATION_DEFAULTS.maxBytes,
      totalTimeoutMs: options.requestTimeoutMs ?? FEDERATION_DEFAULTS.requestTimeoutMs,
    }),
  };
  const counts = new Map<Outcome, number>();
  const count = (outcome: Outcome) => counts.set(outcome, (counts.get(outcome) ?? 0) + 1);

  return {
    async federate(request, local) {
      const mode = request.federation ?? 'auto';
      if (mode === 'none') return local;
      const registries = knownRegistries(options);
      if (mode === 'referrals') return { ...local, referrals: [...(local.referrals ?? []), ...referralsTo(registries)] };
      // Later pages are local only: the registries' first pages came with the first.
      if (request.pageToken !== undefined) return { ...local, federation: { registries: [] } };
      const pageSize = Math.min(Math.max(1, request.pageSize ?? 10), 100);
      const body = JSON.stringify({ query: request.query, federation: 'none', pageSize } satisfies ArdSearchRequest);
      const { slots, answers } = await askEach(asking, registries, body);
      return merge(local, slots, answers, pageSize, count);
    },
    stats: () => [...counts].map(([outcome, n]) => ({ outcome, count: n })),
    close: () => asking.fetcher.close(),
  };
}

/** Every known registry once (by API base without a trailing slash), peers first, with its verdict. */
function knownRegistries(options: FederationOptions): Judged[] {
  const out: Judged[] = [];
  const seen = new Set<string>();
  const add = (registry: Known) => {
    const key = registry.url.replace(/\/+$/, '');
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ registry: { ...registry, url: key }, ...refusalOf(options, key) });
  };
  for (const p of options.peers ?? []) add({ url: p.url, identifier: p.url, ...(p.name !== undefined && { name: p.name }) });
  for (const a of options.announced?.() ?? []) add({ url: a.url, identifier: a.identifier, ...(a.displayName !== undefined && { name: a.displayName }), ...(a.description !== undefined && { description: a.description }) });
  return out;
}

/** Why the registry at `url` is neither referred to nor asked: it is this one, or the allowlist refuses it. */
function refusalOf(options: FederationOptions, url: string): { refusal?: string } {
  if (options.isSelf?.(url) === true) return { refusal: 'this registry itself' };
  const verdict = options.policy.check(url);
  return verdict.allowed ? {} : { refusal: `not on the allowlist (${verdict.reason})` };
}

/** The referrals of `federation: referrals`: each admitted registry as an `application/ai-registry+json` entry. */
function referralsTo(registries: readonly Judged[]): ArdReferral[] {
  return registries
    .filter((r) => r.refusal === undefined)
    .map(({ registry: r }) => ({ identifier: r.identifier, displayName: r.name ?? new URL(r.url).host, type: AI_REGISTRY_MEDIA_TYPE, url: r.url, ...(r.description !== undefined && { description: r.description }) }));
}

/**
 * Asks the admitted registries, at most `maxRegistries` of them, all under the overall deadline.
 * `slots` keeps the order they are known in: a report line for one not asked (refused or
 * skipped), the index of its answer in `answers` for one asked.
 */
async function askEach(asking: Asking, registries: readonly Judged[], body: string): Promise<{ slots: (Entry | number)[]; answers: Answer[] }> {
  const { maxRegistries, timeoutMs } = asking;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  timer.unref?.();
  const asked: Promise<Answer>[] = [];
  const slots: (Entry | number)[] = [];
  for (const { registry, refusal } of registries) {
    const base = { url: registry.url, ...(registry.name !== undefined && { name: registry.name }) };
    if (refusal !== undefined) slots.push({ ...base, outcome: 'refused', message: refusal });
    else if (asked.length >= maxRegistries) slots.push({ ...base, outcome: 'skipped', message: `more than maxRegistries=${maxRegistries} registries are known` });
    else {
      slots.push(asked.length);
      asked.push(askRegistry(asking, registry, body, controller.signal));
    }
  }
  try {
    return { slots, answers: await Promise.all(asked) };
  } finally {
    clearTimeout(timer);
  }
}

/** Asks one registry `POST <base>/search`; never rejects: a failure is its report line (failed, timeout or refused). */
async function askRegistry(asking: Asking, registry: Known, body: string, signal: AbortSignal): Promise<Answer> {
  const base = { url: registry.url, ...(registry.name !== undefined && { name: registry.name }) };
  try {
    const res = await asking.fetcher.fetch(`${registry.url}/search`, { method: 'POST', body, headers: { accept: 'application/json' }, signal });
    if (res.status !== 200) return { entry: { ...base, outcome: 'failed', message: `answered ${res.status}; expected 200` }, results: [] };
    const read = readResults(res.body);
    if (read === undefined) return { entry: { ...base, outcome: 'failed', message: 'the answer is not a search response (no results array)' }, results: [] };
    return { entry: { ...base, outcome: 'answered', ...(read.refused.length > 0 && { message: read.refused.join('; ').slice(0, 300) }) }, results: read.results };
  } catch (err) {
    if (signal.aborted) return { entry: { ...base, outcome: 'timeout', message: `no answer within the overall deadline of ${asking.timeoutMs} ms` }, results: [] };
    const code = isDiscoveryError(err) ? err.code : '';
    const outcome: Outcome = code === 'ERR_FETCH_TIMEOUT' ? 'timeout' : code === 'ERR_HOST_NOT_ALLOWED' || code === 'ERR_ADDRESS_BLOCKED' || code === 'ERR_INSECURE_URL' ? 'refused' : 'failed';
    return { entry: { ...base, outcome, message: (err instanceof Error ? err.message : String(err)).slice(0, 300) }, results: [] };
  }
}

/**
 * The local results, then each registry's first `pageSize` results in the order they are known,
 * de-duplicated by canonical identifier (the first kept, the others named as duplicates); each
 * registry's outcome counted and reported, an answering one with the results it gave.
 */
function merge(local: ArdSearchResponse, slots: readonly (Entry | number)[], answers: readonly Answer[], pageSize: number, count: (outcome: Outcome) => void): ArdSearchResponse {
  const report: Entry[] = [];
  const results: ArdSearchResult[] = [...local.results];
  // By canonical identifier: `urn:ai:x` and `urn:air:x` are one entry.
  const kept = new Map<string, string>();
  for (const r of local.results) if (!kept.has(canonicalIdentifier(r.identifier))) kept.set(canonicalIdentifier(r.identifier), r.source ?? 'local');
  const duplicates: { identifier: string; kept: string; dropped: string }[] = [];
  for (const slot of slots) {
    if (typeof slot !== 'number') {
      report.push(slot);
      count(slot.outcome);
      continue;
    }
    const { entry, results: theirs } = answers[slot]!;
    let taken = 0;
    for (const r of theirs.slice(0, pageSize)) {
      const identifier = canonicalIdentifier(r.identifier);
      const first = kept.get(identifier);
      if (first !== undefined) {
        duplicates.push({ identifier, kept: first, dropped: entry.url });
        continue;
      }
      kept.set(identifier, entry.url);
      results.push({ ...r, identifier, source: entry.url });
      taken++;
    }
    report.push(entry.outcome === 'answered' ? { ...entry, results: taken } : entry);
    count(entry.outcome);
  }
  return { ...local, results, federation: { registries: report, ...(duplicates.length > 0 && { duplicates }) } };
}

/**
 * A search answer's results that are entries (identifier, displayName and type strings), those
 * with a relative identifier refused (each named by its JSON path); undefined when it is not a
 * search answer.
 */
function readResults(body: Buffer): { results: ArdSearchResult[]; refused: string[] } | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
  const results = (doc as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return undefined;
  const refused: string[] = [];
  const entries = results.filter((r: unknown, i): r is ArdSearchResult => {
    const ok = typeof r === 'object' && r !== null && !Array.isArray(r) && typeof (r as ArdSearchResult).identifier === 'string' && typeof (r as ArdSearchResult).displayName === 'string' && typeof (r as ArdSearchResult).type === 'string';
    if (!ok) return false;
    const relative = relativeIdentifierProblem((r as ArdSearchResult).identifier);
    if (relative !== undefined) refused.push(`results[${i}].identifier ${relative}; refused`);
    return relative === undefined;
  });
  return { results: entries, refused };
}
