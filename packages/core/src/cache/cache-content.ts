/**
 * What a card cache holds and how it judges new bytes: the content interface (agent cards by
 * default, through every check `checkCard` runs; the AI Catalog source gives its own reader) and
 * the digests publishers pinned for some endpoints.
 *
 * @module
 */
import type { AgentCardModel, CardProtocolVersion, CheckCardOptions } from '../card/index.js';
import { checkCard, parseFailure } from '../card/index.js';
import type { DiscoveryError, Problem } from '../errors.js';
import type { HostPolicy } from '../fetch/index.js';

/** A document accepted by {@link CacheContent}: the fields an entry takes from it. */
export interface AcceptedContent<C, V extends string> {
  readonly ok: true;
  readonly card: C;
  readonly protocolVersion: V;
  readonly canonicalSha256: string;
  /** The body as text, when the reader decoded it (else the bytes are decoded as UTF-8). */
  readonly text?: string | undefined;
  readonly warnings: readonly Problem[];
  /** A signature verdict, when one ran. */
  readonly signature?: string | undefined;
  /** How many entries the document lists, for a document that lists some (an AI Catalog): a span attribute. */
  readonly entries?: number | undefined;
}

/** How a cache judges a new body: accept it, or refuse it with the error to report. */
export interface CacheContent<C, V extends string> {
  /** The name of the span of each refresh. Default `SPAN.cardFetch`. */
  readonly span?: string;
  check(body: Buffer, url: string): Promise<AcceptedContent<C, V> | { readonly ok: false; readonly error: DiscoveryError }>;
}

/** Expected SHA-256 digests per endpoint key. */
export interface DigestPins {
  /** The pin on an endpoint, or undefined. Called on every refresh, and on reads while any pin exists. */
  pinFor(key: string): { readonly sha256: string; readonly from: string } | undefined;
  /** How many pins there are (0: reads skip the check). */
  readonly size: number;
}

/** The default content: agent cards, through every check `checkCard` runs. */
export function cardContent(hostPolicy: HostPolicy, check: Omit<CheckCardOptions, 'hostPolicy' | 'sourceUrl'> | undefined): CacheContent<AgentCardModel, CardProtocolVersion> {
  return {
    async check(body, url) {
      const r = await checkCard(body, { ...check, hostPolicy, sourceUrl: url });
      if (!r.ok || r.card === undefined || r.protocolVersion === undefined || r.canonicalSha256 === undefined) return { ok: false, error: parseFailure(r, url) };
      return { ok: true, card: r.card, protocolVersion: r.protocolVersion, canonicalSha256: r.canonicalSha256, text: r.text, warnings: r.warnings, signature: r.signature?.status };
    },
  };
}
