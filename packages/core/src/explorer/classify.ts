/**
 * What the library did in one attempt, read from its own events and return value: the action,
 * the status, the card used, and — when rejected — the library's stage, the diagram lane and the
 * reason. Selection is the real `matchCard`.
 *
 * @module
 */
import type { CacheEntry, CardCache } from '../cache/index.js';
import type { AgentCardModel } from '../card/index.js';
import { isDiscoveryError } from '../errors.js';
import type { Stage } from '../errors.js';
import type { CardResultEvent } from '../events/index.js';
import { matchCard, TagVocabulary } from '../match/index.js';
import type { Need } from '../match/index.js';
import type { CardVersionLabel } from './scripted-endpoint.js';
import { CARD_VERSION_FIELD, TRACE_BASE_URL, TRACE_TAG } from './scripted-endpoint.js';
import type { Recorded } from './timeline.js';
import type { TimelineStage, TraceAction, TraceAttempt, TraceCacheState, TraceRejectStage } from './types.js';
import { revalidationOf, secondsText, whyOf } from './why.js';

const VOCABULARY = new TagVocabulary([{ tag: TRACE_TAG, description: 'Questions about orders.' }]);
export const NEED: Need = Object.freeze({ tag: TRACE_TAG });

export const seconds = (ms: number): number => Math.round(ms) / 1000;

export function versionLabel(card: AgentCardModel): CardVersionLabel | undefined {
  if (card.version === CARD_VERSION_FIELD.v1) return 'v1';
  if (card.version === CARD_VERSION_FIELD.v2) return 'v2';
  return undefined;
}

const REJECT_STAGES = new Set<Stage>(['fetch', 'parse', 'schema', 'policy', 'signature']);
function rejectStage(stage: Stage | undefined): TraceRejectStage {
  return stage !== undefined && REJECT_STAGES.has(stage) ? (stage as TraceRejectStage) : 'fetch';
}

/** The diagram lane of a rejection: the request for fetch failures, validation for content, selection for capability. */
function laneOf(stage: TraceRejectStage, action: TraceAction): TimelineStage {
  if (stage === 'match') return 'selection';
  if (stage === 'fetch') return action === 'backoff' ? 'lookup' : 'request';
  return 'validation';
}

export interface ClassifyInput {
  index: number;
  startMs: number;
  endMs: number;
  entry: CacheEntry | undefined;
  error: unknown;
  seen: readonly Recorded[];
  /** The cache entry as the previous attempt left it. */
  before: TraceCacheState | undefined;
  serverVersion: CardVersionLabel;
  required: { streaming: boolean };
  staleOnError: boolean;
  cache: CardCache;
}

export function classify(c: ClassifyInput): Omit<TraceAttempt, 'hiddenNewer'> {
  const results = c.seen.map((r) => r.event).filter((e): e is CardResultEvent => e.type === 'card.result');
  const result = results.at(-1);
  const fetches = c.seen.filter((r) => r.event.type === 'card.fetch');
  const lastFetch = fetches.at(-1)?.event;
  const sent = c.seen.find((r) => r.event.type === 'exchange' && r.event.phase === 'request')?.event;
  const ifNoneMatch = sent?.type === 'exchange' ? sent.requestHeaders['if-none-match'] : undefined;
  const action: TraceAction = result?.outcome === 'hit' ? 'cache-hit' : fetches.length > 0 ? 'fetch' : 'backoff';
  const answered = c.seen.find((r) => r.event.type === 'exchange' && r.event.phase === 'response')?.event;
  const revalidation = revalidationOf(ifNoneMatch, answered?.type === 'exchange' ? answered : undefined);
  const base = {
    index: c.index,
    at: seconds(c.startMs),
    endedAt: seconds(c.endMs),
    action,
    ...whyOf(action, c.before),
    serverVersion: c.serverVersion,
    ...(action === 'fetch' && result?.status !== undefined && { status: result.status }),
    ...(action === 'fetch' && lastFetch?.type === 'card.fetch' && { conditional: lastFetch.conditional }),
    ...(ifNoneMatch !== undefined && { ifNoneMatch }),
    ...(revalidation !== undefined && { revalidation }),
    ...(action === 'fetch' && { bytes: result?.bytes ?? 0 }),
    ...(result !== undefined && { cacheOutcome: result.outcome }),
  };
  const rejected = (stage: TraceRejectStage) => ({ outcome: 'rejected' as const, stage, lane: laneOf(stage, action) });

  if (c.entry !== undefined && c.entry.usable) {
    const cardVersion = versionLabel(c.entry.card);
    const used = { ...(cardVersion !== undefined && { cardVersion }), ...(c.entry.stale && { stale: true }) };
    const match = matchCard(c.entry.card, [NEED], VOCABULARY, c.required);
    if (match.satisfied.includes(NEED.tag)) {
      const note = c.entry.stale && c.entry.lastError !== undefined ? { note: `served stale after: ${c.entry.lastError.message}` } : {};
      return { ...base, ...used, outcome: 'accepted', ...note };
    }
    return { ...base, ...used, ...rejected('match'), reason: match.reasons.join('; ') || 'the card matches no need', code: 'ERR_UNSUITABLE' };
  }
  if (c.entry !== undefined) {
    // A card seen before, past its stale bound (or stale-on-error off).
    const last = c.entry.lastError;
    return {
      ...base,
      ...rejected(rejectStage(last?.stage)),
      reason: `${last?.message ?? 'the refresh failed'} (the card seen before is not usable: ${c.staleOnError ? 'past its stale bound' : 'stale-on-error is off'})`,
      ...(last !== undefined && { code: last.code }),
      ...(last?.problems !== undefined && { problems: last.problems }),
    };
  }
  const err = c.error;
  if (isDiscoveryError(err)) {
    const waiting = action === 'backoff' ? c.cache.lastFailure(TRACE_BASE_URL) : undefined;
    const prefix = waiting !== undefined ? `no request: backing off until ${secondsText(seconds(waiting.nextAttemptAt))} after ${waiting.failures} failure(s); last: ` : '';
    return {
      ...base,
      ...rejected(rejectStage(err.stage)),
      reason: `${prefix}${err.message}`,
      code: err.code,
      ...(err.problems.length > 0 && { problems: err.problems }),
    };
  }
  return { ...base, ...rejected('fetch'), reason: err instanceof Error ? err.message : String(err) };
}

