/**
 * `a2a-discovery probe <url>`: the flags' policies around the library's {@link probeTarget} (an
 * agent card, or an AI Catalog and every entry of it) and {@link probeEndpoint}. The target's
 * own origin is admitted (the user named it); `--allow` admits the hosts of a catalog's cards and
 * judges the card's interfaces.
 */
import { DiscoveryError, createCardFetcher, createDnsResolver, HostPolicy } from 'a2a-discovery';
import { cardSizeLimit, DEFAULT_CATALOG_LIMITS } from 'a2a-discovery/internal';
import type { CardFetcher } from 'a2a-discovery';
import type { DnsProbeReport, ProbeAiCatalogOptions, ProbeReport, ProbeTargetResult } from 'a2a-discovery/probe';
import { probeDns, probeEndpoint, probeTarget, refusedReport } from 'a2a-discovery/probe';
import type { ProbeOptions } from './probe.js';
import { hostPolicyFromFlags, loadTrustKeys, policyFromFlags } from './probe.js';

export interface ProbeUrlOptions extends ProbeOptions {
  totalTimeoutMs?: number;
  /** For tests: a fetcher to use instead of building one (for cards and catalogs alike). */
  fetcher?: CardFetcher;
}

/** Probes a live endpoint: a base URL, or the card URL itself. */
export function probeUrl(target: string, options: ProbeUrlOptions): Promise<ProbeReport> {
  return withUrlPolicies(target, options, false, (o) => probeEndpoint(target, o), (report) => report);
}

/** Probes a URL: a base URL or card URL as {@link probeUrl}, or an AI Catalog's URL, every entry of it. */
export function probeUrlTarget(target: string, options: ProbeUrlOptions): Promise<ProbeTargetResult> {
  return withUrlPolicies(target, options, true, (o) => probeTarget(target, o), (report) => ({ kind: 'card', report }));
}

/** Builds the policies and fetchers the flags describe, runs `run` under them and closes the fetchers. */
async function withUrlPolicies<T>(target: string, options: ProbeUrlOptions, catalogs: boolean, run: (o: ProbeAiCatalogOptions) => Promise<T>, refused: (report: ProbeReport) => T): Promise<T> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new DiscoveryError('ERR_USAGE', `${target} is not a URL`);
  }
  // Bad flags are usage errors (exit 2); a target the rules refuse is a refusal (exit 1).
  const interfacePolicy = policyFromFlags(options);
  let policy: HostPolicy;
  try {
    policy = HostPolicy.from({ allow: [...options.allow, url.origin], allowLoopback: options.allowLoopback });
  } catch (err) {
    const reason = url.protocol === 'http:' ? `${url.origin}: http: is refused; discovery fetches cards over https only (--allow-loopback exempts loopback hosts for development)` : `${url.origin} cannot be fetched: ${(err as Error).message}`;
    return refused(refusedReport(target, 'source', { path: '$', message: reason }, interfacePolicy !== undefined));
  }
  // --max-bytes: the fetcher's body cap and the content check's byte limit alike.
  const size = cardSizeLimit(options.maxBytes);
  // --config: the peers' credentials go with the requests to their origins, as discovery sends them.
  const credentials = options.credentials !== undefined ? { credentials: options.credentials } : {};
  const bounds = { policy, recordRemoteAddress: true, ...credentials, ...(options.totalTimeoutMs !== undefined && { totalTimeoutMs: options.totalTimeoutMs }) };
  const fetcher = options.fetcher ?? createCardFetcher({ ...bounds, ...size.fetcher });
  // Catalog documents are larger than cards: the service's default bound for them.
  const catalogFetcher = options.fetcher ?? (catalogs ? createCardFetcher({ ...bounds, maxBodyBytes: DEFAULT_CATALOG_LIMITS.maxBytes }) : fetcher);
  try {
    return await run({
      policy,
      fetcher,
      catalogFetcher,
      ...(interfacePolicy && { interfacePolicy }),
      ...credentials,
      check: {
        allowLoopback: options.allowLoopback,
        ...size.check,
        signatures: { mode: options.signatureMode, keys: await loadTrustKeys(options.trustKeys) },
      },
    });
  } finally {
    if (options.fetcher === undefined) await Promise.all([fetcher.close(), catalogFetcher === fetcher ? undefined : catalogFetcher.close()]);
  }
}

/**
 * Probes `dns:<domain>` or `dns:<record name>` through `--resolver`: every host a record names is
 * judged by `--allow` (DNS never widens it), and each pinned card is fetched to compare its SHA-256.
 *
 * @throws DiscoveryError `ERR_USAGE` without a resolver or with a bad one.
 */
export async function probeDnsTarget(target: string, options: ProbeUrlOptions & { resolvers: readonly string[]; requireDnssec?: boolean }): Promise<DnsProbeReport> {
  if (options.resolvers.length === 0) throw new DiscoveryError('ERR_USAGE', `${target}: give the resolver to ask with --resolver (e.g. --resolver 127.0.0.1:53)`);
  let resolver: ReturnType<typeof createDnsResolver>;
  try {
    resolver = createDnsResolver({ servers: options.resolvers });
  } catch (err) {
    throw new DiscoveryError('ERR_USAGE', (err as Error).message, { cause: err });
  }
  const policy = hostPolicyFromFlags(options);
  const size = cardSizeLimit(options.maxBytes);
  const credentials = options.credentials !== undefined ? { credentials: options.credentials } : {};
  const fetcher = options.fetcher ?? createCardFetcher({ policy, ...credentials, ...size.fetcher, ...(options.totalTimeoutMs !== undefined && { totalTimeoutMs: options.totalTimeoutMs }) });
  try {
    return await probeDns(target, { resolver, policy, fetcher, requireDnssec: options.requireDnssec === true });
  } finally {
    if (options.fetcher === undefined) await fetcher.close();
  }
}
