/** Runs one user turn through a fresh `InMemoryRunner` and returns the events, simplified. */
import { InMemoryRunner } from '@google/adk';
import type { BaseAgent } from '@google/adk';

export interface TurnEvent {
  readonly author: string | undefined;
  readonly text: string;
  readonly transferTo: string | undefined;
  readonly error: string | undefined;
}

export async function runTurn(root: BaseAgent, text: string): Promise<TurnEvent[]> {
  const runner = new InMemoryRunner({ agent: root, appName: 'registry_test' });
  const session = await runner.sessionService.createSession({ appName: 'registry_test', userId: 'u1' });
  const events: TurnEvent[] = [];
  for await (const ev of runner.runAsync({ userId: 'u1', sessionId: session.id, newMessage: { role: 'user', parts: [{ text }] } })) {
    events.push({
      author: ev.author,
      text: (ev.content?.parts ?? []).map((p) => p.text ?? '').join(''),
      transferTo: ev.actions?.transferToAgent,
      error: ev.errorMessage,
    });
  }
  return events;
}
