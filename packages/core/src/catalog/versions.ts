/**
 * Multi-version entries (AI Catalog "Multi-Version Entries"): one identifier, several versions.
 * The newest is proposed (entries with a semantic version above those without, compared by
 * SemVer precedence; then the later `updatedAt`; then the first listed), or the version the
 * configuration pins. A repeated identifier + version is a
 * catalog problem; the first one stands.
 *
 * @module
 */
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
    const c = compareSemver(sa, sb);
    if (c !== 0) return c > 0;
  }
  if ((a.updatedAtMs === undefined) !== (b.updatedAtMs === undefined)) return a.updatedAtMs !== undefined;
  return a.updatedAtMs !== undefined && b.updatedAtMs !== undefined && a.updatedAtMs > b.updatedAtMs;
}

interface Semver {
  core: [number, number, number];
  pre: string[];
}

/** Whether a version is a semantic version (SemVer 2.0.0, an optional leading `v`): such versions are compared by precedence. */
export function isSemanticVersion(v: string | undefined): boolean {
  return semver(v) !== undefined;
}

function semver(v: string | undefined): Semver | undefined {
  if (v === undefined) return undefined;
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v);
  if (m === null) return undefined;
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] === undefined ? [] : m[4].split('.') };
}

/** SemVer 2.0.0 precedence: core numbers, then a release above its pre-releases, then pre-release identifiers. */
function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i]! - b.core[i]!;
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length - b.pre.length;
}
