/**
 * The current snapshot as an AI Catalog document (Agent-Card/ai-catalog, specVersion 1.0): one
 * entry per agent, described with our reviewed name, description and tags (never card text), and
 * the snapshot's digest, version and creation time as an extension. No I/O of its own: the card
 * URLs the cache recorded and the records that proposed each endpoint come from the caller.
 */
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_SPEC_VERSION } from '../catalog/index.js';
import { CARD_PATH, CATALOG_CARD_FRAGMENT, isCardUrl, isInlineCardKey } from '../fetch/index.js';
import type { Snapshot, SnapshotAgent } from '../snapshot/index.js';

/** The top-level extension: `{ digest, version, createdAt }` of the snapshot the catalog publishes. */
export const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';
/** The entry extension: `{ localName, canonicalSha256, rawSha256 }` of the agent. */
export const AGENT_EXTENSION = 'dev.a2a-discovery.agent';

/** Inputs of {@link buildAiCatalog}. */
export interface BuildAiCatalogOptions {
  /** `host.displayName`. */
  hostName: string;
  /** The card URL the cache recorded for an endpoint key, when it holds one. */
  cardUrl: (key: string) => Promise<string | undefined>;
}

/**
 * Builds the catalog of `snapshot`, entries in the snapshot's order (by local name).
 *
 * An entry's artifact is `url`, the agent's card URL (for a base URL, the URL the cache fetched
 * the card from, else `<base>.well-known/agent-card.json`; the endpoint key itself when that is a
 * card URL, without its `#card` mark when another catalog gave it), or `data`, the card's JSON as
 * received, for a card carried inline in another catalog (a key with `#card=`). Its `identifier`
 * is the `urn:air:` identifier an AI Catalog gave the agent (kept in the snapshot: a projection
 * keeps it, as the specification requires), else `<endpoint>#<local name>` (the endpoint key
 * without any fragment): a non-`urn:air` identifier, as the specification asks of an operator
 * that is not the publisher, stable while the endpoint keeps its local name, whose trailing
 * segment is that name (so another a2a-discovery reading this catalog names the agent as we do),
 * and a function of the snapshot alone (so the document is one per digest, on every replica).
 *
 * @example
 * const doc = await buildAiCatalog(loop.current()!, { hostName: 'a2a-discovery', cardUrl: async () => undefined });
 */
export async function buildAiCatalog(snapshot: Snapshot, o: BuildAiCatalogOptions): Promise<Record<string, unknown>> {
  const entries: Record<string, unknown>[] = [];
  for (const a of snapshot.agents) {
    const url = isInlineCardKey(a.baseUrl) ? undefined : await cardUrlOf(a.baseUrl, o.cardUrl);
    entries.push({
      identifier: a.identifier ?? `${a.baseUrl.split('#')[0]}#${a.localName}`,
      type: A2A_CARD_MEDIA_TYPE,
      ...(url !== undefined ? { url } : { data: cardJson(a) }),
      displayName: a.localName,
      description: a.description,
      tags: [...a.tags],
      extensions: { [AGENT_EXTENSION]: { localName: a.localName, canonicalSha256: a.canonicalSha256, rawSha256: a.rawSha256 } },
    });
  }
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    host: { displayName: o.hostName },
    entries,
    extensions: { [SNAPSHOT_EXTENSION]: { digest: snapshot.digest, version: snapshot.version, createdAt: new Date(snapshot.createdAt).toISOString() } },
  };
}

/** Where the card of the endpoint `key` is (not an inline card's key). */
async function cardUrlOf(key: string, recorded: BuildAiCatalogOptions['cardUrl']): Promise<string> {
  if (key.endsWith(CATALOG_CARD_FRAGMENT)) return key.slice(0, -CATALOG_CARD_FRAGMENT.length);
  if (isCardUrl(key)) return key;
  return (await recorded(key)) ?? `${key}${CARD_PATH}`;
}

/** The card as its publisher wrote it (the bytes the snapshot kept), else our normalized model. */
function cardJson(a: SnapshotAgent): unknown {
  if (a.body !== undefined) {
    try {
      return JSON.parse(a.body) as unknown;
    } catch {
      // Accepted bodies are JSON; a hand-built snapshot's may not be.
    }
  }
  return a.card;
}
