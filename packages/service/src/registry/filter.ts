/**
 * ARD filters (§7.1): keys are dot-separated paths into a catalog entry, values arrays (a bare
 * scalar is a one-element array); OR within a key, AND across keys; where the value at a path is
 * an array, any element may match. Values compare as strings, case-insensitively.
 *
 * Paths we answer (docs/registry-api.md): any path under an entry's own members (`type`, `tags`,
 * `displayName`, `identifier`, `version`, `url`, `description`, `updatedAt`, `metadata.…`,
 * `extensions.…`), the derived `publisher` (§7.1: the `<publisher>` segment of a `urn:air:`
 * identifier; for our own identifiers, the host of the endpoint), and `verified.<member>`, short
 * for `extensions.dev.a2a-discovery.verified.<member>` (`verified.source` is short for
 * `verified.provenance.source`). A key under another root is refused (400, `INVALID_ARGUMENT`).
 */
import { VERIFIED_EXTENSION } from 'a2a-discovery/internal';

/** The roots a filter key may start with. */
const ROOTS = new Set(['trustManifest', 'host', 'capabilities', 'identifier', 'displayName', 'type', 'url', 'data', 'description', 'tags', 'version', 'updatedAt', 'createdAt', 'status', 'metadata', 'extensions', 'publisher', 'verified']);

/** A parsed filter: per key, its path segments and the values (lower case) one of which must match. */
export type ParsedFilter = readonly { readonly key: string; readonly path: readonly string[]; readonly values: ReadonlySet<string> }[];

/** Bounds of {@link parseFilter}. */
export interface FilterBounds {
  readonly maxKeys: number;
  readonly maxValues: number;
}

/** The filter of a request, or the message of the 400 to answer. */
export function parseFilter(raw: unknown, bounds: FilterBounds): ParsedFilter | string {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'query.filter must be an object of field paths to values';
  const keys = Object.keys(raw);
  if (keys.length > bounds.maxKeys) return `query.filter has ${keys.length} keys; at most ${bounds.maxKeys} are accepted (server.registry.maxFilterKeys)`;
  const out: { key: string; path: string[]; values: Set<string> }[] = [];
  let count = 0;
  for (const key of keys) {
    const path = filterPath(key);
    if (typeof path === 'string') return path;
    const given = (raw as Record<string, unknown>)[key];
    const list = Array.isArray(given) ? given : [given];
    if (list.length === 0) return `query.filter.${key} is an empty array: give at least one value`;
    count += list.length;
    if (count > bounds.maxValues) return `query.filter has more than ${bounds.maxValues} values in all (server.registry.maxFilterValues)`;
    const values = new Set<string>();
    for (const v of list) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return `query.filter.${key}: values must be strings, numbers or booleans`;
      values.add(String(v).toLowerCase());
    }
    out.push({ key, path, values });
  }
  return out;
}

/** The segments of a filter key (aliases expanded), or the message of the 400. */
export function filterPath(key: string): string[] | string {
  if (key === '' || key.length > 256 || key.split('.').some((s) => s === '')) return `query.filter key ${JSON.stringify(key.slice(0, 64))} is not a dot-separated field path`;
  const segments = key.split('.');
  const root = segments[0]!;
  if (!ROOTS.has(root)) return `query.filter key ${JSON.stringify(key.slice(0, 64))} is not a field this registry filters on (docs/registry-api.md lists them)`;
  if (root !== 'verified') return segments;
  const rest = segments.slice(1);
  if (rest.length === 1 && rest[0] === 'source') return ['extensions', VERIFIED_EXTENSION, 'provenance', 'source'];
  return ['extensions', VERIFIED_EXTENSION, ...rest];
}

/** Whether `entry` satisfies every key of `filter`. */
export function matchesFilter(entry: Readonly<Record<string, unknown>>, filter: ParsedFilter): boolean {
  for (const f of filter) {
    let hit = false;
    for (const v of valuesAt(entry, f.path)) {
      if (f.values.has(v)) {
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return true;
}

/**
 * The scalar values (as strings, lower case unless `lower` is false) at `path` in `value`: arrays are walked element by
 * element; a member whose own name holds dots (`dev.a2a-discovery.verified`) is found by joining
 * segments, longest first.
 */
export function valuesAt(value: unknown, path: readonly string[], lower = true): string[] {
  const out: string[] = [];
  const walk = (v: unknown, i: number): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, i);
      return;
    }
    if (i === path.length) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.push(lower ? String(v).toLowerCase() : String(v));
      return;
    }
    if (!isRecord(v)) return;
    for (let j = path.length; j > i; j--) {
      const name = path.slice(i, j).join('.');
      if (Object.hasOwn(v, name)) {
        walk(v[name], j);
        return;
      }
    }
  };
  walk(value, 0);
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
