/**
 * A loader for `@google/adk-devtools` (the ADK dev UI and API server) over our snapshots: it lists
 * only roots, one per retained snapshot, with the digest in the app name
 * (`orchestrator__<digest12>`), because the dev server caches one runner per app name for the
 * life of the process — a name must always mean the same tree.
 *
 * ADK JS 2.0's `AgentLoader` class is not exported, but `AdkApiServer({ agentLoader })` works
 * with any object of this shape (verified against @google/adk-devtools 2.0.0):
 *
 * @example
 * import { AdkApiServer } from '@google/adk-devtools';
 * const loader = devUiLoader({ trees, snapshots: loop.snapshots });
 * const server = new AdkApiServer({ agentLoader: loader as never, host: '127.0.0.1', port: 8000 });
 * await server.start();
 */
import type { BaseAgent } from '@google/adk';
import { DiscoveryError } from '../errors.js';
import type { Snapshot, SnapshotStore } from '../snapshot/index.js';
import type { TreeFactory } from './tree-factory.js';

/** The duck type of ADK devtools' `AgentLoader` that `AdkApiServer` calls. */
export interface DevUiAgentLoader {
  listAgents(): Promise<string[]>;
  getAgentFile(name: string): Promise<{ load(): Promise<BaseAgent>; [Symbol.asyncDispose](): Promise<void> }>;
  listLoadFailures(): Array<{ name: string; error: string }>;
  disposeAll(): Promise<void>;
}

const DIGEST_CHARS = 12;

/** The dev-UI app name of a snapshot's root. */
export function devUiAppName(rootName: string, snapshot: Pick<Snapshot, 'digest'>): string {
  return `${rootName}__${snapshot.digest.slice(0, DIGEST_CHARS)}`;
}

export function devUiLoader(options: { trees: TreeFactory; snapshots: SnapshotStore; rootName?: string }): DevUiAgentLoader {
  const rootName = options.rootName ?? 'orchestrator';
  const failures = new Map<string, string>();
  const find = (name: string): Snapshot | undefined => {
    const prefix = name.startsWith(`${rootName}__`) ? name.slice(rootName.length + 2) : undefined;
    if (prefix === undefined || prefix.length !== DIGEST_CHARS) return undefined;
    const retained = options.snapshots.retained().find((r) => r.digest.startsWith(prefix));
    return retained && options.snapshots.get(retained.digest);
  };
  return {
    // Roots only, newest first: developers never start a session on a leaf by accident.
    async listAgents() {
      return options.snapshots
        .retained()
        .map((r) => options.snapshots.get(r.digest))
        .filter((s): s is Snapshot => s !== undefined)
        .map((s) => devUiAppName(rootName, s));
    },
    async getAgentFile(name) {
      const snapshot = find(name);
      if (!snapshot) throw new DiscoveryError('ERR_USAGE', `Agent '${name}' not found: no retained snapshot has that digest`);
      return {
        async load() {
          try {
            return options.trees.prepare(snapshot);
          } catch (err) {
            failures.set(name, err instanceof Error ? err.message : String(err));
            throw new DiscoveryError('ERR_REGISTRY_INVALID', `failed to build ${name}`, { cause: err, stage: 'build' });
          }
        },
        async [Symbol.asyncDispose]() {},
      };
    },
    listLoadFailures() {
      return [...failures].map(([name, error]) => ({ name, error }));
    },
    async disposeAll() {
      failures.clear();
    },
  };
}
