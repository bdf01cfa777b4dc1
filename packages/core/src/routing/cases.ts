/**
 * Labelled routing cases: a message and what should answer it, a reviewed tag or an agent's
 * local name. They come from the vocabulary's own `examples` and from an optional case file:
 *
 * ```yaml
 * - message: Was I charged twice for invoice 4411?
 *   expect: billing            # a vocabulary tag: any agent serving it is right
 * - message: Print my return label
 *   expect: returns_agent      # an agent's local name: only that agent is right
 * ```
 */
import { parse } from 'yaml';
import { DiscoveryError, type Problem } from '../errors.js';
import { readBoundedFile } from '../config/index.js';

export interface RoutingCase {
  readonly message: string;
  /** A vocabulary tag, or an agent's local name. */
  readonly expect: string;
  /** `example`: a vocabulary example; `cases`: the case file. */
  readonly source: 'example' | 'cases';
}

/** The vocabulary's examples as cases: each example expects its own tag. */
export function casesFromVocabulary(vocabulary: ReadonlyArray<{ readonly tag: string; readonly examples?: readonly string[] }>): RoutingCase[] {
  return vocabulary.flatMap((v) => (v.examples ?? []).map((message) => ({ message, expect: v.tag, source: 'example' as const })));
}

const MAX_CASE_BYTES = 4 * 1024 * 1024;

/**
 * Parses a case file: a YAML (or JSON) list of `{ message, expect }`, or `{ cases: [...] }`.
 * Every problem is reported at once (`ERR_CONFIG_INVALID`, each with its path).
 */
export function parseCases(text: string, file = 'cases'): RoutingCase[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${file}: not valid YAML: ${err instanceof Error ? err.message : String(err)}`, { stage: 'config' });
  }
  const list = Array.isArray(doc) ? doc : typeof doc === 'object' && doc !== null && Array.isArray((doc as { cases?: unknown }).cases) ? (doc as { cases: unknown[] }).cases : undefined;
  if (list === undefined) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${file}: expected a list of { message, expect } (or cases: [...])`, { stage: 'config', problems: [{ path: '$', message: 'expected a list' }] });
  }
  const problems: Problem[] = [];
  const cases: RoutingCase[] = [];
  list.forEach((item, i) => {
    const c = item as { message?: unknown; expect?: unknown } | null;
    const extra = typeof c === 'object' && c !== null ? Object.keys(c).filter((k) => k !== 'message' && k !== 'expect') : [];
    if (typeof c !== 'object' || c === null) return problems.push({ path: `[${i}]`, message: 'must be a mapping with message and expect' });
    if (typeof c.message !== 'string' || c.message.trim() === '') problems.push({ path: `[${i}].message`, message: 'must be a non-empty string' });
    if (typeof c.expect !== 'string' || c.expect.trim() === '') problems.push({ path: `[${i}].expect`, message: 'must be a tag or an agent name' });
    for (const k of extra) problems.push({ path: `[${i}].${k}`, message: `unknown key ${JSON.stringify(k)} (message, expect)` });
    if (typeof c.message === 'string' && typeof c.expect === 'string' && c.message.trim() !== '' && c.expect.trim() !== '' && extra.length === 0) {
      cases.push({ message: c.message, expect: c.expect.trim(), source: 'cases' });
    }
    return undefined;
  });
  if (problems.length > 0) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${file} has ${problems.length} problem(s); first: ${problems[0]!.path}: ${problems[0]!.message}`, { stage: 'config', problems });
  }
  return cases;
}

/** Reads and parses a case file (at most 4 MiB). */
export async function loadCases(file: string): Promise<RoutingCase[]> {
  let bytes: Buffer;
  try {
    bytes = await readBoundedFile(file, MAX_CASE_BYTES);
  } catch (err) {
    throw new DiscoveryError('ERR_USAGE', `cannot read case file ${file}: ${err instanceof Error ? err.message : String(err)}`, { stage: 'config', cause: err });
  }
  return parseCases(bytes.toString('utf8'), file);
}
