/**
 * A service over one real @a2a-js/sdk 1.x card server (`warranty_agent`, A2A 1.0) whose card a test
 * changes: `publish(overrides)` serves the new card, reads it again and runs a discovery cycle, resolving to the
 * snapshot published. Used where a test needs snapshots whose changes are breaking or compatible
 * (`GET /api/diff`, `a2a-discovery diff`).
 */
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startV1CardServer, v1Card } from './a2a-peers.js';
import { waitFor } from './wait-for.js';

export interface ChangingCardService {
  service: RunningService;
  /** The snapshot of the first cycle (the card of {@link v1Card}). */
  first: Snapshot;
  /** Serves `v1Card(port, overrides)` from now on and runs a cycle; resolves to the snapshot current after it. */
  publish(overrides: Record<string, unknown>): Promise<Snapshot>;
  close(): Promise<void>;
}

/** `extra`: more service options (a token, …). */
export async function startChangingCardService(extra: Partial<ServiceOptions> = {}): Promise<ChangingCardService> {
  const peer = await startV1CardServer({ card: (port) => v1Card(port) });
  const service = await startService({
    port: 0,
    // The card requires a bearer: the service presents one to the peer's origin.
    credentials: (origin) => (origin === new URL(peer.baseUrl).origin ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'warranty', description: 'Warranty status.' }],
    needs: [{ tag: 'warranty' }],
    static: [{ name: 'warranty_agent', cardUrl: peer.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    // Each change is published at once, breaking or not: these stands diff published snapshots
    // (a breaking change's staged rollout is test/rollout/staged-rollout.test.ts's).
    rollout: { trigger: 'off' },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
  const first = await waitFor(async () => (service.loop.current()?.agents.length === 1 ? service.loop.current() : undefined), 'warranty_agent admitted');
  return {
    service,
    first,
    async publish(overrides) {
      peer.setCard((port) => v1Card(port, overrides));
      // The card is read again now, whatever its freshness; the cycle then publishes it.
      await service.cache.refresh(first.agents[0]!.baseUrl);
      const s = await service.loop.refreshNow();
      if (s === undefined) throw new Error('the cycle published nothing');
      return s;
    },
    async close() {
      await service.close();
      await peer.close();
    },
  };
}
