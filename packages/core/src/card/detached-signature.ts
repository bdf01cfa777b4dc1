/**
 * Detached signatures over a JSON document (AI Catalogs and their Trust Manifests): a JWS in
 * compact serialization with an empty payload part, over RFC 8785 of the document without its
 * `signature` member, checked with the same trust store, modes and rules as card signatures.
 *
 * @module
 */
import canonicalize from 'canonicalize';
import { FlattenedSign, base64url } from 'jose';
import type { CryptoKey, JWK, KeyObject } from 'jose';
import { DiscoveryError } from '../errors.js';
import type { CheckContext, Json, SignatureOptions, SignatureResult } from './signature-trust.js';
import { algorithmRefusal, checkEntry, configError, errorText, finisher, isObject, settingsOf, uncanonicalizable } from './signature-trust.js';

/**
 * The payload a detached document signature covers: RFC 8785 (JCS) of the JSON object without
 * its `signature` member, as the AI Catalog specification defines it for catalogs and Trust
 * Manifests.
 *
 * @throws {DiscoveryError} `ERR_CARD_MALFORMED` when the value is not a JSON object, is nested
 *   deeper than 64 levels or cannot be serialized.
 */
function detachedPayload(raw: unknown): string {
  return payloadText(canonicalize(unsignedOf(raw)));
}

/** The document without its `signature` member, once it is known to have an RFC 8785 form's shape. */
function unsignedOf(raw: unknown): Json {
  const why = uncanonicalizable(raw);
  if (why !== undefined) throw new DiscoveryError('ERR_CARD_MALFORMED', `cannot canonicalize: ${why.replace('the card', 'the document')}`, { stage: 'signature', path: '$' });
  return Object.fromEntries(Object.entries(raw as Json).filter(([key]) => key !== 'signature'));
}

function payloadText(text: string | undefined): string {
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
 * `write` (optional) writes the RFC 8785 form of the document without `signature` instead of
 * `canonicalize`, for a caller that writes a large document in slices; it must write the same text.
 *
 * @throws {DiscoveryError} `ERR_CONFIG_INVALID` (rejected promise) for bad options, as {@link verifyCardSignatures}.
 * @example
 * const r = await verifyDetachedSignature(catalogJson, { mode: 'required', keys });
 */
export async function verifyDetachedSignature(raw: unknown, options: SignatureOptions, write?: (value: unknown) => Promise<string>): Promise<SignatureResult> {
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
    text = write === undefined ? detachedPayload(raw) : payloadText(await write(unsignedOf(raw)));
  } catch (err) {
    why = `the document's canonical form could not be computed (${errorText(err)})`;
  }
  const ctx: CheckContext = {
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
