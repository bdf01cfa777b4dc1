/**
 * Long synchronous work on a large catalog in slices, on the clock's {@link Pacer}: a 5,000-entry
 * catalog read by discovery or the service's inspector never holds `/healthz` and other requests
 * for long. The reader's structure walk and entries (`readAiCatalogPaced`), the RFC 8785 digest
 * ({@link pacedCanonicalSha256}) and signature payload ({@link pacedCanonicalJson}), the walk, the
 * records and the probe's documents and version decision all tick a pacer.
 *
 * @module
 */
import { canonicalJson } from '../card/canonical.js';
import { createHash } from 'node:crypto';
import { runPaced, type Pacer } from '../clock/pacer.js';

export { Pacer } from '../clock/pacer.js';

/** Values written between two turns of {@link pacedCanonicalSha256}'s pacer. */
const VALUES_PER_STEP = 2_048;

/**
 * The lower-case hex SHA-256 of the RFC 8785 (JCS) form of a JSON value, computed in slices: the
 * same digest as `sha256Hex(canonicalJson(value))` (the form of an object or array is its members'
 * forms joined in order, so the value is written member by member and hashed as it goes, with a
 * {@link Pacer} tick every few thousand values). Throws what the canonicalization throws (a number
 * JSON cannot write, a lone surrogate). For JSON as parsed (no cycles).
 */
export async function pacedCanonicalSha256(value: unknown, pacer: Pacer): Promise<string> {
  const hash = createHash('sha256');
  let pending = '';
  const out = (text: string): void => {
    pending += text;
    if (pending.length >= 65_536) {
      hash.update(pending);
      pending = '';
    }
  };
  await runPaced(canonicalPieces(value, out, { values: 0 }), pacer);
  hash.update(pending);
  return hash.digest('hex');
}

/**
 * The RFC 8785 (JCS) text of a JSON value, written in slices: the same text as
 * `canonicalJson(value)`, with a {@link Pacer} tick every few thousand values. Throws what the
 * canonicalization throws. For JSON as parsed (no cycles).
 */
export async function pacedCanonicalJson(value: unknown, pacer: Pacer): Promise<string> {
  let text = '';
  await runPaced(canonicalPieces(value, (piece) => (text += piece), { values: 0 }), pacer);
  return text;
}

/** Writes the canonical form of `value` to `out` in pieces (as `canonicalize` writes it), yielding every {@link VALUES_PER_STEP} values. */
function* canonicalPieces(value: unknown, out: (text: string) => void, count: { values: number }): Generator<void, void> {
  if (++count.values % VALUES_PER_STEP === 0) yield;
  if (value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out(canonicalJson(value));
    return;
  }
  if (Array.isArray(value)) {
    out('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out(',');
      const item: unknown = value[i];
      yield* canonicalPieces(item === undefined || typeof item === 'symbol' ? null : item, out, count);
    }
    out(']');
    return;
  }
  const record = value as Record<string, unknown>;
  out('{');
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === 'symbol') continue;
    out(`${first ? '' : ','}${canonicalJson(key)}:`);
    first = false;
    yield* canonicalPieces(member, out, count);
  }
  out('}');
}
