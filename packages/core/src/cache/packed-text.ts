/**
 * The bytes of a cached card, held packed: raw deflate with a preset dictionary of the words every
 * A2A card repeats (its field names, protocol bindings, media types), kept as a one-byte string
 * (one heap object, no ArrayBuffer around it). An agent card's JSON text is most of what the cache
 * holds per endpoint (about half of 2.5 KB at 1,000 cards); packed it takes a quarter to a half of
 * that. Unpacking costs a few microseconds per kilobyte, paid only by whoever reads the text itself
 * (the model built again after the collector took it, an API that returns the bytes, a snapshot
 * written to the store), never by a fresh hit, a revalidation or a discovery cycle.
 *
 * The packed form lives only in this process's memory; nothing stores or sends it, so the
 * dictionary may change between versions.
 *
 * @module
 */
import { deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';

/**
 * What the deflater finds before each card: the names and values A2A cards (0.2, 0.3, 1.0)
 * share, the most frequent last (deflate reaches the end of a dictionary with the shortest
 * distances). Nothing in it comes from any one card.
 */
const DICTIONARY = Buffer.from(
  [
    '"signatures":[{"protected":"","signature":"","header":{"kid":""}}]',
    '"securitySchemes":{"bearer":{"type":"http","scheme":"bearer","bearerFormat":"JWT"},"oauth2":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://","scopes":{}}}},"openIdConnect":{"type":"openIdConnect","openIdConnectUrl":"https://"},"apiKey":{"type":"apiKey","in":"header","name":"X-API-Key"}}',
    '"securityRequirements":[{"schemes":{}}],"security":[{}]',
    '"supportsAuthenticatedExtendedCard":true,"supportsExtendedAgentCard":true,"extendedAgentCard":true',
    '"documentationUrl":"https://","iconUrl":"https://","extensions":[{"uri":"","description":"","required":false,"params":{}}]',
    '"additionalInterfaces":[{"url":"http://","transport":"GRPC"},{"url":"https://","transport":"HTTP+JSON"}]',
    '"supportedInterfaces":[{"url":"https://","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}]',
    '"preferredTransport":"JSONRPC","protocolVersion":"0.3.0"',
    '"capabilities":{"streaming":true,"pushNotifications":false,"stateTransitionHistory":false,"extendedAgentCard":false}',
    '"defaultInputModes":["text/plain","application/json"],"defaultOutputModes":["text/plain","application/json","text"]',
    '"inputModes":["text/plain"],"outputModes":["application/json"]',
    '"provider":{"organization":"","url":"https://"},"version":"1.0.0"',
    '"skills":[{"id":"","name":"","description":"","tags":["",""],"examples":[""]}]',
    '{"name":"","description":"","url":"https://',
  ].join(''),
  'latin1',
);

/** Text shorter than this is held as it is: a packed copy would save too little to matter. */
const MIN_PACKED_LENGTH = 256;

/**
 * A card's text as the cache holds it: packed when that saves a fifth or more of its bytes
 * (`size` its length in UTF-8 bytes, `held` the deflated bytes as a one-byte string), else the
 * text itself (`size` 0).
 */
export interface HeldText {
  readonly held: string;
  readonly size: number;
}

/**
 * zlib's options for text of `size` bytes: its output buffer sized for the answer (zlib's default,
 * 16 KB a call, is a new ArrayBuffer each time; under 4 KB Node takes it from its buffer pool).
 */
function options(size: number): ZlibOptions {
  return { dictionary: DICTIONARY, chunkSize: Math.max(64, size + 1) };
}

/** `text` as held: packed when that pays (see {@link HeldText}). */
export function holdText(text: string): HeldText {
  if (text.length < MIN_PACKED_LENGTH) return { held: text, size: 0 };
  const bytes = Buffer.from(text, 'utf8');
  const packed = deflateRawSync(bytes, options(bytes.length));
  return packed.length <= bytes.length * 0.8 ? { held: packed.toString('latin1'), size: bytes.length } : { held: text, size: 0 };
}

/** The text `holdText` was given, exactly. */
export function heldText(h: HeldText): string {
  return h.size === 0 ? h.held : inflateRawSync(Buffer.from(h.held, 'latin1'), options(h.size)).toString('utf8');
}
