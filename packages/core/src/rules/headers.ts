/**
 * HTTP header rules: what a header name is, which headers the connection and the A2A clients own
 * (so neither a credential entry nor an agent's `headers` may set them), what a header value and
 * a tenant may hold, and which of them one call to an agent carries. The configuration schema, the
 * static source and the registry record reader all judge here, so they cannot answer differently.
 * Pure.
 *
 * @module
 */
import { describe } from '../text.js';
import { originOf } from './origins.js';

/** An HTTP header name (an RFC 9110 token). */
export const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers the fetcher sets itself: no credential entry may set them. */
export const FETCHER_HEADERS: ReadonlySet<string> = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'accept-encoding', 'if-none-match', 'if-modified-since']);

/**
 * Headers an agent's `headers` may not set: those the connection owns, those the A2A clients
 * set themselves, and the credential headers (secrets go through credential providers).
 */
const AGENT_RESERVED_HEADERS: ReadonlySet<string> = new Set([
  ...FETCHER_HEADERS,
  'content-type',
  'accept',
  'a2a-version',
  'authorization',
  'proxy-authorization',
  'cookie',
]);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;
const MAX_HEADER_VALUE = 4096;
const MAX_TENANT = 256;

/** Why `name` cannot be an agent header, or undefined. */
export function agentHeaderNameProblem(name: string): string | undefined {
  if (!HTTP_HEADER_NAME.test(name)) return `must be an HTTP header name such as "x-team", got ${describe(name)}`;
  if (AGENT_RESERVED_HEADERS.has(name.toLowerCase())) {
    return `"${name}" cannot be set per agent (the connection, the A2A client or a credential provider sets it)`;
  }
  return undefined;
}

/** Why `value` cannot be an agent header value, or undefined. Never quotes the value. */
export function agentHeaderValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be a string, got ${typeof value}`;
  if (CONTROL.test(value)) return 'must not contain line breaks or control characters';
  if (value.length > MAX_HEADER_VALUE) return `is ${value.length} characters long; the limit is ${MAX_HEADER_VALUE}`;
  return undefined;
}

/** Why `value` cannot be a tenant, or undefined. */
export function tenantProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return `must be a non-empty string, got ${describe(value)}`;
  if (value.length > MAX_TENANT || CONTROL.test(value)) return `must be at most ${MAX_TENANT} characters without control characters`;
  return undefined;
}


/** What one agent adds to each of its calls ({@link setAgentHeaders}). */
export interface AgentCallHeaders {
  /** Sent as `A2A-Version` when the client sets none (`0.3`, `1.0`). */
  readonly version: string;
  /** The origin of the agent's chosen interface: the only one its `headers` go to. */
  readonly origin: string;
  /** The agent's extra headers (already checked by {@link agentHeaderNameProblem} and {@link agentHeaderValueProblem}). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Sets on `headers` what a call to `url` carries for an agent: `A2A-Version` (A2A 1.0 §3.6:
 * clients MUST send it) unless one is set, and the agent's extra headers only when `url` is on its
 * interface's origin. The remote agents' fetch and the active check both call here.
 *
 * @example setAgentHeaders(headers, 'https://billing.example.com/a2a', { version: '1.0', origin: 'https://billing.example.com', headers: { 'x-team': 'support' } })
 */
export function setAgentHeaders(headers: Headers, url: string, agent: AgentCallHeaders): void {
  if (!headers.has('a2a-version')) headers.set('A2A-Version', agent.version);
  if (agent.headers !== undefined && originOf(url) === agent.origin) {
    for (const [name, value] of Object.entries(agent.headers)) headers.set(name, value);
  }
}
