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
 * Cost: {@link LookalikeIndex} keeps each name under its skeleton, and under the q-grams of its
 * skeleton (substrings of 3 and of 4 characters) by skeleton length (up to 256 characters: a
 * longer name is compared only with the same skeleton). Two skeletons within d edits share at least t = max(length) - q + 1 - q·d q-grams (the count filter, Ukkonen 1992; each edit
 * spoils at most q of them), so of a name's n q-grams, any n - t + 1 include one the other name
 * has (the prefix filter of AllPairs, Bayardo et al. 2007). A lookup takes its rarest q-grams, as
 * few as that needs, of the size whose lists are shorter, and compares the name only with the
 * names posted under them: a word most names share ("Agent …") is never among them while rarer
 * ones are, and a big numbered series (never lookalikes of each other) is posted apart and skipped
 * as a group. Admitting n agents costs about n lookups of a few dozen postings each, not n²
 * comparisons (100,000 agents, each with a card name of a shared word and 12 hex digits and a
 * local name: 22 s, where segments of the names, the filter before, took 63 s). An agent that
 * leaves (or is renamed) costs its own postings too, not the fleet: a list a word every name
 * shares holds a posting of every agent, so a long list keeps a leaver's posting, skipped, until
 * an eighth of it has left, and is compacted then (100,000 agents: 0.16 ms a removal, where
 * filtering every list it was in took 66 ms at 40,000). The lists are runs of posting ids in one
 * typed array ({@link PostingLists}): 1.7 KB an agent of two names at 100,000, where lists of
 * JavaScript arrays and an object per name and per posting held 2.3 KB.
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

/**
 * The sizes of the q-grams under which names of a skeleton length are posted: those for which the
 * count filter still leaves one shared q-gram at the most edits that length allows (q·(d + 1) ≤
 * length), of 3 and 4 (2 for the shortest). A lookup takes, per length, the size whose rarest
 * q-grams hold the fewest postings: 4 where 3 characters are common (hex digits after a shared
 * word), 3 where a common word takes several of the 4-grams it would need. None for lengths
 * compared only by equal skeletons.
 */
function gramSizes(length: number): readonly number[] {
  const d = maxEdits(length);
  if (d === 0 || length > MAX_GRAMMED) return NO_GRAMS;
  const most = Math.floor(length / (d + 1));
  return most >= 4 ? GRAMS_3_4 : most === 3 ? GRAMS_3 : GRAMS_2;
}
const NO_GRAMS: readonly number[] = [];
/**
 * Skeletons longer than this are compared only with equal skeletons: no agent goes by such a
 * name, and one hostile card's name of 100,000 characters would otherwise post 200,000 q-grams.
 */
const MAX_GRAMMED = 256;
const GRAMS_2: readonly number[] = [2];
const GRAMS_3: readonly number[] = [3];
const GRAMS_3_4: readonly number[] = [3, 4];

/**
 * The key of the q-gram at `at` in `s` among the postings of names of skeleton length `length`: a
 * 30-bit hash of the three (a small integer: no string is made per q-gram). Two q-grams that
 * share a key share postings, so a lookup may visit a few names it need not; it never misses one.
 */
function gramKey(s: string, at: number, q: number, length: number): number {
  let h = Math.imul(length * 8 + q, 0x9e3779b1);
  for (let i = at; i < at + q; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

/**
 * Scratch space of lookups and of indexing, shared by every index (a lookup runs to its end before
 * another starts; nothing in it calls out): a name's distinct q-gram keys, each one's count in the
 * name, and the postings it would visit. A lookup built them in arrays and closures of its own, and
 * indexing a Set of keys per name and size: 19 KB of garbage per lookup in the first cycle over
 * 20,000 endpoints, 40 % of all it allocated. A name looked up has at most a q-gram per character
 * among the lengths that are q-grammed (up to {@link MAX_GRAMMED}, and 3 more within reach).
 */
const MOST_KEYS = MAX_GRAMMED + 3;
const KEYS = new Int32Array(MOST_KEYS);
const TIMES = new Int32Array(MOST_KEYS);
const SIZES = new Float64Array(MOST_KEYS);
/** The keys a plan takes: the one being worked out, and the best so far. */
const TAKEN = new Int32Array(MOST_KEYS);
const PLAN = new Int32Array(MOST_KEYS);

/**
 * Writes the distinct q-grams of `s` as keys among names of skeleton length `length` to
 * {@link KEYS}, and how often each occurs in `s` to {@link TIMES}; returns how many.
 */
function gramKeys(s: string, q: number, length: number): number {
  let n = 0;
  for (let at = 0; at + q <= s.length; at++) {
    const k = gramKey(s, at, q, length);
    let j = 0;
    while (j < n && KEYS[j] !== k) j++;
    if (j < n) TIMES[j]!++;
    else {
      KEYS[n] = k;
      TIMES[n++] = 1;
    }
  }
  return n;
}

/** Of {@link KEYS} `0..n`, the one not yet taken (a count in {@link TIMES}) with the fewest postings; -1 when all are. */
function rarest(n: number): number {
  let min = -1;
  for (let i = 0; i < n; i++) if (TIMES[i]! > 0 && (min < 0 || SIZES[i]! < SIZES[min]!)) min = i;
  return min;
}

/** The postings under a key: the one posting, or more as a list of {@link PostingLists} (its number). */
type Postings = Posting | number;

/** A q-gram's postings of names of big series, by series, and how many there are in all. */
interface SeriesPostings {
  total: number;
  readonly bySeries: Map<string, Postings>;
}

/** Names of one numbered series (`fleet-agent-#`) from which its later names are posted apart, by series: a lookup skips its own as a group. */
const BIG_SERIES = 16;

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

/** A name as compared: the lookup's names and the postings' share this shape. */
interface Name {
  readonly raw: string;
  readonly skeleton: string;
  /** The folded name ({@link fold}) with every number as `#`: names of one series (`agent-1`, `agent-2`) are never lookalikes. */
  readonly series: string;
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
  if (a.skeleton === b.skeleton) {
    // Folded again here, not held: equal skeletons are rare, and a folded name per agent is not.
    const fa = fold(a.raw);
    const fb = fold(b.raw);
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

/** An agent held: its entry's fields (the names a copy), its place in the arrival order, and a posting per name compared. */
interface Stored {
  readonly key: string;
  readonly origin: string;
  readonly raw: readonly string[];
  readonly seq: number;
  names: readonly Posting[];
  /** Removed or replaced: its postings left in long lists are skipped, and dropped when the list is compacted. */
  dead: boolean;
}

/**
 * Lists longer than this keep a removed agent's postings in place, skipped, until an eighth of
 * the list is dead: removing one posting from a list is linear in the list, and the q-grams of a
 * word every name shares (`Agent …`) hold a posting of every agent. Shorter lists are compacted
 * at once.
 */
const SHORT_LIST = 64;

/** The smallest arena {@link PostingLists} allocates, in postings. */
const MIN_ARENA = 1024;

/**
 * The room a list of {@link PostingLists} has: 2 postings, then each size half as big again and 2
 * more. Every run of the arena, a list's or a free one, has one of these sizes.
 */
const ROOMS: readonly number[] = (() => {
  const rooms = [2];
  while (rooms[rooms.length - 1]! < 0x20000000) rooms.push(rooms[rooms.length - 1]! + (rooms[rooms.length - 1]! >> 1) + 2);
  return rooms;
})();

/** The index in {@link ROOMS} of a room. */
function roomClass(room: number): number {
  let lo = 0;
  let hi = ROOMS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ROOMS[mid]! < room) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The index's lists of postings, in one typed array: each list a run of posting ids in
 * {@link items}, its room one of {@link ROOMS}. A list that outgrows its room takes a run of the
 * next size (or grows in place when it is the last in the arena) and frees its old one; a freed
 * run waits, linked through its first slot, for the next list that needs its size. The arena grows
 * by copying it whole; it is packed list by list only when it is full and a third of it is free
 * runs, or once a quarter of it is in use (a fleet that shrank). A posting has an id while a list
 * holds it (`refs` counts the lists).
 *
 * Lists of JavaScript arrays cost 8 B a posting, an array and its header per list (48 B), and the
 * room `push` reserves (a list of 3 has 19 slots): 100,000 agents held 5.2 million postings in
 * 289,000 lists. Here a posting costs 4 B, a list 16 B. Packing the arena whenever it was full
 * instead of keeping freed runs for reuse read every list some 80 times while 100,000 agents
 * arrived (about 100 ms each time at the end).
 */
class PostingLists {
  /** The postings by id. */
  readonly byId: (Posting | undefined)[] = [];
  readonly #freeIds: number[] = [];
  /** List `l` holds the ids `items[off[l]] … items[off[l] + len[l] - 1]`, its room `cap[l]` (0 once it is freed); `dead[l]` of them are of agents removed. */
  items = new Int32Array(MIN_ARENA);
  off = new Int32Array(64);
  len = new Int32Array(64);
  cap = new Int32Array(64);
  dead = new Int32Array(64);
  /** The arena's slots used, by lists and free runs. */
  #end = 0;
  /** The first free run of each room (-1: none); each free run's first slot holds the next. And the slots of every free run. */
  readonly #free = new Int32Array(ROOMS.length).fill(-1);
  #freeSlots = 0;
  /** Postings the lists hold: the arena is packed smaller once it is four times as big. */
  #held = 0;
  /** List numbers given so far, and those freed for reuse. */
  #lists = 0;
  readonly #freeLists: number[] = [];

  /** A new list of two postings; its number. */
  create(a: Posting, b: Posting): number {
    let l = this.#freeLists.pop();
    if (l === undefined) {
      l = this.#lists++;
      if (l === this.off.length) this.#growRecords();
    }
    const off = this.#take(0);
    this.off[l] = off;
    this.cap[l] = ROOMS[0]!;
    this.len[l] = 2;
    this.dead[l] = 0;
    this.#held += 2;
    this.items[off] = this.#idOf(a);
    this.items[off + 1] = this.#idOf(b);
    return l;
  }

  /** Adds a posting at the end of list `l`. */
  append(l: number, posting: Posting): void {
    const id = this.#idOf(posting);
    const len = this.len[l]!;
    if (len === this.cap[l]!) {
      // Room for the next run first: packing the arena moves the list, and may give it room.
      this.#reserve(ROOMS[roomClass(len) + 1]!);
    }
    const cap = this.cap[l]!;
    if (len === cap) {
      const k = roomClass(cap) + 1;
      const grown = ROOMS[k]!;
      const off = this.off[l]!;
      if (off + cap === this.#end) {
        // The last run of the arena grows in place.
        this.#end += grown - cap;
      } else {
        const to = this.#take(k);
        this.items.copyWithin(to, off, off + len);
        this.off[l] = to;
        this.#give(off, cap);
      }
      this.cap[l] = grown;
    }
    this.items[this.off[l]! + len] = id;
    this.len[l] = len + 1;
    this.#held++;
  }

  /**
   * Drops the postings of list `l` whose agent is removed (or, given, of `stored` only) in place;
   * returns how many. A list left empty is freed (its room 0): its number may be given to another.
   */
  compact(l: number, stored?: Stored): number {
    const items = this.items;
    const from = this.off[l]!;
    const to = from + this.len[l]!;
    let w = from;
    for (let r = from; r < to; r++) {
      const p = this.byId[items[r]!]!;
      if (stored === undefined ? !p.stored.dead : p.stored !== stored) items[w++] = items[r]!;
      else this.#release(p);
    }
    this.len[l] = w - from;
    this.dead[l] = 0;
    if (w === from) {
      this.#give(from, this.cap[l]!);
      this.cap[l] = 0;
      this.#freeLists.push(l);
    }
    this.#held -= to - w;
    return to - w;
  }

  /**
   * Gives memory back once a fleet shrank: everything starts again small once no list is left,
   * and the arena is packed smaller once it is a quarter full. Called between changes (list
   * numbers are renumbered from 0 after a reset: no map may still hold a freed list's number).
   */
  trim(): void {
    if (this.#lists > 0 && this.#freeLists.length === this.#lists) this.#clear();
    else if (this.#held * 4 < this.items.length && this.items.length > MIN_ARENA) this.#pack();
  }

  /** The bytes the arena and the lists' records reserve. */
  get bytes(): number {
    return this.items.byteLength + this.off.byteLength * 4;
  }

  #idOf(posting: Posting): number {
    if (posting.refs++ === 0) {
      const id = this.#freeIds.pop() ?? this.byId.length;
      this.byId[id] = posting;
      posting.id = id;
    }
    return posting.id;
  }

  #release(posting: Posting): void {
    if (--posting.refs > 0) return;
    this.byId[posting.id] = undefined;
    this.#freeIds.push(posting.id);
    posting.id = -1;
  }

  /** A run of room `ROOMS[k]`: a free one, or a new one at the arena's end. */
  #take(k: number): number {
    const free = this.#free[k]!;
    if (free >= 0) {
      this.#free[k] = this.items[free]!;
      this.#freeSlots -= ROOMS[k]!;
      return free;
    }
    this.#reserve(ROOMS[k]!);
    const off = this.#end;
    this.#end += ROOMS[k]!;
    return off;
  }

  /** Frees the run at `off` of room `room` for the next list that needs that room. */
  #give(off: number, room: number): void {
    const k = roomClass(room);
    this.items[off] = this.#free[k]!;
    this.#free[k] = off;
    this.#freeSlots += room;
  }

  /**
   * Makes room for `n` more slots at the arena's end: the lists packed into a new arena when a
   * third of it is free runs, else the arena copied whole (one `memcpy`, offsets kept) into one a
   * quarter bigger.
   */
  #reserve(n: number): void {
    if (this.#end + n <= this.items.length) return;
    if (this.#freeSlots * 3 >= this.#end) {
      this.#pack(n);
      return;
    }
    const next = new Int32Array(Math.max(this.#end + n, Math.ceil(this.items.length * 1.25)));
    next.set(this.items.subarray(0, this.#end));
    this.items = next;
  }

  /** A new arena with room for `n` more slots and a quarter more, the lists packed into it, each in the smallest room with one slot free, free runs dropped. */
  #pack(n = 0): void {
    let used = 0;
    for (let l = 0; l < this.#lists; l++) if (this.cap[l] !== 0) used += ROOMS[roomClass(this.len[l]! + 1)]!;
    const next = new Int32Array(Math.max(MIN_ARENA, Math.ceil((used + n) * 1.25)));
    // Element by element: most lists are a few postings, and a view per list to copy it whole
    // (`subarray`) cost ten times as much.
    const items = this.items;
    let w = 0;
    for (let l = 0; l < this.#lists; l++) {
      if (this.cap[l] === 0) continue;
      const off = this.off[l]!;
      const len = this.len[l]!;
      this.off[l] = w;
      for (let i = 0; i < len; i++) next[w + i] = items[off + i]!;
      const cap = ROOMS[roomClass(len + 1)]!;
      this.cap[l] = cap;
      w += cap;
    }
    this.items = next;
    this.#end = w;
    this.#free.fill(-1);
    this.#freeSlots = 0;
  }

  #clear(): void {
    this.items = new Int32Array(MIN_ARENA);
    this.#end = 0;
    this.#free.fill(-1);
    this.#freeSlots = 0;
    this.#lists = 0;
    this.#freeLists.length = 0;
    this.byId.length = 0;
    this.#freeIds.length = 0;
    for (const name of ['off', 'len', 'cap', 'dead'] as const) this[name] = new Int32Array(64);
  }

  #growRecords(): void {
    const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const next = new Int32Array(a.length * 2);
      next.set(a);
      return next;
    };
    this.off = grow(this.off);
    this.len = grow(this.len);
    this.cap = grow(this.cap);
    this.dead = grow(this.dead);
  }
}

/** What {@link LookalikeIndex} keeps postings in: a `Map`, or a {@link GramTable} for q-gram keys. */
interface PostingsMap<K> {
  get(key: K): Postings | undefined;
  set(key: K, value: Postings): unknown;
  delete(key: K): boolean;
}

/** The smallest {@link GramTable} (slots; a power of two). */
const GRAM_TABLE_MIN = 1_024;

/**
 * Postings by q-gram key ({@link gramKey}: a 30-bit hash, never -1), in two arrays indexed alike:
 * open addressing with linear probing, -1 marking an empty slot; a delete moves the rest of its run
 * back (no tombstones). 12 B a slot, at most three quarters full, where a `Map` of numbers took
 * about 28 B an entry (its table alone was 29 MB at 100,000 agents of two names). Doubles when
 * three quarters full, halves when an eighth full.
 */
export class GramTable implements PostingsMap<number> {
  #keys = new Int32Array(GRAM_TABLE_MIN).fill(-1);
  #values: Array<Postings | undefined> = new Array<Postings | undefined>(GRAM_TABLE_MIN).fill(undefined);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: number): Postings | undefined {
    const keys = this.#keys;
    const mask = keys.length - 1;
    for (let i = key & mask; ; i = (i + 1) & mask) {
      const at = keys[i]!;
      if (at === key) return this.#values[i];
      if (at === -1) return undefined;
    }
  }

  set(key: number, value: Postings): void {
    if ((this.#size + 1) * 4 > this.#keys.length * 3) this.#resize(this.#keys.length * 2);
    const keys = this.#keys;
    const mask = keys.length - 1;
    for (let i = key & mask; ; i = (i + 1) & mask) {
      const at = keys[i]!;
      if (at === key) {
        this.#values[i] = value;
        return;
      }
      if (at === -1) {
        keys[i] = key;
        this.#values[i] = value;
        this.#size++;
        return;
      }
    }
  }

  delete(key: number): boolean {
    const keys = this.#keys;
    const values = this.#values;
    const mask = keys.length - 1;
    let i = key & mask;
    while (keys[i] !== key) {
      if (keys[i] === -1) return false;
      i = (i + 1) & mask;
    }
    // Backward shift: each later key of the run whose home slot is not in (i, j] moves into the hole.
    for (let j = (i + 1) & mask; keys[j] !== -1; j = (j + 1) & mask) {
      const home = keys[j]! & mask;
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        keys[i] = keys[j]!;
        values[i] = values[j];
        i = j;
      }
    }
    keys[i] = -1;
    values[i] = undefined;
    this.#size--;
    if (this.#size * 8 < keys.length && keys.length > GRAM_TABLE_MIN) this.#resize(keys.length / 2);
    return true;
  }

  #resize(slots: number): void {
    const keys = this.#keys;
    const values = this.#values;
    this.#keys = new Int32Array(slots).fill(-1);
    this.#values = new Array<Postings | undefined>(slots).fill(undefined);
    this.#size = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== -1) this.set(keys[i]!, values[i]!);
  }
}

/** The earliest lookalike a lookup found so far: the posting, the lookup's name like it, and why. */
interface Found {
  readonly posting: Posting;
  readonly name: Name;
  readonly reason: string;
}

/** A name of an agent held, as its skeleton's list and its q-grams' lists hold it: one object per name (no {@link Name} of its own: 48 B a name less). */
interface Posting extends Name {
  readonly stored: Stored;
  /** Has a number: counted among its series' names (a big series is posted apart). */
  readonly numbered: boolean;
  /** Posted by series ({@link BIG_SERIES}), not among a q-gram's other postings. */
  readonly grouped: boolean;
  /** The stamp of the last lookup's name that considered it: a lookup compares each posting once per name. */
  seen: number;
  /** The stamp of the last lookup's name that counted it under its q-grams, and how often (the count filter). */
  counted: number;
  hits: number;
  /** Its number in {@link PostingLists} while a list holds it (-1 when none does), and how many lists do. */
  id: number;
  refs: number;
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
  /** Postings by q-gram key ({@link gramKey}, of every size {@link gramSizes} gives), of names outside big series. */
  readonly #grams = new GramTable();
  /** Postings by q-gram key, then by series, of the names of big series; with their count. */
  readonly #seriesGrams = new Map<number, SeriesPostings>();
  /** Names held per skeleton length: a lookup skips the lengths nobody has. */
  readonly #lengths = new Map<number, number>();
  /** Names held per numbered series (one with a number: `fleet-agent-#`). */
  readonly #seriesSize = new Map<string, number>();
  /** Postings by skeleton, in arrival order: equal skeletons are found first, the earliest at once. Most skeletons have one name: held alone, not in a list. */
  readonly #skeletons = new Map<string, Postings>();
  /** The agent a lookup is for, and the earliest lookalike it found so far (see {@link find}). */
  #self: Stored | undefined;
  #best: Found | undefined;
  /** Every list of postings the maps above hold by number. */
  readonly #lists = new PostingLists();
  #seq = 0;
  /** The last stamp a lookup gave one of its names (see {@link Posting.seen}). */
  #stamp = 0;
  /** Name comparisons made by lookups so far (edit distances computed), for tests and metrics. */
  comparisons = 0;
  /** Postings lookups visited so far (the work before any comparison), for tests and metrics. */
  visits = 0;
  /** Postings removals read so far, compacting the lists an agent left, for tests and metrics. */
  swept = 0;
  #postings = 0;

  /** Adds an agent, or updates its names keeping its place in the arrival order. Returns whether anything changed. */
  set(entry: LookalikeEntry): boolean {
    const old = this.#stored.get(entry.key);
    if (old !== undefined && old.origin === entry.origin && sameNames(old.raw, entry.names)) return false;
    if (old !== undefined) this.#unindex(old);
    const names: Posting[] = [];
    const stored: Stored = { key: entry.key, origin: entry.origin, raw: entry.names.slice(), seq: old?.seq ?? this.#seq++, names, dead: false };
    for (const raw of new Set(entry.names)) {
      const skel = skeleton(raw);
      if (skel.length < MIN_LENGTH) continue;
      const folded = fold(raw);
      const series = seriesOf(folded);
      const numbered = series !== folded;
      let grouped = false;
      if (numbered) {
        const size = (this.#seriesSize.get(series) ?? 0) + 1;
        this.#seriesSize.set(series, size);
        grouped = size > BIG_SERIES;
      }
      names.push({ raw, skeleton: skel, series, stored, numbered, grouped, seen: 0, counted: 0, hits: 0, id: -1, refs: 0 });
    }
    // Held for as long as the agent is: at its exact length (a list pushed to reserves 17 slots).
    stored.names = names.slice();
    this.#stored.set(entry.key, stored);
    for (const posting of stored.names) {
      this.#post(this.#skeletons, posting.skeleton, posting);
      this.#postings++;
      const length = posting.skeleton.length;
      this.#lengths.set(length, (this.#lengths.get(length) ?? 0) + 1);
      for (const q of gramSizes(length)) {
        for (let i = 0, n = gramKeys(posting.skeleton, q, length); i < n; i++) {
          const k = KEYS[i]!;
          this.#postings++;
          if (posting.grouped) {
            let groups = this.#seriesGrams.get(k);
            if (groups === undefined) this.#seriesGrams.set(k, (groups = { total: 0, bySeries: new Map() }));
            this.#post(groups.bySeries, posting.series, posting);
            groups.total++;
            continue;
          }
          this.#post(this.#grams, k, posting);
        }
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

  /** Postings held in the index's lists (under a skeleton or a q-gram), a removed agent's included until its lists are compacted; for tests and metrics. */
  get postings(): number {
    return this.#postings;
  }

  /** The bytes the index's lists of postings reserve (typed arrays, outside the JavaScript heap); for tests and metrics. */
  get listBytes(): number {
    return this.#lists.bytes;
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
    this.#self = self;
    this.#best = undefined;
    // Each of this agent's names is compared once with each name in reach: a posting keeps the
    // stamp of the last name that considered it (no set of the postings seen per lookup: a
    // lookup at 100,000 names visits a hundred postings or more). Name i's stamp is first + i.
    const first = this.#stamp + 1;
    this.#stamp += self.names.length;
    const names = self.names;
    for (let i = 0; i < names.length; i++) {
      const held = this.#skeletons.get(names[i]!.skeleton);
      if (held === undefined) continue;
      if (typeof held !== 'number') this.#consider(held, names[i]!, first + i);
      else {
        const { items, byId } = this.#lists;
        for (let j = this.#lists.off[held]!, end = j + this.#lists.len[held]!; j < end; j++) this.#consider(byId[items[j]!]!, names[i]!, first + i);
      }
    }
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const stamp = first + i;
      const length = name.skeleton.length;
      for (let other = length - 3; other <= length + 3; other++) {
        const d = maxEdits(Math.min(length, other));
        if (d === 0 || Math.abs(length - other) > d || !this.#lengths.has(other)) continue;
        // Of the q-gram sizes names of that length are posted under, the one whose needed postings are fewest.
        let planSize = 0;
        let planCost = Infinity;
        let planNeed = 1;
        for (const q of gramSizes(other)) {
          // A name within d edits shares at least `shared` of this one's q-grams (count filter).
          const shared = Math.max(length, other) - q + 1 - q * d;
          // This name's distinct q-grams (keys among names of length `other`), how often each
          // occurs in it, and how many postings each would visit.
          const n = gramKeys(name.skeleton, q, other);
          for (let j = 0; j < n; j++) SIZES[j] = this.#postingsOf(KEYS[j]!, name.series);
          // No q-gram twice in this name: each key taken stands for one of its q-grams.
          const single = n === length - q + 1;
          // Any `length - q + 1 - shared + 1` of this name's q-grams include one a name within reach
          // has: the rarest are taken.
          let uncovered = length - q + 1 - shared + 1;
          let taken = 0;
          let cost = 0;
          // The rarest first, until they cover enough of the name (or cost more than the other size's plan).
          while (uncovered > 0 && cost < planCost) {
            const r = rarest(n);
            if (r < 0) {
              cost = Infinity;
              break;
            }
            uncovered -= TIMES[r]!;
            TIMES[r] = 0;
            cost += SIZES[r]!;
            if (SIZES[r]! > 0) TAKEN[taken++] = KEYS[r]!;
          }
          // One more, and they include two of its q-grams (with two shared at least, and each key
          // standing for one q-gram): a name is compared only when it is posted under two of the
          // keys taken. Taken when it at most doubles the postings visited: a visit is a count, a
          // comparison an edit distance.
          let need = 1;
          if (cost < planCost && shared >= 2 && single) {
            const next = rarest(n);
            if (next >= 0 && SIZES[next]! <= cost && cost > 0) {
              TIMES[next] = 0;
              cost += SIZES[next]!;
              if (SIZES[next]! > 0) TAKEN[taken++] = KEYS[next]!;
              need = 2;
            }
          }
          if (cost < planCost) {
            for (let j = 0; j < taken; j++) PLAN[j] = TAKEN[j]!;
            planSize = taken;
            planCost = cost;
            planNeed = need;
          }
        }
        for (let j = 0; j < planSize; j++) {
          const k = PLAN[j]!;
          const held = this.#grams.get(k);
          if (held !== undefined) this.#visit(held, name, stamp, planNeed);
          // A big series (a numbered fleet: `fleet-agent-17`, `fleet-agent-18`) is never a
          // lookalike of itself: its own postings are left out as a group.
          const groups = this.#seriesGrams.get(k);
          if (groups !== undefined) for (const [series, list] of groups.bySeries) if (series !== name.series) this.#visit(list, name, stamp, planNeed);
        }
      }
    }
    const best = this.#found();
    if (best === undefined) return undefined;
    const { posting, name, reason } = best;
    return {
      key: posting.stored.key,
      name: name.raw,
      of: posting.raw,
      origin: posting.stored.origin,
      reason: `name ${JSON.stringify(name.raw)} looks like ${JSON.stringify(posting.raw)} of ${posting.stored.origin}: ${reason}`,
    };
  }

  /** The lookup's answer so far, and the lookup's state cleared. */
  #found(): Found | undefined {
    const best = this.#best;
    this.#self = undefined;
    this.#best = undefined;
    return best;
  }

  /** Compares the lookup's `name` with a posting it has not yet considered (see {@link find}). */
  #consider(posting: Posting, name: Name, stamp: number): void {
    if (posting.seen === stamp) return;
    posting.seen = stamp;
    const other = posting.stored;
    const self = this.#self!;
    if (other.dead || other.seq >= self.seq || other.origin === self.origin) return;
    const best = this.#best;
    if (best !== undefined && best.posting.stored.seq <= other.seq) return;
    this.comparisons++;
    const reason = compareNames(name, posting);
    if (reason !== undefined) this.#best = { posting, name, reason };
  }

  /** A posting under `need` of the q-grams a plan took is compared; under fewer it cannot be within reach. */
  #count(posting: Posting, name: Name, stamp: number, need: number): void {
    if (posting.stored.dead || posting.series === name.series) return;
    if (need > 1) {
      if (posting.counted !== stamp) {
        posting.counted = stamp;
        posting.hits = 1;
        return;
      }
      if (++posting.hits < need) return;
    }
    this.#consider(posting, name, stamp);
  }

  #visit(held: Postings, name: Name, stamp: number, need: number): void {
    if (typeof held !== 'number') {
      this.visits++;
      this.#count(held, name, stamp, need);
      return;
    }
    const { items, byId } = this.#lists;
    const from = this.#lists.off[held]!;
    const to = from + this.#lists.len[held]!;
    this.visits += to - from;
    for (let j = from; j < to; j++) this.#count(byId[items[j]!]!, name, stamp, need);
  }

  /**
   * How an agent would be judged if it arrived now (the inspector asks before anything admits it):
   * one held already (from the same origin, under a name of the same skeleton; the earliest such) is judged in its
   * own place in the arrival order; any other against every agent held.
   */
  judge(entry: Omit<LookalikeEntry, 'key'>): LookalikeMatch | undefined {
    let held: Stored | undefined;
    for (const name of entry.names) {
      for (const { stored } of this.#postingsUnder(this.#skeletons.get(skeleton(name)))) {
        if (!stored.dead && stored.origin === entry.origin && (held === undefined || stored.seq < held.seq)) held = stored;
      }
    }
    if (held !== undefined) return this.find(held.key);
    // A key no agent has: URLs and endpoint keys never start with a NUL.
    const key = '\u0000judged';
    this.set({ ...entry, key });
    try {
      return this.find(key);
    } finally {
      this.delete(key);
    }
  }

  /** The postings under q-gram key `k` a lookup for a name of `series` would visit. */
  #postingsOf(k: number, series: string): number {
    const small = this.#sizeOf(this.#grams.get(k));
    const groups = this.#seriesGrams.get(k);
    return groups === undefined ? small : small + groups.total - this.#sizeOf(groups.bySeries.get(series));
  }

  #sizeOf(held: Postings | undefined): number {
    return held === undefined ? 0 : typeof held === 'number' ? this.#lists.len[held]! : 1;
  }

  /** The postings under a key as an array (for the inspector's question, not for lookups). */
  #postingsUnder(held: Postings | undefined): Posting[] {
    if (held === undefined) return [];
    if (typeof held !== 'number') return [held];
    const { items, byId, off, len } = this.#lists;
    return Array.from(items.subarray(off[held]!, off[held]! + len[held]!), (id) => byId[id]!);
  }

  /** Adds a posting under `key`: alone while it is the only one, then in a list. */
  #post<K>(map: PostingsMap<K>, key: K, posting: Posting): void {
    const held = map.get(key);
    if (held === undefined) map.set(key, posting);
    else if (typeof held === 'number') this.#lists.append(held, posting);
    else map.set(key, this.#lists.create(held, posting));
  }

  /**
   * Takes an agent's postings out of the index. Short lists are compacted at once; a long list
   * keeps them, marked dead, until an eighth of it is (see {@link SHORT_LIST}): removing an agent
   * costs its own q-grams, not the size of the fleet.
   */
  #unindex(stored: Stored): void {
    stored.dead = true;
    for (const name of stored.names) {
      this.#unpost(this.#skeletons, name.skeleton, stored);
      if (name.numbered) {
        const size = (this.#seriesSize.get(name.series) ?? 1) - 1;
        if (size === 0) this.#seriesSize.delete(name.series);
        else this.#seriesSize.set(name.series, size);
      }
      const length = name.skeleton.length;
      const held = (this.#lengths.get(length) ?? 1) - 1;
      if (held === 0) this.#lengths.delete(length);
      else this.#lengths.set(length, held);
      for (const q of gramSizes(length)) {
        for (let i = 0, n = gramKeys(name.skeleton, q, length); i < n; i++) {
          const k = KEYS[i]!;
          const groups = this.#seriesGrams.get(k);
          if (groups !== undefined) {
            groups.total -= this.#unpost(groups.bySeries, name.series, stored);
            if (groups.bySeries.size === 0) this.#seriesGrams.delete(k);
          }
          this.#unpost(this.#grams, k, stored);
        }
      }
    }
    this.#lists.trim();
  }

  /**
   * Takes `stored`'s postings out of `map`'s postings under `k`: a single posting at once, a list's
   * by {@link prune}; a key left with none is deleted. Returns how many postings were removed.
   */
  #unpost<K>(map: PostingsMap<K>, k: K, stored: Stored): number {
    const held = map.get(k);
    if (held === undefined) return 0;
    if (typeof held !== 'number') {
      if (held.stored !== stored) return 0;
      map.delete(k);
      this.#postings--;
      return 1;
    }
    const removed = this.#prune(held, stored);
    if (this.#lists.cap[held] === 0) map.delete(k);
    return removed;
  }

  /**
   * One more dead posting in list `l`: compacted now when the list is short or an eighth of it is
   * dead, else counted. Returns how many postings were removed.
   */
  #prune(l: number, stored: Stored): number {
    const lists = this.#lists;
    const len = lists.len[l]!;
    // A short list has no dead posting but this agent's: only a long one is ever left dirty.
    if (len > SHORT_LIST && ++lists.dead[l]! * 8 < len) return 0;
    this.swept += len;
    const removed = lists.compact(l, len > SHORT_LIST ? undefined : stored);
    this.#postings -= removed;
    return removed;
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

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}
