/**
 * The authenticated extended card request (A2A 1.0 §3.1.11, §9.4.x, §11.3; 0.3 Appendix A.2.2):
 * one call on the interface a client here would call, through the card fetcher (the guarded
 * connection: policy, address checks, no redirects, body and time bounds, credentials for the
 * exact origin only). The answer is unwrapped to the card's JSON text; judging it is the cache's
 * business (it runs the public card's checks).
 *
 * | interface | request |
 * |---|---|
 * | 1.x JSONRPC | `POST {url}` `{"method":"GetExtendedAgentCard","params":{"tenant"?}}`, `A2A-Version: 1.0` |
 * | 1.x HTTP+JSON | `GET {url}[/{tenant}]/extendedAgentCard`, `A2A-Version: 1.0` |
 * | 0.3 JSONRPC | `POST {url}` `{"method":"agent/getAuthenticatedExtendedCard"}`, `A2A-Version: 0.3` |
 * | 0.3 HTTP+JSON | `GET {url}/v1/card`, `A2A-Version: 0.3` |
 *
 * With an OpenTelemetry SDK installed, the call is an A2A client span `GetExtendedAgentCard`
 * (GenAI A2A conventions: `a2a.method.name`, `a2a.protocol.version`, `a2a.tenant`, `server.*` of
 * the interface URL; `error.type` the HTTP status or the JSON-RPC error code), and the request
 * carries its W3C trace context unless the given headers already name a `traceparent`.
 *
 * @module
 */
import type { ChosenInterface } from '../card/interface-policy.js';
import type { JsonLimits } from '../card/safe-json.js';
import { parseSafeJson } from '../card/safe-json.js';
import { DiscoveryError } from '../errors.js';
import { A2A_METHOD, ATTR, serverOf } from '../telemetry/attributes.js';
import { injectTraceContext, withSpan } from '../telemetry/otel.js';
import type { CardFetcher } from './card-fetcher.js';

/** The extended card as the peer answered it: the card's JSON text (the JSON-RPC `result`, or the REST body). */
interface ExtendedCardAnswer {
  /** The URL called. */
  readonly url: string;
  /** What was asked: `GetExtendedAgentCard`, `agent/getAuthenticatedExtendedCard` or `GET …/extendedAgentCard`. */
  readonly method: string;
  readonly body: Buffer;
  readonly status: number;
  readonly durationMs: number;
}

/** The request for `chosen`'s protocol and binding. */
function extendedCardRequest(chosen: ChosenInterface): { url: string; method: string; version: string; rpc?: string } {
  const legacy = chosen.client === 'adk-0.3';
  const version = legacy ? '0.3' : '1.0';
  const base = chosen.url.replace(/\/+$/, '');
  if (chosen.binding === 'JSONRPC') {
    const rpc = legacy ? 'agent/getAuthenticatedExtendedCard' : 'GetExtendedAgentCard';
    return { url: chosen.url, method: rpc, version, rpc };
  }
  const path = legacy ? '/v1/card' : `${chosen.tenant ? `/${encodeURIComponent(chosen.tenant)}` : ''}/extendedAgentCard`;
  return { url: `${base}${path}`, method: `GET ${path}`, version };
}

/**
 * Asks the peer for its extended card on `chosen`, with `headers` (the identity's credentials
 * for the interface's origin) and the `A2A-Version` of the interface.
 *
 * @throws DiscoveryError: the fetcher's errors; `ERR_FETCH_STATUS` (stage `fetch`) for an HTTP
 *   status other than 200 or a JSON-RPC error (the message names the URL, the method and the
 *   peer's reason, never a header); `ERR_CARD_MALFORMED` / `ERR_CARD_TOO_LARGE` (stage `parse`)
 *   for an answer that is not a JSON-RPC response with a card object.
 */
export async function fetchExtendedCard(fetcher: CardFetcher, chosen: ChosenInterface, headers: Record<string, string>, limits: JsonLimits = {}): Promise<ExtendedCardAnswer> {
  const attributes = {
    [ATTR.a2aMethod]: A2A_METHOD.getExtendedAgentCard,
    [ATTR.a2aProtocolVersion]: chosen.protocolVersion,
    [ATTR.a2aTenant]: chosen.tenant || undefined,
    ...serverOf(chosen.url),
  };
  const outcome = await withSpan(A2A_METHOD.getExtendedAgentCard, { kind: 'client', attributes }, async (span) => {
    try {
      return { ok: true as const, answer: await requestExtendedCard(fetcher, chosen, headers, limits) };
    } catch (error) {
      // The convention's error.type: the HTTP status or JSON-RPC code when the peer gave one.
      const rpc = error instanceof DiscoveryError ? / JSON-RPC error (-?\d+)/.exec(error.message)?.[1] : undefined;
      const status = error instanceof DiscoveryError && error.code === 'ERR_FETCH_STATUS' && rpc === undefined ? error.status : undefined;
      span.fail(error, rpc ?? (status !== undefined ? String(status) : undefined));
      return { ok: false as const, error };
    }
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.answer;
}

async function requestExtendedCard(fetcher: CardFetcher, chosen: ChosenInterface, headers: Record<string, string>, limits: JsonLimits): Promise<ExtendedCardAnswer> {
  const req = extendedCardRequest(chosen);
  const sent: Record<string, string> = { ...headers, 'a2a-version': req.version, accept: 'application/json' };
  // The active span's trace context, unless the caller's headers carry one (they win).
  if (!Object.keys(sent).some((name) => name.toLowerCase() === 'traceparent')) Object.assign(sent, injectTraceContext({}));
  let body: string | undefined;
  if (req.rpc !== undefined) {
    const params = chosen.client === 'a2a-1.x' && chosen.tenant !== undefined && chosen.tenant !== '' ? { tenant: chosen.tenant } : {};
    body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: req.rpc, params });
  }
  const res = await fetcher.fetch(req.url, body === undefined ? { headers: sent } : { headers: sent, method: 'POST', body });
  const what = `${req.url} (${req.method})`;
  if (res.status !== 200) {
    const hint = res.status === 401 || res.status === 403 ? ': the credentials for this origin were refused' : '';
    throw new DiscoveryError('ERR_FETCH_STATUS', `extended card: ${what} answered HTTP ${res.status}${hint}`, { url: req.url, stage: 'fetch', status: res.status });
  }
  const answer = { url: req.url, method: req.method, status: res.status, durationMs: res.durationMs };
  if (req.rpc === undefined) return { ...answer, body: res.body };
  // The envelope is as hostile as a card: the same limits, one level deeper for `result`.
  const parsed = parseSafeJson(res.body, { ...limits, maxDepth: (limits.maxDepth ?? 32) + 1 });
  if (!parsed.ok) {
    throw new DiscoveryError(parsed.code, `extended card: ${what} answered no readable JSON: ${parsed.problems[0]?.message ?? 'malformed'}`, { url: req.url, stage: 'parse', problems: parsed.problems });
  }
  const envelope = parsed.value;
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
    throw new DiscoveryError('ERR_CARD_MALFORMED', `extended card: ${what} answered no JSON-RPC response object`, { url: req.url, stage: 'parse' });
  }
  const { error, result } = envelope as { error?: unknown; result?: unknown };
  if (error !== undefined) {
    const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
    const code = typeof e.code === 'number' ? ` ${e.code}` : '';
    // The peer's text, bounded; a credential it echoes back is never repeated.
    const message = typeof e.message === 'string' ? `: ${JSON.stringify(redact(e.message.slice(0, 200), headers))}` : '';
    throw new DiscoveryError('ERR_FETCH_STATUS', `extended card: ${what} answered JSON-RPC error${code}${message}`, { url: req.url, stage: 'fetch', status: res.status });
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new DiscoveryError('ERR_CARD_MALFORMED', `extended card: ${what} answered a JSON-RPC result that is not a card object`, { url: req.url, stage: 'parse' });
  }
  return { ...answer, body: Buffer.from(JSON.stringify(result), 'utf8') };
}

/** `text` with every header value we sent replaced (a peer may echo a credential back). */
function redact(text: string, headers: Record<string, string>): string {
  let out = text;
  for (const value of Object.values(headers)) {
    for (const part of [value, ...value.split(/\s+/)]) if (part.length >= 8) out = out.split(part).join('[redacted]');
  }
  return out;
}
