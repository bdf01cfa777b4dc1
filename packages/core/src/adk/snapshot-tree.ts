/**
 * From a snapshot to a checked ADK tree: one remote spec per agent (our local name, our reviewed
 * description, the cached card, its transport options — no I/O), one root spec over them, built and verified through
 * the agent registry (tree-wide unique names, the reserved `user`, every node's root and lookup
 * checked with ADK's own `rootAgent` and `findAgent`).
 */
import type { BaseAgent } from '@google/adk';
import type { HostPolicy } from '../fetch/index.js';
import type { AgentSpec } from '../registry/index.js';
import { AgentRegistry } from '../registry/index.js';
import type { Snapshot } from '../snapshot/index.js';
import type { CredentialsInput } from './remote/index.js';
import { createPolicyFetch } from './remote/index.js';
import { remoteSpec } from './remote-spec.js';
import type { RootKind } from './root-agent.js';
import { buildDomainRouter, buildRootAgent } from './root-agent.js';

export interface SnapshotTreeOptions {
  /** The root's name. Default `orchestrator`; it must not collide with an agent's local name. */
  rootName?: string;
  root: RootKind;
  /** The allowlist every remote call goes through. */
  policy: HostPolicy;
  /**
   * One shared policy fetch for every remote agent of every tree (pooled connections), owned
   * by the caller. Default: the builder creates one, closed by its `close()`.
   */
  fetchImpl?: typeof fetch;
  /** Per-origin credentials of the builder's own policy fetch. */
  credentials?: CredentialsInput;
  /** Let ADK's `adk_*` identifiers reach peers. Default false. */
  allowAdkMetadata?: boolean;
}

/** A `buildRoot` for {@link TreeFactory}, with `close()` for the connection pool it owns. */
export type SnapshotTreeBuilder = ((snapshot: Snapshot) => BaseAgent) & { close(): Promise<void> };

/**
 * A `buildRoot` for {@link TreeFactory}: every tree's remote agents share one connection pool.
 *
 * @example
 * const buildRoot = snapshotTreeBuilder({ root: { kind: 'routed' }, policy });
 * const trees = new TreeFactory({ snapshots: loop.snapshots, buildRoot });
 * // on shutdown: trees.close(); await buildRoot.close();
 */
export function snapshotTreeBuilder(options: SnapshotTreeOptions): SnapshotTreeBuilder {
  const rootName = options.rootName ?? 'orchestrator';
  // Created on the first build (no I/O before it), shared by every tree, closed once.
  let owned: ReturnType<typeof createPolicyFetch> | undefined;
  const fetchImpl = (): typeof fetch =>
    options.fetchImpl ?? (owned ??= createPolicyFetch({ policy: options.policy, ...(options.credentials && { credentials: options.credentials }) }));
  const build = (snapshot: Snapshot): BaseAgent => {
    const specs: AgentSpec[] = snapshot.agents.map((a) =>
      remoteSpec({
        name: a.localName,
        description: a.description,
        card: a.card,
        policy: options.policy,
        fetchImpl: fetchImpl(),
        // The static entry's or registry record's streaming, headers, timeout and tenant.
        ...(a.transport !== undefined && { transport: a.transport }),
        ...(options.allowAdkMetadata !== undefined && { allowAdkMetadata: options.allowAdkMetadata }),
      }),
    );
    // Two levels: one sub-router per domain, each over its agents. The registry refuses a name
    // used twice anywhere in the tree and verifyTree checks every level with ADK's own lookup.
    for (const d of snapshot.domains ?? []) {
      specs.push({
        name: d.name,
        description: d.description,
        version: String(snapshot.version),
        kind: 'local',
        children: [...d.agents],
        factory: (spec, children) => buildDomainRouter(spec.name, snapshot, children, options.root),
      });
    }
    specs.push({
      name: rootName,
      description: `Orchestrator over snapshot v${snapshot.version}.`,
      version: String(snapshot.version),
      kind: 'local',
      children: snapshot.domains?.length ? snapshot.domains.map((d) => d.name) : snapshot.agents.map((a) => a.localName),
      factory: (spec, children) => buildRootAgent(spec.name, snapshot, children, options.root),
    });
    return AgentRegistry.of(specs).buildTree(rootName);
  };
  return Object.assign(build, {
    close: async () => {
      await owned?.close();
      owned = undefined;
    },
  });
}
