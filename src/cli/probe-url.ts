/**
 * `a2a-discovery probe <url>`: fetches a live card endpoint through the same safe fetcher and
 * checks discovery uses, and explains every stage to the card's publisher, including how well
 * the endpoint supports HTTP caching (max-age, ETag, 304 on a conditional request, a stable
 * ETag across identical requests).
 */
import CachePolicy from 'http-cache-semantics';
import { checkCard } from '../card/index.js';
import { fetchWithLegacyFallback, responseCacheControl } from '../cache/index.js';
import { DiscoveryError, isDiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardFetcher, FetchResult } from '../fetch/index.js';
import { createCardFetcher, HostPolicy, isCardUrl } from '../fetch/index.js';
import type { ProbeOptions } from './probe.js';
import { loadTrustKeys, policyFromFlags } from './probe.js';
import type { ProbeHttp, ProbeReport, ProbeStage } from './probe-report.js';
import { reportFromCheck } from './probe-report.js';

const NOTEWORTHY = ['cache-control', 'etag', 'last-modified', 'expires', 'age', 'vary', 'content-type', 'content-encoding'];

export interface ProbeUrlOptions extends ProbeOptions {
  totalTimeoutMs?: number;
  /** For tests: a fetcher to use instead of building one. */
  fetcher?: CardFetcher;
}

/** Probes a live endpoint: a base URL, or the card URL itself. */
export async function probeUrl(target: string, options: ProbeUrlOptions): Promise<ProbeReport> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new DiscoveryError('ERR_USAGE', `${target} is not a URL`);
  }
  // Bad flags are usage errors (exit 2); a target the rules refuse is a refusal (exit 1).
  const interfacePolicy = policyFromFlags(options);
  // The user named this origin, so it may be fetched; the flags still govern the card's interfaces.
  let fetchPolicy: HostPolicy;
  try {
    fetchPolicy = HostPolicy.from({ allow: [...options.allow, url.origin], allowLoopback: options.allowLoopback });
  } catch (err) {
    const reason = url.protocol === 'http:' ? `${url.origin}: http: is refused; discovery fetches cards over https only (--allow-loopback exempts loopback hosts for development)` : `${url.origin} cannot be fetched: ${(err as Error).message}`;
    return refused(target, 'source', new DiscoveryError('ERR_INSECURE_URL', reason, { url: target, stage: 'policy' }), interfacePolicy !== undefined);
  }
  // A URL whose path ends in .json is the card itself, fetched exactly there (as discovery does).
  const explicit = isCardUrl(url.href);
  let cardUrl: string;
  try {
    cardUrl = explicit ? fetchPolicy.normalizeCardUrl(url.href) : fetchPolicy.cardUrl(url.href);
  } catch (err) {
    return refused(target, 'source', toDiscoveryError(err, 'ERR_HOST_NOT_ALLOWED'), interfacePolicy !== undefined);
  }
  const fetcher =
    options.fetcher ?? createCardFetcher({ policy: fetchPolicy, recordRemoteAddress: true, ...(options.totalTimeoutMs !== undefined && { totalTimeoutMs: options.totalTimeoutMs }) });
  const headers = { accept: 'application/json', 'a2a-version': '1.0' };
  try {
    let first: FetchResult;
    try {
      // The card cache's rule: a 404 at agent-card.json is followed by one try at the A2A 0.2 path.
      const legacyUrl = explicit ? undefined : () => fetchPolicy.cardUrl(url.href, { legacyPath: true });
      ({ cardUrl, res: first } = await fetchWithLegacyFallback(cardUrl, legacyUrl, (u) => fetcher.fetch(u, { headers })));
    } catch (err) {
      const e = toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: cardUrl, stage: 'fetch' });
      // Everything the fetcher refuses happened while fetching (a redirect, a blocked address): report it there.
      const stage: ProbeStage = e.stage === 'address' ? 'address' : 'fetch';
      return refused(cardUrl, stage, e, interfacePolicy !== undefined, { headers: {}, notes: [] });
    }
    const http = describeHttp(first);
    if (first.status !== 200) {
      const e = new DiscoveryError('ERR_FETCH_STATUS', `HTTP ${first.status}${first.status === 401 || first.status === 403 ? ': the card endpoint wants credentials' : ''}`, {
        url: cardUrl,
        stage: 'fetch',
        status: first.status,
      });
      return refused(cardUrl, 'fetch', e, interfacePolicy !== undefined, http);
    }
    if (cardUrl.endsWith('/agent.json')) http.notes.push('served only at the A2A 0.2 path /.well-known/agent.json; publish /.well-known/agent-card.json too');
    await checkCaching(fetcher, cardUrl, headers, first, http);
    const check = await checkCard(first.body, {
      ...(interfacePolicy && { hostPolicy: interfacePolicy }),
      allowLoopback: options.allowLoopback,
      ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
      sourceUrl: cardUrl,
      signatures: { mode: options.signatureMode, keys: await loadTrustKeys(options.trustKeys) },
    });
    return reportFromCheck(cardUrl, check, interfacePolicy !== undefined, http);
  } finally {
    if (options.fetcher === undefined) await fetcher.close();
  }
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
async function checkCaching(fetcher: CardFetcher, cardUrl: string, headers: Record<string, string>, first: FetchResult, http: ProbeHttp): Promise<void> {
  if (first.headers.etag === undefined && first.headers['last-modified'] === undefined) {
    http.notes.push('neither ETag nor Last-Modified: every refresh downloads the whole card');
    return;
  }
  try {
    if (first.headers.etag !== undefined) {
      const again = await fetcher.fetch(cardUrl, { headers });
      http.etagStable = again.headers.etag === first.headers.etag;
      if (!http.etagStable && again.body.equals(first.body)) {
        http.notes.push('the same bytes came back with a different ETag: derive the ETag from the content');
      }
    }
    const validators: Record<string, string> = {};
    if (first.headers.etag !== undefined) validators['if-none-match'] = first.headers.etag;
    else validators['if-modified-since'] = first.headers['last-modified']!;
    const conditional = await fetcher.fetch(cardUrl, { headers: { ...headers, ...validators } });
    http.notModifiedSupported = conditional.status === 304;
  } catch (err) {
    http.notes.push(`the follow-up requests failed: ${isDiscoveryError(err) ? err.message : String(err)}`);
  }
}

function refused(source: string, stage: ProbeStage, error: DiscoveryError, hostsJudged: boolean, http?: ProbeHttp): ProbeReport {
  return {
    source,
    accepted: false,
    stage,
    problems: [{ path: '$', message: error.message }],
    warnings: [],
    skills: [],
    urls: [],
    hostsJudged,
    ...(http && { http }),
  };
}
