/**
 * The request and response headers the card cache works with under RFC 9111, around
 * http-cache-semantics: which response headers a stored policy keeps, the validators a stored
 * response gives the next request (§4.3.1), how a 304 updates the stored headers (§4.3.4), and a
 * policy class that reads the injected clock.
 *
 * @module
 */
import CachePolicy from 'http-cache-semantics';
import type { Clock } from '../clock/index.js';
import type { BoundedMemo } from '../fetch/bounded-memo.js';
import type { CacheEntry } from './card-store.js';

/** The response headers http-cache-semantics reads; the others are not kept in the policy. */
const POLICY_HEADERS = ['cache-control', 'expires', 'date', 'age', 'last-modified', 'etag', 'vary', 'pragma'] as const;

/** The kept headers whose values a fleet's cards mostly share (`public, max-age=300`). */
const SHARED_VALUES: ReadonlySet<string> = new Set(['cache-control', 'vary', 'pragma']);

/**
 * The headers of a response a stored policy keeps. `shared`: a memo of the values of
 * `Cache-Control`, `Vary` and `Pragma` already held, so that every entry with the same value
 * holds one string (40 B an entry otherwise).
 */
export function policyHeaders(headers: Readonly<Record<string, string>>, shared?: BoundedMemo<string>): Record<string, string> {
  const out: Record<string, string> = {};
  // `Date` only matters against `Expires` or `Last-Modified`; otherwise it is not kept.
  const dated = headers.expires !== undefined || headers['last-modified'] !== undefined;
  for (const name of POLICY_HEADERS) {
    let v = headers[name];
    if (v === undefined || (name === 'date' && !dated)) continue;
    if (shared !== undefined && SHARED_VALUES.has(name)) {
      const held = shared.get(v);
      if (held === undefined) shared.set(v, v);
      else v = held;
    }
    out[name] = v;
  }
  return out;
}

/** A request as http-cache-semantics takes it. */
export interface PolicyRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
}

const NO_CONDITIONAL: Readonly<Record<string, string>> = Object.freeze({});

/** The validator headers among revalidation headers (the rest are ours). */
export function conditionalOf(headers: Readonly<Record<string, unknown>>): Readonly<Record<string, string>> {
  const inm = headers['if-none-match'];
  const ims = headers['if-modified-since'];
  if (typeof inm !== 'string' && typeof ims !== 'string') return NO_CONDITIONAL;
  return { ...(typeof inm === 'string' && { 'if-none-match': inm }), ...(typeof ims === 'string' && { 'if-modified-since': ims }) };
}

/** Whether an entry's validators were derived when it was stored (no Vary, and kept). */
export function isPrecomputed(entry: Pick<CacheEntry<unknown, string>, 'conditional' | 'varyRequest'>): boolean {
  return entry.conditional !== undefined && entry.varyRequest === undefined;
}

export function withConditional(plain: Readonly<Record<string, string>>, conditional: Readonly<Record<string, string>>): Record<string, string> {
  return conditional === NO_CONDITIONAL ? (plain as Record<string, string>) : Object.assign({}, plain, conditional);
}

/** Whether a 304 carries exactly the stored response's validators. */
export function sameValidators(answer: Readonly<Record<string, string>>, stored: Readonly<Record<string, string>>): boolean {
  return answer.etag === stored.etag && answer['last-modified'] === stored['last-modified'];
}

/**
 * The stored response's headers updated by a matching 304, as http-cache-semantics'
 * `revalidatedPolicy()` updates them: each stored header takes the 304's value when it has one;
 * headers the stored response lacked are not added. (Body headers are never among ours.)
 */
export function updatedHeaders(stored: Readonly<Record<string, string>>, answer: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in stored) out[k] = k in answer ? answer[k]! : stored[k]!;
  return out;
}

/** The validators of stored response headers. */
export function validatorsOf(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers.etag !== undefined) out.etag = headers.etag;
  if (headers['last-modified'] !== undefined) out['last-modified'] = headers['last-modified'];
  return out;
}

export function withoutValidators(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (headers.etag === undefined && headers['last-modified'] === undefined) return headers;
  const { etag: _etag, 'last-modified': _lastModified, ...rest } = headers;
  return rest;
}

/** http-cache-semantics' policy class, reading time through `now()` from the injected clock. */
export function clockedPolicy(clock: Clock): typeof CachePolicy {
  return class ClockedPolicy extends CachePolicy {
    // Not in @types/http-cache-semantics, but part of the library's contract ("monkey-patch it").
    now(): number {
      return clock.wallNow();
    }
  };
}
