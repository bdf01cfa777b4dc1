/**
 * The inspector behind `POST /api/inspect`: what discovery would decide about a URL (a card, or an
 * AI Catalog and every entry of it), a pasted card or a pasted catalog (a registry catalog or an AI
 * Catalog), stage by stage — the library's probe (`a2a-discovery/probe`, packages/core/src/probe;
 * what `a2a-discovery probe` runs) under the service's own host policy, content checks, body cap
 * and per-request deadline. Nothing is looser than discovery: a host the allowlist refuses is
 * reported at `source` and never contacted, redirects are never followed, and the inspector's
 * fetcher has no credentials at all (so none can be sent); the service's credentials only judge
 * whether a card's security requirements can be satisfied (`report.security`, next to the chosen
 * interface and its tenant, `report.chosenInterface`). Bounded: `maxConcurrent` inspections at
 * once, each under one deadline that aborts its requests still in flight; each reads at most
 * `inspectMaxEntries` catalog entries and `inspectMaxDocuments` catalog documents, makes at most
 * `inspectMaxRequests` upstream requests in all (documents and cards, one budget), and answers at
 * most `inspectMaxAnswerBytes` of JSON; every bound that bites is named in the answer's
 * `truncation` (with `truncated: true`). Large catalogs are judged in slices that let the event
 * loop run between them.
 */
import type { CheckCardOptions, CardFetcher, CredentialsInput, HostPolicy } from 'a2a-discovery';
import { DiscoveryError, createCardFetcher } from 'a2a-discovery';
import { DEFAULT_CATALOG_LIMITS } from 'a2a-discovery/internal';
import type { AiCatalogReport, CatalogReport, Lookalike, ProbeReport } from 'a2a-discovery/probe';
import { identifierName, isAiCatalogDocument, probeAiCatalogDocument, probeCard, probeCatalog, probeTarget } from 'a2a-discovery/probe';
import type { CardSizeLimit } from 'a2a-discovery/config';
import { cardSizeLimit } from 'a2a-discovery/config';
import type { GuardBounds } from '../assembly/guard-options.js';
import { guardOptions } from '../assembly/guard-options.js';
import type { OnRefusal, ServerLimits } from './limits.js';
import { DEFAULT_SERVER_LIMITS } from './limits.js';

/** What to inspect: exactly one of a URL, a card (its JSON text, or the object) or a catalog (the same). */
export type InspectInput = { url: string } | { card: string } | { catalog: string };

/** The answer of an inspection. */
export interface InspectResult {
  kind: 'url' | 'card' | 'catalog';
  /** The decision on the URL or the card (`kind` `url`, `card`). */
  report?: ProbeReport;
  /** The decision on each entry of a registry catalog (`kind` `catalog`). */
  catalog?: CatalogReport;
  /** The decision on each entry of an AI Catalog: a URL that serves one (`kind` `url`) or a pasted one (`kind` `catalog`). */
  aiCatalog?: AiCatalogReport;
  /** The card (`kind` `url`, `card`) looks like an agent discovery admitted from another origin (catalog entries carry their own `lookalike`). */
  lookalike?: Lookalike;
  /** The allowlist applied, one rule per line (the service's `allow`, `allowLoopback`, `allowCidrs`). */
  allowlist: string[];
  /** True when the deadline passed: requests in flight were aborted and are reported failed at `fetch`. */
  timedOut: boolean;
  /** True when a bound of the inspection bit: entries or documents not read, requests not made, entries left out of the answer. */
  truncated: boolean;
  /** With `truncated`: one sentence per bound that bit, naming its `server.limits` key. */
  truncation?: string[];
  durationMs: number;
}

/** Inputs of {@link Inspector}. */
export interface InspectorOptions {
  /** The service's host policy: what may be fetched, and how the card's interfaces are judged. */
  policy: HostPolicy;
  /** The content checks discovery runs (the card cache's): loopback exemption, signatures. Their byte limit is `cardSize`. */
  check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl' | 'maxBytes'>;
  /**
   * The largest card accepted, as discovery has it (the service's `cache.maxBodyBytes`): the
   * fetcher's body cap and the content check's byte limit at once. Default `cardSizeLimit()` (64 KiB).
   */
  cardSize?: CardSizeLimit;
  /** The fetcher's deadline and per-origin bound, as the service's card fetcher has them; `maxCatalogBytes` bounds an AI Catalog document (default 1,048,576, as a catalog source's). */
  fetch?: Omit<GuardBounds, 'policy'> & { maxCatalogBytes?: number };
  /** For tests: a fetcher to use (not closed by the inspector). Default: one built on `policy`, without credentials. */
  fetcher?: CardFetcher;
  /**
   * The service's peer credentials, only to judge whether the configuration can satisfy a card's
   * security requirements (what they can present to the chosen interface's origin). They are
   * never given to the inspector's fetchers, and no value appears in an answer.
   */
  credentials?: CredentialsInput;
  /** Inspections at once; {@link Inspector.inspect} returns undefined beyond. */
  maxConcurrent: number;
  /** One inspection's deadline in milliseconds. */
  timeoutMs: number;
  /** Counts `inspect_timeout` when a deadline passes, `inspect_truncated` when a bound of {@link InspectBounds} bites. */
  onRefusal?: OnRefusal;
  /**
   * The discovery loop's `lookalikeOf`: an accepted card or catalog entry whose name looks like an
   * agent the loop admitted from another origin is flagged (`lookalike`). Without it, only
   * entries of one catalog are compared with each other.
   */
  lookalikeOf?: (origin: string, names: readonly string[]) => Lookalike | undefined;
  /** What one inspection reads, requests and answers at most. Default the `server.limits` defaults. */
  bounds?: Partial<InspectBounds>;
}

/** The bounds of one inspection: the `server.limits` keys of the same names. */
export type InspectBounds = Pick<ServerLimits, 'inspectMaxEntries' | 'inspectMaxDocuments' | 'inspectMaxRequests' | 'inspectMaxAnswerBytes'>;

/**
 * Reads the body of `POST /api/inspect`: `{ url }`, `{ card }` or `{ catalog }`, the last two as
 * JSON text or as the object itself. Returns the input, or the message of a 400.
 */
export function parseInspectInput(body: Record<string, unknown>): InspectInput | string {
  const given = (['url', 'card', 'catalog'] as const).filter((k) => body[k] !== undefined && body[k] !== null && body[k] !== '');
  if (given.length !== 1) return 'give exactly one of "url" (a base or card URL), "card" (the card JSON) or "catalog" (the catalog JSON)';
  const kind = given[0]!;
  const value = body[kind];
  if (kind === 'url') return typeof value === 'string' ? { url: value.trim() } : '"url" must be a string';
  if (typeof value === 'string') return kind === 'card' ? { card: value } : { catalog: value };
  if (typeof value === 'object') return kind === 'card' ? { card: JSON.stringify(value) } : { catalog: JSON.stringify(value) };
  return `"${kind}" must be the JSON text or the JSON object`;
}

/**
 * Runs inspections. No I/O until {@link inspect}; {@link close} aborts what runs and closes the
 * fetcher's connections.
 *
 * @example
 * const inspector = new Inspector({ policy, check: { allowLoopback: false }, maxConcurrent: 2, timeoutMs: 20_000 });
 * const result = await inspector.inspect({ url: 'https://agents.example.com/' }); // undefined when busy
 */
export class Inspector {
  readonly #o: InspectorOptions;
  /** The card-size checks; the others are read from `o.check` at each inspection (a reload changes its trust keys in place). */
  readonly #sizeCheck: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  readonly #fetcher: CardFetcher;
  readonly #catalogFetcher: CardFetcher;
  readonly #running = new Set<AbortController>();
  readonly #bounds: InspectBounds;

  constructor(o: InspectorOptions) {
    this.#o = o;
    const d = DEFAULT_SERVER_LIMITS;
    this.#bounds = {
      inspectMaxEntries: o.bounds?.inspectMaxEntries ?? d.inspectMaxEntries,
      inspectMaxDocuments: o.bounds?.inspectMaxDocuments ?? d.inspectMaxDocuments,
      inspectMaxRequests: o.bounds?.inspectMaxRequests ?? d.inspectMaxRequests,
      inspectMaxAnswerBytes: o.bounds?.inspectMaxAnswerBytes ?? d.inspectMaxAnswerBytes,
    };
    const size = o.cardSize ?? cardSizeLimit();
    this.#sizeCheck = size.check;
    const bounds: GuardBounds = {
      policy: o.policy,
      ...(o.fetch?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.fetch.totalTimeoutMs }),
      ...(o.fetch?.maxConnectionsPerOrigin !== undefined && { maxConnectionsPerOrigin: o.fetch.maxConnectionsPerOrigin }),
      // Discovery's upstream budget per origin: a request past it is refused at once, never waits.
      ...(o.fetch?.originBudget !== undefined && { originBudget: o.fetch.originBudget }),
    };
    // No credentials are given to either fetcher.
    this.#fetcher = o.fetcher ?? createCardFetcher(guardOptions(bounds, size.fetcher, { recordRemoteAddress: true, inspector: true }));
    // AI Catalog documents are larger than cards.
    this.#catalogFetcher = o.fetcher ?? createCardFetcher(guardOptions(bounds, { maxBodyBytes: o.fetch?.maxCatalogBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes }, { recordRemoteAddress: true, inspector: true }));
  }

  /** Inspections running now. */
  get running(): number {
    return this.#running.size;
  }

  /**
   * Runs one inspection; undefined when `maxConcurrent` are already running (the caller answers 429).
   * `signal` (the request's: its client went away) aborts it as the deadline does, freeing its slot.
   */
  async inspect(input: InspectInput, signal?: AbortSignal): Promise<InspectResult | undefined> {
    if (this.#running.size >= this.#o.maxConcurrent) return undefined;
    const started = performance.now();
    const controller = new AbortController();
    this.#running.add(controller);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.#o.onRefusal?.('inspect_timeout');
      controller.abort(new Error(`the inspection deadline of ${this.#o.timeoutMs} ms passed`));
    }, this.#o.timeoutMs);
    const gone = (): void => controller.abort(new Error('the client went away'));
    if (signal?.aborted === true) gone();
    else signal?.addEventListener('abort', gone, { once: true });
    const { policy } = this.#o;
    const check = { ...this.#o.check, ...this.#sizeCheck };
    const b = this.#bounds;
    // One budget of upstream requests for the whole inspection, documents and cards alike.
    const budget: Budget = { max: b.inspectMaxRequests, made: 0, refused: 0, upstream: 0 };
    const judgeWith = this.#o.credentials !== undefined ? { credentials: this.#o.credentials } : {};
    const common = {
      policy,
      interfacePolicy: policy,
      check,
      ...judgeWith,
      fetcher: budgeted(this.#fetcher, budget),
      catalogFetcher: budgeted(this.#catalogFetcher, budget),
      signal: controller.signal,
      maxEntriesRead: b.inspectMaxEntries,
      maxDocuments: b.inspectMaxDocuments,
    };
    try {
      const base = { allowlist: policy.describe() };
      const done = () => ({ ...base, timedOut, truncated: false, durationMs: performance.now() - started });
      let result: InspectResult;
      if ('url' in input) {
        const r = await probeTarget(input.url, common);
        result = r.kind === 'card' ? { kind: 'url', report: r.report, ...done() } : { kind: 'url', aiCatalog: r.catalog, ...done() };
      } else if ('card' in input) result = { kind: 'card', report: await probeCard('the pasted card', input.card, { interfacePolicy: policy, check, ...judgeWith }), ...done() };
      else if (isAiCatalogDocument(input.catalog)) result = { kind: 'catalog', aiCatalog: await probeAiCatalogDocument(input.catalog, common), ...done() };
      else result = { kind: 'catalog', catalog: await probeCatalog(input.catalog, common), ...done() };
      if (this.#o.lookalikeOf !== undefined) flagAgainstAdmitted(result, this.#o.lookalikeOf, 'url' in input ? input.url : undefined);
      const truncation = [...(result.aiCatalog?.truncated ?? []), ...(result.catalog?.truncated ?? [])];
      if (budget.refused > 0) truncation.push(`${budget.refused} upstream request${budget.refused === 1 ? ' was' : 's were'} not made: one inspection makes at most ${budget.max} (server.limits.inspectMaxRequests)`);
      if (budget.upstream > 0) truncation.push(`${budget.upstream} upstream request${budget.upstream === 1 ? ' was' : 's were'} not made: the upstream budget of the origin was spent (cache.originRequestsPerSecond, cache.originBurst); try again later`);
      if (truncation.length > 0) Object.assign(result, { truncated: true, truncation });
      await boundAnswer(result, b.inspectMaxAnswerBytes);
      if (result.truncated) this.#o.onRefusal?.('inspect_truncated');
      return result;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', gone);
      this.#running.delete(controller);
    }
  }

  /** Aborts the inspections running and closes the fetcher (when the inspector built it). */
  async close(): Promise<void> {
    for (const c of this.#running) c.abort(new Error('the service is stopping'));
    if (this.#o.fetcher === undefined) await Promise.all([this.#fetcher.close(), this.#catalogFetcher.close()]);
  }
}

/**
 * Flags what an inspection accepted against the agents discovery admitted: the card (at `url`, or
 * at its chosen interface when pasted), or each accepted catalog entry its catalog did not flag.
 */
function flagAgainstAdmitted(result: InspectResult, lookalikeOf: NonNullable<InspectorOptions['lookalikeOf']>, url: string | undefined): void {
  const judge = (at: string | undefined, names: ReadonlyArray<string | undefined>): Lookalike | undefined => {
    let origin: string | undefined;
    try {
      origin = at !== undefined ? new URL(at).origin : undefined;
    } catch {
      origin = undefined;
    }
    const known = names.filter((n): n is string => n !== undefined);
    return origin === undefined || origin === 'null' || known.length === 0 ? undefined : lookalikeOf(origin, known);
  };
  const card = result.report;
  if (card?.accepted === true) {
    const found = judge(url ?? card.chosenInterface?.url, [card.name]);
    if (found !== undefined) result.lookalike = found;
  }
  for (const e of result.aiCatalog?.entries ?? []) {
    if (e.verdict !== 'accepted' || e.lookalike !== undefined) continue;
    const found = judge(e.endpoint ?? e.url, [e.report?.name, e.displayName, identifierName(e.identifier)]);
    if (found !== undefined) e.lookalike = found;
  }
  for (const e of result.catalog?.entries ?? []) {
    if (e.report?.accepted !== true || e.lookalike !== undefined) continue;
    const found = judge(e.endpoint ?? e.url, [e.name, e.report.name]);
    if (found !== undefined) e.lookalike = found;
  }
}

/** The upstream requests of one inspection: made so far, and refused past `max`. */
interface Budget {
  max: number;
  made: number;
  refused: number;
  /** Refused by the upstream budget per origin (shared with discovery): not made, still counted in `made`. */
  upstream: number;
}

/** The card fetcher's refusal by the upstream budget per origin (packages/core/src/fetch/card-fetcher.ts). */
const UPSTREAM_SPENT = /: not requested: the upstream budget for \S+ is spent/;

/** `inner` drawing on `budget`: past it, a request is not made and fails at `fetch` saying why. Never closes `inner`. */
function budgeted(inner: CardFetcher, budget: Budget): CardFetcher {
  return {
    fetch(url, init) {
      if (budget.made >= budget.max) {
        budget.refused++;
        const message = `not requested: this inspection's budget of ${budget.max} upstream requests is spent (server.limits.inspectMaxRequests)`;
        return Promise.reject(new DiscoveryError('ERR_FETCH_NETWORK', message, { url, stage: 'fetch' }));
      }
      budget.made++;
      return inner.fetch(url, init).catch((err: unknown) => {
        if (err instanceof DiscoveryError && UPSTREAM_SPENT.test(err.message)) budget.upstream++;
        throw err;
      });
    },
    close: async () => undefined,
  };
}

/**
 * Holds the answer's JSON to `maxBytes`: past it, entries are left out from the end (the counts
 * still cover them all) and the answer says how many in `truncation`. Linear in the answer; the
 * entries are measured in slices that let the event loop run.
 */
async function boundAnswer(result: InspectResult, maxBytes: number): Promise<void> {
  const list: { entries: unknown[]; truncated?: string[] } | undefined = result.aiCatalog ?? result.catalog;
  if (list === undefined) return;
  const all = list.entries;
  const sizes: number[] = [];
  let sliceStart = performance.now();
  let entryBytes = 0;
  for (const e of all) {
    const size = Buffer.byteLength(JSON.stringify(e)) + 1;
    sizes.push(size);
    entryBytes += size;
    if (performance.now() - sliceStart > 8) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  list.entries = [];
  const rest = Buffer.byteLength(JSON.stringify(result));
  list.entries = all;
  if (rest + entryBytes <= maxBytes) return;
  const n = all.length;
  // What is not an entry, plus room for the sentences added below.
  let room = maxBytes - rest - 1024;
  let kept = 0;
  while (kept < n && room - sizes[kept]! >= 0) room -= sizes[kept++]!;
  const note = `${n - kept} of ${n} entries are left out of this answer: it is bounded at ${maxBytes} bytes (server.limits.inspectMaxAnswerBytes); the counts cover every entry`;
  list.entries.length = kept;
  (list.truncated ??= []).push(note);
  result.truncated = true;
  (result.truncation ??= []).push(note);
}
