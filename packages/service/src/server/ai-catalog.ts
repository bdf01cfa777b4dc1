/**
 * The current snapshot as an AI Catalog document (Agent-Card/ai-catalog, specVersion 1.0): one
 * entry per agent, described with our reviewed name, description and tags (never card text), and
 * the snapshot's digest, version and creation time as an extension. No I/O of its own: the card
 * URLs the cache recorded and the records that proposed each endpoint come from the caller.
 */
import { AI_CATALOG_SPEC_VERSION } from 'a2a-discovery';
import type { Snapshot } from 'a2a-discovery';
import { snapshotEntries } from '../registry/entry.js';

/** The top-level extension: `{ digest, version, createdAt }` of the snapshot the catalog publishes. */
const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';

/** Inputs of {@link buildAiCatalog}. */
export interface BuildAiCatalogOptions {
  /** `host.displayName`. */
  hostName: string;
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
    entries: snapshotEntries(snapshot).map((e) => e.entry),
    extensions: { [SNAPSHOT_EXTENSION]: { digest: snapshot.digest, version: snapshot.version, createdAt: new Date(snapshot.createdAt).toISOString() } },
  };
}
