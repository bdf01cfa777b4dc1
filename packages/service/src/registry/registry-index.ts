/**
 * The registry's index: one entry per admitted card (every endpoint whose card the cache holds,
 * validated and still usable — not only the snapshot's agents), shaped as an AI Catalog entry
 * (./entry.ts, the rule the service's own catalog follows) with `version`, `updatedAt` and what we
 * verified under `extensions["dev.a2a-discovery.verified"]`.
 *
 * - Identifiers: a snapshot agent's as the AI Catalog gives it; an admitted card outside the
 *   snapshot keeps the `urn:air:` identifier a catalog source gave it (its proposal's
 *   `identifier`; a `urn:ai:` one in its `urn:air:` form), else
 *   `urn:air:<endpoint host>:agent:<the name its first source gave it>` (entry.ts `ownIdentifier`)
 *   — the identifier it gets when it enters the snapshot under that name. `urn:ai:x` and
 *   `urn:air:x` find one entry ({@link RegistryIndex.get}).
 * - Kept current incrementally ({@link RegistryIndex.sync}, run after the loop's events): the
 *   endpoint views are compared with each entry's fingerprint; only a changed entry is rebuilt
 *   and re-indexed, a new one added, a removed one discarded and remembered as a tombstone for
 *   the change feed (bounded by count and age). Every change takes the next sequence number.
 * - Bounded: at most `maxEntries` entries (snapshot agents first, then by endpoint); the rest are
 *   left out and counted.
 * - Text ranking by minisearch (fields and boosts in {@link SEARCH_BOOSTS}).
 */
import { randomBytes } from 'node:crypto';
import MiniSearch from 'minisearch';
import { canonicalIdentifier } from 'a2a-discovery';
import { AIR_URN_PREFIX, Pacer, VERIFIED_EXTENSION, airIdentifier, compareCodeUnits } from 'a2a-discovery/internal';
import type { ArdSearchResult, ArdVerified } from 'a2a-discovery/internal';
import type { AgentCardModel, CardCache, DiscoveryLoop, EndpointStatus, EventStream } from 'a2a-discovery';
import { cardEntry, ownIdentifier, snapshotEntries } from './entry.js';
import type { CatalogEntry } from './entry.js';
import type { ParsedFilter } from './filter.js';
import { matchesFilter } from './filter.js';

/**
 * The fields text search looks in, and their boosts: names weigh most, then tags, skills, the
 * description and the provider. `name` holds the entry's displayName and the card's name;
 * `description` the entry's and the card's; `skills` the skills' names and descriptions; `tags`
 * the entry's and the skills' tags; `provider` the card's `provider.organization`.
 */
const SEARCH_BOOSTS: Readonly<Record<'name' | 'tags' | 'skills' | 'description' | 'provider', number>> = { name: 3, tags: 2, skills: 1.5, description: 1, provider: 1 };

/**
 * Terms this long or longer also match words one edit away (a typo); shorter ones match as
 * prefixes only. Fuzzy matching of every term costs about ten times the search (bench/search.ts).
 */
const FUZZY_MIN_LENGTH = 8;

/**
 * Terms this long or longer also match as prefixes (`bill` finds `billing`); shorter ones match
 * whole words only. A one- or two-letter prefix expands to a large share of the vocabulary: 256
 * one-letter terms cost seconds of CPU over 5,000 cards (issue 38; bench/search.ts "worst").
 */
const PREFIX_MIN_LENGTH = 3;

/**
 * Milliseconds of registry work between two turns of the event loop. Shorter than the catalog's
 * slices: several searches and explores may run at once, and a turn of the loop runs one slice of
 * each before it reads the sockets again (`/healthz` waits for the sum).
 */
export const REGISTRY_SLICE_MS = 2;

/** Events within this many ms are one sync. */
const SYNC_DELAY_MS = 250;

/** One indexed entry. */
interface Row {
  readonly key: string;
  readonly entry: ArdSearchResult;
  /** The card the entry was built from: what text search reads besides the entry. */
  readonly card: AgentCardModel;
  /** The entry plus the derived `publisher`: what filters read. */
  readonly view: Readonly<Record<string, unknown>>;
  readonly fingerprint: string;
  readonly seq: number;
  readonly createdAt: number;
  readonly changedAt: number;
  readonly canonicalSha256: string;
  readonly cardChangedAt: number;
}

/** A removal the change feed remembers. */
interface Tombstone {
  readonly entry: ArdSearchResult;
  readonly seq: number;
  readonly at: number;
}

/** Bounds of {@link RegistryIndex.match}: candidates considered, and what past them. */
export interface MatchBounds {
  readonly maxCandidates: number;
  readonly overflow: 'best' | 'refuse';
}

/** What {@link RegistryIndex.match} found: the hits, and the candidates they came from (`cut`: more than `maxCandidates`, the best kept); or, with `refuse`, how many there were. */
export type MatchResult = { readonly ok: true; readonly hits: { identifier: string; score?: number }[]; readonly candidates: number; readonly cut: boolean } | { readonly ok: false; readonly candidates: number };

/**
 * The distinct terms of a search text, as the index reads them (the library's tokenizer, lower
 * case), in order of first appearance: what `server.registry.maxQueryTerms` counts.
 */
export function queryTerms(text: string): string[] {
  return [...new Set(TOKENIZE(text).map((t) => t.toLowerCase()).filter((t) => t !== ''))];
}

const TOKENIZE = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/** One entry of the change feed, in change order. */
export interface Change {
  readonly seq: number;
  readonly entry: ArdSearchResult;
}

/** Inputs of {@link RegistryIndex}. */
export interface RegistryIndexOptions {
  readonly loop: Pick<DiscoveryLoop, 'status' | 'current'>;
  readonly cache: Pick<CardCache, 'peek'>;
  /** Entries kept; the rest are left out. */
  readonly maxEntries: number;
  /** Removals remembered, by count and by age (ms). */
  readonly maxTombstones: number;
  readonly tombstoneTtlMs: number;
  /** Wall clock, epoch ms. Default `Date.now`. */
  readonly now?: () => number;
}

/** The index. */
export class RegistryIndex {
  readonly #o: RegistryIndexOptions;
  readonly #now: () => number;
  /** Names this index's cursors: a cursor from another instance (or before a restart) is expired. */
  readonly instance = randomBytes(9).toString('base64url');
  /** When this index started: removals before it are unknown to it. */
  readonly startedAt: number;
  readonly #rows = new Map<string, Row>();
  readonly #tombstones = new Map<string, Tombstone>();
  readonly #search = new MiniSearch<{ id: string; name: string; description: string; skills: string; tags: string; provider: string }>({
    fields: ['name', 'description', 'skills', 'tags', 'provider'],
    searchOptions: { boost: SEARCH_BOOSTS, prefix: (term) => term.length >= PREFIX_MIN_LENGTH, fuzzy: (term) => (term.length >= FUZZY_MIN_LENGTH ? 1 : false), combineWith: 'OR' },
  });
  #seq = 0;
  /** The highest sequence number a dropped tombstone had, and its time: a cursor at or before them has missed a removal. */
  #horizonSeq = 0;
  #horizonAt = 0;
  #leftOut = 0;
  #byIdentifier: Row[] | undefined;
  #dirty = true;
  #running: Promise<void> | undefined;
  #again = false;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(options: RegistryIndexOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.startedAt = this.#now();
  }

  /** The sequence number of the latest change: the generation of the index. */
  get generation(): number {
    return this.#seq;
  }

  /** Entries held, admitted cards left out by `maxEntries`, tombstones held. */
  get stats(): { entries: number; leftOut: number; tombstones: number } {
    return { entries: this.#rows.size, leftOut: this.#leftOut, tombstones: this.#tombstones.size };
  }

  /** Marks the index stale after the loop's events and publications, and brings it up to date soon after. */
  follow(events: EventStream | undefined, loop: Pick<DiscoveryLoop, 'subscribe'>): void {
    let timer: NodeJS.Timeout | undefined;
    const touch = (): void => {
      this.#dirty = true;
      // A burst of events is one sync, shortly after; a request in between brings the index up to date itself.
      timer ??= setTimeout(() => {
        timer = undefined;
        void this.fresh().catch(() => undefined);
      }, SYNC_DELAY_MS).unref();
    };
    this.#unsubscribe.push(loop.subscribe(touch), () => clearTimeout(timer));
    if (events) {
      this.#unsubscribe.push(
        events.subscribe((e) => {
          // A card result matters when the card's content or usability may have changed (not a hit, a 304 or the same body).
          if (e.type === 'card.result' ? e.outcome === 'changed' || e.outcome === 'stale' || e.outcome === 'invalid' : e.type === 'health.changed' || e.type === 'match.verdict' || e.type.startsWith('endpoint.')) touch();
        }),
      );
    }
  }

  /** Stops following the loop. */
  close(): void {
    for (const u of this.#unsubscribe.splice(0)) u();
  }

  /** Up to date with the loop: syncs when something changed since the last sync. */
  async fresh(): Promise<void> {
    if (this.#dirty) await this.sync();
    else if (this.#running) await this.#running;
  }

  /** Brings the index up to date (one sync at a time; a call during one runs another after it). */
  sync(): Promise<void> {
    // What marked the index stale is read by the pass this call starts or queues.
    this.#dirty = false;
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = (async () => {
      try {
        do {
          this.#again = false;
          await this.#sync();
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    this.#running = run;
    return run;
  }

  async #sync(): Promise<void> {
    const { loop, cache, maxEntries } = this.#o;
    const statuses = await loop.status();
    const snapshot = loop.current();
    const now = this.#now();
    const byKey = new Map<string, EndpointStatus>();
    for (const s of statuses) byKey.set(s.baseUrl, s);

    type Candidate = { key: string; identifier: string; status: EndpointStatus | undefined; fingerprint: string; build: (prev: Row | undefined) => Promise<Row | undefined> };
    const candidates: Candidate[] = [];
    const used = new Set<string>();
    const inSnapshot = new Set<string>();
    // The whole pass in slices (a fingerprint per endpoint is tens of milliseconds at 10,000).
    const pacer = new Pacer(REGISTRY_SLICE_MS);
    for (const { agent, entry } of snapshot ? snapshotEntries(snapshot) : []) {
      if (pacer.due) await pacer.tick();
      const status = byKey.get(agent.baseUrl);
      inSnapshot.add(agent.baseUrl);
      used.add(entry.identifier);
      const fingerprint = JSON.stringify([entry, agent.protocolVersion, agent.cardKind ?? 'public', status ? statusPrint(status) : null]);
      candidates.push({
        key: agent.baseUrl,
        identifier: entry.identifier,
        status,
        fingerprint,
        build: async (prev) => {
          const cached = await cache.peek(agent.baseUrl);
          return this.#row(prev, entry, agent.baseUrl, agent.card, agent.canonicalSha256, status, { inSnapshot: true, localName: agent.localName, signature: cached?.signature, protocolVersion: agent.protocolVersion, cardKind: agent.cardKind ?? 'public', fetchedAt: cached?.fetchedAtWall }, fingerprint, now);
        },
      });
    }
    const others = statuses.filter((s) => !inSnapshot.has(s.baseUrl) && s.admitted && s.cache?.usable === true && s.state.verdict !== 'gone').sort((a, b) => compareCodeUnits(a.baseUrl, b.baseUrl));
    for (const status of others) {
      if (pacer.due) await pacer.tick();
      const key = status.baseUrl;
      // A proposal's `urn:ai:` identifier is its `urn:air:` one (catalog/identifiers.ts).
      const given = status.proposals.map((p) => (p.metadata['identifier'] === undefined ? undefined : canonicalIdentifier(p.metadata['identifier']))).find((id) => id !== undefined && id.startsWith(AIR_URN_PREFIX) && !used.has(id));
      let identifier = given ?? ownIdentifier(key, status.names[0] ?? 'agent');
      if (used.has(identifier)) identifier = airIdentifier(key, 'endpoint', status.names.join('+'));
      if (used.has(identifier)) continue;
      used.add(identifier);
      const fingerprint = JSON.stringify([identifier, status.cache?.canonicalSha256, status.cache?.rawSha256, status.cache?.cardUrl, statusPrint(status)]);
      candidates.push({
        key,
        identifier,
        status,
        fingerprint,
        build: async (prev) => {
          const cached = await cache.peek(key);
          if (!cached) return undefined;
          const entry = cardEntry(identifier, key, cached.cardUrl, cached);
          return this.#row(prev, entry, key, cached.card, cached.canonicalSha256, status, { inSnapshot: false, signature: cached.signature, protocolVersion: cached.protocolVersion, cardKind: status.cache?.cardKind ?? 'public', fetchedAt: cached.fetchedAtWall }, fingerprint, now);
        },
      });
    }
    this.#leftOut = Math.max(0, candidates.length - maxEntries);
    const kept = candidates.slice(0, maxEntries);

    const present = new Set<string>();
    for (const c of kept) {
      await pacer.tick();
      const prev = this.#rows.get(c.identifier);
      if (prev !== undefined && prev.fingerprint === c.fingerprint) {
        present.add(c.identifier);
        continue;
      }
      const row = await c.build(prev);
      if (row === undefined) continue;
      present.add(c.identifier);
      this.#put(row);
    }
    for (const [identifier, row] of this.#rows) if (!present.has(identifier)) this.#remove(row, now);
    this.#prune(now);
  }

  #row(
    prev: Row | undefined,
    base: CatalogEntry,
    key: string,
    card: AgentCardModel,
    canonicalSha256: string,
    status: EndpointStatus | undefined,
    v: { inSnapshot: boolean; localName?: string; signature: string | undefined; protocolVersion: string; cardKind: string; fetchedAt: number | undefined },
    fingerprint: string,
    now: number,
  ): Row {
    const cardChangedAt = prev === undefined ? (v.fetchedAt ?? now) : prev.canonicalSha256 === canonicalSha256 ? prev.cardChangedAt : now;
    const seq = ++this.#seq;
    const inputModes = [...new Set([...card.defaultInputModes, ...card.skills.flatMap((s) => s.inputModes ?? [])])];
    const outputModes = [...new Set([...card.defaultOutputModes, ...card.skills.flatMap((s) => s.outputModes ?? [])])];
    const verified: ArdVerified = {
      inSnapshot: v.inSnapshot,
      ...(v.localName !== undefined && { localName: v.localName }),
      ...(status && { verdict: status.state.verdict }),
      ...(status && reasonOf(status) !== undefined && { reason: reasonOf(status) }),
      ...(status?.state.cause !== undefined && { cause: status.state.cause }),
      ...(status?.health && { health: status.health.state }),
      signature: v.signature ?? 'unchecked',
      protocolVersion: v.protocolVersion,
      cardKind: v.cardKind,
      provenance: (status?.proposals ?? []).map((p) => ({ source: p.source, name: p.name })),
      endpoint: key,
      cardChangedAt: new Date(cardChangedAt).toISOString(),
      inputModes,
      outputModes,
      ...(card.provider?.organization !== undefined && { provider: card.provider.organization }),
    };
    const entry: ArdSearchResult = {
      ...base,
      version: card.version,
      updatedAt: new Date(now).toISOString(),
      extensions: { ...base.extensions, [VERIFIED_EXTENSION]: verified },
    };
    return { key, card, entry, view: { ...entry, publisher: publisherOf(base.identifier, key) }, fingerprint, seq, createdAt: prev?.createdAt ?? now, changedAt: now, canonicalSha256, cardChangedAt };
  }

  #put(row: Row): void {
    const id = row.entry.identifier;
    const had = this.#rows.has(id);
    this.#rows.set(id, row);
    this.#tombstones.delete(id);
    const doc = searchDoc(row);
    if (had) this.#search.replace(doc);
    else {
      this.#search.add(doc);
      this.#byIdentifier = undefined;
    }
  }

  #remove(row: Row, now: number): void {
    const id = row.entry.identifier;
    this.#rows.delete(id);
    this.#search.discard(id);
    this.#byIdentifier = undefined;
    const seq = ++this.#seq;
    const e = row.entry;
    this.#tombstones.set(id, { seq, at: now, entry: { identifier: id, displayName: e.displayName, type: e.type, ...(e.url !== undefined && { url: e.url }), updatedAt: new Date(now).toISOString(), status: 'deleted' } });
  }

  /** Drops tombstones past their count or age; the change feed's horizon moves with them. */
  #prune(now: number): void {
    const { maxTombstones, tombstoneTtlMs } = this.#o;
    for (const [id, t] of this.#tombstones) {
      if (this.#tombstones.size <= maxTombstones && t.at >= now - tombstoneTtlMs) break;
      this.#tombstones.delete(id);
      this.#horizonSeq = Math.max(this.#horizonSeq, t.seq);
      this.#horizonAt = Math.max(this.#horizonAt, t.at);
    }
  }

  /** The entry of `identifier` (`urn:ai:x` is `urn:air:x`). */
  get(identifier: string): ArdSearchResult | undefined {
    return this.#rows.get(canonicalIdentifier(identifier))?.entry;
  }

  /**
   * The entries matching `text` (when given) and `filter`, best first: by score, then by
   * identifier; `score` is the library's score scaled to 0–100 against the best match of this
   * query (relevance only, never trust). Without text: every entry that passes the filter, by
   * identifier, without a score.
   *
   * Bounded and yielding (issue 38): the text is searched one distinct term at a time
   * ({@link queryTerms}; the caller bounds their number), with a turn of the event loop between
   * slices of work, and the scores combined as the library combines an `OR` query (the sum of the
   * terms' scores times the number of terms that matched). The candidates (the text's hits, or
   * every entry without text) are at most `maxCandidates`: past it, `best` keeps the best ones
   * (`cut`), `refuse` answers `{ ok: false }` (a facet count over a part would be wrong). The
   * filter is then read candidate by candidate, yielding likewise.
   */
  async match(text: string | undefined, filter: ParsedFilter, bounds: MatchBounds): Promise<MatchResult> {
    const pacer = new Pacer(REGISTRY_SLICE_MS);
    const terms = text === undefined ? [] : queryTerms(text);
    let candidates: { identifier: string; score?: number }[];
    let total: number;
    if (terms.length === 0) {
      const rows = this.#sorted();
      total = rows.length;
      if (total > bounds.maxCandidates && bounds.overflow === 'refuse') return { ok: false, candidates: total };
      candidates = rows.slice(0, bounds.maxCandidates).map((r) => ({ identifier: r.entry.identifier }));
    } else {
      const scored = new Map<string, { sum: number; terms: number }>();
      for (const term of terms) {
        for (const h of this.#search.search(term)) {
          const id = h.id as string;
          // One term's score is the library's score of that term alone (its quality factor is 1).
          const prev = scored.get(id);
          if (prev === undefined) scored.set(id, { sum: h.score, terms: 1 });
          else {
            prev.sum += h.score;
            prev.terms++;
          }
        }
        await pacer.tick();
      }
      total = scored.size;
      if (total > bounds.maxCandidates && bounds.overflow === 'refuse') return { ok: false, candidates: total };
      candidates = [];
      for (const [identifier, v] of scored) candidates.push({ identifier, score: v.sum * v.terms });
      await pacer.tick();
      candidates.sort((a, b) => b.score! - a.score! || compareCodeUnits(a.identifier, b.identifier));
      await pacer.tick();
      if (candidates.length > bounds.maxCandidates) candidates.length = bounds.maxCandidates;
    }
    const hits: { identifier: string; score?: number }[] = [];
    for (const c of candidates) {
      await pacer.tick();
      const row = this.#rows.get(c.identifier);
      if (row !== undefined && matchesFilter(row.view, filter)) hits.push(c);
    }
    const best = hits[0]?.score ?? 1;
    const scaled = terms.length === 0 ? hits : hits.map((h) => ({ identifier: h.identifier, score: Math.max(1, Math.round((100 * h.score!) / best)) }));
    return { ok: true, hits: scaled, candidates: total, cut: total > bounds.maxCandidates };
  }

  /** The entries whose filter view passes `keep`, by identifier, after `afterIdentifier`. */
  async list(keep: (view: Readonly<Record<string, unknown>>, createdAt: number, changedAt: number) => boolean, afterIdentifier: string | undefined, limit: number): Promise<{ entries: ArdSearchResult[]; more: boolean }> {
    const rows = this.#sorted();
    let lo = 0;
    if (afterIdentifier !== undefined) {
      let hi = rows.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (rows[mid]!.entry.identifier <= afterIdentifier) lo = mid + 1;
        else hi = mid;
      }
    }
    const entries: ArdSearchResult[] = [];
    const pacer = new Pacer(REGISTRY_SLICE_MS);
    for (let i = lo; i < rows.length; i++) {
      await pacer.tick();
      const r = rows[i]!;
      if (!keep(r.view, r.createdAt, r.changedAt)) continue;
      if (entries.length === limit) return { entries, more: true };
      entries.push(r.entry);
    }
    return { entries, more: false };
  }

  /** The entry's filter view (for facets). */
  view(identifier: string): Readonly<Record<string, unknown>> | undefined {
    return this.#rows.get(identifier)?.view;
  }

  /**
   * The change feed after sequence number `afterSeq` (or after the wall time `afterTime`), in
   * change order: entries changed since and tombstones of removals. Undefined when the cursor is
   * older than the tombstones kept (or than this index): the caller must read everything again.
   */
  async changes(since: { afterSeq: number } | { afterTime: number }, keep: (view: Readonly<Record<string, unknown>>) => boolean): Promise<Change[] | undefined> {
    this.#prune(this.#now());
    if ('afterSeq' in since ? since.afterSeq < this.#horizonSeq : since.afterTime < this.startedAt || since.afterTime < this.#horizonAt) return undefined;
    const out: Change[] = [];
    const after = (seq: number, at: number): boolean => ('afterSeq' in since ? seq > since.afterSeq : at > since.afterTime);
    const pacer = new Pacer(REGISTRY_SLICE_MS);
    // A snapshot of the rows: a sync may run while this yields.
    for (const r of [...this.#rows.values()]) {
      await pacer.tick();
      if (after(r.seq, r.changedAt) && keep(r.view)) out.push({ seq: r.seq, entry: r.entry });
    }
    for (const t of [...this.#tombstones.values()]) if (after(t.seq, t.at) && keep(t.entry)) out.push({ seq: t.seq, entry: t.entry });
    return out.sort((a, b) => a.seq - b.seq);
  }

  #sorted(): Row[] {
    this.#byIdentifier ??= [...this.#rows.values()].sort((a, b) => (a.entry.identifier < b.entry.identifier ? -1 : 1));
    return this.#byIdentifier;
  }
}

/** What of an endpoint's status its entry shows: a change in it re-indexes the entry. */
function statusPrint(s: EndpointStatus): unknown[] {
  return [s.state.verdict, reasonOf(s), s.state.cause, s.health?.state, s.sources, s.proposals.map((p) => [p.source, p.name]), s.cache?.cardKind, s.cache?.protocolVersion];
}

/**
 * The verdict's reason, except a selected agent's (`in snapshot v7`: it would change every entry
 * at every publication; `inSnapshot` and `localName` say it).
 */
function reasonOf(s: EndpointStatus): string | undefined {
  return s.state.verdict === 'selected' ? undefined : s.state.reason;
}

/** ARD §7.1: the `<publisher>` of a `urn:air:<publisher>:…` identifier; for our own identifiers, the endpoint's host. */
function publisherOf(identifier: string, key: string): string | undefined {
  const urn = /^urn:air:([^:]+):/i.exec(identifier);
  if (urn) return urn[1]!.toLowerCase();
  try {
    return new URL(key).hostname;
  } catch {
    return undefined;
  }
}

function searchDoc(row: Row): { id: string; name: string; description: string; skills: string; tags: string; provider: string } {
  const e = row.entry;
  const card = row.card;
  return {
    id: e.identifier,
    name: e.displayName === card.name ? card.name : `${e.displayName} ${card.name}`,
    description: e.description === card.description ? card.description : `${e.description ?? ''} ${card.description}`,
    skills: card.skills.map((s) => `${s.name} ${s.description}`).join(' '),
    tags: [...(e.tags ?? []), ...card.skills.flatMap((s) => s.tags)].join(' '),
    provider: card.provider?.organization ?? '',
  };
}
