/**
 * Scripted A2A calls of the modeled agent: the explorer's words for what each call came to
 * (`ok ok 500 500 network -`), read into the outcomes the library counts (`CallOutcome`: good or
 * failed, its error class, its latency) and the failure's message in the words of the
 * orchestrator's own call observer (`orders_agent answered 500 Internal Server Error at …`).
 *
 * @module
 */
import { STATUS_CODES } from 'node:http';
import type { CallOutcome } from '../health/call-figures.js';
import type { RecordedCall } from '../health/call-health.js';

/** Tokens a script may hold at most (one per attempt, or one pattern repeated). */
const MAX_CALL_TOKENS = 100;

/** The modeled agent's name in snapshots (its local name) and the interface its calls reach. */
export const TRACE_AGENT = 'orders_agent';
const INTERFACE_URL = 'https://orders.example.com/a2a/jsonrpc';

/** One scripted call: `undefined` outcome for `-` (no call in this step). */
export interface ScriptedCall {
  /** The token as written, e.g. `500`, `ok@900`, `-`. */
  readonly token: string;
  /** What the call came to; absent for `-`. */
  readonly outcome?: CallOutcome;
  /** A failed call's message, as the orchestrator words it. */
  readonly message?: string;
}

const TOKEN = /^(ok|network|[45]\d\d|-)(?:@(\d{1,6}))?$/;

/**
 * Reads a call script: tokens separated by spaces or commas, each `ok` (a good call), an HTTP
 * status from 400 to 599 (the agent answered it), `network` (no answer came) or `-` (no call),
 * with an optional latency in milliseconds (`ok@900`; default `latencyMs`). Returns the calls,
 * or the first problem in words.
 *
 * @example parseCallScript('ok 500@40 -', 100).calls?.map((c) => c.outcome?.ok) // [true, false, undefined]
 */
export function parseCallScript(script: string, latencyMs: number): { calls?: ScriptedCall[]; problem?: string } {
  const tokens = script.split(/[\s,]+/).filter((t) => t !== '');
  if (tokens.length === 0) return { problem: 'must hold at least one call (ok, an HTTP status 400–599, network, or - for none)' };
  if (tokens.length > MAX_CALL_TOKENS) return { problem: `must hold at most ${MAX_CALL_TOKENS} calls` };
  const calls: ScriptedCall[] = [];
  for (const token of tokens) {
    const m = TOKEN.exec(token.toLowerCase());
    if (m === null) return { problem: `"${token.slice(0, 20)}" is not a call: write ok, an HTTP status 400–599, network or -, optionally with @<ms>` };
    const [, kind = '', ms] = m;
    const latency = ms === undefined ? latencyMs : Number(ms);
    if (kind === '-') calls.push({ token });
    else if (kind === 'ok') calls.push({ token, outcome: { ok: true, latencyMs: latency } });
    else if (kind === 'network') calls.push({ token, outcome: { ok: false, errorClass: 'network', latencyMs: latency }, message: `${TRACE_AGENT} could not be reached: ${INTERFACE_URL}: the connection failed` });
    else {
      const status = Number(kind);
      const text = STATUS_CODES[status];
      calls.push({ token, outcome: { ok: false, errorClass: `http_${status}`, latencyMs: latency }, message: `${TRACE_AGENT} answered ${status}${text === undefined ? '' : ` ${text}`} at ${INTERFACE_URL}` });
    }
  }
  return { calls };
}

/**
 * The call as the orchestrator records it (`CallHealth.record`): a turn's call of the modeled
 * agent, from the snapshot `digest` when one is given.
 */
export function recordedCall(call: ScriptedCall & { outcome: CallOutcome }, baseUrl: string, digest?: string): RecordedCall {
  return {
    ...call.outcome,
    agent: TRACE_AGENT,
    baseUrl,
    source: 'turn',
    interfaceUrl: INTERFACE_URL,
    ...(digest !== undefined && { digest }),
    ...(call.message !== undefined && { message: call.message }),
  };
}
