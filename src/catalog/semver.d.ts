// Temporary: the few `semver` functions catalog/versions.ts uses, until `@types/semver` is a
// dev dependency (then delete this file).
declare module 'semver' {
  export class SemVer {
    readonly version: string;
  }
  /** The version, or null when it is not a SemVer 2.0.0 version (an optional leading `v`). */
  export function parse(version: string): SemVer | null;
  /** SemVer 2.0.0 precedence (build metadata ignored): -1, 0 or 1. */
  export function compare(a: SemVer, b: SemVer): -1 | 0 | 1;
}
