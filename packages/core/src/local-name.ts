/**
 * Local names: the names our configuration gives agents in a tree. ADK transfer targets are typed
 * by the model, so there is one spelling, lower snake case, 2–48 characters; `user` is reserved by
 * ADK for the end user's messages. The one definition every stage checks against.
 */
import { runSteps } from './clock/pacer.js';
import { compareCodeUnits } from './text.js';

/** `^[a-z][a-z0-9_]{1,47}$`. */
export const LOCAL_NAME = /^[a-z][a-z0-9_]{1,47}$/;

/** ADK reserves this author name for end-user input in the event stream. */
export const RESERVED_AGENT_NAME = 'user';

/** Names ADK reserves ({@link RESERVED_AGENT_NAME}: the author of the end user's messages). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([RESERVED_AGENT_NAME]);

/** Whether `name` can name an agent: matches {@link LOCAL_NAME} and is not reserved. */
export function isLocalName(name: unknown): name is string {
  return typeof name === 'string' && LOCAL_NAME.test(name) && !RESERVED_NAMES.has(name);
}

/** The order of local names everywhere (snapshots, digests, diffs, rollouts): code-unit order, never `localeCompare`. */
export function compareLocalNames(a: string, b: string): number {
  return compareCodeUnits(a, b);
}

const byLocalName = (a: { readonly localName: string }, b: { readonly localName: string }): number => compareLocalNames(a.localName, b.localName);

/**
 * Each local-name character's rank in code-unit order (`0`–`9`, `_`, `a`–`z` are 1–37); 0 for a
 * character no local name has. Rank 0 in a key is the end of the name, which sorts first.
 */
const RANK = (() => {
  const rank = new Uint8Array(128);
  let r = 0;
  for (let c = 0; c < 128; c++) if ((c >= 48 && c <= 57) || c === 95 || (c >= 97 && c <= 122)) rank[c] = ++r;
  return rank;
})();
const RADIX = 38;
/** Characters per abbreviated key: 38⁶ < 2³², so a key and an index below 2²¹ fit a double's 53 bits. */
const KEY_CHARS = 6;
const INDEX_SPAN = 2 ** 21;
/** Below this many items, or in a run of equal keys this short, names are compared directly. */
const DIRECT = 16;

/**
 * `items` sorted by local name ({@link compareLocalNames}), stable, as a new array. Large lists
 * are sorted by abbreviated keys (six characters of each name packed with its index in one
 * double, sorted natively, runs of equal keys sorted by the next six), so each name is read a few
 * times in all instead of at every comparison: a comparison sort of 100,000 agents spent most of
 * its time fetching two agents and two strings from scattered memory per comparison (issue 43).
 * Input already sorted (the loop's) costs one pass; names outside {@link LOCAL_NAME}'s alphabet,
 * or more than two million items, take the comparison sort.
 */
export function sortByLocalName<T extends { readonly localName: string }>(items: readonly T[]): T[] {
  return runSteps(sortByLocalNameSteps(items));
}

/** Names read, or keys sorted, between two yields of {@link sortByLocalNameSteps}. */
const PER_STEP = 4096;

/** {@link sortByLocalName} yielding between slices (for `runPaced`: 100,000 agents on a first publication). */
export function* sortByLocalNameSteps<T extends { readonly localName: string }>(items: readonly T[]): Generator<void, T[]> {
  const n = items.length;
  const names = new Array<string>(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    if (i % PER_STEP === PER_STEP - 1) yield;
    names[i] = items[i]!.localName;
    if (sorted && i > 0 && names[i - 1]! > names[i]!) sorted = false;
  }
  if (sorted) return items.slice();
  const order = n >= DIRECT && n < INDEX_SPAN ? yield* keyOrder(names) : undefined;
  if (order === undefined) return items.slice().sort(byLocalName);
  const out = new Array<T>(n);
  for (let k = 0; k < n; k++) {
    if (k % PER_STEP === PER_STEP - 1) yield;
    out[k] = items[order[k]!]!;
  }
  return out;
}

/** The indices of `names` in name order, or undefined when a name has a character outside the alphabet. */
function* keyOrder(names: readonly string[]): Generator<void, Uint32Array | undefined> {
  const n = names.length;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const keys = new Float64Array(n);
  // Ranges of `order` whose names agree on their first `depth` characters.
  const stack: number[] = [0, n, 0];
  let done = 0;
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    if (hi - lo < DIRECT) {
      insertionSort(order, names, lo, hi);
      if ((done += hi - lo) >= PER_STEP) {
        done = 0;
        yield;
      }
      continue;
    }
    for (let k = lo; k < hi; k++) {
      if (++done === PER_STEP) {
        done = 0;
        yield;
      }
      const i = order[k]!;
      const key = abbreviation(names[i]!, depth);
      if (key < 0) return undefined;
      keys[k] = key * INDEX_SPAN + i;
    }
    const range = keys.subarray(lo, hi).sort();
    if (hi - lo >= PER_STEP) yield;
    let runStart = lo;
    let runKey = -1;
    for (let k = lo; k <= hi; k++) {
      let key = -1;
      if (k < hi) {
        const packed = range[k - lo]!;
        key = Math.floor(packed / INDEX_SPAN);
        order[k] = packed - key * INDEX_SPAN;
      }
      if (key === runKey) continue;
      // A run of names equal in these six characters: sorted by the next six, unless every one
      // ends within them (then they are the same name, already in input order).
      if (k - runStart > 1 && anyLonger(order, names, runStart, k, depth + KEY_CHARS)) stack.push(runStart, k, depth + KEY_CHARS);
      runStart = k;
      runKey = key;
    }
  }
  return order;
}

/** Characters `depth` to `depth + 5` of `name` as one number in name order (0 past its end); −1 for a character outside the alphabet. */
function abbreviation(name: string, depth: number): number {
  let key = 0;
  for (let p = depth; p < depth + KEY_CHARS; p++) {
    let rank = 0;
    if (p < name.length) {
      const c = name.charCodeAt(p);
      rank = c < 128 ? RANK[c]! : 0;
      if (rank === 0) return -1;
    }
    key = key * RADIX + rank;
  }
  return key;
}

/** Whether a name of `order[lo..hi)` is longer than `length`. */
function anyLonger(order: Uint32Array, names: readonly string[], lo: number, hi: number, length: number): boolean {
  for (let k = lo; k < hi; k++) if (names[order[k]!]!.length > length) return true;
  return false;
}

/** Sorts `order[lo..hi)` by name, stable (ties keep their order). */
function insertionSort(order: Uint32Array, names: readonly string[], lo: number, hi: number): void {
  for (let k = lo + 1; k < hi; k++) {
    const i = order[k]!;
    const name = names[i]!;
    let j = k - 1;
    while (j >= lo && names[order[j]!]! > name) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = i;
  }
}
