/**
 * {@link agentFetch}: the `fetch` one remote agent's SDK client uses, over the shared policy
 * fetch. It adds what belongs to this agent only:
 *
 * - `A2A-Version` on every call (A2A 1.0 §3.6: clients MUST send it), `0.3` for ADK's 0.3
 *   client, the interface's version for the 1.x client (which sets it itself; kept);
 * - the agent's extra non-secret `headers`, only on requests to its interface's origin;
 * - its `timeoutMs`: a bound on connecting plus waiting for the response headers, which can only
 *   shorten the policy fetch's own bound;
 * - the W3C trace context of the active span (`traceparent`, `tracestate`: the A2A client span of
 *   a2a-client-span.ts), so the peer continues the trace. A request that already carries a
 *   `traceparent` (an agent's configured `headers`) keeps it and gets no `tracestate` of ours:
 *   configuration wins, and the two headers are never mixed from two traces;
 * - the leniencies of lenient-response.ts on the answer (a kind-less 0.3 Task, U+001E before an
 *   event's data), each told once per agent and kind as a notice of the turn that met it first
 *   (turn-signal.ts). Outside a turn there is no one to tell, and the next turn is told instead;
 * - the turn's record of failed calls ({@link observedByTurn}): an answer that is not 2xx, or none,
 *   noted with this agent's name, so a failed turn names the agent it called.
 *
 * Every request still goes through the wrapped policy fetch (allowlist, guarded DNS, no
 * redirects, per-origin credentials).
 *
 * @module
 */
import { DiscoveryError } from '../../errors.js';
import { redactUrl } from '../../fetch/index.js';
import { abortAfter } from '../../fetch/deadlines.js';
import { setAgentHeaders } from '../../rules/headers.js';
import { injectTraceContext } from '../../telemetry/otel.js';
import type { ResponseRepair } from './lenient-response.js';
import { lenientResponse } from './lenient-response.js';
import { currentTurnNotice, observedByTurn } from './turn-signal.js';

/** Inputs of {@link agentFetch}. */
export interface AgentFetchOptions {
  /** The agent's local name, in the notices that say what was repaired in its answers and in its failed calls. */
  name: string;
  /** Sent as `A2A-Version` when the client sets none (`0.3`, `1.0`). */
  version: string;
  /** The origin of the agent's chosen interface: the only one its `headers` go to. */
  origin: string;
  /** Extra headers (already checked against the reserved names; no CR/LF). */
  headers?: Readonly<Record<string, string>>;
  /** Headers deadline of each call, in ms. */
  timeoutMs?: number;
}

/** Wraps `base` with the agent's version header, extra headers and deadline. No I/O until called. */
export function agentFetch(base: typeof fetch, options: AgentFetchOptions): typeof fetch {
  const told = new Set<ResponseRepair>();
  const taskKind = options.version.startsWith('0.');
  const lenient = (response: Response): Promise<Response> => {
    const notice = currentTurnNotice();
    return lenientResponse(response, {
      taskKind,
      onRepair: (repair) => {
        if (notice === undefined || told.has(repair)) return;
        told.add(repair);
        notice(REPAIR_NOTICES[repair](options.name));
      },
    });
  };
  const wrapped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    const url = request?.url ?? String(input);
    const headers = new Headers(init?.headers ?? request?.headers);
    setAgentHeaders(headers, url, options);
    if (!headers.has('traceparent')) {
      for (const [name, value] of Object.entries(injectTraceContext({}))) headers.set(name, value);
    }
    const callerSignal = init?.signal ?? request?.signal ?? undefined;
    if (options.timeoutMs === undefined) return lenient(await base(input, { ...init, headers, ...(callerSignal !== undefined && { signal: callerSignal }) }));
    const ms = options.timeoutMs;
    const controller = new AbortController();
    const deadline = abortAfter(controller, ms, () => {
      const safe = redactUrl(url);
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${safe}: no response headers within the agent's timeoutMs (${ms} ms)`, { url: safe, stage: 'fetch' });
    });
    const signal = callerSignal === undefined ? controller.signal : AbortSignal.any([callerSignal, controller.signal]);
    let response: Response;
    try {
      response = await base(input, { ...init, headers, signal });
    } finally {
      // After the headers the body streams on; only the caller's signal (and the policy fetch's
      // body bound) apply to it.
      deadline.cancel();
    }
    return lenient(response);
  };
  return observedByTurn(wrapped as typeof fetch, options.name);
}

/** The notice of each repair (lenient-response.ts), naming the agent. */
const REPAIR_NOTICES: Record<ResponseRepair, (name: string) => string> = {
  'result-kind': (name) => `${name} answered a Task without "kind" (result.kind, required by A2A 0.3); it was read as a Task`,
  'sse-record-separator': (name) => `${name}'s event stream starts each data line with U+001E; the character was stripped`,
};
