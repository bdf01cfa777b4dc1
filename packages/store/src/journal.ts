/**
 * Which events the journal keeps. The journal is what an operator reads hours later: snapshots,
 * alerts and their resolutions, admissions and refusals, health and match verdicts, sessions and
 * trees, restarts (`service.started`) and takeovers (`replica.leader`) — a restart carries the
 * alerts it finds open here — and the card and AI Catalog results that changed something (a new card or catalog, a
 * rejected one, a catalog the allowlist refuses). Cache chatter — fetches, fresh hits, 304s,
 * unchanged bytes, stale serving, failures and backoff — happens every cycle for every endpoint;
 * it only adds to a counter (`card.result.<outcome>`, `catalog.read.<outcome>`, `card.fetch`,
 * `card.backoff`).
 *
 * And how long it keeps them ({@link retainJournal}): by age, by a quota per event type and by a
 * total cap that cuts high-volume kinds before the ones operators need, so a churning source
 * cannot flush the snapshots, alerts, admissions and refusals. What a quota or the cap deletes is
 * counted per type (`journal.pruned.<type>`).
 */
import type { DiscoveryEvent } from 'a2a-discovery';
import type { StoreRetention } from './state-store.js';

/** A frozen lookup without a prototype: an outcome the table does not name finds nothing. */
function vocabulary<T extends Record<string, string>>(names: T): Readonly<T> {
  return Object.freeze(Object.assign(Object.create(null) as T, names));
}

/**
 * Where each card outcome goes, as constant strings: a cycle's results are an event per endpoint,
 * each looked up by this name in several maps, and a name built per event is hashed each time.
 */
const CARD_RESULT: Readonly<Record<Extract<DiscoveryEvent, { type: 'card.result' }>['outcome'], string>> = vocabulary({
  hit: 'card.result.hit',
  revalidated: 'card.result.revalidated',
  changed: 'journal',
  unchanged: 'card.result.unchanged',
  stale: 'card.result.stale',
  invalid: 'journal',
  failed: 'card.result.failed',
});

/** Like cards: a catalog that changed or was rejected is history; the rest is chatter. */
const CATALOG_READ: Readonly<Record<Extract<DiscoveryEvent, { type: 'catalog.read' }>['outcome'], string>> = vocabulary({
  changed: 'journal',
  unchanged: 'catalog.read.unchanged',
  revalidated: 'catalog.read.revalidated',
  stale: 'catalog.read.stale',
  invalid: 'journal',
  failed: 'catalog.read.failed',
  refused: 'journal',
});

/** `'journal'` when the event is kept, otherwise the name of the counter it adds one to. */
export function journalOrCounter(event: DiscoveryEvent): 'journal' | string {
  switch (event.type) {
    case 'card.fetch':
      return event.conditional ? 'card.fetch.conditional' : 'card.fetch.unconditional';
    case 'card.backoff':
      return 'card.backoff';
    case 'card.result':
      return CARD_RESULT[event.outcome] ?? `card.result.${event.outcome}`;
    case 'catalog.read':
      return CATALOG_READ[event.outcome] ?? `catalog.read.${event.outcome}`;
    default:
      return 'journal';
  }
}

/**
 * The kinds an operator reads after the fact — publications and held snapshots, alerts and their
 * resolutions, admissions and refusals, routing gates. When the journal is over its total cap
 * (`journalMaxEvents`), the oldest rows of every other kind go first (under endpoint churn:
 * `endpoint.gone`/`evicted`, `health.changed`, `match.verdict`, card and catalog results, trees,
 * sessions); these go by the cap only once nothing else is left to cut. Every kind, these
 * included, is also bounded by its own quota (`journalMaxEventsPerType`) and by age.
 */
export const PROTECTED_JOURNAL_TYPES: readonly string[] = Object.freeze([
  'snapshot.published',
  'snapshot.held',
  'alert',
  'alert.resolved',
  'endpoint.admitted',
  'endpoint.refused',
  'routing.evaluated',
]);

/** The store counter that counts rows of `type` deleted by a quota or the cap before their age (`journal.pruned.<type>`). */
export function prunedCounter(type: string): string {
  return `journal.pruned.${type}`;
}

/** The bounds of the journal's retention ({@link StoreRetention}). */
type JournalBounds = Readonly<Required<Pick<StoreRetention, 'journalMaxEvents' | 'journalMaxEventsPerType' | 'journalMaxAgeMs'>>>;

/**
 * The journal's retention rule, in one place for both stores. Rows whose `at` is before
 * `now - journalMaxAgeMs` go first (not counted: that is the journal's horizon; `horizon`). Of
 * the rows left, with `counts` of them per type: each type keeps its `journalMaxEventsPerType`
 * newest rows, so its `quota.get(type)` oldest go; then, past `journalMaxEvents` in all, the
 * `cap` oldest rows go, those of unprotected kinds first and protected ones
 * ({@link PROTECTED_JOURNAL_TYPES}) only when nothing else is left. The memory store applies it
 * to its rows ({@link retainJournal}); the SQL store runs the same cuts as queries, asking again
 * after each step.
 */
export function journalCuts(
  counts: Iterable<readonly [string, number]>,
  bounds: JournalBounds,
  now: number,
): { horizon: number; quota: Map<string, number>; cap: number } {
  const quota = new Map<string, number>();
  let total = 0;
  for (const [type, n] of counts) {
    const over = n - bounds.journalMaxEventsPerType;
    if (over > 0) quota.set(type, over);
    total += n - Math.max(0, over);
  }
  return { horizon: now - bounds.journalMaxAgeMs, quota, cap: Math.max(0, total - bounds.journalMaxEvents) };
}

/**
 * {@link journalCuts} applied to rows in journal order (oldest first). Returns the rows kept, in
 * order, and how many of each type the quota and the cap deleted.
 */
export function retainJournal<R extends { readonly event: { readonly type: string; readonly at: number } }>(
  rows: readonly R[],
  bounds: JournalBounds,
  now: number,
): { kept: R[]; pruned: Map<string, number> } {
  const pruned = new Map<string, number>();
  const drop = (type: string): void => {
    pruned.set(type, (pruned.get(type) ?? 0) + 1);
  };
  const { horizon } = journalCuts([], bounds, now);
  const recent = rows.filter((r) => r.event.at >= horizon);
  const counts = new Map<string, number>();
  for (const r of recent) counts.set(r.event.type, (counts.get(r.event.type) ?? 0) + 1);
  const { quota, cap } = journalCuts(counts, bounds, now);
  // Each type's oldest rows over its quota.
  const kept: R[] = [];
  for (const r of recent) {
    const over = quota.get(r.event.type) ?? 0;
    if (over > 0) {
      quota.set(r.event.type, over - 1);
      drop(r.event.type);
    } else kept.push(r);
  }
  let excess = cap;
  if (excess === 0) return { kept, pruned };
  const protectedTypes = new Set(PROTECTED_JOURNAL_TYPES);
  const cut = new Set<R>();
  for (const r of kept) {
    if (excess === 0) break;
    if (protectedTypes.has(r.event.type)) continue;
    cut.add(r);
    drop(r.event.type);
    excess--;
  }
  for (const r of kept) {
    if (excess === 0) break;
    if (cut.has(r)) continue;
    cut.add(r);
    drop(r.event.type);
    excess--;
  }
  return { kept: kept.filter((r) => !cut.has(r)), pruned };
}
