/**
 * `runTrace`: the seed's discovery experiment — sequential discovery attempts against one
 * endpoint — run by the library itself: the real {@link CardCache} (freshness, 304 handling,
 * validation and the interface policy through `checkCard`, stale-on-error, backoff, jitter) and
 * the real matcher, on a {@link VirtualClock}, against a {@link ScriptedEndpoint}. The explorer
 * only schedules attempts and records what the library decided; it implements none of the rules.
 *
 * @module
 */
import { CardCache } from '../cache/index.js';
import type { CacheEntry, CardCacheOptions } from '../cache/index.js';
import type { AgentCardModel } from '../card/index.js';
import { seededRandom, VirtualClock } from '../clock/index.js';
import { isDiscoveryError } from '../errors.js';
import type { DiscoveryErrorCode, Problem, Stage } from '../errors.js';
import { EventStream } from '../events/index.js';
import type { CardOutcome, CardResultEvent, DiscoveryEvent } from '../events/index.js';
import { HostPolicy } from '../fetch/index.js';
import { matchCard, TagVocabulary } from '../match/index.js';
import type { Need } from '../match/index.js';
import type { TraceInputs } from './inputs.js';
import { resolveTraceInputs, TRACE_LIMITS } from './inputs.js';
import type { CardVersionLabel, ScriptedExchange } from './scripted-endpoint.js';
import { CARD_BYTES, CARD_VERSION_FIELD, ScriptedEndpoint, SIMULATED_CREDENTIAL, TRACE_BASE_URL, TRACE_ORIGIN, TRACE_TAG } from './scripted-endpoint.js';

/** Identifies the shape of {@link TraceResult}; bumped on incompatible changes. */
export const TRACE_SCHEMA = 'a2a-discovery/trace@1';

/**
 * What an attempt did first: `cache-hit` (a fresh cached card, no request), `fetch` (a request
 * reached the network), or `backoff` (no request: the library is backing off after failures;
 * only with the `backoff` control).
 */
export type TraceAction = 'cache-hit' | 'fetch' | 'backoff';

/** The stage that rejected an attempt: the library's stage of the failure, or `match` for capability. */
export type TraceRejectStage = 'fetch' | 'parse' | 'schema' | 'policy' | 'signature' | 'match';

/** One discovery attempt. */
export interface TraceAttempt {
  /** 1-based. */
  readonly index: number;
  /** Model seconds when the attempt started. */
  readonly at: number;
  /** Model seconds when it ended (after the round trip, if any). */
  readonly endedAt: number;
  readonly action: TraceAction;
  /** HTTP status, when the attempt fetched. */
  readonly status?: number;
  /** Whether the request carried a validator (`If-None-Match`), when it fetched. */
  readonly conditional?: boolean;
  /** Body bytes received, when it fetched. */
  readonly bytes?: number;
  /** The card cache's own outcome (`card.result` event), absent for `backoff`. */
  readonly cacheOutcome?: CardOutcome;
  /** The card used (a usable card was in hand): its `version` 1.0.0 → v1, 2.0.0 → v2. */
  readonly cardVersion?: CardVersionLabel;
  /** True when the card used was served stale after a failed refresh (stale-on-error). */
  readonly stale?: boolean;
  readonly outcome: 'accepted' | 'rejected';
  /** When rejected: the stage that refused. */
  readonly stage?: TraceRejectStage;
  /** When rejected: the library's reason (error message or matcher reason). */
  readonly reason?: string;
  /** When rejected by the cache: the library's error code. */
  readonly code?: DiscoveryErrorCode;
  /** Every problem the validator found, when content was refused. */
  readonly problems?: readonly Problem[];
  /** When accepted after a failure (stale-on-error): what failed. */
  readonly note?: string;
}

/** Totals over the run. */
export interface TraceStats {
  /** Requests that reached the network. */
  readonly networkFetches: number;
  /** Attempts served by a fresh cached card. */
  readonly cacheHits: number;
  /** 304 Not Modified responses. */
  readonly notModified: number;
  /** Body bytes of 200 responses (a 304 or an error status carries none). */
  readonly bytesTransferred: number;
  readonly accepted: number;
  readonly rejected: number;
  /** Attempts that sent no request because the library was backing off. */
  readonly backoffSkips: number;
  /** Accepted attempts that used a stale card (stale-on-error). */
  readonly staleSelections: number;
}

/** The four stages of the playback diagram. */
export type TimelineStage = 'request' | 'cache' | 'validation' | 'selection';

/** One step of the playback timeline. */
export interface TraceEvent {
  /** Order in the run, from 1. */
  readonly seq: number;
  /** The attempt it belongs to (1-based). */
  readonly attempt: number;
  /** Model milliseconds. */
  readonly atMs: number;
  readonly stage: TimelineStage;
  /**
   * `attempt.start`, `request.sent`, `request.received` (server side), `response.received`,
   * `cache.hit`, `cache.stored`, `cache.revalidated`, `cache.unchanged`, `cache.not-stored`,
   * `cache.stale`, `cache.failed`, `cache.backoff`, `cache.backing-off`, `validation.passed`,
   * `validation.failed`, `validation.skipped`, `selection.accepted`, `selection.rejected`.
   */
  readonly kind: string;
  /** One sentence for a person. */
  readonly message: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The cache entry for the endpoint after an attempt (from `CardCache.peek` / `lastFailure`). */
export interface TraceCacheState {
  readonly attempt: number;
  /** Model seconds when the snapshot was taken (the end of the attempt). */
  readonly at: number;
  /** Whether a card is stored. */
  readonly present: boolean;
  readonly cardVersion?: CardVersionLabel;
  readonly etag?: string;
  /** Model seconds when the stored card stops being fresh. */
  readonly expiresAt?: number;
  readonly stale: boolean;
  readonly usable: boolean;
  /** Consecutive failed refreshes (also counted for an endpoint that never delivered a card). */
  readonly failures: number;
  /** Model seconds before which no request is sent (backoff). */
  readonly nextAttemptAt?: number;
  readonly lastOutcome?: CardOutcome;
}

/** The library settings a run used, so a reader can see which real behaviour each control maps to. */
export interface TraceLibrarySettings {
  readonly cache: {
    readonly defaultTtlMs: number;
    readonly minTtlMs: number;
    readonly maxTtlMs: number;
    readonly expiryJitter: number;
    readonly backoffBaseMs: number;
    readonly backoffMaxMs: number;
    readonly backoffJitter: number;
    readonly maxStaleMs: number;
    readonly requestHeaders: Readonly<Record<string, string>>;
    readonly randomSeed: number;
  };
  readonly hostPolicy: { readonly allow: readonly string[] };
  readonly match: { readonly need: Need; readonly required: { readonly streaming: boolean } };
}

/** Fixed facts of the model, for a page that explains a run. */
export interface TraceModel {
  readonly baseUrl: string;
  readonly cardUrl: string;
  readonly cardBytes: number;
  readonly cardVersions: Readonly<Record<CardVersionLabel, string>>;
  readonly units: Readonly<Record<string, string>>;
  readonly limits: readonly string[];
}

/** Everything a run produced. Plain data: `JSON.stringify` gives the whole of it. */
export interface TraceResult {
  readonly schema: typeof TRACE_SCHEMA;
  /** Every control, resolved (defaults filled in). */
  readonly inputs: TraceInputs;
  readonly model: TraceModel;
  readonly library: TraceLibrarySettings;
  readonly attempts: readonly TraceAttempt[];
  readonly stats: TraceStats;
  /** Playback timeline, in order. */
  readonly events: readonly TraceEvent[];
  /** The cache entry after each attempt, one per attempt. */
  readonly cacheStates: readonly TraceCacheState[];
  /** One line: the stats in words. */
  readonly summary: string;
}

const VOCABULARY = new TagVocabulary([{ tag: TRACE_TAG, description: 'Questions about orders.' }]);
const NEED: Need = Object.freeze({ tag: TRACE_TAG });
const LIMITS = Object.freeze([
  'Offline teaching model run by the real library, not a live benchmark.',
  'One endpoint, sequential attempts, a fixed round trip and a modeled 1,200-byte card.',
  'No retries within an attempt; no DNS, TLS or redirect failures.',
  'Credentials are a simulated boolean (a placeholder header); never enter real secrets.',
  'Discovery of a card does not authenticate later task calls.',
]);

/** The CardCache options a run uses: how each control maps onto the library. */
export function traceCacheSettings(inputs: TraceInputs): TraceLibrarySettings['cache'] {
  return {
    // Never used: the scripted endpoint always sends max-age.
    defaultTtlMs: 300_000,
    // No floor, so max-age=0 means "revalidate every attempt" as in the model.
    minTtlMs: 0,
    // No ceiling below the largest max-age the explorer accepts.
    maxTtlMs: TRACE_LIMITS.maxAgeSeconds * 1000,
    expiryJitter: inputs.jitter ? 0.1 : 0,
    // Backoff off: a zero delay, so every attempt after a failure goes to the network again.
    backoffBaseMs: inputs.backoff ? 5_000 : 0,
    backoffMaxMs: inputs.backoff ? 300_000 : 0,
    backoffJitter: inputs.backoff && inputs.jitter ? 0.5 : 0,
    // Stale-on-error off: a card seen before is unusable as soon as a refresh past its expiry fails.
    maxStaleMs: inputs.staleOnError ? inputs.maxStaleSeconds * 1000 : 0,
    requestHeaders: { 'a2a-version': '1.0', ...(inputs.credentials && { authorization: SIMULATED_CREDENTIAL }) },
    randomSeed: inputs.seed,
  };
}

const seconds = (ms: number): number => Math.round(ms) / 1000;

function versionLabel(card: AgentCardModel): CardVersionLabel | undefined {
  if (card.version === CARD_VERSION_FIELD.v1) return 'v1';
  if (card.version === CARD_VERSION_FIELD.v2) return 'v2';
  return undefined;
}

const REJECT_STAGES = new Set<Stage>(['fetch', 'parse', 'schema', 'policy', 'signature']);
function rejectStage(stage: Stage | undefined): TraceRejectStage {
  return stage !== undefined && REJECT_STAGES.has(stage) ? (stage as TraceRejectStage) : 'fetch';
}

interface Recorded {
  atMs: number;
  event: DiscoveryEvent | ({ type: 'exchange' } & ScriptedExchange);
}

/**
 * Runs the experiment. Deterministic: the same inputs (and seed) give the same result.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` for a bad control (see {@link resolveTraceInputs}).
 * @example
 * const r = await runTrace({ maxAgeSeconds: 30 });
 * r.stats.networkFetches; // 1
 * r.attempts.map((a) => a.cardVersion); // ['v1', 'v1', 'v1', 'v1', 'v1']
 */
export async function runTrace(partial: Partial<TraceInputs> = {}): Promise<TraceResult> {
  const inputs = resolveTraceInputs(partial);
  const clock = new VirtualClock({ start: 0 });
  const recorded: Recorded[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((event) => recorded.push({ atMs: clock.now(), event }));
  const endpoint = new ScriptedEndpoint({
    clock,
    condition: inputs.condition,
    publishV2AtMs: inputs.publishV2AtSeconds === null ? null : inputs.publishV2AtSeconds * 1000,
    failFromMs: inputs.failFromSeconds === null ? null : inputs.failFromSeconds * 1000,
    maxAgeSeconds: inputs.maxAgeSeconds,
    cardStreaming: inputs.cardStreaming,
    rttMs: inputs.rttMs,
    onExchange: (exchange) => recorded.push({ atMs: exchange.atMs, event: { type: 'exchange', ...exchange } }),
  });
  const settings = traceCacheSettings(inputs);
  const { randomSeed, ...cacheNumbers } = settings;
  const hostPolicy = HostPolicy.from({ allow: [TRACE_ORIGIN] });
  // The scripted endpoint models one card URL, so the A2A 0.2 path is not tried after a 404.
  const options: CardCacheOptions = { ...cacheNumbers, fetcher: endpoint, hostPolicy, clock, random: seededRandom(randomSeed), events: stream, legacyCardPath: false };
  const cache = new CardCache(options);
  const required = { streaming: inputs.requireStreaming };

  const attempts: TraceAttempt[] = [];
  const cacheStates: TraceCacheState[] = [];
  const events: TraceEvent[] = [];
  const push = (e: Omit<TraceEvent, 'seq'>): void => void events.push({ seq: events.length + 1, ...e });

  try {
    for (let i = 0; i < inputs.attempts; i++) {
      const index = i + 1;
      // Attempts are sequential: one that is still waiting on the network delays the next.
      await clock.advanceTo(Math.max(clock.now(), i * inputs.intervalSeconds * 1000));
      const startMs = clock.now();
      const before = cacheStates.at(-1);
      push({
        attempt: index,
        atMs: startMs,
        stage: 'cache',
        kind: 'attempt.start',
        message: `Attempt ${index}: discovery looks up ${TRACE_BASE_URL} in the card cache.`,
        ...(before !== undefined && { detail: { entryBefore: before } }),
      });
      recorded.length = 0;
      let entry: CacheEntry | undefined;
      let error: unknown;
      try {
        entry = await cache.get(TRACE_BASE_URL);
      } catch (err) {
        error = err;
      }
      const endMs = clock.now();
      const seen = recorded.splice(0);
      const attempt = classify({ index, startMs, endMs, entry, error, seen, required, staleOnError: inputs.staleOnError, cache });
      attempts.push(attempt);
      translate(seen, index, startMs, entry, push);
      push({
        attempt: index,
        atMs: endMs,
        stage: 'selection',
        kind: attempt.outcome === 'accepted' ? 'selection.accepted' : 'selection.rejected',
        message: selectionMessage(attempt),
        detail: {
          outcome: attempt.outcome,
          ...(attempt.cardVersion !== undefined && { cardVersion: attempt.cardVersion }),
          ...(attempt.stage !== undefined && { stage: attempt.stage }),
          ...(attempt.reason !== undefined && { reason: attempt.reason }),
        },
      });
      cacheStates.push(await snapshot(cache, index, clock.now()));
    }
  } finally {
    await cache.close();
    await endpoint.close();
    stream.close();
  }

  const stats = statsOf(attempts);
  return {
    schema: TRACE_SCHEMA,
    inputs,
    model: {
      baseUrl: TRACE_BASE_URL,
      cardUrl: `${TRACE_BASE_URL}.well-known/agent-card.json`,
      cardBytes: CARD_BYTES,
      cardVersions: CARD_VERSION_FIELD,
      units: {
        'attempts[].at': 'model seconds',
        'cacheStates[].expiresAt': 'model seconds',
        'events[].atMs': 'model milliseconds',
        'inputs.rttMs': 'milliseconds',
        'stats.bytesTransferred': 'bytes',
      },
      limits: LIMITS,
    },
    library: {
      cache: settings,
      hostPolicy: { allow: [TRACE_ORIGIN] },
      match: { need: NEED, required },
    },
    attempts,
    stats,
    events,
    cacheStates,
    summary: summarize(stats),
  };
}

interface ClassifyInput {
  index: number;
  startMs: number;
  endMs: number;
  entry: CacheEntry | undefined;
  error: unknown;
  seen: Recorded[];
  required: { streaming: boolean };
  staleOnError: boolean;
  cache: CardCache;
}

/** What the library did in one attempt, read from its own events and return value. */
function classify(c: ClassifyInput): TraceAttempt {
  const results = c.seen.map((r) => r.event).filter((e): e is CardResultEvent => e.type === 'card.result');
  const result = results.at(-1);
  const fetches = c.seen.filter((r) => r.event.type === 'card.fetch');
  const lastFetch = fetches.at(-1)?.event;
  const action: TraceAction = result?.outcome === 'hit' ? 'cache-hit' : fetches.length > 0 ? 'fetch' : 'backoff';
  const base = {
    index: c.index,
    at: seconds(c.startMs),
    endedAt: seconds(c.endMs),
    action,
    ...(action === 'fetch' && result?.status !== undefined && { status: result.status }),
    ...(action === 'fetch' && lastFetch?.type === 'card.fetch' && { conditional: lastFetch.conditional }),
    ...(action === 'fetch' && { bytes: result?.bytes ?? 0 }),
    ...(result !== undefined && { cacheOutcome: result.outcome }),
  };

  if (c.entry !== undefined && c.entry.usable) {
    const cardVersion = versionLabel(c.entry.card);
    const used = { ...(cardVersion !== undefined && { cardVersion }), ...(c.entry.stale && { stale: true }) };
    const match = matchCard(c.entry.card, [NEED], VOCABULARY, c.required);
    if (match.satisfied.includes(NEED.tag)) {
      const note = c.entry.stale && c.entry.lastError !== undefined ? { note: `served stale after: ${c.entry.lastError.message}` } : {};
      return { ...base, ...used, outcome: 'accepted', ...note };
    }
    return { ...base, ...used, outcome: 'rejected', stage: 'match', reason: match.reasons.join('; ') || 'the card matches no need', code: 'ERR_UNSUITABLE' };
  }
  if (c.entry !== undefined) {
    // A card seen before, past its stale bound (or stale-on-error off).
    const last = c.entry.lastError;
    return {
      ...base,
      outcome: 'rejected',
      stage: rejectStage(last?.stage),
      reason: `${last?.message ?? 'the refresh failed'} (the card seen before is not usable: ${c.staleOnError ? 'past its stale bound' : 'stale-on-error is off'})`,
      ...(last !== undefined && { code: last.code }),
      ...(last?.problems !== undefined && { problems: last.problems }),
    };
  }
  const err = c.error;
  if (isDiscoveryError(err)) {
    const waiting = action === 'backoff' ? c.cache.lastFailure(TRACE_BASE_URL) : undefined;
    const prefix = waiting !== undefined ? `no request: backing off until ${seconds(waiting.nextAttemptAt)} s after ${waiting.failures} failure(s); last: ` : '';
    return {
      ...base,
      outcome: 'rejected',
      stage: rejectStage(err.stage),
      reason: `${prefix}${err.message}`,
      code: err.code,
      ...(err.problems.length > 0 && { problems: err.problems }),
    };
  }
  return { ...base, outcome: 'rejected', stage: 'fetch', reason: err instanceof Error ? err.message : String(err) };
}

function selectionMessage(a: TraceAttempt): string {
  if (a.outcome === 'accepted') return `Selected card ${a.cardVersion ?? '?'}${a.stale ? ' (stale)' : ''}: it meets the client requirement.`;
  return `Rejected at ${a.stage ?? 'fetch'}: ${a.reason ?? ''}`;
}

/** Library events → playback events. */
function translate(seen: Recorded[], attempt: number, startMs: number, entry: CacheEntry | undefined, push: (e: Omit<TraceEvent, 'seq'>) => void): void {
  const fresh = entry !== undefined ? ` Fresh until ${seconds(entry.expiresAt)} s.` : '';
  const version = entry !== undefined ? (versionLabel(entry.card) ?? entry.card.version) : undefined;
  for (const { atMs, event: e } of seen) {
    const at = { attempt, atMs };
    switch (e.type) {
      case 'card.fetch':
        push({
          ...at,
          stage: 'request',
          kind: 'request.sent',
          message: `GET ${e.url}${e.conditional ? ' with If-None-Match (conditional)' : ''}.`,
          detail: { url: e.url, conditional: e.conditional },
        });
        break;
      case 'exchange':
        if (e.phase === 'request') {
          push({
            ...at,
            stage: 'request',
            kind: 'request.received',
            message: `The server (${e.condition}, publishing ${e.published}) answers ${e.status}.`,
            detail: { condition: e.condition, published: e.published, requestHeaders: redact(e.requestHeaders) },
          });
        } else {
          push({
            ...at,
            stage: 'request',
            kind: 'response.received',
            message: `Response ${e.status} after the round trip, ${e.bytes} body bytes.`,
            detail: { status: e.status, headers: e.headers, bytes: e.bytes },
          });
        }
        break;
      case 'card.result':
        pushResult(e, at, fresh, version, push);
        break;
      case 'card.backoff':
        push({
          ...at,
          stage: 'cache',
          kind: 'cache.backoff',
          message: e.retryInMs > 0 ? `Backing off: no request for ${seconds(e.retryInMs)} s (failure ${e.failures}).` : `Failure ${e.failures}; backoff off: the next attempt may request again.`,
          detail: { failures: e.failures, retryInMs: e.retryInMs },
        });
        break;
      default:
        break;
    }
  }
  if (!seen.some((r) => r.event.type === 'card.result')) {
    push({
      attempt,
      atMs: startMs,
      stage: 'cache',
      kind: 'cache.backing-off',
      message: entry !== undefined ? 'No request: backing off; the stale card is returned as it stands.' : 'No request: backing off after failures; nothing to serve.',
    });
  }
}

function pushResult(
  e: CardResultEvent,
  at: { attempt: number; atMs: number },
  fresh: string,
  version: string | undefined,
  push: (e: Omit<TraceEvent, 'seq'>) => void,
): void {
  const detail = {
    outcome: e.outcome,
    failures: e.failures,
    ...(e.status !== undefined && { status: e.status }),
    ...(e.bytes !== undefined && { bytes: e.bytes }),
    ...(e.code !== undefined && { code: e.code }),
    ...(e.stage !== undefined && { stage: e.stage }),
    ...(e.reason !== undefined && { reason: e.reason }),
    ...(e.problems !== undefined && { problems: e.problems }),
  };
  switch (e.outcome) {
    case 'hit':
      push({ ...at, stage: 'cache', kind: 'cache.hit', message: `Fresh cached card ${version ?? ''} used without a request.${fresh}`, detail });
      return;
    case 'changed':
      push({ ...at, stage: 'validation', kind: 'validation.passed', message: 'New bytes: parsed, schema valid, interfaces pass the HTTPS policy.', detail });
      push({ ...at, stage: 'cache', kind: 'cache.stored', message: `Stored card ${version ?? ''}.${fresh}`, detail });
      return;
    case 'unchanged':
      push({ ...at, stage: 'validation', kind: 'validation.skipped', message: 'Same bytes as the stored card: not checked again.', detail });
      push({ ...at, stage: 'cache', kind: 'cache.unchanged', message: `Kept the stored card ${version ?? ''}.${fresh}`, detail });
      return;
    case 'revalidated':
      push({ ...at, stage: 'cache', kind: 'cache.revalidated', message: `304 Not Modified: the stored card ${version ?? ''} is refreshed, not downloaded again.${fresh}`, detail });
      return;
    case 'invalid':
      push({ ...at, stage: 'validation', kind: 'validation.failed', message: `Refused at ${e.stage ?? 'validation'}: ${e.reason ?? ''}`, detail });
      push({ ...at, stage: 'cache', kind: 'cache.not-stored', message: 'Invalid content is never stored.', detail });
      return;
    case 'stale':
      push({ ...at, stage: 'cache', kind: 'cache.stale', message: `Refresh failed (${e.reason ?? e.code ?? 'error'}); the card seen before is kept, marked stale.`, detail });
      return;
    case 'failed':
      push({ ...at, stage: 'cache', kind: 'cache.failed', message: `Refresh failed (${e.reason ?? e.code ?? 'error'}); nothing cached to serve.`, detail });
      return;
  }
}

function redact(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...headers };
  if (out.authorization !== undefined) out.authorization = '(simulated credential)';
  return out;
}

async function snapshot(cache: CardCache, attempt: number, nowMs: number): Promise<TraceCacheState> {
  const entry = await cache.peek(TRACE_BASE_URL);
  if (entry === undefined) {
    const failed = cache.lastFailure(TRACE_BASE_URL);
    return {
      attempt,
      at: seconds(nowMs),
      present: false,
      stale: false,
      usable: false,
      failures: failed?.failures ?? 0,
      ...(failed !== undefined && { nextAttemptAt: seconds(failed.nextAttemptAt) }),
    };
  }
  const cardVersion = versionLabel(entry.card);
  return {
    attempt,
    at: seconds(nowMs),
    present: true,
    ...(cardVersion !== undefined && { cardVersion }),
    ...(entry.etag !== undefined && { etag: entry.etag }),
    expiresAt: seconds(entry.expiresAt),
    stale: entry.stale,
    usable: entry.usable,
    failures: entry.failures,
    ...(entry.nextAttemptAt !== undefined && { nextAttemptAt: seconds(entry.nextAttemptAt) }),
    lastOutcome: entry.lastOutcome,
  };
}

function statsOf(attempts: readonly TraceAttempt[]): TraceStats {
  let networkFetches = 0;
  let cacheHits = 0;
  let notModified = 0;
  let bytesTransferred = 0;
  let accepted = 0;
  let backoffSkips = 0;
  let staleSelections = 0;
  for (const a of attempts) {
    if (a.action === 'fetch') networkFetches++;
    if (a.action === 'cache-hit') cacheHits++;
    if (a.action === 'backoff') backoffSkips++;
    if (a.status === 304) notModified++;
    if (a.status === 200) bytesTransferred += a.bytes ?? 0;
    if (a.outcome === 'accepted') {
      accepted++;
      if (a.stale) staleSelections++;
    }
  }
  return { networkFetches, cacheHits, notModified, bytesTransferred, accepted, rejected: attempts.length - accepted, backoffSkips, staleSelections };
}

function summarize(s: TraceStats): string {
  const parts = [
    `${s.networkFetches} network fetch${s.networkFetches === 1 ? '' : 'es'}`,
    `${s.cacheHits} cache hit${s.cacheHits === 1 ? '' : 's'}`,
    `${s.notModified} × 304`,
    `${s.bytesTransferred.toLocaleString('en-US')} bytes`,
    `${s.accepted} accepted`,
    `${s.rejected} rejected`,
  ];
  if (s.backoffSkips > 0) parts.push(`${s.backoffSkips} skipped by backoff`);
  if (s.staleSelections > 0) parts.push(`${s.staleSelections} served stale`);
  return parts.join(', ');
}
