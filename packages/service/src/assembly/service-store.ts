/**
 * The service's first build step: the state store (opened from a description, or the caller's)
 * and, beside it, the session service that keeps the conversations.
 */
import type { Clock } from 'a2a-discovery';
import type { StateStore, TurnsInFlight } from '@a2a-discovery/store';
import { openStateStore } from '@a2a-discovery/store';
import type { AdkSessions } from '@a2a-discovery/store/adk-sessions';
import { openAdkSessionService } from '@a2a-discovery/store/adk-sessions';
import type { ServiceOptions } from './service-options.js';

export interface ServiceStores {
  readonly store: StateStore;
  /** True when the service opened the store from a description, and closes it. */
  readonly ownStore: boolean;
  /** The journal's last sequence number when the service starts. */
  readonly startSeq: number;
  readonly sessionStore: AdkSessions;
}

/** Opens the stores; a store the service opened is closed again when the rest fails. */
export async function openStores(o: ServiceOptions, clock: Clock, turns?: TurnsInFlight): Promise<ServiceStores> {
  const ownStore = typeof o.store !== 'object';
  const store =
    typeof o.store === 'object' ? o.store : await openStateStore(o.store ?? 'memory', { clock, ...o.storeOptions, ...(o.replica?.id !== undefined && { replica: o.replica.id }), ...(turns && { turns }) });
  try {
    const startSeq = await store.lastSeq();
    // On the database of a store the service opened (same file, same PostgreSQL connection and
    // TLS); in memory for a caller's store or when asked to.
    const sessionStore = await openAdkSessionService(o.sessions?.history === 'memory' || typeof o.store === 'object' ? 'memory' : (o.store ?? 'memory'), {
      ...(o.storeOptions?.dataDir !== undefined && { dataDir: o.storeOptions.dataDir }),
      ...(o.storeOptions?.password !== undefined && { password: o.storeOptions.password }),
      ...(o.storeOptions?.schema !== undefined && { schema: o.storeOptions.schema }),
      store,
    });
    return { store, ownStore, startSeq, sessionStore };
  } catch (err) {
    if (ownStore) await store.close().catch(() => undefined);
    throw err;
  }
}
