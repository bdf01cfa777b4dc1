/**
 * Card identity. Two hashes identify a card:
 * - `rawSha256`: SHA-256 of the exact bytes received. The cheap "same bytes" test of the
 *   cache: equal bytes need no parsing.
 * - `canonicalSha256`: SHA-256 of the RFC 8785 (JCS) serialization of the normalized card
 *   without `signatures`. The card's identity in snapshot digests: stable across whitespace,
 *   key order, protocol dialect and re-signing with a rotated key.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AgentCardModel } from './model.js';
import { DiscoveryError } from '../errors.js';

/** Lower-case hex SHA-256 of bytes or a string (UTF-8). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** RFC 8785 canonical JSON of a value. The value must already be depth-checked. */
export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new DiscoveryError('ERR_CARD_INVALID', 'value has no JSON representation');
  return out;
}

/** The identity hash of a normalized card (see the module comment). */
export function canonicalCardSha256(card: AgentCardModel): string {
  const { signatures: _signatures, ...rest } = card;
  return sha256Hex(canonicalJson(rest));
}
