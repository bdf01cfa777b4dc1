/**
 * A service whose endpoints show the verdicts of docs/vocabulary.md side by side, over real
 * loopback parts: `billing_agent` (a real ADK JS peer, selected; critical), `hr_agent` (a card
 * endpoint answering 401: refused, unauthorized), `outside_agent` (a host the allowlist does not
 * name: refused, allowlist) and `new_agent` (a closed port: pending, unreachable). Used by the
 * CLI's `endpoints` test and the dashboard's vocabulary test.
 */
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from './a2a-peers.js';
import { startAdkPeer } from './a2a-peers.js';
import { adkStyleCard } from './cards.js';
import type { JsonServer } from './json-server.js';
import { startJsonServer } from './json-server.js';
import { waitFor } from './wait-for.js';

export interface VerdictFleet {
  service: RunningService;
  billing: RunningPeer;
  /** The card endpoint answering 401. */
  denied: JsonServer;
  /** The origin of the closed port. */
  closedOrigin: string;
  close(): Promise<void>;
}

export async function startVerdictFleet(): Promise<VerdictFleet> {
  const billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing here', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  const denied = await startJsonServer();
  denied.routes.set('/.well-known/agent-card.json', { status: 401, body: { error: 'unauthorized' } });
  const closed = await startJsonServer();
  const closedOrigin = closed.origin;
  await closed.close();
  const service = await startService({
    port: 0,
    policy: { allow: [new URL(billing.baseUrl).origin, denied.origin, closedOrigin], allowLoopback: true },
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
    needs: [{ tag: 'billing' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'], critical: true },
      { name: 'hr_agent', url: `${denied.origin}/`, description: 'Answers HR questions.', tags: ['billing'] },
      { name: 'outside_agent', url: 'http://localhost:1/', description: 'Outside the allowlist.', tags: ['billing'] },
      { name: 'new_agent', url: `${closedOrigin}/`, description: 'Not up yet.', tags: ['billing'] },
    ],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
  await waitFor(async () => (service.loop.current()?.agents.length === 1 ? true : undefined), 'billing in a snapshot');
  return {
    service,
    billing,
    denied,
    closedOrigin,
    close: async () => {
      await service.close();
      await Promise.all([billing.close(), denied.close()]);
    },
  };
}
