/**
 * Probing a URL whose kind is known only from what it serves: an agent card (or a base URL, whose
 * card is under `.well-known/`) or an AI Catalog. A URL fetched exactly (a path ending in `.json`)
 * that answers with `application/ai-catalog+json`, or with a JSON object carrying `specVersion`
 * and `entries`, is probed as a catalog, every entry of it; anything else as one card.
 */
import type { AiCatalogReport } from './ai-catalog-report.js';
import { CATALOG_WELL_KNOWN_PATHS } from '../catalog/index.js';
import type { CardFetcher } from '../fetch/index.js';
import { describeWay, discoverCatalog } from '../sources/catalog-announcements.js';
import type { ProbeAiCatalogOptions } from './probe-ai-catalog.js';
import { isAiCatalogDocument, probeAiCatalogUrl } from './probe-ai-catalog.js';
import { CATALOG_CARD_FRAGMENT, isCardUrl } from '../fetch/index.js';
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
  const documents = o.catalogFetcher ?? o.fetcher;
  // A `.json` URL with a query: a card's identity drops the query, a catalog's keeps it. The URL as
  // given is fetched first, once; when it serves a catalog, that response is the source's root.
  const asGiven = withQuery(target);
  if (asGiven !== undefined) {
    const got = await fetchFirst(asGiven, o, documents);
    if (!('accepted' in got) && isAiCatalogDocument(got.res.body, got.res.headers['content-type'])) {
      return { kind: 'ai-catalog', catalog: await probeAiCatalogUrl(got.cardUrl, o, { url: got.cardUrl, res: got.res }) };
    }
  }
  const first = await fetchFirst(target, o, documents);
  if ('accepted' in first) {
    // A base URL with no card under .well-known/ may be a catalog served at a path of its own
    // (`https://host/agents`): that URL is tried exactly, once, and reported only if it is one.
    const exactly = first.http?.status === 404 ? catalogAt(target) : undefined;
    if (exactly !== undefined) {
      const again = await fetchFirst(exactly, o, documents);
      if (!('accepted' in again) && isAiCatalogDocument(again.res.body, again.res.headers['content-type'])) {
        return { kind: 'ai-catalog', catalog: await probeAiCatalogUrl(again.cardUrl, o, { url: again.cardUrl, res: again.res }) };
      }
    }
    // A site's root with no agent card: its catalog, at the well-known URI or where the site announces it.
    if (first.http?.status === 404 && isSiteRoot(target)) {
      const site = await siteCatalog(new URL(target).origin, o, documents, first);
      if (site !== undefined) return { kind: 'ai-catalog', catalog: site };
    }
    return { kind: 'card', report: first };
  }
  if (first.exact && isAiCatalogDocument(first.res.body, first.res.headers['content-type'])) {
    return { kind: 'ai-catalog', catalog: await probeAiCatalogUrl(target, o, { url: first.cardUrl, res: first.res }) };
  }
  return { kind: 'card', report: await reportEndpoint(first, o) };
}

/** True for `https://host/` itself (no path, query or fragment): a site, whose catalog may be announced. */
function isSiteRoot(target: string): boolean {
  const url = new URL(target);
  return url.pathname === '/' && url.search === '' && url.hash === '';
}

/**
 * The catalog of the site at `origin`, as the AI Catalog source's host path finds it: the
 * well-known URIs first (`/.well-known/ard.json`, then `/.well-known/ai-catalog.json`), then what the site announces (`Link` header, HTML `<link>`, robots.txt
 * `Agentmap:`; see discoverCatalog), each under `o.policy` and the document fetcher's bounds. The
 * first that serves an AI Catalog is probed, with how it was found. Undefined when none does;
 * then each announcement refused (another origin than the allowlist admits, a page too large) is
 * a warning of `card`, the root's card report.
 */
async function siteCatalog(origin: string, o: ProbeAiCatalogOptions, documents: CardFetcher, card: ProbeReport): Promise<AiCatalogReport | undefined> {
  const tryAt = async (url: string): Promise<AiCatalogReport | undefined | 'absent'> => {
    const got = await fetchFirst(`${url}${CATALOG_CARD_FRAGMENT}`, o, documents);
    if ('accepted' in got) return got.http?.status === 404 || got.http?.status === 410 ? 'absent' : undefined;
    if (!isAiCatalogDocument(got.res.body, got.res.headers['content-type'])) return undefined;
    return probeAiCatalogUrl(got.cardUrl, o, { url: got.cardUrl, res: got.res });
  };
  // ARD 0.91's `ard.json` first, then its predecessor `ai-catalog.json` (also when `ard.json`
  // answers something that is not a catalog); the announcements only when both are absent.
  let absent = true;
  for (const path of CATALOG_WELL_KNOWN_PATHS) {
    const wellKnown = await tryAt(`${origin}${path}`);
    if (wellKnown === 'absent') continue;
    if (wellKnown !== undefined) return { ...wellKnown, foundBy: 'well-known' };
    absent = false;
  }
  if (!absent) return undefined;
  const { admitted, notes } = await discoverCatalog(origin, documents, o.policy, o.signal);
  for (const a of admitted) {
    const found = await tryAt(a.url);
    if (found !== undefined && found !== 'absent') return { ...found, foundBy: a.foundBy, ...(a.rel !== undefined && { rel: a.rel }), announcedBy: a.announcedBy };
    notes.push({ path: a.announcedBy, message: `${describeWay(a.foundBy, a.rel)} announces the catalog ${a.url}, which does not serve an AI Catalog` });
  }
  card.warnings.push(...notes);
  return undefined;
}

/** `target` marked to be fetched exactly (`#card`), when it was read as a base URL with a path of its own; else undefined. */
function catalogAt(target: string): string | undefined {
  const url = new URL(target);
  if (url.hash !== '' || url.pathname === '/' || isCardUrl(url.href)) return undefined;
  url.hash = CATALOG_CARD_FRAGMENT;
  return url.href;
}

/** `target` marked to be fetched exactly, query included (`#card`), when it is a `.json` URL with a query; else undefined. */
function withQuery(target: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.search === '' || url.hash !== '' || !isCardUrl(url.href)) return undefined;
  url.hash = CATALOG_CARD_FRAGMENT;
  return url.href;
}
