/**
 * Agent-card signatures (A2A 1.0 §8.4): JWS (RFC 7515, flattened) over a canonical form of
 * the card without its `signatures`, checked against keys from configuration or from an
 * allowlisted JWKS. Verification runs on the raw JSON that came off the wire, never on a
 * decoded card, and never fetches a `jku` by itself. See docs/signatures.md for the canonical
 * forms, the trust model and how cards from each signer fare.
 *
 * The trust store, options and the check of one JWS are shared with detached document signatures
 * (signature-trust.ts); those are in detached-signature.ts. This module exports both, as before.
 *
 * @module
 */
import type { AgentCard } from '@a2a-js/sdk';
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import canonicalize from 'canonicalize';
import { FlattenedSign, base64url } from 'jose';
import type { CryptoKey, JWK, KeyObject } from 'jose';
import { DiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';
import type { CanonicalForm, CheckContext, Json, Payload, SignatureOptions, SignatureResult } from './signature-trust.js';
import { algorithmRefusal, checkEntry, configError, errorText, finisher, isObject, settingsOf, uncanonicalizable } from './signature-trust.js';

export type { CanonicalForm, SignatureMode, SignatureOptions, SignatureResult, TrustedKey } from './signature-trust.js';
export { signDetached, verifyDetachedSignature } from './detached-signature.js';

/** Signatures examined per card at most. */
const MAX_SIGNATURES = 8;

// ---------------------------------------------------------------------------------------------
// Canonical forms

function withoutSignatures(raw: Json): Json {
  // Object.fromEntries defines properties, so an own "__proto__" key stays a plain key.
  return Object.fromEntries(Object.entries(raw).filter(([key]) => key !== 'signatures'));
}

/**
 * Python's `json.dumps(..., ensure_ascii=True)` escapes every UTF-16 unit outside printable
 * ASCII. JSON.stringify has already escaped the control characters, so what remains to escape
 * is U+007F and above, always inside strings.
 */
function asciiEscape(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function computeForm(raw: Json, form: CanonicalForm): string {
  if (form === 'jcs') {
    const out = canonicalize(withoutSignatures(raw));
    if (out === undefined) throw new DiscoveryError('ERR_CARD_INVALID', 'the card has no JSON representation', { stage: 'signature' });
    return out;
  }
  // The SDK reads the JSON wire form (it calls AgentCard.fromJSON itself) and drops `signatures`.
  const v1 = canonicalizeAgentCard(raw as unknown as AgentCard);
  return form === 'a2a-v1-ascii' ? asciiEscape(v1) : v1;
}

/** What the SDK's `cleanEmpty` drops, plus proto defaults (`false`, `0`) absent from a form. */
function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === '' || value === false || value === 0) return true;
  if (Array.isArray(value)) return value.every(isEmptyValue);
  if (isObject(value)) return Object.values(value).every(isEmptyValue);
  return false;
}

/** Paths of values in `raw` that `covered` (a parsed canonical form) does not reproduce. */
function uncoveredPaths(raw: unknown, covered: unknown, path: string, out: string[]): void {
  if (out.length >= 20) return;
  if (Array.isArray(raw)) {
    // The SDK removes empty items from arrays, so compare the non-empty ones in order.
    const items = raw.filter((v) => !(isEmptyValue(v) && v !== false && v !== 0));
    if (!Array.isArray(covered) || covered.length !== items.length) {
      out.push(path);
      return;
    }
    items.forEach((item, i) => uncoveredPaths(item, covered[i], `${path}[${i}]`, out));
    return;
  }
  if (isObject(raw)) {
    if (!isObject(covered)) {
      out.push(path);
      return;
    }
    for (const key of Object.keys(raw)) {
      const child = path === '$' ? key : `${path}.${key}`;
      if (Object.hasOwn(covered, key)) uncoveredPaths(raw[key], covered[key], child, out);
      else if (!isEmptyValue(raw[key])) out.push(child);
    }
    for (const key of Object.keys(covered)) {
      if (!Object.hasOwn(raw, key)) out.push(path === '$' ? key : `${path}.${key}`);
    }
    return;
  }
  if (raw !== covered) out.push(path);
}

function payloads(raw: Json): Payload[] {
  const out: Payload[] = [];
  const seen = new Set<string>();
  const add = (form: CanonicalForm, text: string, uncovered: () => string[]): void => {
    if (seen.has(text)) return;
    seen.add(text);
    out.push({ form, b64: base64url.encode(new TextEncoder().encode(text)), uncovered });
  };
  const v1 = computeForm(raw, 'a2a-v1');
  let gaps: string[] | undefined;
  const v1Gaps = (): string[] => {
    if (gaps === undefined) {
      gaps = [];
      uncoveredPaths(withoutSignatures(raw), JSON.parse(v1) as unknown, '$', gaps);
    }
    return gaps;
  };
  add('a2a-v1', v1, v1Gaps);
  add('a2a-v1-ascii', asciiEscape(v1), v1Gaps);
  add('jcs', computeForm(raw, 'jcs'), () => []);
  return out;
}

/** Whether the `a2a-v1` form of a card leaves out none of its non-empty values. */
function coversWholeCard(raw: Json): boolean {
  if (uncanonicalizable(raw) !== undefined) return false;
  try {
    const v1 = payloads(raw).find((p) => p.form === 'a2a-v1');
    return v1 !== undefined && v1.uncovered().length === 0;
  } catch {
    return false;
  }
}

/**
 * The canonical text a signature covers, for documentation, tests and publishers who sign
 * with their own tools. `form` defaults to `'a2a-v1'`. `signatures` is never part of it.
 *
 * @throws {DiscoveryError} `ERR_CARD_MALFORMED` when the card is not a JSON object, is nested
 *   deeper than 64 levels, or cannot be serialized.
 * @example
 * const bytes = new TextEncoder().encode(canonicalCardPayload(card, 'jcs'));
 */
export function canonicalCardPayload(raw: unknown, form: CanonicalForm = 'a2a-v1'): string {
  const why = uncanonicalizable(raw);
  if (why !== undefined) throw new DiscoveryError('ERR_CARD_MALFORMED', `cannot canonicalize: ${why}`, { stage: 'signature', path: '$' });
  try {
    return computeForm(raw as Json, form);
  } catch (err) {
    throw new DiscoveryError('ERR_CARD_MALFORMED', `cannot canonicalize: ${errorText(err)}`, { stage: 'signature', path: '$', cause: err });
  }
}

/**
 * Checks the JWS signatures of an agent card against trusted keys, on the RAW parsed JSON
 * (what came off the wire), never on a decoded or normalized card.
 *
 * Entries are tried in order until one verifies (so a card can carry a retired and a new
 * signature during key rotation); at most 8 are examined. Each entry needs `alg` and `kid` in its
 * protected header; `typ` is not required. Its key comes from `options.keys` by kid (limited
 * by the key's `origins`) or from the entry's `jku` when that URL is in `allowedJku` (fetched
 * through `fetchJwks`, at most once per URL per call). A `jku` outside `allowedJku` is reported
 * and never fetched. When every signature names a key that neither `keys` nor an allowed `jku`
 * holds, the status is `unverified` (passes `if-present`, fails `required`); any other failure
 * is `invalid`. Never throws for anything in the card, including cards too deep to
 * canonicalize: those become problems.
 *
 * @throws {DiscoveryError} `ERR_CONFIG_INVALID` (rejected promise) for a bad mode, an empty or
 *   unsafe algorithm allowlist (`none`, `HS*`), a private or symmetric trusted key, a
 *   key `origins` entry that is not an origin (`https://host[:port]`, no path), or `allowedJku` without `fetchJwks`.
 * @example
 * const result = await verifyCardSignatures(JSON.parse(body), {
 *   mode: 'required',
 *   keys: [{ kid: 'billing-2025', jwk: publicJwk, origins: ['https://billing.example.com'] }],
 *   origin: 'https://billing.example.com',
 * });
 * if (!result.ok) throw signatureFailure(result, url);
 */
export async function verifyCardSignatures(raw: unknown, options: SignatureOptions): Promise<SignatureResult> {
  const settings = settingsOf(options);
  const finish = finisher(settings);
  if (settings.mode === 'off') return finish({ status: 'skipped', problems: [] });
  if (!isObject(raw)) return finish({ status: 'unsigned', problems: [{ path: '$', message: 'the card is not a JSON object, so it carries no signatures' }] });

  const entries = raw.signatures;
  if (entries === undefined || entries === null || (Array.isArray(entries) && entries.length === 0)) {
    return finish({ status: 'unsigned', problems: [] });
  }
  if (!Array.isArray(entries)) {
    return finish({ status: 'invalid', problems: [{ path: 'signatures', message: 'must be an array of JWS objects' }] });
  }

  let computed: Payload[] | string;
  const why = uncanonicalizable(raw);
  if (why !== undefined) computed = `${why}, so its canonical form was not computed`;
  else {
    try {
      computed = payloads(raw);
    } catch (err) {
      computed = `the card's canonical form could not be computed (${errorText(err)})`;
    }
  }
  const ctx: CheckContext = { settings, payloads: computed, jwks: new Map() };

  const problems: Problem[] = [];
  let allUnknown = true;
  for (const [i, entry] of (entries as unknown[]).entries()) {
    const path = `signatures[${i}]`;
    if (i >= MAX_SIGNATURES) {
      problems.push({ path, message: `was not checked: only the first ${MAX_SIGNATURES} signatures are examined` });
      continue;
    }
    const outcome = await checkEntry(entry, ctx);
    if (outcome.ok) return finish({ status: 'verified', kid: outcome.kid, alg: outcome.alg, form: outcome.form, problems });
    if (outcome.unknownKey !== true) allUnknown = false;
    problems.push({ path, message: outcome.message });
  }
  return finish({ status: allUnknown ? 'unverified' : 'invalid', problems });
}

/**
 * The refusal of a failed {@link SignatureResult} as a {@link DiscoveryError}, for caches and
 * events: `ERR_SIGNATURE_MISSING` for an unsigned card under `required`, otherwise
 * `ERR_SIGNATURE_INVALID` (also for an `unverified` card under `required`), with stage
 * `signature` and every problem.
 *
 * @throws {DiscoveryError} `ERR_INTERNAL` when called on a result that passed.
 */
export function signatureFailure(result: SignatureResult, url?: string): DiscoveryError {
  if (result.ok) throw new DiscoveryError('ERR_INTERNAL', 'signatureFailure called on a card that passed');
  const first = result.problems[0];
  const missing = result.status === 'unsigned';
  const summary = missing
    ? 'the card is unsigned, but a verified signature is required'
    : `no signature on the card verified${first ? ` (${first.path}: ${first.message})` : ''}`;
  return new DiscoveryError(missing ? 'ERR_SIGNATURE_MISSING' : 'ERR_SIGNATURE_INVALID', summary, {
    ...(url !== undefined && { url }),
    stage: 'signature',
    path: first?.path ?? 'signatures',
    problems: result.problems,
  });
}

/**
 * Signs a raw JSON card, for publishers and tests: returns a new object with one flattened JWS
 * appended to `signatures` (existing ones are kept; the input is not modified). The protected
 * header is `{alg, kid, typ: "JOSE", jku?}`.
 *
 * The payload is the `a2a-v1` form when that form covers the whole card (any A2A 1.0 card
 * without extra fields: then the a2a-js 1.x SDK's verifier accepts it too), and `jcs`
 * otherwise (0.3 cards, cards with fields outside the 1.0 schema). Pass `form` to choose.
 *
 * @throws {DiscoveryError} `ERR_CONFIG_INVALID` for a refused algorithm (`none`, `HS*`), an
 *   empty kid, or a key jose cannot sign with; `ERR_CARD_MALFORMED` for a card with no
 *   canonical form or a `signatures` member that is not an array.
 * @example
 * const { privateKey } = await generateKeyPair('ES256');
 * const signed = await signCard(card, privateKey, { alg: 'ES256', kid: 'billing-2025' });
 */
export async function signCard(
  raw: Record<string, unknown>,
  key: CryptoKey | KeyObject | JWK,
  header: { alg: string; kid: string; jku?: string },
  options: { form?: CanonicalForm } = {},
): Promise<Record<string, unknown>> {
  const refusal = algorithmRefusal(header.alg);
  if (refusal !== undefined) throw configError(`cannot sign with algorithm ${refusal}`, 'alg');
  if (typeof header.kid !== 'string' || header.kid === '') throw configError('a signature needs a non-empty kid', 'kid');
  const existing = raw.signatures ?? [];
  if (!Array.isArray(existing)) throw new DiscoveryError('ERR_CARD_MALFORMED', '"signatures" is not an array', { stage: 'signature', path: 'signatures' });

  const form = options.form ?? (coversWholeCard(raw) ? 'a2a-v1' : 'jcs');
  const text = canonicalCardPayload(raw, form);
  const protectedHeader = { alg: header.alg, kid: header.kid, typ: 'JOSE', ...(header.jku !== undefined && { jku: header.jku }) };
  let jws;
  try {
    jws = await new FlattenedSign(new TextEncoder().encode(text)).setProtectedHeader(protectedHeader).sign(key);
  } catch (err) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `cannot sign with key "${header.kid}": ${errorText(err)}`, { stage: 'signature', cause: err });
  }
  return { ...raw, signatures: [...(existing as unknown[]), { protected: jws.protected, signature: jws.signature }] };
}
