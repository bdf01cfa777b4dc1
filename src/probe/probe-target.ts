/**
 * Probing a URL whose kind is known only from what it serves: an agent card (or a base URL, whose
 * card is under `.well-known/`) or an AI Catalog. A URL fetched exactly (a path ending in `.json`)
 * that answers with `application/ai-catalog+json`, or with a JSON object carrying `specVersion`
 * and `entries`, is probed as a catalog, every entry of it; anything else as one card.
 */
import type { AiCatalogReport } from './ai-catalog-report.js';
import type { ProbeAiCatalogOptions } from './probe-ai-catalog.js';
import { isAiCatalogDocument, probeAiCatalogUrl } from './probe-ai-catalog.js';
import { fetchFirst, reportEndpoint } from './probe-endpoint.js';
import type { ProbeReport } from './probe-report.js';

/** The result of {@link probeTarget}: one card's report, or a catalog's. */
export type ProbeTargetResult = { kind: 'card'; report: ProbeReport } | { kind: 'ai-catalog'; catalog: AiCatalogReport };

/**
 * Probes `target` as {@link probeEndpoint} does, unless it serves an AI Catalog: then as
 * {@link probeAiCatalogUrl} does. The first response is shared (a card costs the same three
 * requests as before; a catalog is fetched once). An exact URL is fetched with `catalogFetcher`
 * (default `fetcher`), whose larger bound lets a catalog through; a card larger than the card
 * limit is then refused at `parse`.
 *
 * @throws DiscoveryError `ERR_USAGE` when `target` is not a URL. Everything else is a report.
 * @example
 * const r = await probeTarget('https://agents.example.com/.well-known/ai-catalog.json', { policy, fetcher, catalogFetcher, interfacePolicy: policy });
 * console.log(r.kind === 'card' ? r.report.stage : r.catalog.counts);
 */
export async function probeTarget(target: string, o: ProbeAiCatalogOptions): Promise<ProbeTargetResult> {
  const first = await fetchFirst(target, o, o.catalogFetcher ?? o.fetcher);
  if ('accepted' in first) return { kind: 'card', report: first };
  if (first.exact && isAiCatalogDocument(first.res.body, first.res.headers['content-type'])) {
    return { kind: 'ai-catalog', catalog: await probeAiCatalogUrl(target, o, { url: first.cardUrl, res: first.res }) };
  }
  return { kind: 'card', report: await reportEndpoint(first, o) };
}
