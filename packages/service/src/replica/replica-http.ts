/**
 * The replicas' part of the HTTP side: the shared key they authenticate each other with
 * (replica-auth.ts; never the admin token) and a follower's proxy to the leader's lists
 * (follower-proxy.ts). Built only with several replicas (a coordinator).
 */
import type { EventStream } from 'a2a-discovery';
import { systemClock } from 'a2a-discovery';
import type { ReplicaCoordinator } from '@a2a-discovery/store';
import type { OnRefusal, ServerLimits } from '../http/limits.js';
import type { Logger } from '../telemetry/logger.js';
import { LeaderUrls, ReplicaAuth } from '../auth/replica-auth.js';
import type { ServiceOptions } from '../assembly/service-options.js';
import { FollowerProxy } from './follower-proxy.js';

export interface ReplicaHttp {
  /** The replica key (a reload rotates it). */
  readonly replicaAuth: ReplicaAuth | undefined;
  /** The follower's proxy (a reload sets its leader URLs). */
  readonly followerProxy: FollowerProxy | undefined;
}

/**
 * Builds the replica key and the follower's proxy when there is a coordinator (none without); the
 * proxy's requests in flight end when `shutdown` aborts. Warns when no replica key is configured.
 */
export function buildReplicaHttp(
  o: Pick<ServiceOptions, 'replica' | 'clock' | 'policy'>,
  p: { coordinator: ReplicaCoordinator | undefined; limits: ServerLimits; refusal: OnRefusal; events: EventStream; log: Logger; shutdown: AbortSignal },
): ReplicaHttp {
  const { coordinator } = p;
  // Replicas authenticate each other with their shared key, never the admin token (replica-auth.ts).
  const replicaLog = p.log.child({ component: 'replica' });
  const replicaAuth =
    coordinator &&
    new ReplicaAuth({
      key: o.replica?.key,
      clock: o.clock ?? systemClock,
      ...(o.replica?.authWindowMs !== undefined && { authWindowMs: o.replica.authWindowMs }),
      ...(o.replica?.maxNonces !== undefined && { maxNonces: o.replica.maxNonces }),
      ...(o.replica?.keyGraceMs !== undefined && { keyGraceMs: o.replica.keyGraceMs }),
    });
  if (replicaAuth && !replicaAuth.configured) replicaLog.warn('no replica key (replica.keyEnv or replica.keyFile): as a follower, this replica cannot show the leader’s endpoints, sources and activity (503), and as the leader it admits no follower');
  // A follower answers the leader's lists (follower-proxy.ts); requests in flight end with the service.
  const followerProxy =
    coordinator &&
    new FollowerProxy({
      status: () => coordinator.status(),
      timeoutMs: p.limits.leaderTimeoutMs,
      maxBytes: p.limits.leaderMaxBytes,
      ...(o.policy.allowCidrs !== undefined && { allowCidrs: o.policy.allowCidrs }),
      ...(replicaAuth && { auth: replicaAuth }),
      leaderUrls: new LeaderUrls(o.replica?.leaderUrls),
      onRefusal: () => p.refusal('leader_url'),
      // A leader URL in the store this replica does not send to: someone wrote the row, or replica.leaderUrls misses a replica.
      onLeaderUrlRefused: (url, why) => {
        replicaLog.warn({ url, reason: why }, 'refused the leader URL read from the store: nothing is sent there');
        p.events.emit({ type: 'alert', kind: 'replica-leader-url-refused', message: `the leader URL ${url} read from the store was refused, nothing was sent there: ${why}`, detail: { url, reason: why } });
      },
    });
  if (followerProxy) p.shutdown.addEventListener('abort', () => followerProxy.close(), { once: true });
  return { replicaAuth, followerProxy };
}
