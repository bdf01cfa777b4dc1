/**
 * The current snapshot as an AI Catalog document (Agent-Card/ai-catalog, specVersion 1.0; the
 * ARD 0.91 manifest, served at `/.well-known/ard.json` and at its predecessor
 * `/.well-known/ai-catalog.json`): one entry per agent, described with our reviewed name,
 * description and tags (never card text), and the snapshot's digest, version and creation time as
 * an extension. No I/O of its own: the card URLs the cache recorded and the records that proposed
 * each endpoint come from the caller.
 */
import { DiscoveryError } from 'a2a-discovery';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_SPEC_VERSION, AI_REGISTRY_MEDIA_TYPE, airIdentifier, relativeIdentifierProblem } from 'a2a-discovery/internal';
import type { Snapshot } from 'a2a-discovery';
import { snapshotEntries } from '../../registry/entry.js';
import { A2A_RPC_PATH, AGENT_CARD_PATHS, orchestratorTags } from '../a2a/agent-card.js';

/** The top-level extension: `{ digest, version, createdAt }` of the snapshot the catalog publishes. */
const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';
/** The orchestrator's entry extension: `{ rpc }`, the path of its JSON-RPC endpoint. */
const ORCHESTRATOR_EXTENSION = 'dev.a2a-discovery.orchestrator';

/** Inputs of {@link buildAiCatalog}. */
export interface BuildAiCatalogOptions {
  /** `host.displayName`. */
  hostName: string;
  /**
   * Where the service is reached (`https://host[:port]`): the publisher of the service's own
   * entries (the orchestrator, the registry), whose identifiers are `urn:air:<host>:…`. Default
   * `http://localhost` (a document built without a request).
   */
  origin?: string;
  /**
   * The service as an A2A agent: one more entry after the agents, at its own card (a path of the
   * service, resolved against the catalog's URL), described with its configured name and text and
   * every reviewed tag the snapshot routes by.
   */
  agent?: { name: string; description: string };
  /**
   * The service's ARD registry API base (a path of the service, or an absolute URL): one more
   * entry, of type `application/ai-registry+json`, after the agents (ARD §4.1, §7).
   */
  registry?: { url: string; displayName: string };
}

/**
 * Builds the catalog of `snapshot`, entries in the snapshot's order (by local name), each as
 * `snapshotEntries` (registry/entry.ts) builds it — the one rule the registry's index follows
 * too: identifiers (the agent's `urn:air:` identifier, else ours, `urn:air:<endpoint
 * host>:agent:<local name>`), `url` or `data`, reviewed text, the `dev.a2a-discovery.agent`
 * extension. Every entry carries its media type twice, as `type` (AI Catalog 1.0) and as
 * `mediaType` (its earlier name, which the ARD 0.91 reference reader still asks for).
 *
 * @throws DiscoveryError `ERR_CARD_INVALID` when an entry's identifier is relative (ARD 0.91), naming its JSON path.
 * @example
 * const doc = buildAiCatalog(loop.current()!, { hostName: 'a2a-discovery', origin: 'https://agents.example.com' });
 */
export function buildAiCatalog(snapshot: Snapshot, o: BuildAiCatalogOptions): Record<string, unknown> {
  const origin = o.origin ?? 'http://localhost';
  const entries: Record<string, unknown>[] = [
    ...snapshotEntries(snapshot).map((e) => ({ ...e.entry })),
    ...(o.agent
      ? [{ identifier: airIdentifier(origin, 'agent', o.agent.name), type: A2A_CARD_MEDIA_TYPE, url: AGENT_CARD_PATHS[0], displayName: o.agent.name, description: o.agent.description, tags: orchestratorTags(snapshot), extensions: { [ORCHESTRATOR_EXTENSION]: { rpc: A2A_RPC_PATH } } }]
      : []),
    ...(o.registry
      ? [{
          identifier: airIdentifier(origin, 'registry', 'ard-registry'),
          type: AI_REGISTRY_MEDIA_TYPE,
          url: o.registry.url,
          displayName: o.registry.displayName,
          description: 'ARD search over the agents this service verified (POST /search, GET /agents, GET /agents/{identifier}, POST /explore).',
          tags: ['registry', 'search'],
        }]
      : []),
  ];
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    host: { displayName: o.hostName },
    entries: entries.map((e, i) => {
      const relative = relativeIdentifierProblem(String(e['identifier']));
      if (relative !== undefined) throw new DiscoveryError('ERR_CARD_INVALID', `entries[${i}].identifier ${relative}`, { path: `entries[${i}].identifier`, problems: [{ path: `entries[${i}].identifier`, message: relative }] });
      const { identifier, type, ...rest } = e;
      return { identifier, type, mediaType: type, ...rest };
    }),
    extensions: { [SNAPSHOT_EXTENSION]: { digest: snapshot.digest, version: snapshot.version, createdAt: new Date(snapshot.createdAt).toISOString() } },
  };
}
