/**
 * Agent-card signatures (A2A 1.0 §8.4): JWS (RFC 7515, flattened) over a canonical form of
 * the card without its `signatures`, checked against keys from configuration or from an
 * allowlisted JWKS. Verification runs on the raw JSON that came off the wire, never on a
 * decoded card, and never fetches a `jku` by itself. See docs/signatures.md for the canonical
 * forms, the trust model and how cards from each signer fare.
 *
 * @module
 */
import type { AgentCard } from '@a2a-js/sdk';
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import canonicalize from 'canonicalize';
import { FlattenedSign, base64url, flattenedVerify } from 'jose';
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWK, KeyObject } from 'jose';
import { DiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';

/**
 * How signatures decide whether a card passes:
 * - `off`: not looked at (`status: 'skipped'`, always passes);
 * - `if-present`: an unsigned card passes, and so does one signed only by keys the trust store
 *   does not hold (`status: 'unverified'`, with a problem per signature to show as a warning);
 *   a signature that names a trusted key must verify, or the card is refused (`invalid`);
 * - `required`: only a card with a signature verified by a trusted key passes.
 */
export type SignatureMode = 'off' | 'if-present' | 'required';

/**
 * A canonical form a signature may cover (see docs/signatures.md):
 * - `a2a-v1`: the a2a-js 1.x SDK's `canonicalizeAgentCard` (the card round-tripped through the
 *   A2A 1.0 proto JSON, empty values dropped, keys sorted). Accepted only when it covers every
 *   non-empty value of the card.
 * - `a2a-v1-ascii`: the same with non-ASCII characters written as `\uXXXX`, as a2a-python 1.x
 *   (`json.dumps` with its default `ensure_ascii`) produces it.
 * - `jcs`: plain RFC 8785 of the whole card minus `signatures`.
 */
export type CanonicalForm = 'a2a-v1' | 'a2a-v1-ascii' | 'jcs';

/** A public key the operator trusts to sign agent cards. */
export interface TrustedKey {
  /** Must equal the `kid` in a signature's protected header. */
  kid: string;
  /** Public JWK (from configuration). Private (`d`) and symmetric (`oct`) keys are refused. */
  jwk: JWK;
  /** Optional: origins (e.g. 'https://agents.example.com') whose cards this key may sign; unset = any. */
  origins?: readonly string[];
}

/** Inputs of {@link verifyCardSignatures}. */
export interface SignatureOptions {
  /** Default `'if-present'`. */
  mode?: SignatureMode;
  /** The trust store. */
  keys?: readonly TrustedKey[];
  /**
   * JWS algorithms accepted, default `['ES256','ES384','EdDSA','RS256','PS256']`. Only
   * asymmetric algorithms are possible: `none` and `HS*` are refused as configuration errors.
   */
  algorithms?: readonly string[];
  /** The origin the card was fetched from (for {@link TrustedKey.origins}); a full URL is reduced to its origin. */
  origin?: string;
  /** jku URLs that may be used (exact string match); a card's jku outside this list is never fetched. */
  allowedJku?: readonly string[];
  /** Injected fetcher for an allowed jku (returns a JWKS); the library never fetches by itself here. */
  fetchJwks?: (url: string) => Promise<JSONWebKeySet>;
}

/** The outcome of {@link verifyCardSignatures}. */
export interface SignatureResult {
  /**
   * - `unsigned`: no signatures;
   * - `verified`: a signature verified with a trusted key;
   * - `unverified`: signed, but every signature names a key the trust store does not hold (and
   *   no allowlisted `jku` supplies), so nothing could be checked;
   * - `invalid`: signatures present and none verified, at least one of them by a trusted key,
   *   malformed, or with a refused algorithm;
   * - `skipped`: mode `off`.
   */
  status: 'unsigned' | 'verified' | 'unverified' | 'invalid' | 'skipped';
  /**
   * Whether the card passes under the mode: off → true; if-present → unsigned, unverified or
   * verified; required → verified only.
   */
  ok: boolean;
  /** Key id of the signature that verified. */
  kid?: string;
  /** Algorithm of the signature that verified. */
  alg?: string;
  /** Which canonical form verified. */
  form?: CanonicalForm;
  /**
   * One problem per failed signature entry (path `signatures[i]`), in a sentence a card
   * publisher understands. A verified card may still list problems for entries before the
   * one that verified (for example a signature by a retired key).
   */
  problems: Problem[];
}

/** Algorithms this library can verify. Everything else (`none`, `HS*`, unknown) is refused. */
const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set([
  'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
]);
const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze(['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256']);

/** Defensive bounds; callers are expected to have depth-checked the card already. */
const MAX_DEPTH = 64;
const MAX_NODES = 200_000;
const MAX_SIGNATURES = 8;
const MAX_JWS_PART = 16_384;
const MAX_JWKS_KEYS = 100;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Canonical forms

interface Payload {
  form: CanonicalForm;
  /** base64url of the UTF-8 bytes: the JWS payload. */
  b64: string;
  /** For the a2a-v1 forms: JSON paths of non-empty card values the form leaves out. */
  uncovered: () => string[];
}

/** Why a card has no canonical form, or undefined when it has one. */
function uncanonicalizable(raw: unknown): string | undefined {
  if (!isObject(raw)) return 'the card is not a JSON object';
  const stack: Array<[unknown, number]> = [[raw, 1]];
  let nodes = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (++nodes > MAX_NODES) return `the card has more than ${MAX_NODES} values`;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_DEPTH) return `the card is nested deeper than ${MAX_DEPTH} levels`;
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, depth + 1]);
  }
  return undefined;
}

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
    if (out === undefined) throw new TypeError('the card has no JSON representation');
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

// ---------------------------------------------------------------------------------------------
// Options

interface Settings {
  mode: SignatureMode;
  keys: readonly TrustedKey[];
  algorithms: string[];
  origin: string | undefined;
  allowedJku: ReadonlySet<string>;
  fetchJwks: ((url: string) => Promise<JSONWebKeySet>) | undefined;
}

function configError(message: string, path: string): DiscoveryError {
  return new DiscoveryError('ERR_CONFIG_INVALID', message, { stage: 'config', path });
}

function normalizeOrigin(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

function algorithmRefusal(alg: string): string | undefined {
  if (alg === 'none') return '"none" means unsigned';
  if (/^HS\d+$/.test(alg)) return `"${alg}" uses a shared secret, so anyone able to verify could also sign`;
  if (!ASYMMETRIC_ALGORITHMS.has(alg)) return `"${alg}" is not a JWS signature algorithm this library supports`;
  return undefined;
}

/** Why a JWK cannot be a card-verification key, or undefined when it can. */
function unusableJwk(jwk: unknown): string | undefined {
  if (!isObject(jwk)) return 'is not a JWK object';
  if (jwk.kty === 'oct') return 'is a symmetric ("oct") key; only public keys can verify cards';
  if (jwk.kty !== 'EC' && jwk.kty !== 'OKP' && jwk.kty !== 'RSA') return `has unsupported kty ${JSON.stringify(jwk.kty)}`;
  if ('d' in jwk) return 'is a private key; configure only the public part';
  if (jwk.use !== undefined && jwk.use !== 'sig') return `is marked "use": ${JSON.stringify(jwk.use)}, not "sig"`;
  return undefined;
}

function settingsOf(options: SignatureOptions): Settings {
  const mode = options.mode ?? 'if-present';
  if (mode !== 'off' && mode !== 'if-present' && mode !== 'required') {
    throw configError(`signature mode ${JSON.stringify(mode)} is not one of off, if-present, required`, 'signatures.mode');
  }
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  if (algorithms.length === 0) throw configError('the signature algorithm allowlist is empty', 'signatures.algorithms');
  algorithms.forEach((alg, i) => {
    const refusal = algorithmRefusal(alg);
    if (refusal !== undefined) throw configError(`algorithm ${refusal}; it cannot be allowed`, `signatures.algorithms[${i}]`);
  });
  const keys = options.keys ?? [];
  keys.forEach((key, i) => {
    if (typeof key.kid !== 'string' || key.kid === '') throw configError('a trusted key needs a non-empty kid', `signatures.keys[${i}].kid`);
    const bad = unusableJwk(key.jwk);
    if (bad !== undefined) throw configError(`the key "${key.kid}" ${bad}`, `signatures.keys[${i}].jwk`);
    key.origins?.forEach((o, j) => {
      if (normalizeOrigin(o) === undefined) throw configError(`${JSON.stringify(o)} is not an origin such as https://agents.example.com`, `signatures.keys[${i}].origins[${j}]`);
    });
  });
  const allowedJku = new Set(options.allowedJku ?? []);
  if (allowedJku.size > 0 && options.fetchJwks === undefined) {
    throw configError('allowedJku is set but no fetchJwks function was given to fetch those key sets', 'signatures.allowedJku');
  }
  return {
    mode,
    keys,
    algorithms,
    origin: options.origin === undefined ? undefined : normalizeOrigin(options.origin),
    allowedJku,
    fetchJwks: options.fetchJwks,
  };
}

// ---------------------------------------------------------------------------------------------
// Verification

/** A failed entry is `unknownKey` when it is well formed and names a key nobody trusts here. */
type Outcome = { ok: true; kid: string; alg: string; form: CanonicalForm } | { ok: false; message: string; unknownKey?: boolean };

interface Context {
  settings: Settings;
  payloads: Payload[] | string;
  jwks: Map<string, Promise<JWK[] | string>>;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function decodeProtectedHeader(encoded: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(encoded)));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The keys of a fetched JWKS with this kid, or why there are none. Fetched once per call. */
function jwksKeys(ctx: Context, url: string, kid: string): Promise<JWK[] | string> {
  let pending = ctx.jwks.get(url);
  if (pending === undefined) {
    const fetchJwks = ctx.settings.fetchJwks as (url: string) => Promise<JSONWebKeySet>;
    pending = Promise.resolve()
      .then(() => fetchJwks(url))
      .then(
        (set: unknown) => {
          if (!isObject(set) || !Array.isArray(set.keys)) return `the document at its jku ${url} is not a JWKS`;
          return (set.keys as unknown[]).slice(0, MAX_JWKS_KEYS).filter((k): k is JWK => unusableJwk(k) === undefined);
        },
        (err: unknown) => `the key set at its jku ${url} could not be fetched (${errorText(err)})`,
      );
    ctx.jwks.set(url, pending);
  }
  return pending.then((keys) => (typeof keys === 'string' ? keys : keys.filter((k) => k.kid === kid)));
}

async function checkEntry(entry: unknown, ctx: Context): Promise<Outcome> {
  const fail = (message: string): Outcome => ({ ok: false, message });
  if (!isObject(entry)) return fail('is not a JWS object; expected {"protected", "signature", "header"?}');
  const { protected: protectedB64, signature, header } = entry;
  if (typeof protectedB64 !== 'string' || protectedB64 === '') return fail('has no "protected" header string');
  if (typeof signature !== 'string') return fail('has no "signature" string');
  if (protectedB64.length > MAX_JWS_PART || signature.length > MAX_JWS_PART) return fail('is too large to be a card signature');
  if (header !== undefined && !isObject(header)) return fail('has an unprotected "header" that is not a JSON object');
  const ph = decodeProtectedHeader(protectedB64);
  if (ph === undefined) return fail('has a "protected" header that is not a base64url-encoded JSON object');

  const { alg, kid, jku } = ph;
  if (typeof alg !== 'string' || alg === '') return fail('has no "alg" in its protected header (A2A 1.0 §8.4.2 requires it)');
  if (typeof kid !== 'string' || kid === '') {
    const hint = isObject(header) && 'kid' in header ? '; a kid in the unprotected header does not count, because it is not signed' : '';
    return fail(`has no "kid" in its protected header (A2A 1.0 §8.4.2 requires it)${hint}`);
  }
  const { settings } = ctx;
  const refusal = algorithmRefusal(alg);
  if (refusal !== undefined) return fail(`uses algorithm ${refusal}; such signatures are never accepted`);
  if (signature === '') return fail('has an empty "signature"');
  if (ph.b64 === false) return fail('uses an unencoded payload ("b64": false), which agent-card signatures do not support');
  if (jku !== undefined && jku !== null && typeof jku !== 'string') return fail('has a "jku" that is not a string');
  // A key we do not know proves nothing either way: not a refusal under if-present, only
  // "unverified". A kid we do know must verify (below), or the card is refused.
  const jkuAllowed = typeof jku === 'string' && settings.allowedJku.has(jku);
  if (!jkuAllowed && !settings.keys.some((key) => key.kid === kid)) {
    const note = typeof jku === 'string' ? `; its jku ${jku} is not in the allowed list, so it was not fetched` : '';
    return { ok: false, unknownKey: true, message: `is signed by key "${kid}", which is not a trusted key${note}` };
  }
  if (!settings.algorithms.includes(alg)) {
    return fail(`uses algorithm "${alg}", which this consumer does not allow (allowed: ${settings.algorithms.join(', ')})`);
  }
  if (typeof ctx.payloads === 'string') return fail(`cannot be checked: ${ctx.payloads}`);

  // Keys: configured ones by kid (respecting origins), then an allowlisted jku's.
  const candidates: JWK[] = [];
  const refusedOrigins: string[] = [];
  for (const key of settings.keys) {
    if (key.kid !== kid) continue;
    const origins = key.origins?.map((o) => normalizeOrigin(o) as string);
    if (origins === undefined || (settings.origin !== undefined && origins.includes(settings.origin))) candidates.push(key.jwk);
    else refusedOrigins.push(...origins);
  }
  let jkuNote: string | undefined;
  let jkuUnavailable = false;
  if (typeof jku === 'string') {
    if (settings.allowedJku.has(jku)) {
      const found = await jwksKeys(ctx, jku, kid);
      if (typeof found === 'string') {
        jkuNote = found;
        jkuUnavailable = true;
      } else if (found.length === 0) jkuNote = `the key set at its jku ${jku} has no usable key "${kid}"`;
      else candidates.push(...found);
    } else {
      jkuNote = `its jku ${jku} is not in the allowed list, so it was not fetched`;
    }
  }
  const withJku = (message: string): string => (jkuNote === undefined ? message : `${message}; ${jkuNote}`);
  if (candidates.length === 0) {
    if (refusedOrigins.length > 0) {
      const from = settings.origin === undefined ? 'an unknown origin' : settings.origin;
      return fail(withJku(`is signed by key "${kid}", which is not trusted for cards from ${from} (only for ${refusedOrigins.join(', ')})`));
    }
    // The allowed key set does not hold this kid (and no configured key has it): an unknown
    // key. A key set that could not be fetched is not: the key may be trusted.
    return { ok: false, unknownKey: !jkuUnavailable, message: withJku(`is signed by key "${kid}", which is not a trusted key`) };
  }

  const reasons: string[] = [];
  let coverageNote: string | undefined;
  for (const jwk of candidates) {
    if (typeof jwk.alg === 'string' && jwk.alg !== alg) {
      reasons.push(`key "${kid}" is for ${jwk.alg}, not ${alg}`);
      continue;
    }
    if (Array.isArray(jwk.key_ops) && !jwk.key_ops.includes('verify')) {
      reasons.push(`key "${kid}" does not allow "verify" in its key_ops`);
      continue;
    }
    for (const payload of ctx.payloads) {
      const jws: FlattenedJWSInput = { protected: protectedB64, payload: payload.b64, signature, ...(header !== undefined && { header }) };
      try {
        await flattenedVerify(jws, jwk, { algorithms: settings.algorithms });
      } catch (err) {
        if ((err as { code?: unknown }).code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') continue;
        reasons.push(`key "${kid}" cannot check it: ${errorText(err)}`);
        break;
      }
      const gaps = payload.uncovered();
      if (gaps.length === 0) return { ok: true, kid, alg, form: payload.form };
      // A2A 1.0 cards are read through the same proto mapping, but 0.3 fields such as `url`
      // are used as published (for ADK), so a form that leaves them out proves nothing.
      coverageNote =
        `matches the ${payload.form} canonical form, but that form leaves out ${gaps.join(', ')}, ` +
        'so those values would be trusted unsigned; sign the whole card instead (RFC 8785 of the card without "signatures")';
    }
  }
  if (coverageNote !== undefined) return fail(coverageNote);
  if (reasons.length > 0) return fail(withJku(reasons.join('; ')));
  return fail(
    withJku(
      `does not match this card under key "${kid}" (canonical forms tried: ${ctx.payloads.map((p) => p.form).join(', ')}): ` +
        'the card was changed after it was signed, or it was signed over a form this consumer does not verify',
    ),
  );
}

/** Completes a result with `ok`: whether it passes under the mode (see {@link SignatureResult.ok}). */
function finisher(settings: Settings): (r: Omit<SignatureResult, 'ok'>) => SignatureResult {
  return (r) => {
    const ok =
      settings.mode === 'off' ||
      r.status === 'verified' ||
      (settings.mode === 'if-present' && (r.status === 'unsigned' || r.status === 'unverified'));
    return Object.freeze({ ...r, ok, problems: Object.freeze(r.problems) as Problem[] });
  };
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
 *   unsafe algorithm allowlist (`none`, `HS*`), a private or symmetric trusted key, an
 *   unparseable origin, or `allowedJku` without `fetchJwks`.
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
  const ctx: Context = { settings, payloads: computed, jwks: new Map() };

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

// ---------------------------------------------------------------------------------------------
// Detached JWS over a JSON document (AI Catalog signatures and Trust Manifests)

/**
 * The payload a detached document signature covers: RFC 8785 (JCS) of the JSON object without
 * its `signature` member, as the AI Catalog specification defines it for catalogs and Trust
 * Manifests.
 *
 * @throws {DiscoveryError} `ERR_CARD_MALFORMED` when the value is not a JSON object, is nested
 *   deeper than 64 levels or cannot be serialized.
 */
export function detachedPayload(raw: unknown): string {
  const why = uncanonicalizable(raw);
  if (why !== undefined) throw new DiscoveryError('ERR_CARD_MALFORMED', `cannot canonicalize: ${why.replace('the card', 'the document')}`, { stage: 'signature', path: '$' });
  const text = canonicalize(Object.fromEntries(Object.entries(raw as Json).filter(([key]) => key !== 'signature')));
  if (text === undefined) throw new DiscoveryError('ERR_CARD_MALFORMED', 'cannot canonicalize: the document has no JSON representation', { stage: 'signature', path: '$' });
  return text;
}

/**
 * Checks the `signature` member of a JSON document (an AI Catalog, a Trust Manifest): a detached
 * JWS in compact serialization (`<protected>..<signature>`) over {@link detachedPayload}, with
 * the same trust store, modes, algorithm rules, `kid` and `origins` handling as card signatures
 * ({@link verifyCardSignatures}): unsigned passes `if-present`, a key nobody trusts is
 * `unverified`, a trusted key that does not verify is `invalid`. Problems are at path `signature`.
 *
 * @throws {DiscoveryError} `ERR_CONFIG_INVALID` (rejected promise) for bad options, as {@link verifyCardSignatures}.
 * @example
 * const r = await verifyDetachedSignature(catalogJson, { mode: 'required', keys });
 */
export async function verifyDetachedSignature(raw: unknown, options: SignatureOptions): Promise<SignatureResult> {
  const settings = settingsOf(options);
  const finish = finisher(settings);
  if (settings.mode === 'off') return finish({ status: 'skipped', problems: [] });
  if (!isObject(raw) || raw.signature === undefined || raw.signature === null) return finish({ status: 'unsigned', problems: [] });
  const compact = raw.signature;
  const parts = typeof compact === 'string' ? compact.split('.') : [];
  if (parts.length !== 3 || parts[1] !== '') {
    return finish({ status: 'invalid', problems: [{ path: 'signature', message: 'must be a detached JWS in compact serialization ("<protected>..<signature>", empty payload)' }] });
  }
  let text: string | undefined;
  let why: string | undefined;
  try {
    text = detachedPayload(raw);
  } catch (err) {
    why = `the document's canonical form could not be computed (${errorText(err)})`;
  }
  const ctx: Context = {
    settings,
    payloads: text === undefined ? (why as string) : [{ form: 'jcs', b64: base64url.encode(new TextEncoder().encode(text)), uncovered: () => [] }],
    jwks: new Map(),
  };
  const outcome = await checkEntry({ protected: parts[0], signature: parts[2] }, ctx);
  if (outcome.ok) return finish({ status: 'verified', kid: outcome.kid, alg: outcome.alg, form: 'jcs', problems: [] });
  const message = outcome.message.replace('does not match this card', 'does not match this document').replace(/ \(canonical forms tried: [^)]*\)/, ' (RFC 8785 of the document without "signature")');
  return finish({ status: outcome.unknownKey === true ? 'unverified' : 'invalid', problems: [{ path: 'signature', message }] });
}

/**
 * Signs a JSON document with a detached JWS over {@link detachedPayload}: returns a new object
 * with `signature` set (compact serialization, empty payload part). For publishers (our own
 * AI Catalog) and tests. Header `{alg, kid, typ: "JOSE"}`.
 *
 * @throws {DiscoveryError} `ERR_CONFIG_INVALID` for a refused algorithm, an empty kid or a key
 *   jose cannot sign with; `ERR_CARD_MALFORMED` for a document with no canonical form.
 * @example const signed = await signDetached(catalog, privateKey, { alg: 'ES256', kid: 'catalog-2026' });
 */
export async function signDetached<T extends Record<string, unknown>>(raw: T, key: CryptoKey | KeyObject | JWK, header: { alg: string; kid: string }): Promise<T & { signature: string }> {
  const refusal = algorithmRefusal(header.alg);
  if (refusal !== undefined) throw configError(`cannot sign with algorithm ${refusal}`, 'alg');
  if (typeof header.kid !== 'string' || header.kid === '') throw configError('a signature needs a non-empty kid', 'kid');
  const text = detachedPayload(raw);
  let jws;
  try {
    jws = await new FlattenedSign(new TextEncoder().encode(text)).setProtectedHeader({ alg: header.alg, kid: header.kid, typ: 'JOSE' }).sign(key);
  } catch (err) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `cannot sign with key "${header.kid}": ${errorText(err)}`, { stage: 'signature', cause: err });
  }
  return { ...raw, signature: `${jws.protected}..${jws.signature}` };
}
