/**
 * Which events the journal keeps. The journal is what an operator reads hours later: snapshots,
 * alerts and their resolutions, admissions and refusals, health and match verdicts, sessions and
 * trees, restarts (`service.started`) and takeovers (`replica.leader`) — a restart carries the
 * alerts it finds open here — and the card and AI Catalog results that changed something (a new card or catalog, a
 * rejected one, a catalog the allowlist refuses). Cache chatter — fetches, fresh hits, 304s,
 * unchanged bytes, stale serving, failures and backoff — happens every cycle for every endpoint;
 * it only adds to a counter (`card.result.<outcome>`, `catalog.read.<outcome>`, `card.fetch`,
 * `card.backoff`).
 */
import type { DiscoveryEvent } from 'a2a-discovery';

/** `'journal'` when the event is kept, otherwise the name of the counter it adds one to. */
export function journalOrCounter(event: DiscoveryEvent): 'journal' | string {
  switch (event.type) {
    case 'card.fetch':
      return event.conditional ? 'card.fetch.conditional' : 'card.fetch.unconditional';
    case 'card.backoff':
      return 'card.backoff';
    case 'card.result':
      return event.outcome === 'changed' || event.outcome === 'invalid' ? 'journal' : `card.result.${event.outcome}`;
    case 'catalog.read':
      // Like cards: a catalog that changed or was rejected is history; the rest is chatter.
      return event.outcome === 'changed' || event.outcome === 'invalid' || event.outcome === 'refused' ? 'journal' : `catalog.read.${event.outcome}`;
    default:
      return 'journal';
  }
}
