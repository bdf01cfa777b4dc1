/**
 * Long synchronous work on a large catalog in slices: a {@link Pacer} lets the event loop run
 * between slices (one turn through `setImmediate` at most every few milliseconds of work), so a
 * 5,000-entry catalog read by discovery or the service's inspector never holds `/healthz` and other
 * requests for long. The one place where catalog work yields: the reader's structure walk and
 * entries (`readAiCatalogPaced`), the RFC 8785 digest ({@link pacedCanonicalSha256}) and signature
 * payload ({@link pacedCanonicalJson}), the walk, the records and the probe's documents and version
 * decision all tick the same kind of pacer.
 *
 * @module
 */
import { canonicalJson } from '../card/canonical.js';
import { createHash } from 'node:crypto';

/** Milliseconds of work between two turns of the event loop (the bound is 100 ms of delay). */
const SLICE_MS = 8;

/**
 * Lets the event loop run between slices of a long synchronous loop (thousands of entries): at
 * most every `sliceMs` of work, one turn through `setImmediate`, so `/healthz` and other requests
 * are served while a large catalog is read or judged.
 */
export class Pacer {
  readonly #sliceMs: number;
  #since = performance.now();
  constructor(sliceMs = SLICE_MS) {
    this.#sliceMs = sliceMs;
  }
  /** Resolves at once within a slice, after one event-loop turn past it. */
  async tick(): Promise<void> {
    if (performance.now() - this.#since < this.#sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}

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
  const steps = canonicalPieces(value, out, { values: 0 });
  for (let step = steps.next(); step.done !== true; step = steps.next()) await pacer.tick();
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
  const steps = canonicalPieces(value, (piece) => (text += piece), { values: 0 });
  for (let step = steps.next(); step.done !== true; step = steps.next()) await pacer.tick();
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
