/**
 * The abort signal of the conversation turn running now, carried to the A2A requests it makes.
 *
 * ADK JS 2.0's `RemoteA2AAgent` calls its A2A client without any signal (`sendMessage(params)`,
 * `sendMessageStream(params)`), so the `abortSignal` given to `Runner.runAsync` stops ADK's own
 * loop only between events: a turn waiting on a remote agent keeps waiting, and the peer keeps
 * working. {@link SessionRunner.run} therefore runs each turn inside {@link withTurnSignal}, and
 * the policy fetch (policy-fetch.ts) attaches {@link currentTurnSignal} to every request it sends
 * within that turn: aborting the turn closes the upstream connection itself.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const turns = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` with `signal` as the current turn's signal (no signal: `fn` runs unchanged). */
export function withTurnSignal<T>(signal: AbortSignal | undefined, fn: () => T): T {
  return signal === undefined ? fn() : turns.run(signal, fn);
}

/** The signal of the turn whose work is running now, if any. */
export function currentTurnSignal(): AbortSignal | undefined {
  return turns.getStore();
}
