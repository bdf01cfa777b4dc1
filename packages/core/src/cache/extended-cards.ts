/**
 * Authenticated extended cards (A2A 1.0 §3.1.11 and §13.3: the call MUST be authenticated; the
 * client SHOULD use the extended card in place of the public one for that identity until the
 * card changes). With every successful refresh of a public card that advertises one (1.0
 * `capabilities.extendedAgentCard`; 0.3 `supportsAuthenticatedExtendedCard`, normalized to it),
 * and credentials for the origin of the interface a client would call, the cache asks the peer
 * for it through the same card fetcher, checks it like a public card, and keeps it on the entry
 * for that identity. {@link effectiveEntry} is the entry as matching, trees and snapshots see it.
 *
 * The public card's identity wins: an extended card is reviewed against it
 * ({@link extendedCardChange}). One that renames the agent or changes the tags of a skill the
 * public card declares (a retag) is not adopted: matching, routing, local naming and snapshots
 * keep the public card, and the loop raises an `extended-card-differs` alert. One that only adds
 * or removes skills (the detail an authenticated caller may be given) is adopted, and the alert
 * names what it added and removed.
 *
 * @module
 */
import type { AgentCardModel, CardProtocolVersion, JsonLimits } from '../card/index.js';
import { preferredInterface, sha256Hex } from '../card/index.js';
import type { Clock } from '../clock/index.js';
import type { DiscoveryError } from '../errors.js';
import { toDiscoveryError } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { CardFetcher, HostPolicy, PeerCredentials } from '../fetch/index.js';
import { fetchExtendedCard } from '../fetch/extended-card.js';
import { originOf } from '../rules/origins.js';
import type { CacheContent } from './cache-content.js';
import { errorData, withFields } from './cache-entries.js';
import type { CacheEntry, ExtendedCardState } from './card-store.js';
import type { Limiter } from './limiter.js';

/** What the extended card calls need of the cache. */
export interface ExtendedCardsDeps {
  readonly credentials: PeerCredentials;
  readonly fetcher: CardFetcher;
  readonly hostPolicy: HostPolicy;
  readonly content: CacheContent<AgentCardModel, CardProtocolVersion>;
  readonly limiter: Limiter;
  readonly clock: Clock;
  readonly events: EventStream | undefined;
  readonly limits: JsonLimits | undefined;
}

/** Fetches and keeps the extended cards of one cache's entries. */
export class ExtendedCards {
  readonly #d: ExtendedCardsDeps;

  constructor(deps: ExtendedCardsDeps) {
    this.#d = deps;
  }

  /**
   * `entry` (just refreshed; its `extended` is the previous state) with its extended card brought
   * up to date: fetched when the card advertises one and credentials exist for the origin of the
   * interface called; dropped when it no longer does, or the identity changed.
   */
  async update(key: string, entry: CacheEntry): Promise<CacheEntry> {
    const prev = entry.extended;
    const drop = (): CacheEntry => (prev === undefined ? entry : withFields(entry, { extended: undefined }));
    if (entry.card.capabilities.extendedAgentCard !== true) return drop();
    const { credentials, hostPolicy } = this.#d;
    const chosen = preferredInterface(entry.card, hostPolicy);
    const origin = chosen === undefined ? undefined : originOf(chosen.url);
    if (chosen === undefined || origin === undefined) return drop();
    let headers: Record<string, string> | undefined;
    try {
      headers = await credentials.headers(origin);
    } catch (err) {
      return this.#failed(entry, prev, credentials.identity(origin) ?? prev?.identity ?? origin, chosen.url, toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: chosen.url, stage: 'fetch' }), `credentials provider failed for ${origin}`);
    }
    const identity = credentials.identity(origin);
    // No credentials for that origin: the public card is the card (nothing is asked).
    if (headers === undefined || identity === undefined) return drop();
    // An extended card belongs to the identity that obtained it: another identity starts afresh.
    const kept = prev?.identity === identity ? prev : undefined;
    let answer: Awaited<ReturnType<typeof fetchExtendedCard>>;
    try {
      answer = await this.#call(key, chosen, origin, headers);
    } catch (err) {
      return this.#failed(entry, kept, identity, chosen.url, toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url: chosen.url, stage: 'fetch' }));
    }
    let check: Awaited<ReturnType<ExtendedCardsDeps['content']['check']>>;
    try {
      check = await this.#d.content.check(answer.body, answer.url);
    } catch (err) {
      check = { ok: false, error: toDiscoveryError(err, 'ERR_CARD_INVALID', { url: answer.url, stage: 'parse' }) };
    }
    if (!check.ok) return this.#failed(entry, kept, identity, answer.url, check.error, 'the extended card was refused');
    const rawSha256 = sha256Hex(answer.body);
    // The same bytes keep the same card object (matching memoizes on it; the digest stays).
    const accepted =
      kept?.accepted !== undefined && kept.accepted.rawSha256 === rawSha256
        ? kept.accepted
        : Object.freeze({
            card: check.card,
            protocolVersion: check.protocolVersion,
            body: check.text ?? answer.body.toString('utf8'),
            rawSha256,
            canonicalSha256: check.canonicalSha256,
            warnings: check.warnings,
            signature: check.signature,
            fetchedAtWall: this.#d.clock.wallNow(),
          });
    return withFields(entry, { extended: Object.freeze({ identity, url: answer.url, accepted, failures: 0, lastError: undefined }) });
  }

  /**
   * One call. The 401 rule is the fetcher's (`fetch/guarded-connection.ts`, applied by the card
   * fetcher, which presents the same credentials): one retry with headers asked anew when the
   * provider says they may help, never a second rule of its own here.
   */
  async #call(key: string, chosen: NonNullable<ReturnType<typeof preferredInterface>>, origin: string, headers: Record<string, string>): ReturnType<typeof fetchExtendedCard> {
    const { fetcher, limiter, events, limits } = this.#d;
    return limiter.run(origin, () => {
      events?.emit({ type: 'card.fetch', endpoint: key, url: chosen.url, conditional: false });
      return fetchExtendedCard(fetcher, chosen, headers, limits);
    });
  }

  #failed(entry: CacheEntry, kept: ExtendedCardState | undefined, identity: string, url: string, error: DiscoveryError, what?: string): CacheEntry {
    const lastError = errorData(error);
    const state: ExtendedCardState = Object.freeze({
      identity,
      url,
      accepted: kept?.accepted,
      failures: (kept?.failures ?? 0) + 1,
      lastError: what === undefined || lastError.message.includes(url) ? lastError : { ...lastError, message: `${what} (${url}): ${lastError.message}` },
    });
    return withFields(entry, { extended: state });
  }
}

/**
 * How an authenticated extended card differs from the public card in what routing and naming
 * read: the agent's name, its skills (by id) and their tags. Lists are sorted. Names and tags are
 * the peer's text (display only).
 */
export interface ExtendedCardChange {
  /** The agent's name, when the extended card gives another (`from` the public card's). */
  readonly name?: { readonly from: string; readonly to: string };
  /** Tags of the extended card's skills that none of the public card's skills carry. */
  readonly tagsAdded: readonly string[];
  /** Tags of the public card's skills that none of the extended card's skills carry. */
  readonly tagsRemoved: readonly string[];
  /** Skill ids only the extended card declares. */
  readonly skillsAdded: readonly string[];
  /** Skill ids only the public card declares. */
  readonly skillsRemoved: readonly string[];
  /** Skill ids both cards declare with different tags (a retag). */
  readonly skillsRetagged: readonly string[];
  /**
   * Whether the extended card is used in place of the public one: false when it renames the agent
   * or retags a skill (the public card's identity wins); true when it only adds or removes skills.
   */
  readonly adopted: boolean;
}

const changes = new WeakMap<AgentCardModel, { readonly of: AgentCardModel; readonly change: ExtendedCardChange | undefined }>();

/**
 * How `entry`'s good extended card (if any) differs from its public card in name, skills and tags
 * (see {@link ExtendedCardChange}); undefined when there is no good extended card or it differs in
 * none of them. Computed once per pair of cards.
 *
 * @example extendedCardChange(entry)?.name // { from: 'Ledger Agent', to: 'Official Payments Agent' }
 */
export function extendedCardChange(entry: CacheEntry): ExtendedCardChange | undefined {
  const ext = entry.extended?.accepted;
  if (ext === undefined || ext.card === entry.card) return undefined;
  const memo = changes.get(ext.card);
  if (memo !== undefined && memo.of === entry.card) return memo.change;
  const change = compareCards(entry.card as AgentCardModel, ext.card);
  changes.set(ext.card, { of: entry.card as AgentCardModel, change });
  return change;
}

function compareCards(pub: AgentCardModel, ext: AgentCardModel): ExtendedCardChange | undefined {
  const tagsOf = (card: AgentCardModel): Set<string> => new Set(card.skills.flatMap((s) => s.tags));
  const skillTags = (card: AgentCardModel): Map<string, string> => new Map(card.skills.map((s) => [s.id, JSON.stringify([...new Set(s.tags)].sort())]));
  const minus = (a: Iterable<string>, b: { has(x: string): boolean }): string[] => [...new Set(a)].filter((x) => !b.has(x)).sort();
  const pubTags = tagsOf(pub);
  const extTags = tagsOf(ext);
  const pubSkills = skillTags(pub);
  const extSkills = skillTags(ext);
  const skillsRetagged = [...extSkills].filter(([id, tags]) => pubSkills.has(id) && pubSkills.get(id) !== tags).map(([id]) => id).sort();
  const renamed = pub.name !== ext.name;
  const change = {
    ...(renamed && { name: { from: pub.name, to: ext.name } }),
    tagsAdded: minus(extTags, pubTags),
    tagsRemoved: minus(pubTags, extTags),
    skillsAdded: minus(extSkills.keys(), pubSkills),
    skillsRemoved: minus(pubSkills.keys(), extSkills),
    skillsRetagged,
    adopted: !renamed && skillsRetagged.length === 0,
  };
  const same = !renamed && change.tagsAdded.length + change.tagsRemoved.length + change.skillsAdded.length + change.skillsRemoved.length + skillsRetagged.length === 0;
  return same ? undefined : Object.freeze(change);
}

/**
 * The sentence an operator reads about `change` (the alert's message, after the endpoint):
 * `name from "A" to "B"; tags added: x; skills added: y; not adopted: …`.
 */
export function describeExtendedCardChange(change: ExtendedCardChange): string {
  const list = (xs: readonly string[]): string => xs.map((x) => JSON.stringify(x)).join(', ');
  const parts: string[] = [];
  if (change.name !== undefined) parts.push(`name from ${JSON.stringify(change.name.from)} to ${JSON.stringify(change.name.to)}`);
  if (change.tagsAdded.length > 0) parts.push(`tags added: ${list(change.tagsAdded)}`);
  if (change.tagsRemoved.length > 0) parts.push(`tags removed: ${list(change.tagsRemoved)}`);
  if (change.skillsAdded.length > 0) parts.push(`skills added: ${list(change.skillsAdded)}`);
  if (change.skillsRemoved.length > 0) parts.push(`skills removed: ${list(change.skillsRemoved)}`);
  if (change.skillsRetagged.length > 0) parts.push(`skills retagged: ${list(change.skillsRetagged)}`);
  parts.push(
    change.adopted
      ? 'adopted: it only adds or removes skills'
      : `not adopted: the public card stays in use for routing, naming and snapshots (an extended card may add detail, never ${change.name !== undefined ? 'rename the agent' : 'retag its skills'})`,
  );
  return parts.join('; ');
}

const effective = new WeakMap<CacheEntry, CacheEntry>();

/**
 * The entry as matching, trees and snapshots use it: with a good extended card that keeps the
 * public card's identity (see {@link extendedCardChange}: no rename, no retag), the entry with
 * that card (and its bytes and digests) in place of the public one; otherwise the entry itself.
 * The same entry always gives the same object.
 *
 * @example effectiveEntry(entry).card.skills // the extended card's skills, when there is one
 */
export function effectiveEntry(entry: CacheEntry): CacheEntry {
  const ext = entry.extended?.accepted;
  if (ext === undefined || entry.card === ext.card) return entry;
  // A rename or a retag is not adopted: the public card's identity wins.
  if (extendedCardChange(entry)?.adopted === false) return entry;
  let e = effective.get(entry);
  if (e === undefined) {
    e = withFields(entry, {
      card: ext.card,
      protocolVersion: ext.protocolVersion,
      body: ext.body,
      rawSha256: ext.rawSha256,
      canonicalSha256: ext.canonicalSha256,
      warnings: ext.warnings,
      signature: ext.signature,
    });
    effective.set(entry, e);
  }
  return e;
}

/** Which card an entry (effective or not) stands for: the public card, or the extended card of an identity. */
export function cardKindOf(entry: CacheEntry): { readonly cardKind: 'public' } | { readonly cardKind: 'extended'; readonly identity: string } {
  const ext = entry.extended;
  return ext?.accepted !== undefined && ext.accepted.card === entry.card ? { cardKind: 'extended', identity: ext.identity } : PUBLIC;
}

const PUBLIC = Object.freeze({ cardKind: 'public' as const });
