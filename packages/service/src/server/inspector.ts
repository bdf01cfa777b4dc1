/**
 * The inspector behind `POST /api/inspect`: what discovery would decide about a URL (a card, or an
 * AI Catalog and every entry of it), a pasted card or a pasted catalog (a registry catalog or an AI
 * Catalog), stage by stage — the library's probe (`a2a-discovery/probe`, packages/core/src/probe;
 * what `a2a-discovery probe` runs) under the service's own host policy, content checks, body cap
 * and per-request deadline. Nothing is looser than discovery: a host the allowlist refuses is
 * reported at `source` and never contacted, redirects are never followed, and the inspector's
 * fetcher has no credentials at all (so none can be sent). Bounded: `maxConcurrent` inspections at
 * once, each under one deadline that aborts its requests still in flight.
 */
import type { CheckCardOptions, CardFetcher, HostPolicy } from 'a2a-discovery';
import { DEFAULT_CATALOG_LIMITS, createCardFetcher } from 'a2a-discovery';
import type { AiCatalogReport, CatalogReport, ProbeReport } from 'a2a-discovery/probe';
import { isAiCatalogDocument, probeAiCatalogDocument, probeCard, probeCatalog, probeTarget } from 'a2a-discovery/probe';
import type { CardSizeLimit } from 'a2a-discovery/config';
import { cardSizeLimit } from 'a2a-discovery/config';
import type { GuardBounds } from './guard-options.js';
import { guardOptions } from './guard-options.js';
import type { OnRefusal } from './limits.js';

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
  /** The allowlist applied, one rule per line (the service's `allow`, `allowLoopback`, `allowCidrs`). */
  allowlist: string[];
  /** True when the deadline passed: requests in flight were aborted and are reported failed at `fetch`. */
  timedOut: boolean;
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
  /** Inspections at once; {@link Inspector.inspect} returns undefined beyond. */
  maxConcurrent: number;
  /** One inspection's deadline in milliseconds. */
  timeoutMs: number;
  /** Counts `inspect_timeout` when a deadline passes. */
  onRefusal?: OnRefusal;
}

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
  readonly #check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  readonly #fetcher: CardFetcher;
  readonly #catalogFetcher: CardFetcher;
  readonly #running = new Set<AbortController>();

  constructor(o: InspectorOptions) {
    this.#o = o;
    const size = o.cardSize ?? cardSizeLimit();
    this.#check = { ...o.check, ...size.check };
    const bounds: GuardBounds = {
      policy: o.policy,
      ...(o.fetch?.totalTimeoutMs !== undefined && { totalTimeoutMs: o.fetch.totalTimeoutMs }),
      ...(o.fetch?.maxConnectionsPerOrigin !== undefined && { maxConnectionsPerOrigin: o.fetch.maxConnectionsPerOrigin }),
    };
    // No credentials are given to either fetcher.
    this.#fetcher = o.fetcher ?? createCardFetcher(guardOptions(bounds, size.fetcher, { recordRemoteAddress: true }));
    // AI Catalog documents are larger than cards.
    this.#catalogFetcher = o.fetcher ?? createCardFetcher(guardOptions(bounds, { maxBodyBytes: o.fetch?.maxCatalogBytes ?? DEFAULT_CATALOG_LIMITS.maxBytes }, { recordRemoteAddress: true }));
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
    const check = this.#check;
    const common = { policy, interfacePolicy: policy, check, fetcher: this.#fetcher, catalogFetcher: this.#catalogFetcher, signal: controller.signal };
    try {
      const base = { allowlist: policy.describe() };
      const done = () => ({ ...base, timedOut, durationMs: performance.now() - started });
      if ('url' in input) {
        const r = await probeTarget(input.url, common);
        return r.kind === 'card' ? { kind: 'url', report: r.report, ...done() } : { kind: 'url', aiCatalog: r.catalog, ...done() };
      }
      if ('card' in input) return { kind: 'card', report: await probeCard('the pasted card', input.card, { interfacePolicy: policy, check }), ...done() };
      if (isAiCatalogDocument(input.catalog)) return { kind: 'catalog', aiCatalog: await probeAiCatalogDocument(input.catalog, common), ...done() };
      return { kind: 'catalog', catalog: await probeCatalog(input.catalog, common), ...done() };
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
