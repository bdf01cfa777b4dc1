/**
 * The current snapshot as an AI Catalog document (Agent-Card/ai-catalog, specVersion 1.0): one
 * entry per agent, described with our reviewed name, description and tags (never card text), and
 * the snapshot's digest, version and creation time as an extension. No I/O of its own: the card
 * URLs the cache recorded and the records that proposed each endpoint come from the caller.
 */
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_SPEC_VERSION } from 'a2a-discovery/internal';
import type { Snapshot } from 'a2a-discovery';
import { snapshotEntries } from '../registry/entry.js';
import { A2A_RPC_PATH, AGENT_CARD_PATHS, orchestratorTags } from './a2a/agent-card.js';

/** The top-level extension: `{ digest, version, createdAt }` of the snapshot the catalog publishes. */
const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';
/** The orchestrator's entry extension: `{ rpc }`, the path of its JSON-RPC endpoint. */
const ORCHESTRATOR_EXTENSION = 'dev.a2a-discovery.orchestrator';

/** Inputs of {@link buildAiCatalog}. */
export interface BuildAiCatalogOptions {
  /** `host.displayName`. */
  hostName: string;
  /**
   * The service as an A2A agent: one more entry after the agents, at its own card (a path of the
   * service, resolved against the catalog's URL), described with its configured name and text and
   * every reviewed tag the snapshot routes by.
   */
  agent?: { name: string; description: string };
}

/**
 * Builds the catalog of `snapshot`, entries in the snapshot's order (by local name), each as
 * `snapshotEntries` (registry/entry.ts) builds it — the one rule the registry's index follows
 * too: identifiers (the agent's `urn:air:` identifier, else `<endpoint>#<local name>`), `url` or
 * `data`, reviewed text, the `dev.a2a-discovery.agent` extension.
 *
 * @example
 * const doc = buildAiCatalog(loop.current()!, { hostName: 'a2a-discovery' });
 */
export function buildAiCatalog(snapshot: Snapshot, o: BuildAiCatalogOptions): Record<string, unknown> {
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    host: { displayName: o.hostName },
    entries: [
      ...snapshotEntries(snapshot).map((e) => e.entry),
      ...(o.agent
        ? [{ identifier: `${AGENT_CARD_PATHS[0]}#${o.agent.name}`, type: A2A_CARD_MEDIA_TYPE, url: AGENT_CARD_PATHS[0], displayName: o.agent.name, description: o.agent.description, tags: orchestratorTags(snapshot), extensions: { [ORCHESTRATOR_EXTENSION]: { rpc: A2A_RPC_PATH } } }]
        : []),
    ],
    extensions: { [SNAPSHOT_EXTENSION]: { digest: snapshot.digest, version: snapshot.version, createdAt: new Date(snapshot.createdAt).toISOString() } },
  };
}
