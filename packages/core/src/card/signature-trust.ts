/**
 * What card signatures and detached document signatures share: the options (modes, the trust
 * store, algorithms, origins, allowed `jku` key sets) checked once, the refusal of unsafe
 * algorithms and keys, the check of one JWS against the trusted keys (protected header, key
 * lookup by `kid` and origin, an allowlisted JWKS fetched at most once per call, each candidate
 * payload tried), and the verdict under the mode. Card signatures are in signature.ts, detached
 * ones (AI Catalogs, Trust Manifests) in detached-signature.ts.
 *
 * @module
 */
import { DEFAULT_SIGNATURE_ALGORITHMS, SIGNATURE_ALGORITHMS } from '../rules/jws.js';
import { base64url, flattenedVerify } from 'jose';
import type { FlattenedJWSInput, JSONWebKeySet, JWK } from 'jose';
import { DiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';
import { normalizeOrigin, originOf } from '../rules/origins.js';
import { frozenCopy } from '../rules/frozen.js';

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
  /**
   * Optional: origins (`https://host[:port]`, e.g. 'https://agents.example.com'; no path) whose
   * cards this key may sign; unset = any. Anything else is refused (`ERR_CONFIG_INVALID`).
   */
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
  /** The origin the card was fetched from (for {@link TrustedKey.origins}); a full http(s) URL is reduced to its origin. */
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
const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set(SIGNATURE_ALGORITHMS);
const DEFAULT_ALGORITHMS = DEFAULT_SIGNATURE_ALGORITHMS;

/** Defensive bounds; callers are expected to have depth-checked the card already. */
const MAX_DEPTH = 64;
const MAX_NODES = 200_000;
const MAX_JWS_PART = 16_384;
const MAX_JWKS_KEYS = 100;

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A payload a signature may cover: one canonical form of the signed document. */
export interface Payload {
  form: CanonicalForm;
  /** base64url of the UTF-8 bytes: the JWS payload. */
  b64: string;
  /** For the a2a-v1 forms: JSON paths of non-empty card values the form leaves out. */
  uncovered: () => string[];
}

/** Why a card has no canonical form, or undefined when it has one. */
export function uncanonicalizable(raw: unknown): string | undefined {
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

// ---------------------------------------------------------------------------------------------
// Options

export interface TrustSettings {
  mode: SignatureMode;
  keys: readonly TrustedKey[];
  algorithms: string[];
  origin: string | undefined;
  allowedJku: ReadonlySet<string>;
  fetchJwks: ((url: string) => Promise<JSONWebKeySet>) | undefined;
}

export function configError(message: string, path: string): DiscoveryError {
  return new DiscoveryError('ERR_CONFIG_INVALID', message, { stage: 'config', path });
}

export function algorithmRefusal(alg: string): string | undefined {
  if (alg === 'none') return '"none" means unsigned';
  if (/^HS\d+$/.test(alg)) return `"${alg}" uses a shared secret, so anyone able to verify could also sign`;
  if (!ASYMMETRIC_ALGORITHMS.has(alg)) return `"${alg}" is not a JWS signature algorithm this library supports`;
  return undefined;
}

/**
 * Why a JWK cannot be a card-verification key, or undefined when it can: the trust store's rule,
 * applied to keys given in code, to keys read from configured files (`resolveSecrets`) and to an
 * allowlisted jku's key set.
 */
export function unusableJwk(jwk: unknown): string | undefined {
  if (!isObject(jwk)) return 'is not a JWK object';
  if (jwk.kty === 'oct') return 'is a symmetric ("oct") key; only public keys can verify cards';
  if (jwk.kty !== 'EC' && jwk.kty !== 'OKP' && jwk.kty !== 'RSA') return `has unsupported kty ${JSON.stringify(jwk.kty)} (EC, OKP or RSA expected)`;
  if ('d' in jwk) return 'is a private key; configure only its public part';
  if (jwk.use !== undefined && jwk.use !== 'sig') return `is marked "use": ${JSON.stringify(jwk.use)}, not "sig"`;
  return undefined;
}

export function settingsOf(options: SignatureOptions): TrustSettings {
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
      const origin = normalizeOrigin(o);
      if (typeof origin !== 'string') throw configError(origin.problem, `signatures.keys[${i}].origins[${j}]`);
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
    origin: options.origin === undefined ? undefined : originOf(options.origin),
    allowedJku,
    fetchJwks: options.fetchJwks,
  };
}


// ---------------------------------------------------------------------------------------------
// Verification

/** A failed entry is `unknownKey` when it is well formed and names a key nobody trusts here. */
type Outcome = { ok: true; kid: string; alg: string; form: CanonicalForm } | { ok: false; message: string; unknownKey?: boolean };

export interface CheckContext {
  settings: TrustSettings;
  payloads: Payload[] | string;
  jwks: Map<string, Promise<JWK[] | string>>;
}

export function errorText(err: unknown): string {
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
function jwksKeys(ctx: CheckContext, url: string, kid: string): Promise<JWK[] | string> {
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

export async function checkEntry(entry: unknown, ctx: CheckContext): Promise<Outcome> {
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
export function finisher(settings: TrustSettings): (r: Omit<SignatureResult, 'ok'>) => SignatureResult {
  return (r) => {
    const ok =
      settings.mode === 'off' ||
      r.status === 'verified' ||
      (settings.mode === 'if-present' && (r.status === 'unsigned' || r.status === 'unverified'));
    return frozenCopy(r, { ok, problems: Object.freeze(r.problems) as Problem[] });
  };
}
