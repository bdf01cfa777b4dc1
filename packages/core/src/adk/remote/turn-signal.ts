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
 * tells the turn's notices, through {@link currentTurnNotice}, what it repaired in an answer.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One turn's context. */
interface Turn {
  readonly signal?: AbortSignal | undefined;
  /** The snapshot digest the turn's session is pinned to. */
  readonly digest?: string | undefined;
  /** Adds a notice to the turn's result (`TurnResult.notices`). */
  readonly notice?: ((text: string) => void) | undefined;
}

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
