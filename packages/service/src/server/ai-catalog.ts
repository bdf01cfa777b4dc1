/**
 * The current snapshot as an AI Catalog document (Agent-Card/ai-catalog, specVersion 1.0): one
 * entry per agent, described with our reviewed name, description and tags (never card text), and
 * the snapshot's digest, version and creation time as an extension. No I/O of its own: the card
 * URLs the cache recorded and the records that proposed each endpoint come from the caller.
 */
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_SPEC_VERSION, CARD_PATH, CATALOG_CARD_FRAGMENT, isCardUrl, isInlineCardKey } from 'a2a-discovery';
import type { Snapshot, SnapshotAgent } from 'a2a-discovery';

/** The top-level extension: `{ digest, version, createdAt }` of the snapshot the catalog publishes. */
const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';
/** The entry extension: `{ localName, canonicalSha256, rawSha256 }` of the agent. */
const AGENT_EXTENSION = 'dev.a2a-discovery.agent';

/** Inputs of {@link buildAiCatalog}. */
export interface BuildAiCatalogOptions {
  /** `host.displayName`. */
  hostName: string;
}

/**
 * Builds the catalog of `snapshot`, entries in the snapshot's order (by local name).
 *
 * An entry's artifact is `url`, the agent's card URL (for a base URL, the URL its card was read
 * from when the snapshot was built, else `<base>.well-known/agent-card.json`; the endpoint key itself when that is a
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
 * const doc = buildAiCatalog(loop.current()!, { hostName: 'a2a-discovery' });
 */
export function buildAiCatalog(snapshot: Snapshot, o: BuildAiCatalogOptions): Record<string, unknown> {
  const entries: Record<string, unknown>[] = [];
  const used = new Set<string>();
  for (const a of snapshot.agents) {
    // An identifier two agents came with (two catalogs claim it) is kept for the first only.
    const identifier = a.identifier !== undefined && !used.has(a.identifier) ? a.identifier : `${a.baseUrl.split('#')[0]}#${a.localName}`;
    used.add(identifier);
    const url = isInlineCardKey(a.baseUrl) ? undefined : cardUrlOf(a);
    entries.push({
      identifier,
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
function cardUrlOf(a: SnapshotAgent): string {
  const key = a.baseUrl;
  if (key.endsWith(CATALOG_CARD_FRAGMENT)) return key.slice(0, -CATALOG_CARD_FRAGMENT.length);
  if (isCardUrl(key)) return key;
  // Where the card was read when the snapshot was built (the 0.2 path for a peer that only answers there).
  return a.cardUrl ?? `${key}${CARD_PATH}`;
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
