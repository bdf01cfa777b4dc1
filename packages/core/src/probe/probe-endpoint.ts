/**
 * Probing a live endpoint: fetches its card through a safe {@link CardFetcher} under a given
 * {@link HostPolicy}, runs every content check discovery runs, and describes how well the
 * endpoint supports HTTP caching (max-age, ETag, 304 on a conditional request, a stable ETag
 * across identical requests). `a2a-discovery probe <url>` and the service's inspector both run it;
 * they differ only in the policy and fetcher they pass.
 */
import CachePolicy from 'http-cache-semantics';
import type { CheckCardOptions, CheckCardResult } from '../card/index.js';
import { cardAccess, checkCard } from '../card/index.js';
import { fetchWithLegacyFallback, responseCacheControl } from '../cache/index.js';
import { DiscoveryError, isDiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardFetcher, CredentialsInput, FetchResult, HostPolicy } from '../fetch/index.js';
import { CATALOG_CARD_FRAGMENT, isCardUrl } from '../fetch/index.js';
import { causeOf } from '../health/index.js';
import { CACHE_DEFAULTS } from '../rules/defaults.js';
import { AI_CATALOG_MEDIA_TYPE } from '../catalog/index.js';
import type { ProbeAccess, ProbeHttp, ProbeReport, ProbeStage } from './probe-report.js';
import { refusedReport, reportFromCheck } from './probe-report.js';

const NOTEWORTHY = ['cache-control', 'etag', 'last-modified', 'expires', 'age', 'vary', 'content-type', 'content-encoding'];

/** Inputs of {@link probeEndpoint} and {@link probeCard}. */
export interface ProbeContentOptions {
  /** Judges the hosts of the card's interfaces; without it they are listed, not judged (https is still required). */
  interfacePolicy?: HostPolicy;
  /** The content checks' settings: loopback exemption, `maxBytes`, signatures. */
  check?: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'>;
  /**
   * The peers' credentials, as discovery presents them: the card's security requirements are
   * judged against what they can present to the chosen interface's origin (without them, nothing
   * can be presented). No value is ever put in the report.
   */
  credentials?: CredentialsInput;
}

/** Inputs of {@link probeEndpoint}. */
export interface ProbeEndpointOptions extends ProbeContentOptions {
  /** What may be fetched. A target it refuses stops the report at `source`, before any request. */
  policy: HostPolicy;
  /** The fetcher, built on `policy` (redirects are never followed). Not closed here. */
  fetcher: CardFetcher;
  /** Aborts the requests in flight (they are then reported failed at `fetch`). */
  signal?: AbortSignal;
}

/**
 * Probes a live endpoint: a base URL (its card is under `.well-known/`, with the A2A 0.2 path
 * tried after a 404) or a card URL (a path ending in `.json`, or an AI Catalog entry's key ending
 * in `#card`: fetched exactly there). Up to three requests: the card, the same again (is the ETag
 * stable?) and a conditional one (304?).
 *
 * @throws DiscoveryError `ERR_USAGE` when `target` is not a URL. Everything else is a report.
 * @example
 * const report = await probeEndpoint('https://agents.example.com/', { policy, fetcher, interfacePolicy: policy });
 * if (!report.accepted) console.log(report.stage, report.problems);
 */
export async function probeEndpoint(target: string, o: ProbeEndpointOptions): Promise<ProbeReport> {
  const first = await fetchFirst(target, o);
  return 'accepted' in first ? first : reportEndpoint(first, o);
}

/** The first response of a probe, before any content check (see {@link fetchFirst}). */
export interface FirstFetch {
  /** The URL fetched (after the A2A 0.2 fallback, when it was taken). */
  cardUrl: string;
  /** True when the target named the document itself (fetched exactly there), not a base URL. */
  exact: boolean;
  res: FetchResult;
  init: { headers: Record<string, string>; signal?: AbortSignal };
}

/**
 * The first request of a probe: the allowlist, then one GET (with the A2A 0.2 fallback for a
 * base URL). A refusal before any 200 is the final report. `documentFetcher` fetches an exact
 * URL instead of `o.fetcher` (its larger bound lets an AI Catalog through), and then AI Catalogs
 * are accepted too.
 *
 * @throws DiscoveryError `ERR_USAGE` when `target` is not a URL.
 */
export async function fetchFirst(target: string, o: ProbeEndpointOptions, documentFetcher?: CardFetcher): Promise<FirstFetch | ProbeReport> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new DiscoveryError('ERR_USAGE', `${target} is not a URL`);
  }
  const hostsJudged = o.interfacePolicy !== undefined;
  // The resolver's rule: a URL whose path ends in .json is the card itself, fetched exactly there;
  // so is an AI Catalog entry's card URL, marked with #card.
  const marked = url.hash === CATALOG_CARD_FRAGMENT;
  const exact = marked || isCardUrl(url.href);
  let cardUrl: string;
  try {
    cardUrl = marked ? o.policy.normalizeEndpoint(url.href).slice(0, -CATALOG_CARD_FRAGMENT.length) : exact ? o.policy.normalizeCardUrl(url.href) : o.policy.cardUrl(url.href);
  } catch (err) {
    const e = toDiscoveryError(err, 'ERR_HOST_NOT_ALLOWED');
    return refusedReport(target, 'source', { path: '$', message: e.message }, hostsJudged, undefined, causeOf({ code: e.code, stage: 'resolve' }));
  }
  const accept = exact && documentFetcher !== undefined ? `application/json, ${AI_CATALOG_MEDIA_TYPE};q=0.9` : 'application/json';
  const headers = { accept, ...CACHE_DEFAULTS.requestHeaders };
  const init = { headers, ...(o.signal && { signal: o.signal }) };
  const fetcher = exact && documentFetcher !== undefined ? documentFetcher : o.fetcher;
  let first: FetchResult;
  try {
    // The card cache's rule: a 404 at agent-card.json is followed by one try at the A2A 0.2 path.
    const legacyUrl = exact ? undefined : () => o.policy.cardUrl(url.href, { legacyPath: true });
    ({ cardUrl, res: first } = await fetchWithLegacyFallback(cardUrl, legacyUrl, (u) => fetcher.fetch(u, init)));
  } catch (err) {
    const e = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: cardUrl, stage: 'fetch' });
    // Everything the fetcher refuses happened while fetching (a redirect, a blocked address): report it there.
    const stage: ProbeStage = e.stage === 'address' ? 'address' : 'fetch';
    return refusedReport(cardUrl, stage, { path: '$', message: e.message }, hostsJudged, { headers: {}, notes: [] }, causeOf(e));
  }
  if (first.status !== 200) {
    const message = `HTTP ${first.status}${first.status === 401 || first.status === 403 ? ': the card endpoint wants credentials' : ''}`;
    return refusedReport(cardUrl, 'fetch', { path: '$', message }, hostsJudged, describeHttp(first), causeOf({ code: 'ERR_FETCH_STATUS', stage: 'fetch', status: first.status }));
  }
  return { cardUrl, exact, res: first, init };
}

/** The rest of a card probe after {@link fetchFirst}: caching follow-ups, then every content check. */
export async function reportEndpoint(f: FirstFetch, o: ProbeEndpointOptions): Promise<ProbeReport> {
  const http = describeHttp(f.res);
  if (f.cardUrl.endsWith('/agent.json')) http.notes.push('served only at the A2A 0.2 path /.well-known/agent.json; publish /.well-known/agent-card.json too');
  await checkCaching(o.fetcher, f.cardUrl, f.init, f.res, http);
  const check = await checkCard(f.res.body, checkOptions(o, f.cardUrl));
  return reportFromCheck(f.cardUrl, check, o.interfacePolicy !== undefined, http, await accessOf(check, f.cardUrl, o));
}

/**
 * Probes a card already in hand (a file, a pasted card): the parse, schema, policy and signature
 * stages, exactly as discovery runs them on fetched bytes. `source` names it in the report.
 *
 * @example const report = await probeCard('billing.json', bytes, { interfacePolicy: policy });
 */
export async function probeCard(source: string, bytes: Uint8Array | string, o: ProbeContentOptions & { sourceUrl?: string } = {}): Promise<ProbeReport> {
  const check = await checkCard(bytes, checkOptions(o, o.sourceUrl));
  return reportFromCheck(source, check, o.interfacePolicy !== undefined, undefined, await accessOf(check, o.sourceUrl, o));
}

/** The chosen interface and the card's security against the credentials, as the report shows them. */
async function accessOf(check: CheckCardResult, cardUrl: string | undefined, o: ProbeContentOptions): Promise<ProbeAccess> {
  if (check.card === undefined) return {};
  const { chosenInterface, security } = await cardAccess(check.card, cardUrl, o.credentials, o.interfacePolicy);
  return {
    ...(chosenInterface && { chosenInterface }),
    ...(security && {
      security: {
        status: security.status,
        message: security.message,
        origin: security.origin,
        credentialsConfigured: o.credentials !== undefined,
        ...(security.satisfiedBy && { satisfiedBy: [...security.satisfiedBy] }),
        requirements: security.requirements.map((r) => [...r]),
        schemes: security.schemes.map((sc) => ({ ...sc })),
      },
    }),
  };
}

function checkOptions(o: ProbeContentOptions, sourceUrl: string | undefined): CheckCardOptions {
  return { ...o.check, ...(o.interfacePolicy && { hostPolicy: o.interfacePolicy }), ...(sourceUrl !== undefined && { sourceUrl }) };
}

function describeHttp(res: FetchResult): ProbeHttp {
  const headers: Record<string, string> = {};
  for (const name of NOTEWORTHY) if (res.headers[name] !== undefined) headers[name] = res.headers[name];
  // The directives as the card cache reads them (http-cache-semantics, a private cache).
  const cc = responseCacheControl(new CachePolicy({ url: res.url, method: 'GET', headers: {} }, { status: res.status, headers: res.headers }, { shared: false }));
  const maxAge = Number(cc['max-age']);
  const http: ProbeHttp = { status: res.status, headers, notes: [], ...(res.remoteAddress !== undefined && { remoteAddress: res.remoteAddress }) };
  if ('max-age' in cc && Number.isFinite(maxAge)) http.maxAgeSeconds = maxAge;
  if (res.headers.etag !== undefined) http.etag = res.headers.etag;
  if (res.status === 200) {
    if (!('max-age' in cc) && res.headers.expires === undefined) {
      http.notes.push('no Cache-Control max-age: A2A 1.0 §8.6 says servers SHOULD send one; clients fall back to their own default');
    }
    if ('no-store' in cc) http.notes.push('no-store: clients cannot revalidate and must download the whole card every time');
    const type = res.headers['content-type'] ?? '';
    if (!/json/i.test(type)) http.notes.push(`content-type is ${type || 'missing'}; application/json is expected`);
  }
  return http;
}

/** A second, identical request (is the ETag stable?) and a conditional one (is 304 supported?). */
async function checkCaching(fetcher: CardFetcher, cardUrl: string, init: { headers: Record<string, string>; signal?: AbortSignal }, first: FetchResult, http: ProbeHttp): Promise<void> {
  if (first.headers.etag === undefined && first.headers['last-modified'] === undefined) {
    http.notes.push('neither ETag nor Last-Modified: every refresh downloads the whole card');
    return;
  }
  try {
    if (first.headers.etag !== undefined) {
      const again = await fetcher.fetch(cardUrl, init);
      http.etagStable = again.headers.etag === first.headers.etag;
      if (!http.etagStable && again.body.equals(first.body)) {
        http.notes.push('the same bytes came back with a different ETag: derive the ETag from the content');
      }
    }
    const validators: Record<string, string> = {};
    if (first.headers.etag !== undefined) validators['if-none-match'] = first.headers.etag;
    else validators['if-modified-since'] = first.headers['last-modified']!;
    const conditional = await fetcher.fetch(cardUrl, { ...init, headers: { ...init.headers, ...validators } });
    http.notModifiedSupported = conditional.status === 304;
  } catch (err) {
    http.notes.push(`the follow-up requests failed: ${isDiscoveryError(err) ? err.message : String(err)}`);
  }
}
