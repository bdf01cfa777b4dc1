/**
 * `a2a-discovery probe <file|url>`: explains, stage by stage, what a client would decide about
 * a card, or about every entry of an AI Catalog. File mode reads a local card or catalog; URL
 * mode (see probe-url.ts) fetches through the same safe fetcher discovery uses. The work is the
 * library's (`a2a-discovery/probe`, packages/core/src/probe); this is the flags' side.
 */
import type { JWK } from 'jose';
import type { CardFetcherOptions, SignatureMode, TrustedKey } from 'a2a-discovery';
import { DiscoveryError, createCardFetcher, HostPolicy } from 'a2a-discovery';
import { cardSizeLimit, DEFAULT_CATALOG_LIMITS, FileReadError, isLoopbackHost, readBoundedFile } from 'a2a-discovery/internal';
import type { ProbeTargetResult } from 'a2a-discovery/probe';
import { isAiCatalogDocument, probeAiCatalogDocument, probeCard, refusedReport } from 'a2a-discovery/probe';


export interface ProbeOptions {
  allow: string[];
  allowLoopback: boolean;
  signatureMode: SignatureMode;
  trustKeys: string[];
  /** `--max-bytes`: the largest card accepted, in bytes (the fetcher's body cap and the content check's limit). Default 65,536. */
  maxBytes?: number;
  /**
   * `--config`: the peers' credentials of a configuration (`credentials:`), sent to their origins
   * as discovery sends them; the card's security requirements are judged against them.
   */
  credentials?: CardFetcherOptions['credentials'];
}

/**
 * The `credentials:` of the configuration in `file` (`--config`), their secrets read as the
 * service reads them. Undefined when it names none.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (a usage error) when the file or a secret cannot be read.
 */
export async function credentialsFromConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<CardFetcherOptions['credentials']> {
  // The configuration's parser loads only with --config.
  const { loadConfig, resolveSecrets } = await import('a2a-discovery/config');
  const config = await loadConfig(file);
  if (config.credentials.length === 0) return undefined;
  return (await resolveSecrets(config, env)).credentials;
}

/**
 * Builds the host policy the flags describe; undefined when no `--allow` was given.
 *
 * @throws DiscoveryError `ERR_USAGE` naming the `--allow` entry and the flag that fixes it (see {@link hostPolicyFromFlags}).
 */
export function policyFromFlags(options: Pick<ProbeOptions, 'allow' | 'allowLoopback'>): HostPolicy | undefined {
  if (options.allow.length === 0) return undefined;
  return hostPolicyFromFlags(options);
}

/**
 * The host policy of `--allow` and `--allow-loopback`, even with no `--allow`. A bad entry is
 * reported in the flags' words, not in the configuration's (`allowLoopback: true`): an http
 * loopback origin without `--allow-loopback` names that flag, an http origin of another host asks
 * for https.
 *
 * @throws DiscoveryError `ERR_USAGE` (exit 2) for the first bad `--allow` entry, with every one in `problems`.
 * @example hostPolicyFromFlags({ allow: ['http://127.0.0.1:8000'], allowLoopback: true })
 */
export function hostPolicyFromFlags(options: Pick<ProbeOptions, 'allow' | 'allowLoopback'>): HostPolicy {
  try {
    return HostPolicy.from({ allow: options.allow, allowLoopback: options.allowLoopback });
  } catch (err) {
    if (!(err instanceof DiscoveryError) || err.code !== 'ERR_CONFIG_INVALID' || err.problems.length === 0) throw err;
    const problems = err.problems.map((p) => ({ path: p.path, message: allowFlagMessage(options, p.path, p.message) }));
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more bad --allow ${problems.length === 2 ? 'entry' : 'entries'})` : '';
    throw new DiscoveryError('ERR_USAGE', `${(problems[0] as { message: string }).message}${more}`, { cause: err, problems });
  }
}

/** One bad `--allow` entry, said with the flags a user types; `message` is the host policy's own. */
function allowFlagMessage(options: Pick<ProbeOptions, 'allow' | 'allowLoopback'>, path: string, message: string): string {
  const index = /^allow\[(\d+)\]$/.exec(path)?.[1];
  const entry = index === undefined ? undefined : options.allow[Number(index)];
  if (entry === undefined) return `--allow: ${message}`;
  const url = URL.canParse(entry.trim()) ? new URL(entry.trim()) : undefined;
  if (url?.protocol === 'http:' && !url.hostname.startsWith('*')) {
    if (!isLoopbackHost(url.hostname)) {
      return `--allow ${entry}: http is accepted only for loopback hosts, and only with --allow-loopback; allow https://${url.host} instead`;
    }
    if (!options.allowLoopback) {
      return `--allow ${entry}: an http origin needs --allow-loopback (a development exemption: it also admits http: and loopback hosts); add --allow-loopback, or allow an https origin`;
    }
  }
  return `--allow ${message}`;
}

/** Reads trusted public keys: each file holds one JWK with a `kid`, or a JWKS `{keys: [...]}`. */
export async function loadTrustKeys(files: readonly string[]): Promise<TrustedKey[]> {
  const keys: TrustedKey[] = [];
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse((await readBoundedFile(file, 64 * 1024)).toString('utf8'));
    } catch (err) {
      throw new DiscoveryError('ERR_USAGE', `cannot read trust key ${file}: ${(err as Error).message}`, { cause: err });
    }
    const list = (value as { keys?: unknown }).keys ?? [value];
    for (const jwk of list as JWK[]) {
      if (typeof jwk?.kid !== 'string') throw new DiscoveryError('ERR_USAGE', `trust key ${file}: every key needs a "kid"`);
      keys.push({ kid: jwk.kid, jwk });
    }
  }
  return keys;
}

/**
 * Probes a card or an AI Catalog stored in a local file. A catalog's `url` entries are fetched
 * under `--allow` only (a file names no origin); its `data` entries are checked as cards.
 */
export async function probeFile(path: string, options: ProbeOptions & { totalTimeoutMs?: number }): Promise<ProbeTargetResult> {
  // --max-bytes: the content check's byte limit, and the fetcher's body cap for a catalog's url entries.
  const size = cardSizeLimit(options.maxBytes);
  let bytes: Buffer;
  // Bounded well above the card limit, so an oversized card is still explained by the check;
  // and at least the AI Catalog reader's own bound.
  const readCap = Math.max(16 * size.maxBodyBytes, DEFAULT_CATALOG_LIMITS.maxBytes);
  try {
    bytes = await readBoundedFile(path, readCap);
  } catch (err) {
    // A file too large to read is input too large, like a card over --max-bytes: a refusal (exit 1).
    if (err instanceof FileReadError && err.tooLarge) {
      const message = `the file is larger than ${readCap} bytes, more than probe reads: a card may have at most ${size.maxBodyBytes} bytes (--max-bytes), an AI Catalog ${DEFAULT_CATALOG_LIMITS.maxBytes}`;
      return { kind: 'card', report: refusedReport(path, 'parse', { path: '$', message }, policyFromFlags(options) !== undefined) };
    }
    throw new DiscoveryError('ERR_USAGE', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const interfacePolicy = policyFromFlags(options);
  const check = {
    allowLoopback: options.allowLoopback,
    ...size.check,
    signatures: { mode: options.signatureMode, keys: await loadTrustKeys(options.trustKeys) },
  };
  const credentials = options.credentials !== undefined ? { credentials: options.credentials } : {};
  if (!isAiCatalogDocument(bytes)) {
    return { kind: 'card', report: await probeCard(path, bytes, { ...(interfacePolicy && { interfacePolicy }), sourceUrl: path, check, ...credentials }) };
  }
  const policy = interfacePolicy ?? HostPolicy.from({ allow: [], allowLoopback: options.allowLoopback });
  const fetcher = createCardFetcher({ policy, recordRemoteAddress: true, ...size.fetcher, ...credentials, ...(options.totalTimeoutMs !== undefined && { totalTimeoutMs: options.totalTimeoutMs }) });
  try {
    return { kind: 'ai-catalog', catalog: await probeAiCatalogDocument(bytes, { label: path, policy, fetcher, ...(interfacePolicy && { interfacePolicy }), check, ...credentials }) };
  } finally {
    await fetcher.close();
  }
}
