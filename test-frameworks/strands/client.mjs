/**
 * Strands Agents' A2A client (`A2AAgent` from `@strands-agents/sdk/a2a`), run by
 * test/interop/frameworks.test.ts in a child process from this folder (its own install):
 * reads the card at <base URL> and sends one message.
 *
 * Usage: node client.mjs <base URL> <text>
 * Prints one JSON line: { card: { name, protocolVersion }, reply } or { error }.
 */
import { A2AAgent } from '@strands-agents/sdk/a2a';

const [url, text] = process.argv.slice(2);
try {
  const agent = new A2AAgent({ url });
  const result = await agent.invoke(text);
  // The card the client read and used (kept on the agent; `name` is public, the rest is not).
  const card = agent._agentCard;
  process.stdout.write(`${JSON.stringify({ card: { name: card.name, protocolVersion: card.protocolVersion }, reply: String(result) })}\n`);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: String(e?.message ?? e) })}\n`);
}
