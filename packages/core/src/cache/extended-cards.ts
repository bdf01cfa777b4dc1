/**
 * Authenticated extended cards (A2A 1.0 §3.1.11 and §13.3: the call MUST be authenticated; the
 * client SHOULD use the extended card in place of the public one for that identity until the
 * card changes). With every successful refresh of a public card that advertises one (1.0
 * `capabilities.extendedAgentCard`; 0.3 `supportsAuthenticatedExtendedCard`, normalized to it),
 * and credentials for the origin of the interface a client would call, the cache asks the peer
 * for it through the same card fetcher, checks it like a public card, and keeps it on the entry
 * for that identity. {@link effectiveEntry} is the entry as matching, trees and snapshots see it.
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

const effective = new WeakMap<CacheEntry, CacheEntry>();

/**
 * The entry as matching, trees and snapshots use it: with a good extended card, the entry with
 * that card (and its bytes and digests) in place of the public one; otherwise the entry itself.
 * The same entry always gives the same object.
 *
 * @example effectiveEntry(entry).card.skills // the extended card's skills, when there is one
 */
export function effectiveEntry(entry: CacheEntry): CacheEntry {
  const ext = entry.extended?.accepted;
  if (ext === undefined || entry.card === ext.card) return entry;
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
