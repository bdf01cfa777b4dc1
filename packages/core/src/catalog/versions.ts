/**
 * Multi-version entries (AI Catalog "Multi-Version Entries"): one identifier, several versions.
 * The newest is proposed (entries with a semantic version above those without, compared by
 * SemVer precedence; then the later `updatedAt`; then the first listed), or the version the
 * configuration pins. A repeated identifier + version is a
 * catalog problem; the first one stands.
 *
 * @module
 */
import { compare, parse, type SemVer } from 'semver';
import type { Problem } from '../errors.js';

/** What version selection needs of an entry. */
export interface Versioned {
  readonly identifier: string;
  readonly version?: string | undefined;
  readonly updatedAtMs?: number | undefined;
  /** Where the entry is, for problems: `<catalog URL> entries[3]`. */
  readonly where: string;
  /**
   * What versions are compared within (default the identifier). The AI Catalog source uses the
   * catalog's origin and the identifier: a catalog on one host never supersedes an entry that a
   * catalog on another host lists under the same identifier.
   */
  readonly group?: string | undefined;
}

/**
 * One entry per identifier, in first-seen order, and the problems found.
 *
 * @param pins identifier → the version to propose (the configuration's `versions`).
 * @example
 * selectVersions([{ identifier: 'urn:air:a.com:agent:x', version: '2.0.0', where: 'entries[0]' }, ...], {}).chosen
 */
export function selectVersions<T extends Versioned>(entries: readonly T[], pins: Readonly<Record<string, string>> = {}): { chosen: T[]; problems: Problem[]; superseded: number } {
  const groups = new Map<string, T[]>();
  const problems: Problem[] = [];
  for (const e of entries) {
    const key = e.group ?? e.identifier;
    const group = groups.get(key);
    if (group === undefined) {
      groups.set(key, [e]);
      continue;
    }
    const same = group.find((g) => g.version === e.version);
    if (same !== undefined) {
      const what = e.version === undefined ? `identifier ${e.identifier} without a version` : `identifier ${e.identifier} version ${e.version}`;
      problems.push({ path: e.where, message: `repeats ${what} (first at ${same.where}); identifier and version must be unique in a catalog, so this entry is skipped` });
      continue;
    }
    group.push(e);
  }
  const chosen: T[] = [];
  let superseded = 0;
  for (const group of groups.values()) {
    const identifier = group[0]!.identifier;
    const pinned = pins[identifier];
    if (pinned !== undefined) {
      const hit = group.find((g) => g.version === pinned);
      if (hit === undefined) {
        problems.push({ path: group[0]!.where, message: `the configuration pins ${identifier} to version ${pinned}, which the catalog does not list (it lists ${group.map((g) => g.version ?? 'no version').join(', ')}); nothing is proposed for it` });
      } else chosen.push(hit);
      superseded += group.length - (hit === undefined ? 0 : 1);
      continue;
    }
    let best = group[0]!;
    for (const e of group.slice(1)) if (newer(e, best)) best = e;
    chosen.push(best);
    superseded += group.length - 1;
  }
  return { chosen, problems, superseded };
}

/**
 * Whether `a` is newer than `b`, by one total order (so the choice never depends on catalog
 * order except between equals): entries with a semantic version above those without, and among
 * them SemVer precedence; then the later `updatedAt` (an entry with one above one without).
 */
function newer(a: Versioned, b: Versioned): boolean {
  const sa = semver(a.version);
  const sb = semver(b.version);
  if ((sa === undefined) !== (sb === undefined)) return sa !== undefined;
  if (sa !== undefined && sb !== undefined) {
    const c = compare(sa, sb);
    if (c !== 0) return c > 0;
  }
  if ((a.updatedAtMs === undefined) !== (b.updatedAtMs === undefined)) return a.updatedAtMs !== undefined;
  return a.updatedAtMs !== undefined && b.updatedAtMs !== undefined && a.updatedAtMs > b.updatedAtMs;
}

/**
 * Whether a version is a semantic version (SemVer 2.0.0, by the `semver` package; an optional
 * leading `v`): such versions are compared by precedence. `01.2.3`, `1.0.0-01` (leading zeros)
 * and `1.0.0-alpha..1` (an empty identifier) are not.
 */
export function isSemanticVersion(v: string | undefined): boolean {
  return semver(v) !== undefined;
}

function semver(v: string | undefined): SemVer | undefined {
  // semver trims its input; a version with surrounding spaces is not one here.
  if (v === undefined || v.trim() !== v) return undefined;
  return parse(v) ?? undefined;
}
