/**
 * A Strands Agents A2A server (`A2AExpressServer` from `@strands-agents/sdk/a2a/express`, over a
 * Strands `Agent`), run by test/interop/frameworks.test.ts in a child process from this folder
 * (its own install). The model is a deterministic fake, `FakeEchoModel`: every turn streams one
 * text block, `strands heard: <the user's last text>`.
 *
 * Usage: node server.mjs [default|skills]
 *   default: the card A2AServer builds by itself (protocolVersion 0.2.0, `skills: []`);
 *   skills:  with its own skills (tagged `billing`).
 * Prints `READY <base URL>` on stdout once listening.
 */
import { Agent, Model } from '@strands-agents/sdk';
import { A2AExpressServer } from '@strands-agents/sdk/a2a/express';

/** A deterministic fake model: no network, no randomness. */
class FakeEchoModel extends Model {
  #config = { modelId: 'fake-echo' };
  updateConfig(config) {
    this.#config = { ...this.#config, ...config };
  }
  getConfig() {
    return this.#config;
  }
  async *stream(messages) {
    const users = messages.filter((m) => m.role === 'user');
    const last = users[users.length - 1];
    const text = (last?.content ?? []).filter((b) => b.type === 'textBlock').map((b) => b.text).join(' ');
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    yield { type: 'modelContentBlockStartEvent' };
    yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: `strands heard: ${text}` } };
    yield { type: 'modelContentBlockStopEvent' };
    yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
  }
}

const mode = process.argv[2] ?? 'default';
const config = {
  name: 'Strands Billing',
  description: 'Answers billing questions.',
  host: '127.0.0.1',
  port: 0,
  agentFactory: () => new Agent({ model: new FakeEchoModel(), printer: false, systemPrompt: 'Answer billing questions.' }),
};
if (mode === 'skills') {
  config.skills = [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices and charges.', tags: ['billing'] }];
}
const server = new A2AExpressServer(config);
await server.serve();
process.stdout.write(`READY http://127.0.0.1:${server.port}\n`);
