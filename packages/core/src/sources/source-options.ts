/**
 * Internal: the options of a source factory as a zod schema. Each field is a rule of
 * `src/rules/` (or a shape check) carrying its own sentence, so a factory says what the
 * configuration says; relations between fields are checked on the raw options after the schema
 * (as `config/cross-checks.ts` does for the YAML). Every problem is collected, listed in the
 * order of the schema's fields, and thrown as one `ERR_CONFIG_INVALID` ({@link OptionProblems}).
 *
 * @module
 */
import { z } from 'zod';
import type { Problem } from '../errors.js';
import { sourceIdProblem } from '../rules/ids.js';
import { describe } from '../text.js';
import { OptionProblems, positiveIntProblem } from './source-core.js';

/** Why a value is refused, or undefined when it is not. */
type Why = (value: unknown) => string | undefined;

/** Adds a problem at `path` (`domains[0].agents[1]`, `headers["x"]`), relative to the options. */
type AddProblem = (path: string, message: string) => void;

/** Options as the caller gave them, read defensively by the relations between fields. */
type RawOptions = Readonly<Record<string, unknown>>;

/** The relations between fields, on the raw options; `refused` are the paths the fields' own rules refused. */
export type Relations = (raw: RawOptions, add: AddProblem, refused: readonly string[]) => void;

/** A value `why` has nothing against; the sentence `why` gives is the problem. */
export function rule<T>(why: Why): z.ZodType<T> {
  return z.unknown().superRefine((value, ctx) => {
    const message = why(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message, input: value });
  }) as unknown as z.ZodType<T>;
}

/** Like {@link rule}, where leaving the option out is fine. */
export function optional<T>(why: Why): z.ZodType<T | undefined> {
  return rule<T | undefined>((value) => (value === undefined ? undefined : why(value)));
}

/** A required object with the method `method` (a fetcher, a host policy, a resolver). */
export function withMethod<T>(method: string, message: string): z.ZodType<T> {
  return rule<T>((value) => (typeof (value as Record<string, unknown> | null | undefined)?.[method] === 'function' ? undefined : message));
}

/** A source id (`rules/ids.ts`). */
export const sourceId = rule<string>(sourceIdProblem);

/** An optional positive integer. */
export const positiveInt = optional<number>(positiveIntProblem);

/**
 * An optional object of strings by key (headers, versions): a problem at `<key>[<"name">]` for
 * each value `why` refuses, or at `<key>` when it is not an object (`notObject` says what it must be).
 */
export function stringRecord(notObject: string, why: Why): z.ZodType<Readonly<Record<string, string>> | undefined> {
  return z.unknown().superRefine((value, ctx) => {
    if (value === undefined) return;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: `${notObject}, got ${describe(value)}`, input: value });
      return;
    }
    for (const [name, item] of Object.entries(value)) {
      const message = why(item);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message, input: item, path: [`[${JSON.stringify(name)}]`] });
    }
  }) as unknown as z.ZodType<Readonly<Record<string, string>> | undefined>;
}

/**
 * Checks `options` against the fields of `shape`, then the `relations` between them (on the raw
 * options, also when a field failed, so every problem is reported at once). The problems come in
 * the order of the fields (list items by index), whichever check found them.
 */
export function checkOptions<S extends z.ZodRawShape>(shape: S, options: unknown, relations?: Relations): { options: z.output<z.ZodObject<S>>; problems: Problem[] } {
  const raw = (typeof options === 'object' && options !== null ? options : {}) as RawOptions;
  const found: Array<{ path: PropertyKey[]; message: string }> = [];
  // Every field is given to its rule, the ones left out as undefined (a rule says whether that is fine).
  const result = z.object(shape).safeParse(Object.fromEntries(Object.keys(shape).map((key) => [key, raw[key]])));
  if (!result.success) for (const issue of result.error.issues) found.push({ path: issue.path, message: issue.message });
  const fields = found.map((f) => formatPath(f.path));
  relations?.(raw, (path, message) => found.push({ path: splitPath(path), message }), fields);
  const keys = Object.keys(shape);
  const order = (path: PropertyKey[]): number[] => [keys.indexOf(String(path[0])), ...path.slice(1).filter((s): s is number => typeof s === 'number')];
  found.sort((a, b) => compare(order(a.path), order(b.path)));
  return { options: (result.success ? result.data : raw) as z.output<z.ZodObject<S>>, problems: found.map((f) => ({ path: formatPath(f.path), message: f.message })) };
}

/**
 * {@link checkOptions}, throwing one `ERR_CONFIG_INVALID` (stage `config`) that lists the
 * problems, `<what>: <n> problem(s): <path>: <message>; ...` (the first ten; `problems` has all).
 */
export function readOptions<S extends z.ZodRawShape>(what: string, shape: S, options: unknown, relations?: Relations): z.output<z.ZodObject<S>> {
  const checked = checkOptions(shape, options, relations);
  const report = new OptionProblems(what);
  for (const p of checked.problems) report.add(p.path, p.message);
  report.throwIfAny();
  return checked.options;
}

/** `domains[0].agents[1]` → `['domains', 0, 'agents', 1]`; a `["name"]` segment stays one segment. */
function splitPath(path: string): PropertyKey[] {
  const out: PropertyKey[] = [];
  for (const [, name, index, quoted] of path.matchAll(/([^.[\]]+)|\[(\d+)\]|(\["(?:[^"\\]|\\.)*"\])/g)) {
    out.push(index !== undefined ? Number(index) : (name ?? quoted!));
  }
  return out;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (String(segment).startsWith('[')) out += String(segment);
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
