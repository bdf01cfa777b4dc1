/**
 * BeeAI Framework's A2A client (`A2AAgent`), run by test/interop/frameworks.test.ts in a child
 * process from this folder (its own install): reads the card at <base URL> and sends one message.
 *
 * Usage: node client.mjs <base URL> <text>
 * Prints one JSON line: { card: { name, protocolVersion }, reply, streamed } or { error }:
 * `reply` is the text of the run's result, `streamed` every text the peer's events carried.
 */
import { A2AAgent } from 'beeai-framework/adapters/a2a/agents/agent';
import { UnconstrainedMemory } from 'beeai-framework/memory/unconstrainedMemory';

const [url, text] = process.argv.slice(2);
try {
  const agent = new A2AAgent({ url, memory: new UnconstrainedMemory() });
  await agent.checkAgentExists();
  const streamed = [];
  const out = await agent.run({ input: text }).observe((emitter) => {
    emitter.on('update', ({ value }) => {
      const carrier = value.kind === 'status-update' ? value.status.message : value.kind === 'artifact-update' ? value.artifact : value.kind === 'message' ? value : undefined;
      for (const part of carrier?.parts ?? []) if (part.kind === 'text') streamed.push(part.text);
    });
  });
  const card = { name: agent.agentCard.name, protocolVersion: agent.agentCard.protocolVersion };
  process.stdout.write(`${JSON.stringify({ card, reply: out.result.text, streamed })}\n`);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: String(e?.message ?? e) })}\n`);
}
