/**
 * `a2a-discovery probe <url>`: the flags' policies around the library's {@link probeEndpoint}.
 * The target's own origin is admitted (the user named it); `--allow` judges the card's interfaces.
 */
import { DiscoveryError } from '../errors.js';
import type { CardFetcher } from '../fetch/index.js';
import { createCardFetcher, HostPolicy } from '../fetch/index.js';
import type { ProbeReport } from '../probe/index.js';
import { probeEndpoint, refusedReport } from '../probe/index.js';
import type { ProbeOptions } from './probe.js';
import { loadTrustKeys, policyFromFlags } from './probe.js';

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
  let policy: HostPolicy;
  try {
    policy = HostPolicy.from({ allow: [...options.allow, url.origin], allowLoopback: options.allowLoopback });
  } catch (err) {
    const reason = url.protocol === 'http:' ? `${url.origin}: http: is refused; discovery fetches cards over https only (--allow-loopback exempts loopback hosts for development)` : `${url.origin} cannot be fetched: ${(err as Error).message}`;
    return refusedReport(target, 'source', { path: '$', message: reason }, interfacePolicy !== undefined);
  }
  const fetcher = options.fetcher ?? createCardFetcher({ policy, recordRemoteAddress: true, ...(options.totalTimeoutMs !== undefined && { totalTimeoutMs: options.totalTimeoutMs }) });
  try {
    return await probeEndpoint(target, {
      policy,
      fetcher,
      ...(interfacePolicy && { interfacePolicy }),
      check: {
        allowLoopback: options.allowLoopback,
        ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
        signatures: { mode: options.signatureMode, keys: await loadTrustKeys(options.trustKeys) },
      },
    });
  } finally {
    if (options.fetcher === undefined) await fetcher.close();
  }
}
