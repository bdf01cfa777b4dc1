/**
 * `a2a-discovery probe <file|url>`: explains, stage by stage, what a client would decide about
 * a card. File mode reads a local card; URL mode (see probe-url.ts) fetches it through the same
 * safe fetcher discovery uses. The work is the library's (src/probe); this is the flags' side.
 */
import type { JWK } from 'jose';
import type { SignatureMode, TrustedKey } from '../card/index.js';
import { readBoundedFile } from '../config/index.js';
import { DiscoveryError } from '../errors.js';
import { HostPolicy } from '../fetch/index.js';
import type { ProbeReport } from '../probe/index.js';
import { probeCard } from '../probe/index.js';

export interface ProbeOptions {
  allow: string[];
  allowLoopback: boolean;
  signatureMode: SignatureMode;
  trustKeys: string[];
  maxBytes?: number;
}

/** Builds the host policy the flags describe; undefined when no `--allow` was given. */
export function policyFromFlags(options: Pick<ProbeOptions, 'allow' | 'allowLoopback'>): HostPolicy | undefined {
  if (options.allow.length === 0) return undefined;
  return HostPolicy.from({ allow: options.allow, allowLoopback: options.allowLoopback });
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

/** Probes a card stored in a local file. */
export async function probeFile(path: string, options: ProbeOptions): Promise<ProbeReport> {
  let bytes: Buffer;
  try {
    // Bounded well above the card limit, so an oversized card is still explained by the check.
    bytes = await readBoundedFile(path, 16 * (options.maxBytes ?? 65_536));
  } catch (err) {
    throw new DiscoveryError('ERR_USAGE', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const interfacePolicy = policyFromFlags(options);
  return probeCard(path, bytes, {
    ...(interfacePolicy && { interfacePolicy }),
    sourceUrl: path,
    check: {
      allowLoopback: options.allowLoopback,
      ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
      signatures: { mode: options.signatureMode, keys: await loadTrustKeys(options.trustKeys) },
    },
  });
}
