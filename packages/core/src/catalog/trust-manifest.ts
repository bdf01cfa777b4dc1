/**
 * Trust Manifests of AI Catalog entries, judged for one decision: does the publisher pin the
 * artifact's bytes? A signed manifest that verifies against the trust store, whose `subject`
 * names this entry (identifier, type, version, url) and whose identity aligns with a `urn:air`
 * identifier's publisher domain, pins `subject.digest`: a card whose bytes differ is refused.
 * An absent, unsigned or empty manifest is ignored, as the specification says. Pure apart from
 * signature verification (no I/O: keys come from the trust store).
 *
 * @module
 */
import type { SignatureOptions } from '../card/signature.js';
import { verifyDetachedSignature } from '../card/signature.js';
import type { Problem } from '../errors.js';
import type { AiCatalogEntry } from './ai-catalog.js';
import { mediaType } from './ai-catalog.js';

/** A publisher's pin on an artifact's bytes. */
interface TrustPin {
  /** Lower-case hex SHA-256 the artifact's bytes must have (the JCS form for inline `data`). */
  readonly sha256: string;
  /** The manifest's `identity` and the key that verified it. */
  readonly identity: string;
  readonly kid: string;
  /** Where the pin comes from: `<catalog URL> <entry path>.trustManifest`. */
  readonly from: string;
}

/**
 * - `none`: no manifest, or one the specification says to ignore (unsigned, empty), or signatures off;
 * - `unverified`: signed by a key the trust store does not hold (`if-present`): ignored, with a note;
 * - `pinned`: verified, the subject names this entry: its digest binds the artifact;
 * - `refused`: signed but not acceptable (a trusted key that does not verify, a subject naming
 *   another artifact, an expired manifest, an unknown key under `required`): the entry is refused.
 */
export type ManifestVerdict =
  | { readonly kind: 'none'; readonly note?: Problem }
  | { readonly kind: 'unverified'; readonly note: Problem }
  | { readonly kind: 'pinned'; readonly pin: TrustPin }
  | { readonly kind: 'refused'; readonly problem: Problem };

/** The members that make a manifest substantive (AI Catalog "Manifest Validity"). */
function substantive(m: Readonly<Record<string, unknown>>): boolean {
  const nonEmpty = (v: unknown): boolean => Array.isArray(v) && v.length > 0;
  return m['signature'] !== undefined || nonEmpty(m['attestations']) || nonEmpty(m['provenance']) || (typeof m['trustSchema'] === 'object' && m['trustSchema'] !== null);
}

/**
 * Judges an entry's Trust Manifest. `now` is epoch ms (for `expiresAt`); `catalogUrl` names the
 * document in messages and in the pin.
 *
 * @example
 * const v = await judgeTrustManifest(entry, { signatures: { mode: 'if-present', keys }, now: Date.now(), catalogUrl });
 * if (v.kind === 'pinned') expect(sha256(cardBytes)).toBe(v.pin.sha256);
 */
export async function judgeTrustManifest(
  entry: AiCatalogEntry,
  options: { signatures: SignatureOptions; now: number; catalogUrl: string },
): Promise<ManifestVerdict> {
  const m = entry.trustManifest;
  const at = `${entry.path}.trustManifest`;
  if (m === undefined) return { kind: 'none' };
  if (!substantive(m)) return { kind: 'none', note: { path: at, message: 'carries no signature, attestation, provenance or trust schema; ignored, as the specification says for an empty Trust Manifest' } };
  if (m['signature'] === undefined) return { kind: 'none', note: { path: at, message: 'is not signed: its claims are advisory and pin nothing' } };
  if ((options.signatures.mode ?? 'if-present') === 'off') return { kind: 'none', note: { path: at, message: 'is signed, but signature checks are off for this source' } };
  const refuse = (path: string, message: string): ManifestVerdict => ({ kind: 'refused', problem: { path: `${at}${path}`, message } });

  const subject = m['subject'];
  if (typeof subject !== 'object' || subject === null || Array.isArray(subject)) return refuse('.subject', 'a signed Trust Manifest must carry a subject binding it to the artifact');
  if (typeof m['issuedAt'] !== 'string') return refuse('.issuedAt', 'a signed Trust Manifest must carry issuedAt');
  const identity = m['identity'];
  if (typeof identity !== 'string' || identity === '') return refuse('.identity', 'a Trust Manifest must carry its identity URI');

  // The catalog's origin decides which trusted keys may sign for it (a URL is reduced to its origin).
  const verdict = await verifyDetachedSignature(m, { ...options.signatures, origin: options.catalogUrl });
  if (verdict.status === 'unverified' && verdict.ok) {
    return { kind: 'unverified', note: { path: `${at}.signature`, message: `${verdict.problems[0]?.message ?? 'names a key the trust store does not hold'}; the manifest pins nothing` } };
  }
  if (!verdict.ok || verdict.status !== 'verified') {
    return refuse('.signature', verdict.problems[0]?.message ?? 'the signature does not verify');
  }

  const s = subject as Record<string, unknown>;
  if (s['identifier'] !== entry.identifier) return refuse('.subject.identifier', `names ${JSON.stringify(s['identifier'])}, not this entry's identifier ${JSON.stringify(entry.identifier)}`);
  if (typeof s['type'] !== 'string' || mediaType(s['type']) !== entry.type) return refuse('.subject.type', `names type ${JSON.stringify(s['type'])}, not this entry's ${JSON.stringify(entry.type)}`);
  if ((s['version'] === undefined) !== (entry.version === undefined) || (s['version'] !== undefined && s['version'] !== entry.version)) {
    return refuse('.subject.version', `names version ${JSON.stringify(s['version'] ?? null)}, but the entry's is ${JSON.stringify(entry.version ?? null)}`);
  }
  if (s['url'] !== undefined && !sameUrl(s['url'], entry.url, options.catalogUrl)) {
    return refuse('.subject.url', `names ${JSON.stringify(s['url'])}, not this entry's url ${JSON.stringify(entry.url ?? null)}`);
  }
  const expires = typeof m['expiresAt'] === 'string' ? Date.parse(m['expiresAt']) : Number.NaN;
  if (Number.isFinite(expires) && expires <= options.now) return refuse('.expiresAt', `expired at ${m['expiresAt'] as string}`);
  const misaligned = identityMisalignment(entry.identifier, identity);
  if (misaligned !== undefined) return refuse('.identity', misaligned);

  const digest = s['digest'];
  const match = typeof digest === 'string' ? /^([a-z0-9-]+):([0-9a-f]+)$/.exec(digest) : null;
  if (match === null) return refuse('.subject.digest', `must be "sha256:<64 lower-case hex digits>", got ${JSON.stringify(digest)}`);
  if (match[1] !== 'sha256' || match[2]!.length !== 64) {
    return refuse('.subject.digest', `uses ${match[1]}; this consumer checks sha256 digests (algorithms shorter than SHA-256 are refused by the specification)`);
  }
  return { kind: 'pinned', pin: Object.freeze({ sha256: match[2]!, identity, kid: verdict.kid!, from: `${options.catalogUrl} ${at}` }) };
}

/**
 * For a `urn:air:{publisher}:...` identifier, the manifest identity's authority must be the
 * publisher's domain or under it (did:web, https, spiffe); other identifier schemes are opaque.
 */
function identityMisalignment(identifier: string, identity: string): string | undefined {
  const urn = /^urn:air:([^:]+):/i.exec(identifier);
  if (urn === null) return undefined;
  const publisher = urn[1]!.toLowerCase();
  let domain: string | undefined;
  const did = /^did:web:([^:]+)/i.exec(identity);
  if (did !== null) {
    try {
      domain = decodeURIComponent(did[1]!).split(':')[0]!.toLowerCase();
    } catch {
      return `identity ${JSON.stringify(identity)} is not a well-formed did:web (bad percent-encoding)`;
    }
  }
  else {
    try {
      const u = new URL(identity);
      if (u.protocol === 'https:' || u.protocol === 'spiffe:') domain = u.hostname.toLowerCase();
    } catch {
      domain = undefined;
    }
  }
  if (domain === undefined) return `identity ${JSON.stringify(identity)} has no domain (did:web, https or spiffe) to align with the publisher ${publisher} of ${identifier}`;
  if (domain !== publisher && !domain.endsWith(`.${publisher}`)) return `identity ${JSON.stringify(identity)} is under ${domain}, not the publisher domain ${publisher} of ${identifier}`;
  return undefined;
}

/** Whether a subject's url names the entry's url, both read against the catalog's URL (an entry's may be relative). */
function sameUrl(subject: unknown, entryUrl: string | undefined, catalogUrl: string): boolean {
  if (typeof subject !== 'string' || entryUrl === undefined) return false;
  try {
    return new URL(subject, catalogUrl).href === new URL(entryUrl, catalogUrl).href;
  } catch {
    return subject === entryUrl;
  }
}
