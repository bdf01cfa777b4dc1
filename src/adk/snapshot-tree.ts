/**
 * From a snapshot to a checked ADK tree: one remote spec per agent (our local name, our reviewed
 * description, the cached card — no I/O), one root spec over them, built and verified through
 * the agent registry (tree-wide unique names, the reserved `user`, every node's root and lookup
 * checked with ADK's own `rootAgent` and `findAgent`).
 */
import type { BaseAgent } from '@google/adk';
import type { HostPolicy } from '../fetch/index.js';
import type { AgentSpec } from '../registry/index.js';
import { AgentRegistry } from '../registry/index.js';
import type { Snapshot } from '../snapshot/index.js';
import type { OriginCredentials } from './remote/index.js';
import { remoteAgentFor } from './remote/index.js';
import type { RootKind } from './root-agent.js';
import { buildRootAgent } from './root-agent.js';

export interface SnapshotTreeOptions {
  /** The root's name. Default `orchestrator`; it must not collide with an agent's local name. */
  rootName?: string;
  root: RootKind;
  /** The allowlist every remote call goes through. */
  policy: HostPolicy;
  /** One shared policy fetch for the remote agents (pooled connections); see `createPolicyFetch`. */
  fetchImpl?: typeof fetch;
  credentials?: OriginCredentials;
  /** Let ADK's `adk_*` identifiers reach peers. Default false. */
  allowAdkMetadata?: boolean;
}

/**
 * A `buildRoot` for {@link TreeFactory}.
 *
 * @example
 * const trees = new TreeFactory({ snapshots: loop.snapshots, buildRoot: snapshotTreeBuilder({ root: { kind: 'routed' }, policy }) });
 */
export function snapshotTreeBuilder(options: SnapshotTreeOptions): (snapshot: Snapshot) => BaseAgent {
  const rootName = options.rootName ?? 'orchestrator';
  return (snapshot) => {
    const specs: AgentSpec[] = snapshot.agents.map((a) => ({
      name: a.localName,
      description: a.description,
      version: a.card.version,
      kind: 'remote',
      children: [],
      factory: (spec) =>
        remoteAgentFor({
          name: spec.name,
          description: spec.description,
          card: a.card,
          policy: options.policy,
          ...(options.fetchImpl && { fetchImpl: options.fetchImpl }),
          ...(options.credentials && { credentials: options.credentials }),
          ...(options.allowAdkMetadata !== undefined && { allowAdkMetadata: options.allowAdkMetadata }),
        }),
    }));
    specs.push({
      name: rootName,
      description: `Orchestrator over snapshot v${snapshot.version}.`,
      version: String(snapshot.version),
      kind: 'local',
      children: snapshot.agents.map((a) => a.localName),
      factory: (spec, children) => buildRootAgent(spec.name, snapshot, children, options.root),
    });
    return AgentRegistry.of(specs).buildTree(rootName);
  };
}
