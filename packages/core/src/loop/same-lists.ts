/** Identity comparison of lists, for the loop's memos (an unchanged input is the same object). */

/** Whether two lists hold the same items (by identity) in the same order. */
export function sameLists<T>(a: readonly T[], b: readonly T[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
