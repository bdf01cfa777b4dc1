/**
 * Internal: paths and sentences for configuration problems. Zod's own messages ("Invalid input:
 * expected int, received number") are replaced with sentences a YAML author understands, with the
 * unit taken from the key's name (`...Ms` is milliseconds, `...Bytes` bytes).
 */
import type { z } from 'zod';

/** A path into the YAML document: mapping keys and sequence indexes. */
export type ConfigPath = readonly (string | number)[];

/** `static[1].tags[0]`, `server.port`, `server["odd key"]`; `$` for the whole document. */
export function formatPath(path: ConfigPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out === '' ? '$' : out;
}

/** A short, safe rendering of a value for a message (never more than 60 characters of text). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** Edit distance counting a swap of two neighbours as one edit (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest known word, when it is close enough to be a likely typo. */
function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** The sentence for an unknown key. */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const guess = closest(key, known);
  const hint = guess === undefined ? '' : `; did you mean "${guess}"?`;
  return `unknown key ${JSON.stringify(key)}${hint} (allowed here: ${known.join(', ')})`;
}

function unitOf(path: readonly PropertyKey[]): string {
  const last = path.at(-1);
  if (typeof last !== 'string') return '';
  if (last.endsWith('Ms')) return ' of milliseconds';
  if (last.endsWith('Bytes')) return ' of bytes';
  return '';
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping (key: value lines)',
  array: 'a list',
};

function numberHint(input: unknown): string {
  if (typeof input === 'string' && input.trim() !== '' && Number.isFinite(Number(input.replace(/_/g, '')))) {
    return ' (write the number without quotes or underscores)';
  }
  return '';
}

/**
 * The per-parse error map: turns each zod issue into a sentence. Issues with a message of their
 * own (set on the schema) keep it, because schema-level messages take precedence.
 */
export const errorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type': {
      const unit = issue.expected === 'int' || issue.expected === 'number' ? unitOf(issue.path ?? []) : '';
      const expected = unit === '' ? (EXPECTED[issue.expected] ?? issue.expected) : 'a whole number';
      if (issue.input === undefined) return `is required (${expected}${unit})`;
      return `must be ${expected}${unit}, got ${describeValue(issue.input)}${numberHint(issue.input)}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}; got ${describeValue(issue.input)}`;
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'array') return min === 1 ? 'must list at least one entry' : `must list at least ${min} entries`;
      if (issue.origin === 'string') return min === 1 ? 'must not be empty' : `must be at least ${min} characters long`;
      return issue.inclusive ? `must be at least ${min}${unitOf(issue.path ?? [])}, got ${describeValue(issue.input)}` : `must be greater than ${min}, got ${describeValue(issue.input)}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'array') return `must list at most ${max} entries`;
      if (issue.origin === 'string') return `must be at most ${max} characters long`;
      return issue.inclusive ? `must be at most ${max}, got ${describeValue(issue.input)}` : `must be less than ${max}, got ${describeValue(issue.input)}`;
    }
    case 'unrecognized_keys':
      return `unknown key(s): ${issue.keys.join(', ')}`;
    default:
      return undefined;
  }
};
