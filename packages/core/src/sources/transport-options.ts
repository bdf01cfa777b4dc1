/**
 * Per-agent transport options: how the remote agent of one endpoint calls it, given by a static
 * entry or a registry record (never by a card). They travel with the endpoint record to the
 * snapshot agent and the tree, and are part of the snapshot digest (a change rebuilds trees).
 *
 * One rule, one place: the static source, the registry record reader and the configuration
 * schema all judge the fields here.
 *
 * @module
 */
import { agentHeaderNameProblem, agentHeaderValueProblem, tenantProblem } from '../rules/headers.js';
import { compareCodeUnits, describe } from '../text.js';

/** The most headers one agent may carry. */
const MAX_HEADERS = 32;

/**
 * How one remote agent is called. Every field is optional; none is a secret (credentials go
 * through the per-origin credential providers, never here).
 */
export interface TransportOptions {
  /**
   * `false`: always `message/send` (0.3) / `SendMessage` (1.x), even when the card says
   * `capabilities.streaming: true` (a peer whose SSE stream is broken). Absent or `true`: as the
   * card says.
   */
  readonly streaming?: boolean;
  /**
   * Extra non-secret headers, sent on calls to this agent's interface origin only. Names are HTTP
   * tokens outside {@link AGENT_RESERVED_HEADERS}; values have no control characters (no CR/LF).
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Bound in ms on connecting plus waiting for the response headers of each call to this agent. */
  readonly timeoutMs?: number;
  /** Call the card's interface of this tenant (A2A 1.0 §8.3.2); the tenant is echoed on every call. */
  readonly tenant?: string;
  /**
   * Static entries only (never read from a registry record): the URL to call instead of the
   * card's chosen interface when that interface's host is unroutable (`0.0.0.0`, `::`), judged by
   * the host policy like any interface URL; see `reviewedInterface` in card/interface-policy.ts.
   */
  readonly interfaceUrl?: string;
}

/** The option names, in the order they are read and hashed. */
const TRANSPORT_OPTION_KEYS = ['streaming', 'headers', 'timeoutMs', 'tenant', 'interfaceUrl'] as const;

/**
 * Reads the transport options of an entry (a static agent, a registry record): each problem goes
 * to `bad(field, message)`; returns the frozen options, or undefined when the entry has none.
 */
export function readTransportOptions(entry: Readonly<Record<string, unknown>>, bad: (field: string, message: string) => void): TransportOptions | undefined {
  const { streaming, headers, timeoutMs, tenant } = entry;
  const out: { streaming?: boolean; headers?: Record<string, string>; timeoutMs?: number; tenant?: string } = {};
  if (streaming !== undefined) {
    if (typeof streaming !== 'boolean') bad('streaming', `must be true or false, got ${describe(streaming)}`);
    else out.streaming = streaming;
  }
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) bad('headers', `must be an object of header names to values, got ${describe(headers)}`);
    else {
      const pairs = Object.entries(headers as Record<string, unknown>);
      if (pairs.length > MAX_HEADERS) bad('headers', `lists ${pairs.length} headers; the limit is ${MAX_HEADERS}`);
      const seen = new Set<string>();
      const ok: Record<string, string> = {};
      for (const [name, value] of pairs) {
        const problem = agentHeaderNameProblem(name) ?? agentHeaderValueProblem(value) ?? (seen.has(name.toLowerCase()) ? 'is given twice (names are case-insensitive)' : undefined);
        if (problem !== undefined) bad(`headers.${name}`, problem);
        else ok[name.toLowerCase()] = value as string;
        seen.add(name.toLowerCase());
      }
      if (pairs.length > 0) out.headers = Object.freeze(ok);
    }
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0) bad('timeoutMs', `must be a positive integer (milliseconds), got ${describe(timeoutMs)}`);
    else out.timeoutMs = timeoutMs;
  }
  if (tenant !== undefined) {
    const problem = tenantProblem(tenant);
    if (problem !== undefined) bad('tenant', problem);
    else out.tenant = tenant as string;
  }
  return Object.keys(out).length === 0 ? undefined : Object.freeze(out);
}

/** The transport options an endpoint is called with: those of its first record carrying any (the source's priority order). */
export function transportOf(records: ReadonlyArray<{ readonly transport?: TransportOptions }>): TransportOptions | undefined {
  return records.find((r) => r.transport !== undefined)?.transport;
}

/**
 * A canonical text of the options (keys in a fixed order, header names lower case and sorted),
 * for the snapshot digest and for comparing two records. `''` for none.
 */
export function transportKey(options: TransportOptions | undefined): string {
  if (options === undefined) return '';
  const parts: unknown[] = [];
  for (const key of TRANSPORT_OPTION_KEYS) {
    const value = options[key];
    if (value === undefined) continue;
    parts.push(key, key === 'headers' ? Object.entries(value as Record<string, string>).sort(([a], [b]) => compareCodeUnits(a, b)) : value);
  }
  return parts.length === 0 ? '' : JSON.stringify(parts);
}
