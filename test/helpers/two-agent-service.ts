/**
 * A service over two real loopback A2A peers, both in its snapshot: `billing_agent` (ADK JS
 * `toA2a`, A2A 0.3, by base URL) and `warranty_agent` (@a2a-js/sdk 1.x, A2A 1.0, by card URL,
 * behind a bearer the service's credentials present). Used where a test needs a registry with
 * real, verified entries (the registry's conformance, the Search view against the real routes).
 */
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from './a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from './a2a-peers.js';
import type { RunningV1Server } from './a2a-v1-server.js';
import { startV1Server } from './a2a-v1-server.js';
import { adkStyleCard } from './cards.js';

export interface TwoAgentService {
  service: RunningService;
  billing: RunningPeer;
  warranty: Awaited<ReturnType<typeof startV1CardServer>>;
  close(): Promise<void>;
}

/** `extra`: more service options (a token, the catalog, …) over the two agents'. */
export async function startTwoAgentService(extra: Partial<ServiceOptions> = {}): Promise<TwoAgentService> {
  const billing = await startBillingPeer();
  const warranty = await startV1CardServer({ card: (port) => v1Card(port) });
  const service = await serviceOver(billing, warranty, (origin) => (origin === new URL(warranty.baseUrl).origin ? { authorization: 'Bearer test-token' } : undefined), extra);
  return closing(service, billing, warranty);
}

/** The same service, where `warranty_agent` (@a2a-js/sdk 1.x, A2A 1.0) answers 401 to every A2A call and billing replies `billing here`. */
export async function startRefusingWarrantyService(): Promise<{ service: RunningService; billing: RunningPeer; warranty: RunningV1Server; close(): Promise<void> }> {
  const billing = await startBillingPeer();
  const warranty = await startV1Server({ refuseWith: 401 });
  return closing(await serviceOver(billing, warranty), billing, warranty);
}

/** The three, with one `close()` that stops the service, then its peers. */
function closing<W extends { close(): Promise<void> }>(service: RunningService, billing: RunningPeer, warranty: W): { service: RunningService; billing: RunningPeer; warranty: W; close(): Promise<void> } {
  return {
    service,
    billing,
    warranty,
    close: async () => {
      await service.close();
      await Promise.all([billing.close(), warranty.close()]);
    },
  };
}

function startBillingPeer(): Promise<RunningPeer> {
  return startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing here', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
}

function serviceOver(billing: RunningPeer, warranty: { baseUrl: string; cardUrl: string }, credentials?: (origin: string) => Record<string, string> | undefined, extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    port: 0,
    ...(credentials !== undefined && { credentials }),
    policy: { allow: [billing, warranty].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'warranty', description: 'Warranty status.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
}
