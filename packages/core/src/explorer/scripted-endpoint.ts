/**
 * The explorer's network: a scripted card endpoint implementing {@link CardFetcher} in memory
 * (no sockets). It answers by the condition and the model time, and spends the round trip on
 * the virtual clock. Everything after it — freshness, 304 handling, validation, the interface
 * policy, stale-on-error, backoff — is the real `CardCache`.
 *
 * @module
 */
import type { VirtualClock } from '../clock/index.js';
import type { CardFetcher, FetchResult } from '../fetch/index.js';
import type { TraceCondition } from './inputs.js';
import { DiscoveryError } from '../errors.js';

/** The modeled card size: every card body (v1, v2, malformed) is exactly this many bytes. */
export const CARD_BYTES = 1_200;

/** Origin of the modeled agent. */
export const TRACE_ORIGIN = 'https://orders.example.com';

/** Base URL discovery asks for (the cache key). */
export const TRACE_BASE_URL = `${TRACE_ORIGIN}/`;

/** The reviewed tag the modeled agent's skill carries and the client needs. */
export const TRACE_TAG = 'orders';

/** The placeholder credential sent when credentials are supplied (simulated; never a real secret). */
export const SIMULATED_CREDENTIAL = 'Bearer simulated-explorer-credential';

/** Which card the endpoint publishes. */
export type CardVersionLabel = 'v1' | 'v2';

/** The card's own `version` field for each published version. */
export const CARD_VERSION_FIELD: Readonly<Record<CardVersionLabel, string>> = Object.freeze({ v1: '1.0.0', v2: '2.0.0' });

/** What the endpoint's behaviour depends on. */
export interface ScriptedEndpointOptions {
  clock: VirtualClock;
  condition: TraceCondition;
  /** Model ms at which v2 replaces v1; `null` = never. */
  publishV2AtMs: number | null;
  /** Model ms from which the condition applies (healthy before); `null` = from the start. */
  failFromMs: number | null;
  maxAgeSeconds: number;
  cardStreaming: boolean;
  /** Card v2 renames its skill (a breaking change) instead of rewording it. Default false. */
  v2Breaking?: boolean;
  rttMs: number;
  /** Called when the server sees a request and when the client receives the answer. */
  onExchange?: (exchange: ScriptedExchange) => void;
}

/** One request/response pair as the endpoint saw it. */
export interface ScriptedExchange {
  /** `request` when the server sees it (half the round trip), `response` when the client has it. */
  phase: 'request' | 'response';
  /** Model ms. */
  atMs: number;
  /** Request headers (lower-case). */
  requestHeaders: Readonly<Record<string, string>>;
  /** The condition in force when the server answered. */
  condition: TraceCondition;
  /** The card version the server was publishing. */
  published: CardVersionLabel;
  status: number;
  headers: Readonly<Record<string, string>>;
  bytes: number;
}

/**
 * The modeled agent card for a version, padded (in `description`) to exactly {@link CARD_BYTES}
 * bytes of JSON. v2 rewords its skill's description (a compatible change), or with `breaking`
 * renames the skill `order-status` → `order-tracking` (a skill removed: breaking).
 *
 * @example modeledCardBody('v1', { streaming: true, insecure: false }).byteLength // 1200
 */
export function modeledCardBody(version: CardVersionLabel, options: { streaming: boolean; insecure: boolean; breaking?: boolean }): Buffer {
  const renamed = version === 'v2' && options.breaking === true;
  const scheme = options.insecure ? 'http' : 'https';
  const card = (description: string): Record<string, unknown> => ({
    name: 'Orders Agent',
    description,
    version: CARD_VERSION_FIELD[version],
    supportedInterfaces: [{ url: `${scheme}://orders.example.com/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'Example Shop', url: 'https://shop.example.com' },
    capabilities: { streaming: options.streaming, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: renamed ? 'order-tracking' : 'order-status',
        name: renamed ? 'Order tracking' : 'Order status',
        description: version === 'v1' ? 'Reports where an order is.' : 'Reports where an order is, with carrier tracking.',
        tags: [TRACE_TAG],
        examples: ['Where is order 4411?'],
      },
    ],
  });
  const lead = `Answers questions about orders (card ${version}, modeled ${CARD_BYTES}-byte card).`;
  const bare = Buffer.byteLength(JSON.stringify(card(lead)));
  const filler = ' Padding.'.repeat(Math.ceil(CARD_BYTES / 9)).slice(0, Math.max(0, CARD_BYTES - bare));
  return Buffer.from(JSON.stringify(card(lead + filler)), 'utf8');
}

/** 1,200 bytes that are not JSON: the v1 card cut short (its closing brace replaced). */
export function malformedBody(streaming: boolean): Buffer {
  const body = Buffer.from(modeledCardBody('v1', { streaming, insecure: false }));
  body[body.length - 1] = 0x2c; // ','
  return body;
}

/**
 * A {@link CardFetcher} that answers from a script instead of the network. Each `fetch`
 * advances the virtual clock by the round trip; the server side is decided at the half-way point.
 */
export class ScriptedEndpoint implements CardFetcher {
  readonly #o: ScriptedEndpointOptions;
  #closed = false;

  constructor(options: ScriptedEndpointOptions) {
    this.#o = options;
  }

  /** The card version published at model time `atMs`. */
  publishedAt(atMs: number): CardVersionLabel {
    const v2 = this.#o.publishV2AtMs;
    return v2 !== null && atMs >= v2 ? 'v2' : 'v1';
  }

  /** The condition in force at model time `atMs` (healthy before `failFromMs`). */
  conditionAt(atMs: number): TraceCondition {
    const from = this.#o.failFromMs;
    return from !== null && atMs < from ? 'healthy' : this.#o.condition;
  }

  /**
   * The card body served for `version` under this endpoint's condition and card controls: the
   * malformed bytes, the `http://` card, or the card itself (for 404, 503 and 401 the card the
   * endpoint serves when it answers).
   */
  cardBody(version: CardVersionLabel): Buffer {
    const { condition, cardStreaming } = this.#o;
    if (condition === 'malformed') return malformedBody(cardStreaming);
    return modeledCardBody(version, { streaming: cardStreaming, insecure: condition === 'insecure', breaking: this.#o.v2Breaking === true });
  }

  async fetch(url: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<FetchResult> {
    if (this.#closed) throw new DiscoveryError('ERR_NOT_READY', 'the scripted endpoint is closed');
    const { clock, rttMs } = this.#o;
    const requestHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(init.headers ?? {})) requestHeaders[k.toLowerCase()] = v;
    const started = clock.now();
    await clock.advance(rttMs / 2);
    const serverAt = clock.now();
    const condition = this.conditionAt(serverAt);
    const published = this.publishedAt(serverAt);
    const answer = this.#answer(condition, published, requestHeaders);
    const exchange = { requestHeaders, condition, published, status: answer.status, headers: answer.headers, bytes: answer.body.byteLength };
    this.#o.onExchange?.({ phase: 'request', atMs: serverAt, ...exchange });
    await clock.advance(rttMs - rttMs / 2);
    this.#o.onExchange?.({ phase: 'response', atMs: clock.now(), ...exchange });
    return { url, status: answer.status, headers: { ...answer.headers }, body: answer.body, durationMs: clock.now() - started };
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #answer(
    condition: TraceCondition,
    published: CardVersionLabel,
    request: Readonly<Record<string, string>>,
  ): { status: number; headers: Record<string, string>; body: Buffer } {
    const date = new Date(this.#o.clock.wallNow()).toUTCString();
    const plain = (status: number, extra: Record<string, string> = {}) => ({
      status,
      headers: { date, 'content-length': '0', ...extra },
      body: Buffer.alloc(0),
    });
    switch (condition) {
      case 'not-found':
        return plain(404);
      case 'unavailable':
        return plain(503);
      case 'unauthorized':
        if (request.authorization === undefined) return plain(401, { 'www-authenticate': 'Bearer realm="agent-card"' });
        break;
      default:
        break;
    }
    const { maxAgeSeconds, cardStreaming } = this.#o;
    const cacheControl = `max-age=${maxAgeSeconds}`;
    if (condition === 'malformed') {
      const body = malformedBody(cardStreaming);
      return { status: 200, headers: { date, 'content-type': 'application/json', 'content-length': String(body.byteLength), 'cache-control': cacheControl }, body };
    }
    const insecure = condition === 'insecure';
    // A strong validator per representation: the version, and whether the interface is http.
    const renamed = published === 'v2' && this.#o.v2Breaking === true;
    const etag = `"card-${published}${renamed ? '-renamed' : ''}${insecure ? '-http' : ''}${cardStreaming ? '' : '-nostream'}"`;
    if (request['if-none-match'] !== undefined && request['if-none-match'].split(',').some((t) => t.trim() === etag)) {
      return { status: 304, headers: { date, etag, 'cache-control': cacheControl }, body: Buffer.alloc(0) };
    }
    const body = modeledCardBody(published, { streaming: cardStreaming, insecure, breaking: this.#o.v2Breaking === true });
    return {
      status: 200,
      headers: { date, 'content-type': 'application/json', 'content-length': String(body.byteLength), etag, 'cache-control': cacheControl },
      body,
    };
  }
}
