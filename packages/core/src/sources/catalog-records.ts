/**
 * From a chosen A2A card entry of an AI Catalog to the endpoint record the source proposes: the
 * entry's Trust Manifest judged (a refusal drops the entry, a pin is kept for the card cache), an
 * inline card turned into its RFC 8785 bytes under its `#card=` key, a card URL resolved against
 * its catalog, and the entry's third-party text kept in the metadata for display.
 *
 * @module
 */
import type { SignatureOptions } from '../card/index.js';
import { canonicalJson, sha256Hex } from '../card/index.js';
import type { AiCatalogEntry, ManifestVerdict } from '../catalog/index.js';
import { judgeTrustManifest } from '../catalog/index.js';
import type { Problem } from '../errors.js';
import type { HostPolicy } from '../fetch/index.js';
import { catalogCardUrl, inlineCardKey } from '../fetch/index.js';
import type { CardPin, InlineCard } from './catalog-artifacts.js';
import type { Candidate } from './catalog-walk.js';
import { impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import type { EndpointRecord } from './types.js';

/** What the records need of their source's settings. */
export interface RecordSettings {
  /** The source id, each record's `source`. */
  id: string;
  signatures: SignatureOptions;
  hostPolicy: HostPolicy;
}

/** Makes the records of one source's chosen entries, remembering what an unchanged catalog needs not redo. */
export class EntryRecords {
  readonly #s: RecordSettings;
  /**
   * Per entry object of a cached catalog (the same objects while the catalog does not change):
   * its Trust Manifest verdict (without an `expiresAt`) and its inline card, so an unchanged
   * catalog costs no signature check and no canonicalization.
   */
  readonly #verdicts = new WeakMap<AiCatalogEntry, ManifestVerdict>();
  readonly #inlineCards = new WeakMap<AiCatalogEntry, InlineCard>();

  constructor(settings: RecordSettings) {
    this.#s = settings;
  }

  /** The record of a chosen card entry (and its inline card and pin), or undefined with a problem. */
  async recordOf(c: Candidate, inline: Map<string, InlineCard>, pins: Map<string, CardPin>, problems: Problem[], now: number): Promise<EndpointRecord | undefined> {
    const { entry: e } = c;
    let verdict = this.#verdicts.get(e);
    if (verdict === undefined) {
      verdict = await judgeTrustManifest(e, { signatures: this.#s.signatures, now, catalogUrl: c.catalogUrl });
      if (e.trustManifest?.['expiresAt'] === undefined) this.#verdicts.set(e, verdict);
    }
    if (verdict.kind === 'refused') {
      problems.push({ path: `${c.catalogUrl} ${verdict.problem.path}`, message: `${verdict.problem.message}; the entry ${e.identifier} is refused` });
      return undefined;
    }
    if (verdict.kind !== 'pinned' && verdict.note !== undefined) problems.push({ path: `${c.catalogUrl} ${verdict.note.path}`, message: verdict.note.message });
    let baseUrl: string;
    if (e.data !== undefined) {
      if (typeof e.data !== 'object' || e.data === null || Array.isArray(e.data)) {
        problems.push({ path: `${c.where}.data`, message: `an inline A2A card must be a JSON object, got ${describe(e.data)}; skipped` });
        return undefined;
      }
      let card = this.#inlineCards.get(e);
      if (card === undefined) {
        const bytes = Buffer.from(canonicalJson(e.data), 'utf8');
        card = { bytes, sha256: sha256Hex(bytes), catalog: c.catalogUrl.split('#')[0]! };
        this.#inlineCards.set(e, card);
      }
      baseUrl = inlineCardKey(c.catalogUrl.split('#')[0]!, e.identifier);
      const key = this.#s.hostPolicy.normalizeEndpoint(baseUrl);
      if (inline.has(key)) {
        // Two identifiers that one key cannot tell apart (`a b` and `a%20b`): neither is trusted to be the other.
        problems.push({ path: c.where, message: `the inline card of ${e.identifier} has the same key as another entry's (${key}); skipped` });
        return undefined;
      }
      inline.set(key, card);
    } else {
      let resolved: string;
      try {
        resolved = new URL(e.url!, c.catalogUrl).href;
      } catch {
        problems.push({ path: `${c.where}.url`, message: `${describe(e.url)} is not a URL, even relative to ${c.catalogUrl}; skipped` });
        return undefined;
      }
      const why = impossibleUrl(resolved);
      if (why !== undefined) {
        problems.push({ path: `${c.where}.url`, message: `${why}; skipped` });
        return undefined;
      }
      baseUrl = catalogCardUrl(resolved);
    }
    if (verdict.kind === 'pinned') {
      try {
        pins.set(this.#s.hostPolicy.normalizeEndpoint(baseUrl), { sha256: verdict.pin.sha256, from: verdict.pin.from });
      } catch {
        // Not allowlisted: the resolver refuses the record, so there is nothing to pin.
      }
    }
    const metadata: Record<string, string> = { catalog: c.catalogUrl, entry: e.path, identifier: e.identifier };
    if (e.version !== undefined) metadata['version'] = e.version;
    if (e.displayName !== undefined) metadata['displayName'] = e.displayName;
    if (e.description !== undefined) metadata['description'] = e.description;
    if (e.tags !== undefined && e.tags.length > 0) metadata['tags'] = e.tags.join(',');
    if (verdict.kind === 'pinned') metadata['pinnedSha256'] = verdict.pin.sha256;
    return { name: trailingSegment(e.identifier), baseUrl, source: this.#s.id, metadata };
  }
}

/**
 * The trailing segment of an identifier, after its last `:`, `/` or `#` (the specification's
 * display-name fallback, extended to fragments: `https://c.example/.well-known/ai-catalog.json#billing`
 * → `billing`).
 */
export function trailingSegment(identifier: string): string {
  const trimmed = identifier.replace(/[:/#]+$/, '');
  const i = Math.max(trimmed.lastIndexOf(':'), trimmed.lastIndexOf('/'), trimmed.lastIndexOf('#'));
  const tail = trimmed.slice(i + 1);
  return tail === '' ? identifier : tail;
}
