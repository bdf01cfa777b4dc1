/**
 * Lookalike names: whether an agent's name or identifier is confusingly like one another origin
 * published first (the AI Catalog's "Identifier Typosquatting": "Registries and consumers SHOULD
 * implement similarity checks on identifiers"). The discovery loop, the inspector and `probe`
 * all ask this module.
 *
 * Two names look alike when their skeletons are equal (confusable characters, case, separators)
 * or close by edit distance on the skeletons, within a bound relative to their length:
 *
 * - The skeleton follows UTS #39 §4 ("skeleton(X)") in spirit: NFKC, then the `confusables`
 *   library's map of non-Latin lookalikes to Latin letters (it is not the UTS #39 table: an
 *   English-only map that also drops combining marks and zero-width characters, and leaves ASCII
 *   alone), then case folding, then the ASCII confusables UTS #39 lists that the library does not
 *   (`I`, `1` and `|` → `l`, `0` → `o`, `rn` → `m`, `vv` → `w`), then every run of separators
 *   (space, `.`, `_`, `-`, `/`, `:`) as one `-`.
 * - Edit distance (Levenshtein, `fastest-levenshtein`) on the skeletons: none below 5 characters,
 *   1 up to 11, 2 up to 19, 3 from 20 (the shorter skeleton's length). Names of fewer than 3
 *   characters are never compared.
 * - Not lookalikes: names that differ only in their numbers (`agent-1`, `agent-2`), or only in
 *   whole words of at most 2 characters (`agent a`, `agent b`, `billing v1`, `billing v2`):
 *   numbered and lettered series are common and not confusing.
 *
 * Cost: {@link LookalikeIndex} keeps each name under its skeleton, and under its skeleton's length
 * and d+5 segments (the pigeonhole filter of PassJoin, Li et al. 2011: d edits leave five of d+5
 * segments unedited, each shifted by at most d), so a lookup compares a name only with the names
 * of a nearby length that share five segments with it, not with all. A segment most names share
 * (a fleet named "Agent …") is skipped, the names then needing one shared segment fewer for each
 * skipped (at most four): a lookup visits the names that share uncommon segments with it, so
 * admitting n agents costs about n lookups, not n² visits.
 *
 * @module
 */
import { remove as removeConfusables } from 'confusables';
import { distance } from 'fastest-levenshtein';

/**
 * Why a name was flagged: `of` the earlier name it looks like, `origin` the origin that
 * published it, `reason` one sentence (`name "pаypal" looks like "paypal" of https://pay.example:
 * confusable characters`). The shape of `ArdVerified.lookalike` and `EndpointStatus.lookalike`.
 */
export interface Lookalike {
  readonly of: string;
  readonly origin: string;
  readonly reason: string;
}

/** What to do with a lookalike in the discovery loop: flag it (alert and status), or also keep it out of snapshots. */
export type LookalikePolicy = 'flag' | 'exclude';

/** Skeletons shorter than this are never compared (`qa`, `ai`). */
const MIN_LENGTH = 3;

/** The most edits between two skeletons, by the shorter one's length. */
function maxEdits(length: number): number {
  return length < 5 ? 0 : length < 12 ? 1 : length < 20 ? 2 : 3;
}

/** Segments a lookup must share with a stored name (of d+SHARED): the more, the fewer comparisons for names with a common word (measured: 5). */
const SHARED = 5;

/** One segment's postings: all of them, and by series. */
interface Bucket {
  all: Posting[];
  readonly series: Map<string, Posting[]>;
}

/** Postings beyond which a segment is common (a word most names share) and a lookup skips it (see {@link LookalikeIndex.find}). */
const COMMON_SEGMENT = 64;

const SEPARATORS = /[\s._\-/:]+/gu;

/** NFKC and case folding. */
function fold(name: string): string {
  return name.normalize('NFKC').toLowerCase().trim();
}

/** The skeleton of a name (see the module comment). */
function skeleton(name: string): string {
  const latin = removeConfusables(name.normalize('NFKC'));
  // Capital I reads as a small l: before case folding makes it an i.
  return latin
    .replace(/[I1|]/g, 'l')
    .toLowerCase()
    .replace(/0/g, 'o')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(SEPARATORS, '-')
    .replace(/^-|-$/g, '');
}

interface Name {
  readonly raw: string;
  readonly skeleton: string;
  /** NFKC and case folded (see {@link fold}). */
  readonly folded: string;
  /** The folded name with every number as `#`: names of one series (`agent-1`, `agent-2`) are never lookalikes. */
  readonly series: string;
}

function nameOf(raw: string): Name {
  const folded = fold(raw);
  return { raw, skeleton: skeleton(raw), folded, series: seriesOf(folded) };
}

function seriesOf(folded: string): string {
  return folded.replace(/\d+/g, '#');
}

/**
 * Why `a` looks like `b` (`confusable characters`, `the same name`, `1 edit apart`, …), or
 * undefined when it does not. Symmetric.
 */
function compareNames(a: Name, b: Name): string | undefined {
  const short = Math.min(a.skeleton.length, b.skeleton.length);
  if (short < MIN_LENGTH) return undefined;
  const fa = a.folded;
  const fb = b.folded;
  if (a.skeleton === b.skeleton) {
    if (fa === fb) return 'the same name';
    if (fa.replace(SEPARATORS, '-') === fb.replace(SEPARATORS, '-')) return 'the same name but for separators';
    return 'confusable characters';
  }
  const d = distance(a.skeleton, b.skeleton);
  if (d > maxEdits(short)) return undefined;
  // A numbered or lettered series: the names differ only in their numbers or in short words.
  if (a.series === b.series) return undefined;
  const wa = a.skeleton.split('-');
  const wb = b.skeleton.split('-');
  if (wa.length === wb.length && wa.every((w, i) => w === wb[i] || (w.length <= 2 && wb[i]!.length <= 2))) return undefined;
  return `${d} ${d === 1 ? 'edit' : 'edits'} apart`;
}

/**
 * The names of an AI Catalog identifier to compare: for `urn:air:{publisher}:{namespace}:{name}`,
 * `{publisher}:{name}` (the spec's trailing segment); undefined for any other scheme.
 *
 * @example identifierName('urn:air:acme.com:agent:finance') // 'acme.com:finance'
 */
export function identifierName(identifier: string): string | undefined {
  const m = /^urn:air:([^:]+):(.+)$/i.exec(identifier);
  if (m === null) return undefined;
  const name = m[2]!.split(/[:/]/).filter(Boolean).pop();
  return name === undefined ? undefined : `${m[1]!.toLowerCase()}:${name}`;
}

/** One agent as the index holds it: a key (its endpoint), its origin, and the names it goes by. */
export interface LookalikeEntry {
  readonly key: string;
  readonly origin: string;
  readonly names: readonly string[];
}

/** What {@link LookalikeIndex.find} answers: the earlier agent, and which of the names matched. */
export interface LookalikeMatch extends Lookalike {
  /** The earlier agent's key. */
  readonly key: string;
  /** The later agent's name that looks like `of`. */
  readonly name: string;
}

interface Stored {
  readonly entry: LookalikeEntry;
  readonly seq: number;
  readonly names: readonly Name[];
}

interface Posting {
  readonly stored: Stored;
  readonly name: Name;
}

/**
 * The agents admitted so far, in arrival order, indexed so a lookup compares a name with the few
 * names that may be within reach. The first to arrive is the original: {@link find} answers only
 * with agents added before the one asked about, from another origin.
 *
 * @example
 * const index = new LookalikeIndex();
 * index.set({ key: 'https://pay.example/', origin: 'https://pay.example', names: ['paypal'] });
 * index.set({ key: 'https://evil.example/', origin: 'https://evil.example', names: ['pаypal'] });
 * index.find('https://evil.example/')?.reason; // 'name "pаypal" looks like "paypal" of https://pay.example: confusable characters'
 */
export class LookalikeIndex {
  readonly #stored = new Map<string, Stored>();
  /** Postings by `length|segment number|segment`, all of them and by series (a lookup skips its own series at once). */
  readonly #segments = new Map<string, Bucket>();
  /** Names held per skeleton length: a lookup skips the lengths nobody has. */
  readonly #lengths = new Map<number, number>();
  /** Postings by skeleton, in arrival order: equal skeletons are found first, the earliest at once. */
  readonly #skeletons = new Map<string, Posting[]>();
  #seq = 0;
  /** Name comparisons made by lookups so far (edit distances computed), for tests and metrics. */
  comparisons = 0;
  /** Postings lookups visited so far (the work before any comparison), for tests and metrics. */
  visits = 0;

  /** Adds an agent, or updates its names keeping its place in the arrival order. Returns whether anything changed. */
  set(entry: LookalikeEntry): boolean {
    const old = this.#stored.get(entry.key);
    if (old !== undefined && old.entry.origin === entry.origin && sameNames(old.entry.names, entry.names)) return false;
    if (old !== undefined) this.#unindex(old);
    const names = [...new Set(entry.names)].map(nameOf).filter((n) => n.skeleton.length >= MIN_LENGTH);
    const stored: Stored = { entry, seq: old?.seq ?? this.#seq++, names };
    this.#stored.set(entry.key, stored);
    for (const name of names) {
      const posting = { stored, name };
      push(this.#skeletons, name.skeleton, posting);
      this.#lengths.set(name.skeleton.length, (this.#lengths.get(name.skeleton.length) ?? 0) + 1);
      for (const k of segmentKeys(name.skeleton)) {
        let bucket = this.#segments.get(k);
        if (bucket === undefined) this.#segments.set(k, (bucket = { all: [], series: new Map() }));
        bucket.all.push(posting);
        push(bucket.series, name.series, posting);
      }
    }
    return true;
  }

  /** Removes an agent (it left). Returns whether it was there. */
  delete(key: string): boolean {
    const old = this.#stored.get(key);
    if (old === undefined) return false;
    this.#unindex(old);
    this.#stored.delete(key);
    return true;
  }

  /** Whether an agent is held. */
  has(key: string): boolean {
    return this.#stored.has(key);
  }

  /** The keys held, in arrival order. */
  keys(): IterableIterator<string> {
    return this.#stored.keys();
  }

  /**
   * Whether agent `key` looks like one that arrived before it from another origin: the earliest
   * such agent (the original), or undefined.
   */
  find(key: string): LookalikeMatch | undefined {
    const self = this.#stored.get(key);
    if (self === undefined) return undefined;
    let best: { posting: Posting; name: Name; reason: string } | undefined;
    const seen = new Set<Posting>();
    const consider = (posting: Posting, name: Name): void => {
      if (seen.has(posting)) return;
      seen.add(posting);
      const other = posting.stored;
      if (other.seq >= self.seq || other.entry.origin === self.entry.origin) return;
      if (best !== undefined && best.posting.stored.seq <= other.seq) return;
      this.comparisons++;
      const reason = compareNames(name, posting.name);
      if (reason !== undefined) best = { posting, name, reason };
    };
    for (const name of self.names) for (const posting of this.#skeletons.get(name.skeleton) ?? []) consider(posting, name);
    for (const name of self.names) {
      const q = name.skeleton;
      // The segment numbers each stored name shares with this one: SHARED at least are within reach.
      // As a bit mask of segment numbers (at most d + SHARED = 8 segments).
      const hits = new Map<Posting, number>();
      // How many shared segments a stored name of each length needs (fewer where common segments are skipped).
      const needs = new Map<number, number>();
      for (let len = q.length - 3; len <= q.length + 3; len++) {
        if (len < MIN_LENGTH || !this.#lengths.has(len)) continue;
        const d = maxEdits(Math.min(len, q.length));
        if (Math.abs(len - q.length) > d) continue;
        const bounds = segmentBounds(len);
        // Each segment's postings at every position it may have shifted to.
        const lists = bounds.map(([start, size], i) => {
          const prefix = segmentPrefix(len, i);
          const buckets: Bucket[] = [];
          let total = 0;
          for (let at = Math.max(0, start - d); at <= Math.min(q.length - size, start + d); at++) {
            const bucket = this.#segments.get(`${prefix}${q.slice(at, at + size)}`);
            if (bucket === undefined) continue;
            buckets.push(bucket);
            total += bucket.all.length - (bucket.series.get(name.series)?.length ?? 0);
          }
          return { i, buckets, total };
        });
        // A segment most names share (a common word: "agent-") costs a visit of each of them for
        // nothing: the most common ones, up to SHARED - 1, are skipped, and a name then needs as
        // many fewer shared segments among the rest (it still shares SHARED of them all).
        const common = lists.filter((l) => l.total > COMMON_SEGMENT).sort((a, b) => b.total - a.total).slice(0, SHARED - 1);
        needs.set(len, SHARED - common.length);
        for (const { i, buckets } of lists) {
          if (common.some((c) => c.i === i)) continue;
          for (const bucket of buckets) {
            // The same series (a numbered fleet: `fleet-agent-17`, `fleet-agent-18`) is never a
            // lookalike: when it is most of the bucket, its postings are left out as a group.
            const own = bucket.series.get(name.series);
            const lists = own !== undefined && own.length * 2 > bucket.all.length ? [...bucket.series].filter(([series]) => series !== name.series).map(([, list]) => list) : [bucket.all];
            for (const list of lists) {
              this.visits += list.length;
              for (const posting of list) {
                if (posting.name.series === name.series) continue;
                hits.set(posting, (hits.get(posting) ?? 0) | (1 << i));
              }
            }
          }
        }
      }
      for (const [posting, mask] of hits) if (bitCount(mask) >= needs.get(posting.name.skeleton.length)!) consider(posting, name);
    }
    if (best === undefined) return undefined;
    const { posting, name, reason } = best;
    return {
      key: posting.stored.entry.key,
      name: name.raw,
      of: posting.name.raw,
      origin: posting.stored.entry.origin,
      reason: `name ${JSON.stringify(name.raw)} looks like ${JSON.stringify(posting.name.raw)} of ${posting.stored.entry.origin}: ${reason}`,
    };
  }

  /**
   * How an agent would be judged if it arrived now (the inspector asks before anything admits it):
   * one held already (from the same origin, under a name of the same skeleton) is judged in its
   * own place in the arrival order; any other against every agent held.
   */
  judge(entry: Omit<LookalikeEntry, 'key'>): LookalikeMatch | undefined {
    for (const name of entry.names) {
      for (const posting of this.#skeletons.get(skeleton(name)) ?? []) {
        if (posting.stored.entry.origin === entry.origin) return this.find(posting.stored.entry.key);
      }
    }
    // A key no agent has: URLs and endpoint keys never start with a NUL.
    const key = '\u0000judged';
    this.set({ ...entry, key });
    try {
      return this.find(key);
    } finally {
      this.delete(key);
    }
  }

  #unindex(stored: Stored): void {
    for (const name of stored.names) {
      drop(this.#skeletons, name.skeleton, stored);
      const held = (this.#lengths.get(name.skeleton.length) ?? 1) - 1;
      if (held === 0) this.#lengths.delete(name.skeleton.length);
      else this.#lengths.set(name.skeleton.length, held);
      for (const k of segmentKeys(name.skeleton)) {
        const bucket = this.#segments.get(k);
        if (bucket === undefined) continue;
        bucket.all = bucket.all.filter((p) => p.stored !== stored);
        drop(bucket.series, name.series, stored);
        if (bucket.all.length === 0) this.#segments.delete(k);
      }
    }
  }
}

/**
 * Lookalikes within one list of agents (a catalog `probe` reads): each agent checked against the
 * ones listed before it, from other origins. Keys map to what each was flagged for.
 */
export function lookalikesAmong(entries: readonly LookalikeEntry[]): Map<string, LookalikeMatch> {
  const index = new LookalikeIndex();
  const out = new Map<string, LookalikeMatch>();
  for (const e of entries) {
    index.set(e);
    const found = index.find(e.key);
    if (found !== undefined) out.set(e.key, found);
  }
  return out;
}

/** Start and size of each of the d+SHARED segments of a skeleton of this length (computed once per length). */
const boundsByLength: Array<ReadonlyArray<readonly [number, number]>> = [];
function segmentBounds(length: number): ReadonlyArray<readonly [number, number]> {
  const known = length <= MEMO_LENGTHS ? boundsByLength[length] : undefined;
  if (known !== undefined) return known;
  const parts = maxEdits(length) + SHARED;
  const out: Array<readonly [number, number]> = [];
  for (let i = 0; i < parts; i++) {
    const start = Math.floor((i * length) / parts);
    out.push([start, Math.floor(((i + 1) * length) / parts) - start]);
  }
  if (length <= MEMO_LENGTHS) boundsByLength[length] = out;
  return out;
}

/** Skeleton lengths whose segment bounds and key prefixes are kept (a longer name, rare and maybe hostile, makes its own). */
const MEMO_LENGTHS = 256;

function segmentKeys(s: string): string[] {
  return segmentBounds(s.length).map(([start, size], i) => `${segmentPrefix(s.length, i)}${s.slice(start, start + size)}`);
}

/** `length|segment number|`, the start of a segment key (made once per pair: lookups make many). */
const prefixes: string[][] = [];
function segmentPrefix(length: number, i: number): string {
  if (length > MEMO_LENGTHS) return `${length}|${i}|`;
  const row = (prefixes[length] ??= []);
  return (row[i] ??= `${length}|${i}|`);
}

/** The bits set in a small mask. */
function bitCount(mask: number): number {
  let n = 0;
  for (let m = mask; m !== 0; m &= m - 1) n++;
  return n;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

function drop(map: Map<string, Posting[]>, key: string, stored: Stored): void {
  const list = map.get(key);
  if (list === undefined) return;
  const rest = list.filter((p) => p.stored !== stored);
  if (rest.length === 0) map.delete(key);
  else map.set(key, rest);
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}
