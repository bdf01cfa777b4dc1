/**
 * What the conversation turn running now carries to the A2A requests it makes: its abort signal
 * and the snapshot digest its session is pinned to.
 *
 * ADK JS 2.0's `RemoteA2AAgent` calls its A2A client without any signal (`sendMessage(params)`,
 * `sendMessageStream(params)`), so the `abortSignal` given to `Runner.runAsync` stops ADK's own
 * loop only between events: a turn waiting on a remote agent keeps waiting, and the peer keeps
 * working. {@link SessionRunner.run} therefore runs each turn inside {@link withTurn}, and
 * the policy fetch (policy-fetch.ts) attaches {@link currentTurnSignal} to every request it sends
 * within that turn: aborting the turn closes the upstream connection itself. The A2A client span
 * (a2a-client-span.ts) records {@link currentTurnDigest}, and the agent fetch (agent-fetch.ts)
 * tells the turn's notices, through {@link currentTurnNotice}, what it repaired in an answer. Each
 * remote agent's fetch is wrapped by {@link observedByTurn}, which notes in the turn the calls that
 * failed (the agent's local name, the HTTP status or the network error, the redacted URL): a failed
 * turn then names the agent it called and what that agent answered.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isDiscoveryError } from '../../errors.js';
import { redactUrl } from '../../rules/redaction.js';

/** A call of a remote agent that failed within a turn. */
export interface AgentCallFailure {
  /** The agent's local name. */
  readonly agent: string;
  /** The URL called, redacted. */
  readonly url: string;
  /** The HTTP status it answered; absent when no answer came (refused, reset, timeout). */
  readonly status?: number;
  /** `billing_agent answered 401 Unauthorized at https://…/jsonrpc`, or why it could not be reached. */
  readonly message: string;
}

/** One turn's context. */
interface Turn {
  readonly signal?: AbortSignal | undefined;
  /** The snapshot digest the turn's session is pinned to. */
  readonly digest?: string | undefined;
  /** Adds a notice to the turn's result (`TurnResult.notices`). */
  readonly notice?: ((text: string) => void) | undefined;
  /** Where the turn's failed agent calls are noted (at most {@link MAX_FAILURES}). */
  readonly failures?: AgentCallFailure[] | undefined;
}

/** A turn notes this many failed calls at most (the last one decides what the turn says). */
const MAX_FAILURES = 8;

const turns = new AsyncLocalStorage<Turn>();

/** Runs `fn` as the current turn (`turn.signal`, `turn.digest`). */
export function withTurn<T>(turn: Turn, fn: () => T): T {
  return turns.run(turn, fn);
}

/** The signal of the turn whose work is running now, if any. */
export function currentTurnSignal(): AbortSignal | undefined {
  return turns.getStore()?.signal;
}

/** The snapshot digest of the turn whose work is running now, if any. */
export function currentTurnDigest(): string | undefined {
  return turns.getStore()?.digest;
}

/** The notice sink of the turn whose work is running now, if any. */
export function currentTurnNotice(): ((text: string) => void) | undefined {
  return turns.getStore()?.notice;
}

function noteFailure(failure: AgentCallFailure): void {
  const failures = turns.getStore()?.failures;
  if (failures === undefined) return;
  if (failures.length >= MAX_FAILURES) failures.shift();
  failures.push(failure);
}

/**
 * `fetch` of the remote agent `agent`, noting in the current turn each call that failed: an
 * answer that is not 2xx (its status), or no answer (the guarded fetch's classified error). An
 * abort of the turn itself is not the agent's failure and is not noted. Outside a turn it only
 * calls `fetch`.
 */
export function observedByTurn(fetch: typeof globalThis.fetch, agent: string): typeof globalThis.fetch {
  const observed = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = redactUrl(input instanceof Request ? input.url : String(input));
    try {
      const response = await fetch(input, init);
      if (!response.ok) {
        noteFailure({ agent, url, status: response.status, message: `${agent} answered ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`} at ${url}` });
      }
      return response;
    } catch (err) {
      if (turns.getStore()?.signal?.aborted !== true) {
        // The guarded fetch's errors name the URL (redacted) and the bound that was hit.
        const why = isDiscoveryError(err) ? err.message : `${url}: ${err instanceof Error ? err.name : 'error'}`;
        noteFailure({ agent, url, message: `${agent} could not be reached: ${why}` });
      }
      throw err;
    }
  };
  return observed as typeof globalThis.fetch;
}
