/**
 * A fake model for registry tests (no model API can run here): it either transfers, by
 * emitting the `transfer_to_agent` function call the ADK flow executes, or answers with a fixed
 * text. Every call is appended to a shared log, so a test can see which instance ran.
 */
import { BaseLlm } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';

export interface FakeCall {
  readonly label: string;
  readonly systemInstruction: string;
}

export class FakeScriptedLlm extends BaseLlm {
  readonly #label: string;
  readonly #action: { transferTo: string } | { reply: string };
  readonly #log: FakeCall[];

  /** `label` identifies this instance in `log` (two agents may share a name). */
  constructor(label: string, action: { transferTo: string } | { reply: string }, log: FakeCall[]) {
    super({ model: 'fake-scripted-registry' });
    this.#label = label;
    this.#action = action;
    this.#log = log;
  }

  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.#log.push({ label: this.#label, systemInstruction: String(request.config?.systemInstruction ?? '') });
    if ('transferTo' in this.#action) {
      yield {
        content: { role: 'model', parts: [{ functionCall: { name: 'transfer_to_agent', args: { agentName: this.#action.transferTo } } }] },
        turnComplete: true,
      };
    } else {
      yield { content: { role: 'model', parts: [{ text: this.#action.reply }] }, turnComplete: true };
    }
  }

  override connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('FakeScriptedLlm has no live mode'));
  }
}
