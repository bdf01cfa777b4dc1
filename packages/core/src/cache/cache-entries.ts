/**
 * Cache entries: each one built with every field named in one place (one fixed shape), the error
 * data an entry keeps, and its times — how long it is fresh (the server's lifetime or the default,
 * clamped, shortened by jitter), when a failing one is tried again (capped exponential backoff
 * with jitter) and how long past its expiry a stale one may still be served.
 *
 * @module
 */
import { backoffDelay } from '../rules/backoff.js';
import type CachePolicy from 'http-cache-semantics';
import type { AgentCardModel } from '../card/index.js';
import { isUntagged } from '../card/model.js';
import { acceptedCardModel } from '../card/parse-agent-card.js';
import { unroutableHost } from '../card/interface-policy.js';
import type { Random } from '../clock/index.js';
import type { DiscoveryError } from '../errors.js';
import type { CacheEntry, EntryError } from './card-store.js';
import { heldText, holdText, type HeldText } from './packed-text.js';

/**
 * Where a lazily held card and its text come from: the slot keeps the bytes (packed: `held`),
 * and the model only weakly — whoever uses it (a snapshot agent, a tree, a matcher) keeps it
 * alive, and once nobody does the collector may take it; the next read builds it again from the
 * bytes. Every entry of the same accepted bytes and every snapshot agent made from them share
 * one slot: the text is held once.
 */
interface ModelSlot extends CardFacts, HeldText {
  ref: WeakRef<object>;
  /** Builds the model again from the entry's body and card URL. */
  readonly read: (body: string, cardUrl: string) => object;
}

/**
 * What the discovery loop reads of every card on every cycle or evaluation, kept beside a weakly
 * held model so that reading it never builds the model again.
 */
interface CardFacts {
  /** The card's `name`. */
  readonly name: string;
  /** Whether the card lists security requirements (only then does it have a security origin). */
  readonly secured: boolean;
  /** Whether an interface names an unroutable host (`0.0.0.0`, `::`): only then can a reviewed `interfaceUrl` change the card. */
  readonly unroutable: boolean;
  /** Whether no skill of the card carries a tag (no skills, or skills with `tags: []`): a static entry's tags vouch for such a card. */
  readonly untagged: boolean;
}

function factsOf(card: AgentCardModel): CardFacts {
  return {
    name: card.name,
    secured: (card.securityRequirements ?? []).length > 0,
    unroutable: card.supportedInterfaces.some((i) => unroutableHost(i.url) !== undefined),
    untagged: isUntagged(card),
  };
}

/** The facts of cards held as a plain field, computed once per card object. */
const plainFacts = new WeakMap<object, CardFacts>();

/** The {@link CardFacts} of an entry's card, without building a model the entry holds weakly. */
export function cardFacts(entry: CacheEntry): CardFacts {
  const slot = modelSlot(entry);
  if (slot !== undefined) return slot;
  let facts = plainFacts.get(entry.card);
  if (facts === undefined) plainFacts.set(entry.card, (facts = factsOf(entry.card)));
  return facts;
}

/**
 * What stands for an entry's card in memos (match results, card access): the same object for
 * the same accepted bytes, across revalidations and whether or not the collector took the model
 * meanwhile — unlike the model object, which may be built again.
 */
export function cardIdentity(entry: CacheEntry): object {
  return modelSlot(entry) ?? entry.card;
}

const SLOT = Symbol('a2a-discovery.model');

type Lazy = { readonly cardUrl: string; readonly [SLOT]: ModelSlot };

/** The model held in `slot`: the one still alive, or one built again from the card's bytes. */
function slotModel(slot: ModelSlot, cardUrl: string): object {
  let card = slot.ref.deref();
  if (card === undefined) {
    card = slot.read(heldText(slot), cardUrl);
    slot.ref = new WeakRef(card);
  }
  return card;
}

/** The `card` of an entry that holds its model lazily (one function for every entry: one shape). */
function lazyCard(this: Lazy): object {
  return slotModel(this[SLOT], this.cardUrl);
}

/** The `body` of an entry that holds its card lazily: the text its slot holds, unpacked on each read. */
function lazyBody(this: Lazy): string {
  return heldText(this[SLOT]);
}

/**
 * Gives `target`, an object that outlives the entry (a snapshot agent) and holds the entry's
 * `cardUrl`, the entry's text and card as its last properties, `body` and `card`, without holding
 * either itself: it shares the entry's slot (the packed text, the weakly held model). While
 * anything uses the model every read gives that object, once nothing does the collector may take
 * it and the next read builds it again from the bytes; `body` is unpacked on each read. An entry
 * that holds its card as a plain field gives its text and model. Every such object shares one
 * pair of accessors (one hidden class).
 */
export function withEntryCard<T extends { readonly cardUrl: string }, C>(target: T, entry: CacheEntry<C>): T & { readonly body: string; readonly card: C } {
  const slot = modelSlot(entry);
  if (slot === undefined) return Object.assign(target, { body: entry.body, card: entry.card });
  Object.defineProperty(target, 'body', LAZY_BODY);
  Object.defineProperty(target, 'card', LAZY_CARD);
  Object.defineProperty(target, SLOT, { value: slot });
  return target as T & { readonly body: string; readonly card: C };
}

/**
 * The card of `entry` for a reading whose result outlives the model (a match memoized by
 * {@link cardIdentity}): the model its slot holds when one is alive, else one built from the
 * bytes that the slot does not keep. A `WeakRef`'s target survives every young-generation
 * collection (V8 treats it as strong there), so a model built for one reading and kept weakly was
 * copied to the old generation, and died there at the next full collection: the first cycle over
 * a fleet built one per card to match it, and its garbage grew the old generation. Read
 * `entry.card` for a model that is kept (a tree, a snapshot agent): every read while it is held
 * gives the same object.
 */
export function passingCard<C>(entry: CacheEntry<C>): C {
  const slot = modelSlot(entry);
  if (slot === undefined) return entry.card;
  return (slot.ref.deref() ?? slot.read(heldText(slot), entry.cardUrl)) as C;
}

/**
 * The model slot of an entry holding its card lazily (see {@link lazyModel}), or undefined for an
 * entry holding it as a plain field.
 */
export function modelSlot(entry: object): ModelSlot | undefined {
  return (entry as Partial<Lazy>)[SLOT];
}

/**
 * A slot for a card model just accepted and its text: the entry built with it (by
 * {@link entryOf}) holds the text packed and the model weakly, and builds the model again from
 * the text with `read` when the collector took it.
 */
export function lazyModel(card: AgentCardModel, body: string, read: (body: string, cardUrl: string) => AgentCardModel): ModelSlot {
  // Every field named in the literal: a spread would put them in a separate property array (40 B a card).
  const { name, secured, unroutable, untagged } = factsOf(card);
  const { held, size } = holdText(body);
  return { ref: new WeakRef(card), read, name, secured, unroutable, untagged, held, size };
}

/**
 * An agent card's entry loaded from a durable store, holding its card as the card cache holds
 * those it accepts: the text packed, the model weakly (the loaded model until the collector takes
 * it, then built again from the text, as {@link acceptedCardModel} builds it). A store's entries
 * are plain objects: each held its parsed model and its text in full until its card changed. An
 * entry that holds its card lazily already is returned as it is. For a cache of agent cards only
 * (a catalog cache's entries hold another document).
 */
export function heldCardEntry<V extends string>(entry: CacheEntry<AgentCardModel, V>): CacheEntry<AgentCardModel, V> {
  return modelSlot(entry) !== undefined ? entry : entryOf(entry, lazyModel(entry.card, entry.body, acceptedCardModel));
}

/**
 * The one place every {@link CacheEntry} field is named: each entry is built here, so entries
 * keep one fixed shape (compact in memory) whatever object the fields come from. With `slot`,
 * the entry's `body` and `card` are read through it (the text unpacked, the model built again
 * from it when nobody holds it), and `n.body` and `n.card` are not read.
 */
export function entryOf<C, V extends string>(n: CacheEntry<C, V>, slot?: ModelSlot): CacheEntry<C, V> {
  return slot !== undefined ? lazyEntryOf(n, slot) : plainEntryOf(n, n.card);
}

/** {@link entryOf} holding `card` itself. */
function plainEntryOf<C, V extends string>(n: CacheEntry<C, V>, card: C): CacheEntry<C, V> {
  return {
    baseUrl: n.baseUrl,
    cardUrl: n.cardUrl,
    card,
    protocolVersion: n.protocolVersion,
    body: n.body,
    rawSha256: n.rawSha256,
    canonicalSha256: n.canonicalSha256,
    etag: n.etag,
    lastModified: n.lastModified,
    cacheHeaders: n.cacheHeaders,
    varyRequest: n.varyRequest,
    conditional: n.conditional,
    expiresAt: n.expiresAt,
    failures: n.failures,
    stale: n.stale,
    usable: n.usable,
    nextAttemptAt: n.nextAttemptAt,
    lastOutcome: n.lastOutcome,
    lastError: n.lastError,
    noStore: n.noStore,
    mustRevalidate: n.mustRevalidate,
    staleIfErrorMs: n.staleIfErrorMs,
    fetchedAtWall: n.fetchedAtWall,
    validatedAtWall: n.validatedAtWall,
    warnings: n.warnings,
    signature: n.signature,
    extended: n.extended,
  };
}

/**
 * {@link entryOf} with the text and card read through `slot`: the same fields but `body` and
 * `card`, which are added last as accessors (replacing a data field would turn the object into a
 * slow dictionary). Both stay enumerable (spread, JSON and the stores see the text and the
 * model). The slot is under a symbol, which JSON and `Object.keys` skip; a spread copies it, so
 * the copy still stands for the same bytes ({@link cardIdentity}).
 */
function lazyEntryOf<C, V extends string>(n: CacheEntry<C, V>, slot: ModelSlot): CacheEntry<C, V> {
  const e = {
    baseUrl: n.baseUrl,
    cardUrl: n.cardUrl,
    protocolVersion: n.protocolVersion,
    rawSha256: n.rawSha256,
    canonicalSha256: n.canonicalSha256,
    etag: n.etag,
    lastModified: n.lastModified,
    cacheHeaders: n.cacheHeaders,
    varyRequest: n.varyRequest,
    conditional: n.conditional,
    expiresAt: n.expiresAt,
    failures: n.failures,
    stale: n.stale,
    usable: n.usable,
    nextAttemptAt: n.nextAttemptAt,
    lastOutcome: n.lastOutcome,
    lastError: n.lastError,
    noStore: n.noStore,
    mustRevalidate: n.mustRevalidate,
    staleIfErrorMs: n.staleIfErrorMs,
    fetchedAtWall: n.fetchedAtWall,
    validatedAtWall: n.validatedAtWall,
    warnings: n.warnings,
    signature: n.signature,
    extended: n.extended,
    // In the literal: a third defineProperty cost about 250 ns of an entry's 550 (a 304 builds one).
    [SLOT]: slot,
  };
  Object.defineProperty(e, 'body', LAZY_BODY);
  Object.defineProperty(e, 'card', LAZY_CARD);
  return e as unknown as CacheEntry<C, V>;
}

const LAZY_BODY: PropertyDescriptor = Object.freeze({ get: lazyBody, enumerable: true, configurable: false });
const LAZY_CARD: PropertyDescriptor = Object.freeze({ get: lazyCard, enumerable: true, configurable: false });

/** The fields of an entry, in {@link entryOf}'s order. */
const FIELDS = Object.keys(entryOf({} as CacheEntry)) as ReadonlyArray<keyof CacheEntry>;

/**
 * A copy of an entry with some fields changed. An entry holding its card lazily keeps doing so
 * (the same slot: the same bytes) unless `changes` replace the card.
 */
export function withFields<C, V extends string>(e: CacheEntry<C, V>, changes: Partial<CacheEntry<C, V>>): CacheEntry<C, V> {
  // New bytes or a new model: held as a plain field (the slot holds the old ones).
  const newCard = 'card' in changes || 'body' in changes;
  const slot = newCard ? undefined : modelSlot(e);
  // A copy of the fixed shape, then the changes written over its fields (a 304 changes three or
  // four): a fraction of a microsecond where a copy built field by field cost two (issue 43).
  const copy = slot !== undefined ? lazyEntryOf(e, slot) : plainEntryOf(e, 'card' in changes ? (changes.card as C) : e.card);
  for (const k in changes) if (Object.hasOwn(FIELD_SET, k)) (copy as unknown as Record<string, unknown>)[k] = changes[k as keyof CacheEntry<C, V>];
  return copy;
}

/** The entry's field names, as an object for `Object.hasOwn`. */
const FIELD_SET: Readonly<Record<string, boolean>> = Object.freeze(Object.fromEntries(FIELDS.map((k) => [k, true])));

/** What an entry keeps of an error. */
export function errorData(error: DiscoveryError): EntryError {
  return {
    code: error.code,
    message: error.message,
    ...(error.stage !== undefined && { stage: error.stage }),
    ...(error.status !== undefined && { status: error.status }),
    ...(error.problems.length > 0 && { problems: error.problems }),
  };
}

/**
 * The freshness lifetime the response's headers give, ms, before our bounds and jitter.
 * http-cache-semantics: maxAge() honours max-age, Expires against Date (so a skewed server clock
 * does not matter), the Last-Modified heuristic, no-cache and no-store; age() adds Age and the
 * time since receipt.
 */
export function serverLifetime(policy: CachePolicy, explicit: boolean, defaultTtlMs: number): number {
  return explicit ? Math.max(0, policy.maxAge() - policy.age()) * 1000 : defaultTtlMs;
}

/** Freshness lifetime in ms: a server's (or the default), within the cache's bounds, less its jitter. */
export function clampedLifetime(serverTtl: number, o: { minTtlMs: number; maxTtlMs: number; expiryJitter: number; random: Random }): number {
  const { minTtlMs, maxTtlMs, expiryJitter, random } = o;
  const clamped = Math.min(maxTtlMs, Math.max(minTtlMs, serverTtl));
  return clamped * (1 - expiryJitter * random());
}

/** The retry delay after `failures` consecutive failures: the one backoff rule (`rules/backoff.ts`) on the cache's settings. */
export function retryDelay(failures: number, o: { backoffBaseMs: number; backoffMaxMs: number; backoffJitter: number; random: Random }): number {
  return backoffDelay(failures, { baseMs: o.backoffBaseMs, maxMs: o.backoffMaxMs, jitter: o.backoffJitter, random: o.random });
}

/**
 * Recomputes `usable` for a stale entry: stale use is bounded (RFC 5861, must-revalidate), and
 * a `no-store` card is never served after a failed refresh (nothing of it was kept).
 */
export function usableEntry<C, V extends string>(entry: CacheEntry<C, V>, now: number, maxStaleMs: number): CacheEntry<C, V> {
  if (!entry.stale) return entry.usable ? entry : withFields(entry, { usable: true });
  const bound = entry.mustRevalidate ? 0 : Math.max(entry.staleIfErrorMs, maxStaleMs);
  const usable = !entry.noStore && now - entry.expiresAt <= bound;
  return usable === entry.usable ? entry : withFields(entry, { usable });
}
