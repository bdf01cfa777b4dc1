/**
 * Bytes to a JSON value, treating the bytes as hostile: the size is capped before decoding,
 * UTF-8 is decoded strictly, and the parsed value is walked iteratively to bound depth,
 * object width, array length and string length before any other code (canonicalization,
 * logging, `structuredClone`) can recurse into it. `__proto__` keys are refused outright.
 */
import type { Problem } from '../errors.js';
import { DEFAULT_MAX_CARD_BYTES } from '../rules/limits.js';
import { runSteps } from '../clock/pacer.js';

/** Limits applied to untrusted JSON. Defaults suit agent cards (a typical card is ~1.3 KB). */
export interface JsonLimits {
  /** Bytes accepted before decoding. Default 65,536 (the card size of src/rules/limits.ts). */
  maxBytes?: number;
  /** Deepest nesting of objects and arrays. Default 32. */
  maxDepth?: number;
  /** Keys in one object. Default 1,000. */
  maxObjectKeys?: number;
  /** Items in one array. Default 1,000. */
  maxArrayLength?: number;
  /** UTF-16 code units in one string or key. Default 16,384. */
  maxStringLength?: number;
}

const DEFAULT_JSON_LIMITS: Required<JsonLimits> = Object.freeze({
  maxBytes: DEFAULT_MAX_CARD_BYTES,
  maxDepth: 32,
  maxObjectKeys: 1_000,
  maxArrayLength: 1_000,
  maxStringLength: 16_384,
});

export type SafeJsonResult =
  | { ok: true; value: unknown; text: string }
  | { ok: false; code: 'ERR_CARD_TOO_LARGE' | 'ERR_CARD_MALFORMED'; problems: Problem[] };

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Parses untrusted JSON bytes under {@link JsonLimits}; never throws. */
export function parseSafeJson(bytes: Uint8Array, limits: JsonLimits = {}): SafeJsonResult {
  return runSteps(parseSafeJsonSteps(bytes, limits));
}

/** Values of the structure walk between two yields of {@link parseSafeJsonSteps}. */
const VALUES_PER_STEP = 4_096;

/**
 * {@link parseSafeJson} in steps, for a caller that reads large documents without holding the
 * event loop: the bytes are parsed in one piece, then the walk yields every few thousand values
 * (where the caller may let other work run); the result is the same.
 */
export function* parseSafeJsonSteps(bytes: Uint8Array, limits: JsonLimits = {}): Generator<void, SafeJsonResult> {
  const l = { ...DEFAULT_JSON_LIMITS, ...limits };
  if (bytes.byteLength > l.maxBytes) {
    return {
      ok: false,
      code: 'ERR_CARD_TOO_LARGE',
      problems: [{ path: '$', message: `card is ${bytes.byteLength} bytes; the limit is ${l.maxBytes} bytes` }],
    };
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, code: 'ERR_CARD_MALFORMED', problems: [{ path: '$', message: 'not valid UTF-8 text' }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, code: 'ERR_CARD_MALFORMED', problems: [{ path: '$', message: `not valid JSON: ${detail}` }] };
  }
  const problems = yield* checkStructure(value, l);
  if (problems.length > 0) return { ok: false, code: 'ERR_CARD_MALFORMED', problems };
  return { ok: true, value, text };
}

/** Iterative walk (no recursion, so hostile depth cannot overflow the stack). */
function* checkStructure(root: unknown, l: Required<JsonLimits>): Generator<void, Problem[]> {
  const problems: Problem[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '$', depth: 0 }];
  let walked = 0;
  while (stack.length > 0 && problems.length < 20) {
    if (++walked % VALUES_PER_STEP === 0) yield;
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > l.maxStringLength) {
        problems.push({ path, message: `string of ${value.length} characters; the limit is ${l.maxStringLength}` });
      }
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= l.maxDepth) {
      problems.push({ path, message: `nesting deeper than ${l.maxDepth} levels` });
      continue;
    }
    if (Array.isArray(value)) {
      if (value.length > l.maxArrayLength) {
        problems.push({ path, message: `array of ${value.length} items; the limit is ${l.maxArrayLength}` });
        continue;
      }
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > l.maxObjectKeys) {
      problems.push({ path, message: `object with ${keys.length} keys; the limit is ${l.maxObjectKeys}` });
      continue;
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child = joinPath(path, key);
      if (key === '__proto__') {
        problems.push({ path: child, message: 'the key "__proto__" is not allowed' });
        continue;
      }
      if (key.length > l.maxStringLength) {
        problems.push({ path, message: `a key of ${key.length} characters; the limit is ${l.maxStringLength}` });
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: child, depth: depth + 1 });
    }
  }
  return problems;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$` + `.key`, or `["odd key"]` for keys that are not identifiers. Paths drop the leading `$.` when shown. */
export function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const seg = IDENT.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return parent === '$' ? (seg.startsWith('.') ? seg.slice(1) : `$${seg}`) : `${parent}${seg}`;
}
