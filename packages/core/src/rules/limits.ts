/**
 * Size limits, one rule in one place. The largest agent card accepted is ONE number: the guarded
 * connection's body cap (bytes received), the content check's byte limit and the JSON reader's
 * (bytes parsed) all derive from it, so a setting such as `cache.maxBodyBytes` or
 * `probe --max-bytes` cannot raise one of them and leave another at its default. The largest AI
 * Catalog document is the other size limit (`DEFAULT_CATALOG_LIMITS.maxBytes` publicly).
 */
import { DiscoveryError } from '../errors.js';

/** The largest agent card accepted when nothing says otherwise, in bytes (64 KiB; a typical card is ~1.3 KB). */
export const DEFAULT_MAX_CARD_BYTES = 65_536;

/**
 * The largest AI Catalog document accepted when nothing says otherwise, in bytes (1 MiB): the
 * reader's default, the configuration's `sources.aiCatalogs[].maxBytes`, and the catalog fetcher's
 * bound in the service, the inspector and `probe`. Public as `DEFAULT_CATALOG_LIMITS.maxBytes`.
 */
export const DEFAULT_MAX_CATALOG_BYTES = 1_048_576;

/** One card-size setting, as each stage that bounds a card takes it. Build it with {@link cardSizeLimit}. */
export interface CardSizeLimit {
  /** The setting itself, in bytes. */
  readonly maxBodyBytes: number;
  /** For the fetcher (`createCardFetcher`) and the inline-card table: bytes received. */
  readonly fetcher: { readonly maxBodyBytes: number };
  /** For the content check (`checkCard`, `parseAgentCard`) and its JSON reader (`parseSafeJson`): bytes parsed. */
  readonly check: { readonly maxBytes: number };
}

/**
 * Turns the one card-size setting into each stage's option. Default {@link DEFAULT_MAX_CARD_BYTES}.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` when `maxBodyBytes` is not a positive integer.
 * @example
 * const size = cardSizeLimit(config.cache.maxBodyBytes);
 * const fetcher = createCardFetcher({ policy, ...size.fetcher });
 * const cache = new CardCache({ fetcher, hostPolicy: policy, check: { ...size.check } });
 */
export function cardSizeLimit(maxBodyBytes: number = DEFAULT_MAX_CARD_BYTES): CardSizeLimit {
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `the largest card accepted must be a positive whole number of bytes, got ${String(maxBodyBytes)}`, { path: 'maxBodyBytes' });
  }
  return Object.freeze({ maxBodyBytes, fetcher: Object.freeze({ maxBodyBytes }), check: Object.freeze({ maxBytes: maxBodyBytes }) });
}
