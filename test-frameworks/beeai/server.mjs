/**
 * A BeeAI Framework A2A server (`A2AServer` with a `ToolCallingAgent`), run by
 * test/interop/frameworks.test.ts in a child process from this folder (its own install).
 * The model is a deterministic fake, `FakeEchoChatModel`: it answers every turn with one
 * `final_answer` tool call whose response is `beeai heard: <the user's last text>`.
 *
 * Usage: node server.mjs [default|skills|zeros]
 *   default: the card A2AServer builds by itself (one skill, `tags: []`, protocolVersion 0.1.0);
 *   skills:  the same agent with its own skills (tagged `billing`);
 *   zeros:   the default card with BeeAI's default card URL, `http://0.0.0.0:<port>`: what
 *            `A2AServer` publishes when no `url` is given and its host is left at its default
 *            `0.0.0.0` (server.js: `url: config.url || \`http://${host}:${port}\``). The server
 *            still listens on 127.0.0.1 only: the card names that URL, nothing listens on it.
 * The other modes pass `url` (the loopback URL) in the metadata, so the card names where it answers.
 * Prints `READY <base URL>` on stdout once /health answers.
 */
/* global fetch */ // Node 20's global fetch
import { freePort } from '../free-port.mjs';
import { A2AServer } from 'beeai-framework/adapters/a2a/serve/server';
import { ToolCallingAgent } from 'beeai-framework/agents/toolCalling/agent';
import { ChatModel, ChatModelOutput } from 'beeai-framework/backend/chat';
import { AssistantMessage, UserMessage } from 'beeai-framework/backend/message';
import { Emitter } from 'beeai-framework/emitter/emitter';
import { UnconstrainedMemory } from 'beeai-framework/memory/unconstrainedMemory';

/** A deterministic fake model: no network, no randomness. */
class FakeEchoChatModel extends ChatModel {
  emitter = Emitter.root.child({ namespace: ['backend', 'fake_echo', 'chat'], creator: this });
  get modelId() {
    return 'fake-echo';
  }
  get providerId() {
    return 'fake';
  }
  async _create(input) {
    const users = input.messages.filter((m) => m instanceof UserMessage);
    const text = users.length > 0 ? users[users.length - 1].text : '';
    const call = { type: 'tool-call', toolCallId: `call-${users.length}`, toolName: 'final_answer', input: { response: `beeai heard: ${text}` } };
    return new ChatModelOutput([new AssistantMessage(call)], undefined, 'tool-calls');
  }
  async *_createStream(input, run) {
    yield await this._create(input, run);
  }
  createSnapshot() {
    return { ...super.createSnapshot() };
  }
  loadSnapshot(snapshot) {
    Object.assign(this, snapshot);
  }
}

const mode = process.argv[2] ?? 'default';
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const agent = new ToolCallingAgent({
  llm: new FakeEchoChatModel(),
  memory: new UnconstrainedMemory(),
  tools: [],
  meta: { name: 'BeeAI Billing', description: 'Answers billing questions.' },
});
const metadata = { url: mode === 'zeros' ? `http://0.0.0.0:${port}` : url, name: 'BeeAI Billing', description: 'Answers billing questions.' };
if (mode === 'skills') {
  metadata.skills = [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices and charges.', tags: ['billing'] }];
}
new A2AServer({ host: '127.0.0.1', port, protocol: 'jsonrpc' }).register(agent, metadata).serve();
for (let i = 0; i < 200; i++) {
  try {
    const res = await fetch(`${url}/health`);
    if (res.ok) break;
  } catch {
    // not listening yet
  }
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(`READY ${url}\n`);
