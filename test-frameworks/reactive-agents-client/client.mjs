/**
 * reactive-agents' A2A client (`discoverAgent`, `createA2AClient` from `@reactive-agents/a2a`), run
 * by test/interop/orchestrator-clients.test.ts in a child process from this folder (its own
 * install): reads the card at <base URL> and sends one message.
 *
 * `discoverAgent(base)` reads `<base>/.well-known/agent.json` (the A2A 0.2 path), then
 * `<base>/agent/card`; `createA2AClient({ baseUrl })` posts JSON-RPC to `baseUrl` itself, so it is
 * given the card's `url` (docs/interop.md, reactive-agents).
 *
 * Usage: node client.mjs <base URL> <text>
 * Prints one JSON line: { card: { name, protocolVersion }, reply } or { error }: `reply` is every
 * text of the `message/send` result (a Message, or a Task's status message and artifacts).
 */
import { randomUUID } from 'node:crypto';
import { Effect } from 'effect';
import { A2AClient, createA2AClient, discoverAgent } from '@reactive-agents/a2a';

const [url, text] = process.argv.slice(2);

function texts(result) {
  const carriers = result?.kind === 'task' ? [result.status?.message, ...(result.artifacts ?? [])] : [result];
  return carriers.flatMap((c) => (c?.parts ?? []).filter((p) => p.kind === 'text').map((p) => p.text));
}

try {
  const card = await Effect.runPromise(discoverAgent(url));
  const send = Effect.gen(function* () {
    const client = yield* A2AClient;
    return yield* client.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } });
  });
  const result = await Effect.runPromise(send.pipe(Effect.provide(createA2AClient({ baseUrl: card.url }))));
  process.stdout.write(`${JSON.stringify({ card: { name: card.name, protocolVersion: card.protocolVersion }, reply: texts(result).join('\n') })}\n`);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: String(e?.message ?? e) })}\n`);
}
