/**
 * The service's first build step: the state store (opened from a description, or the caller's)
 * and, beside it, the session service that keeps the conversations.
 */
import type { Clock } from 'a2a-discovery';
import type { StateStore } from '@a2a-discovery/store';
import { openStateStore, parseStoreSpec, storeLocation } from '@a2a-discovery/store';
import type { SessionStoreTarget } from './persistence.js';
import { sessionServiceFor } from './persistence.js';
import type { ServiceOptions } from './service-options.js';

export interface ServiceStores {
  readonly store: StateStore;
  /** True when the service opened the store from a description, and closes it. */
  readonly ownStore: boolean;
  /** The journal's last sequence number when the service starts. */
  readonly startSeq: number;
  readonly sessionStore: Awaited<ReturnType<typeof sessionServiceFor>>;
}

/** Opens the stores; a store the service opened is closed again when the rest fails. */
export async function openStores(o: ServiceOptions, clock: Clock): Promise<ServiceStores> {
  const ownStore = typeof o.store !== 'object';
  const store = typeof o.store === 'object' ? o.store : await openStateStore(o.store ?? 'memory', { clock, ...o.storeOptions, ...(o.replica?.id !== undefined && { replica: o.replica.id }) });
  try {
    const startSeq = await store.lastSeq();
    const sessionStore = await sessionServiceFor(o.sessions?.history === 'memory' || !ownStore ? { kind: 'memory' } : sessionTarget(o.store as string | undefined, o.storeOptions), store.exclusive && ((work) => store.exclusive!(work)));
    return { store, ownStore, startSeq, sessionStore };
  } catch (err) {
    if (ownStore) await store.close().catch(() => undefined);
    throw err;
  }
}

/** Where ADK's DatabaseSessionService connects, for a store given by description. */
function sessionTarget(spec: string | undefined, options: ServiceOptions['storeOptions']): SessionStoreTarget {
  const parsed = parseStoreSpec(spec ?? 'memory');
  if ('problem' in parsed || parsed.kind === 'memory') return { kind: 'memory' };
  if (parsed.kind === 'sqlite') return { kind: 'sqlite', sqliteFile: parsed.file === ':memory:' ? ':memory:' : storeLocation(parsed, options?.dataDir) };
  const url = new URL(parsed.url);
  return {
    kind: 'postgres',
    postgres: {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? 5432 : Number(url.port),
      user: decodeURIComponent(url.username),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username),
      ...(options?.password !== undefined && { password: options.password }),
    },
  };
}
