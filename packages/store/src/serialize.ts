/**
 * Internal: how entries, snapshots and events become rows and come back.
 *
 * A cache entry's `expiresAt` and `nextAttemptAt` are on the monotonic clock of the process
 * that wrote them, which means nothing to the next process: they are stored as epoch
 * milliseconds and translated back on load (`at − now() + wallNow()` and the reverse).
 */
import type { CacheEntry, AgentCardModel, Clock, DiscoveryEvent, Snapshot, SnapshotAgent } from 'a2a-discovery';
import type { CardProtocolVersion } from 'a2a-discovery/internal';
// Loaded data is as immutable as fresh data: frozen by the library's own rule.
import { deepFreeze, frozenCopy, runSteps } from 'a2a-discovery/internal';

const toWall = (at: number, clock: Clock): number => Math.round(at - clock.now() + clock.wallNow());
const fromWall = (wall: number, clock: Clock): number => wall - clock.wallNow() + clock.now();

/** The JSON text of an entry, its monotonic times as epoch ms. */
export function entryToJson<C, V extends string>(entry: CacheEntry<C, V>, clock: Clock): string {
  const { expiresAt, nextAttemptAt, ...rest } = entry;
  return JSON.stringify({ ...rest, expiresAtWall: toWall(expiresAt, clock), nextAttemptAtWall: nextAttemptAt === undefined ? null : toWall(nextAttemptAt, clock) });
}

/**
 * The fields of an entry that only a new card changes (card, protocol version, body, canonical
 * hash, warnings, signature, extended card, fetch time): a freshness write leaves them out.
 */
const CARD_FIELDS = ['card', 'protocolVersion', 'body', 'canonicalSha256', 'warnings', 'signature', 'extended', 'fetchedAtWall'] as const;

/**
 * The JSON text of what a refresh that kept the card changes in an entry (a 304, a failure): every
 * field but {@link CARD_FIELDS}, its times as epoch ms; `rawSha256` names the bytes it belongs to
 * and `at` the wall time of the write.
 */
export function freshnessToJson<C, V extends string>(entry: CacheEntry<C, V>, clock: Clock, at: number): string {
  // Never reading the card fields: an entry that holds its card lazily would unpack its text and
  // build its model again for a write that leaves both out.
  const rest = fieldsBut(entry, FRESHNESS_LEFT_OUT);
  const { expiresAt, nextAttemptAt } = entry;
  return JSON.stringify({ ...rest, expiresAtWall: toWall(expiresAt, clock), nextAttemptAtWall: nextAttemptAt === undefined ? null : toWall(nextAttemptAt, clock), at });
}

/** What a freshness write leaves out or writes in another form. */
const FRESHNESS_LEFT_OUT: ReadonlySet<string> = new Set([...CARD_FIELDS, 'expiresAt', 'nextAttemptAt']);

/**
 * The own enumerable fields of `o` but those in `leftOut`, copied by name: unlike a destructuring
 * rest, it never reads a field it leaves out (a lazily held card's accessors unpack and rebuild).
 */
function fieldsBut(o: object, leftOut: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (!leftOut.has(k)) out[k] = (o as Record<string, unknown>)[k];
  return out;
}

/**
 * An entry from its row: the whole entry's JSON text (`updatedAt`: when it was written) and the
 * freshness written since (`freshness`, see {@link freshnessToJson}), if any: the card fields of
 * the one, every other field of the other (absent: undefined). The freshness applies only to the
 * bytes it names and when written after the entry (a release that does not know it writes only
 * entries).
 */
export function entryFromRow<C = AgentCardModel, V extends string = CardProtocolVersion>(
  text: string,
  updatedAt: number,
  freshness: string | null | undefined,
  clock: Clock,
): CacheEntry<C, V> {
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (freshness != null) {
    const { at, ...fields } = JSON.parse(freshness) as Record<string, unknown> & { at: number };
    if (fields['rawSha256'] === raw['rawSha256'] && at >= updatedAt) {
      for (const k of CARD_FIELDS) if (k in raw) fields[k] = raw[k];
      return entryOf<C, V>(fields, clock);
    }
  }
  return entryOf<C, V>(raw, clock);
}

/** An entry from its JSON text, its times back on this process's monotonic clock. */
export function entryFromJson<C = AgentCardModel, V extends string = CardProtocolVersion>(text: string, clock: Clock): CacheEntry<C, V> {
  return entryOf<C, V>(JSON.parse(text) as Record<string, unknown>, clock);
}

function entryOf<C, V extends string>(parsed: Record<string, unknown>, clock: Clock): CacheEntry<C, V> {
  const raw = parsed as unknown as Omit<CacheEntry<C, V>, 'expiresAt' | 'nextAttemptAt'> & { expiresAtWall: number; nextAttemptAtWall: number | null };
  const { expiresAtWall, nextAttemptAtWall, ...rest } = raw;
  const entry: CacheEntry<C, V> = {
    ...rest,
    // JSON has no undefined: the optional fields come back as absent, which reads the same.
    etag: rest.etag ?? undefined,
    lastModified: rest.lastModified ?? undefined,
    lastError: rest.lastError ?? undefined,
    signature: rest.signature ?? undefined,
    card: deepFreeze(rest.card),
    warnings: deepFreeze(rest.warnings ?? []),
    // The extended card is persisted with its entry (its identity's label, never a secret).
    ...(rest.extended != null && { extended: deepFreeze(rest.extended) }),
    expiresAt: fromWall(expiresAtWall, clock),
    nextAttemptAt: nextAttemptAtWall == null ? undefined : fromWall(nextAttemptAtWall, clock),
  };
  return entry;
}

/** A snapshot agent without its card (the card is stored once, by its raw hash). */
type StoredAgent = Omit<SnapshotAgent, 'card' | 'body'>;

/** A card kept for snapshots, content-addressed by the SHA-256 of its bytes. */
export interface StoredCard {
  readonly rawSha256: string;
  readonly canonicalSha256: string;
  readonly protocolVersion: CardProtocolVersion;
  /** The bytes as received; null when the snapshot was built without them. */
  readonly body: string | null;
  /** The parsed (normalized) card, JSON. */
  readonly card: string;
}

const CARD_AND_BODY: ReadonlySet<string> = new Set(['card', 'body']);

/**
 * A snapshot as its rows store it: the agents without their cards (JSON), the cards to write, and
 * the raw hash of every card it holds.
 */
export interface SplitSnapshot {
  readonly agents: string;
  /** Each card of the snapshot once, but those the split was told were stored already. */
  readonly cards: StoredCard[];
  /** The raw hashes of all its cards, those left out of `cards` included. */
  readonly hashes: ReadonlySet<string>;
}

export function splitSnapshot(snapshot: Snapshot, stored?: ReadonlySet<string>): SplitSnapshot {
  return runSteps(splitSnapshotSteps(snapshot, stored));
}

/** Agents split between two yields of {@link splitSnapshotSteps}. */
const AGENTS_PER_STEP = 256;

/**
 * {@link splitSnapshot} yielding between slices (for `runPaced`): a 100,000-agent snapshot is a
 * second or more of work (every card's model written as JSON, every agent's fields), which in one
 * piece held the event loop at each publication. The agents' JSON is the same text
 * `JSON.stringify` gives the whole list: each agent's, joined by commas in brackets. A card whose
 * raw hash `stored` holds is left out of `cards` and never read (a publication writes only the
 * cards the last one did not hold).
 */
export function* splitSnapshotSteps(snapshot: Snapshot, stored?: ReadonlySet<string>): Generator<void, SplitSnapshot> {
  const cards = new Map<string, StoredCard>();
  const hashes = new Set<string>();
  const agents: string[] = [];
  for (const a of snapshot.agents) {
    if (agents.length % AGENTS_PER_STEP === AGENTS_PER_STEP - 1) yield;
    if (!hashes.has(a.rawSha256)) {
      hashes.add(a.rawSha256);
      if (stored?.has(a.rawSha256) !== true) {
        cards.set(a.rawSha256, { rawSha256: a.rawSha256, canonicalSha256: a.canonicalSha256, protocolVersion: a.protocolVersion, body: a.body ?? null, card: JSON.stringify(a.card) });
      }
    }
    // Never reading `card` or `body` again: an agent made from a lazily held card unpacks its text
    // and may build its model on each read.
    agents.push(JSON.stringify(fieldsBut(a, CARD_AND_BODY) as StoredAgent));
  }
  return { agents: `[${agents.join(',')}]`, cards: [...cards.values()], hashes };
}

/**
 * Rebuilds a frozen snapshot from its row and its cards. `cardCache` shares parsed cards
 * between the snapshots of one load (the same bytes, one object).
 */
export function joinSnapshot(
  row: { digest: string; version: number; createdAt: number; agents: string },
  cardOf: (rawSha256: string) => { card: AgentCardModel; body: string | null } | undefined,
): Snapshot | undefined {
  const stored = JSON.parse(row.agents) as StoredAgent[];
  const agents: SnapshotAgent[] = [];
  for (const a of stored) {
    const c = cardOf(a.rawSha256);
    if (c === undefined) return undefined;
    agents.push(frozenCopy(a, { card: c.card, ...(c.body !== null && { body: c.body }) }));
  }
  return Object.freeze({ version: row.version, digest: row.digest, createdAt: row.createdAt, agents: Object.freeze(agents) });
}

/** Parses a stored card once per raw hash. */
export function cardParser(): (stored: StoredCard) => { card: AgentCardModel; body: string | null } {
  const parsed = new Map<string, { card: AgentCardModel; body: string | null }>();
  return (stored) => {
    let p = parsed.get(stored.rawSha256);
    if (p === undefined) {
      p = { card: deepFreeze(JSON.parse(stored.card) as AgentCardModel), body: stored.body };
      parsed.set(stored.rawSha256, p);
    }
    return p;
  };
}

export function eventToJson(event: DiscoveryEvent): string {
  return JSON.stringify(event);
}

export function eventFromJson(text: string): DiscoveryEvent {
  return deepFreeze(JSON.parse(text) as DiscoveryEvent);
}
