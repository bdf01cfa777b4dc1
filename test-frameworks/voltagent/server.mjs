/**
 * A VoltAgent A2A server (`A2AServer` from `@voltagent/a2a-server` 2.0.3, served by
 * `honoServer()` from `@voltagent/server-hono` 2.0.14, over a `@voltagent/core` 2.10.0 `Agent`),
 * run by test/interop/voltagent.test.ts in a child process from this folder (its own install).
 * The model is a deterministic fake, the AI SDK's own `MockLanguageModelV3` (`ai/test`, ai 6):
 * every turn answers `voltagent heard: <the user's last text>`, in one piece (generate) or in
 * two text deltas (stream). No network model, no randomness in the answer.
 *
 * Routes (server-core's A2A_ROUTES): card `GET /.well-known/<serverId>/agent-card.json`,
 * JSON-RPC `POST /a2a/<serverId>`; the A2A server's id must be the agent's id.
 *
 * Usage: node server.mjs [default|provider]
 *   default:  the card A2AServer builds by itself (no protocolVersion, skills from tools: none);
 *   provider: the same with `provider: { organization }` and no url (the A2AServer config's own shape).
 * Prints `READY <card URL>` on stdout once the card answers.
 */
/* global fetch, ReadableStream */ // Node 20's globals
import { freePort } from '../free-port.mjs';

// Outside production, @voltagent/core fetches https://models.dev at import time (its model
// registry's auto-refresh): production mode keeps the child off the network. Set before the
// imports below, which are dynamic for that reason.
process.env.NODE_ENV = 'production';
const { Agent, VoltAgent } = await import('@voltagent/core');
const { A2AServer } = await import('@voltagent/a2a-server');
const { honoServer } = await import('@voltagent/server-hono');
const { createPinoLogger } = await import('@voltagent/logger');
const { MockLanguageModelV3 } = await import('ai/test');

function lastUserText(prompt) {
  const users = prompt.filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  return (last?.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(' ');
}

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const finishReason = { unified: 'stop', raw: 'stop' };

const model = new MockLanguageModelV3({
  modelId: 'fake-echo',
  doGenerate: async ({ prompt }) => ({ content: [{ type: 'text', text: `voltagent heard: ${lastUserText(prompt)}` }], finishReason, usage, warnings: [] }),
  doStream: async ({ prompt }) => {
    const text = lastUserText(prompt);
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'voltagent heard: ' },
      { type: 'text-delta', id: 't1', delta: text },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason, usage },
    ];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
});

const mode = process.argv[2] ?? 'default';
const port = await freePort();
const agent = new Agent({ id: 'support', name: 'support', purpose: 'Answers support questions.', instructions: 'Answer support questions.', model });
const a2a = new A2AServer({
  id: 'support',
  name: 'support',
  version: '1.0.0',
  ...(mode === 'provider' && { provider: { organization: 'Example Org' } }),
});
new VoltAgent({
  agents: { support: agent },
  a2aServers: { support: a2a },
  server: honoServer({ port, hostname: '127.0.0.1' }),
  logger: createPinoLogger({ level: 'error' }),
});
const cardUrl = `http://127.0.0.1:${port}/.well-known/support/agent-card.json`;
for (let i = 0; i < 400; i++) {
  try {
    const res = await fetch(cardUrl);
    if (res.ok) break;
  } catch {
    // not listening yet
  }
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(`READY ${cardUrl}\n`);
