/**
 * A real A2A peer (ADK JS `toA2a`, A2A 0.3) whose answer the test holds back: its fake model
 * waits at a gate, so a chat turn stays in flight exactly as long as the test wants (no timers).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { BaseLlm, LlmAgent, toA2a } from '@google/adk';
import type { BaseLlmConnection, LlmResponse } from '@google/adk';
import { adkStyleCard } from './cards.js';

/** A fake model that answers only once its gate is open. Named as a fake on purpose. */
class GatedLlm extends BaseLlm {
  entered!: Promise<void>;
  #enter!: () => void;
  #open!: () => void;
  #gate!: Promise<void>;

  constructor(readonly reply: string) {
    super({ model: 'fake-gated' });
    this.reset();
  }

  reset(): void {
    this.entered = new Promise((r) => (this.#enter = r));
    this.#gate = new Promise((r) => (this.#open = r));
  }

  open(): void {
    this.#open();
  }

  override async *generateContentAsync(): AsyncGenerator<LlmResponse, void> {
    this.#enter();
    await this.#gate;
    yield { content: { role: 'model', parts: [{ text: this.reply }] }, turnComplete: true };
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('GatedLlm has no live mode'));
  }
}

export interface GatedPeer {
  readonly baseUrl: string;
  /** Resolves once a request reached the model (since the last {@link reset}). */
  entered(): Promise<void>;
  /** Lets the model answer (this request and the next ones, until {@link reset}). */
  open(): void;
  /** Closes the gate again. */
  reset(): void;
  close(): Promise<void>;
}

/** A billing agent on 127.0.0.1 (tag `billing`) that answers `reply` once the test opens the gate. */
export async function startGatedPeer(reply: string): Promise<GatedPeer> {
  const model = new GatedLlm(reply);
  const agent = new LlmAgent({ name: 'billing', description: 'Billing.', instruction: 'Answer briefly.', model });
  const app = express();
  app.use(express.json());
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true, agentCard: adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) as never });
  return {
    baseUrl: `http://127.0.0.1:${port}/`,
    entered: () => model.entered,
    open: () => model.open(),
    reset: () => model.reset(),
    close: () =>
      new Promise<void>((resolve) => {
        model.open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
