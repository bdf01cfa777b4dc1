/**
 * One rule for the shape of an entry, for the service's AI Catalog (server/ai-catalog.ts) and
 * the registry's index (./registry-index.ts): an AI Catalog entry (`identifier`, `type`, `url`
 * or `data`, `displayName`, `description`, `tags`) per agent.
 *
 * A snapshot agent is described with our reviewed name, description and tags (never card text);
 * an admitted card outside the snapshot, which has no reviewed text, with its card's name,
 * description and skill tags (third-party text: shown and searched, never put in a prompt).
 */

import type { AgentCardModel, Snapshot, SnapshotAgent } from 'a2a-discovery';
import { A2A_CARD_MEDIA_TYPE, CARD_PATH, CATALOG_CARD_FRAGMENT, airIdentifier, isCardUrl, isInlineCardKey } from 'a2a-discovery/internal';

/** The entry extension: `{ localName, canonicalSha256, rawSha256 }` of a snapshot agent. */
const AGENT_EXTENSION = 'dev.a2a-discovery.agent';

/** An AI Catalog entry as both the catalog and the registry build it. */
export interface CatalogEntry {
  readonly identifier: string;
  readonly type: string;
  readonly url?: string;
  readonly data?: unknown;
  readonly displayName: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly extensions: Readonly<Record<string, unknown>>;
}

/**
 * The entries of `snapshot`'s agents, in the snapshot's order (by local name), each with its
 * agent.
 *
 * An entry's artifact is `url`, the agent's card URL (for a base URL, the URL its card was read
 * from when the snapshot was built, else `<base>.well-known/agent-card.json`; the endpoint key itself when that is a
 * card URL, without its `#card` mark when another catalog gave it), or `data`, the card's JSON as
 * received, for a card carried inline in another catalog (a key with `#card=`). Its `identifier`
 * is the `urn:air:` identifier an AI Catalog gave the agent (kept in the snapshot: a projection
 * keeps it, as the specification requires), else {@link ownIdentifier}: an absolute `urn:air:`
 * identifier (ARD 0.91 refuses relative ones, its conformance tool any other than `urn:air:`),
 * stable while the endpoint keeps its local name, whose trailing segment is that name (so another
 * a2a-discovery reading this catalog names the agent as we do), and a function of the snapshot
 * alone (so the document is one per digest, on every replica).
 */
export function snapshotEntries(snapshot: Snapshot): { agent: SnapshotAgent; entry: CatalogEntry }[] {
  const out: { agent: SnapshotAgent; entry: CatalogEntry }[] = [];
  const used = new Set<string>();
  for (const a of snapshot.agents) {
    // An identifier two agents came with (two catalogs claim it) is kept for the first only.
    const identifier = a.identifier !== undefined && !used.has(a.identifier) ? a.identifier : ownIdentifier(a.baseUrl, a.localName);
    used.add(identifier);
    out.push({
      agent: a,
      entry: {
        identifier,
        type: A2A_CARD_MEDIA_TYPE,
        ...artifact(a.baseUrl, a.cardUrl, a),
        displayName: a.localName,
        description: a.description,
        tags: [...a.tags],
        extensions: { [AGENT_EXTENSION]: { localName: a.localName, canonicalSha256: a.canonicalSha256, rawSha256: a.rawSha256 } },
      },
    });
  }
  return out;
}

/**
 * Our identifier of the agent at endpoint `key` named `name`:
 * `urn:air:<endpoint host>:agent[.<port>]:<name>` (`airIdentifier`), the endpoint's host as the
 * publisher (where the agent is reached). Before ARD 0.91 it was `<endpoint>#<name>`.
 *
 * @example ownIdentifier('https://billing.example.com/', 'billing_agent') // 'urn:air:billing.example.com:agent:billing_agent'
 */
export function ownIdentifier(key: string, name: string): string {
  return airIdentifier(key, 'agent', name);
}

/**
 * The entry of an admitted card outside the snapshot: `identifier` as given (see
 * `RegistryIndex`), `displayName` the card's name, `description` the card's, `tags` its skills'
 * tags (unique, in card order); `url` or `data` as for a snapshot agent.
 */
export function cardEntry(identifier: string, key: string, cardUrl: string | undefined, held: HeldCard): CatalogEntry {
  const { card } = held;
  const tags = [...new Set(card.skills.flatMap((s) => s.tags))];
  return { identifier, type: A2A_CARD_MEDIA_TYPE, ...artifact(key, cardUrl, held), displayName: card.name, description: card.description, tags, extensions: {} };
}

/** What holds a card: a cache entry or a snapshot agent (whose `body` is unpacked when read). */
interface HeldCard {
  readonly body?: string | undefined;
  readonly card: AgentCardModel;
}

/**
 * `url` (where the card is) or `data` (an inline card's JSON) of the endpoint `key`. Only an
 * inline card's text is read.
 */
function artifact(key: string, cardUrl: string | undefined, held: HeldCard): { url: string } | { data: unknown } {
  if (isInlineCardKey(key)) return { data: cardJson(held.body, held.card) };
  if (key.endsWith(CATALOG_CARD_FRAGMENT)) return { url: key.slice(0, -CATALOG_CARD_FRAGMENT.length) };
  if (isCardUrl(key)) return { url: key };
  // Where the card was read when the snapshot was built (the 0.2 path for a peer that only answers there).
  return { url: cardUrl ?? `${key}${CARD_PATH}` };
}

/** The card as its publisher wrote it (the bytes kept), else our normalized model. */
function cardJson(body: string | undefined, card: AgentCardModel): unknown {
  if (body !== undefined) {
    try {
      return JSON.parse(body) as unknown;
    } catch {
      // Accepted bodies are JSON; a hand-built snapshot's may not be.
    }
  }
  return card;
}
