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
import { seededRandom, VirtualClock } from '../clock/index.js';
import { EventStream } from '../events/index.js';
import { HostPolicy } from '../fetch/index.js';
import { CACHE_DEFAULTS } from '../rules/defaults.js';
import { classify, NEED, seconds, versionLabel } from './classify.js';
import { freshnessOf, hiddenNewerOf } from './freshness.js';
import { HealthLane } from './health-lane.js';
import { explainRollout } from './rollout-lane.js';
import { rejectedAt } from './rejected-at.js';
import type { TraceInputs } from './inputs.js';
import { resolveTraceInputs, TRACE_LIMITS } from './inputs.js';
import { CARD_BYTES, CARD_VERSION_FIELD, ScriptedEndpoint, SIMULATED_CREDENTIAL, TRACE_BASE_URL, TRACE_ORIGIN } from './scripted-endpoint.js';
import type { Recorded, PushStep } from './timeline.js';
import { translate } from './timeline.js';
import type { TraceAttempt, TraceCacheState, TraceEvent, TraceLibrarySettings, TraceResult, TraceStats } from './types.js';
import { TRACE_SCHEMA } from './types.js';

/**
 * The model's limits, as sentences. Each one is what the code here does: `checkCard` runs its
 * structural checks (not the A2A JSON Schema) and verifies signatures only when present, the
 * scripted endpoint answers once per attempt, the A2A 0.2 path fallback is off.
 */
const LIMITS = Object.freeze([
  'Offline teaching model run by the real library, not a live benchmark or a complete A2A implementation.',
  'One endpoint, sequential attempts, a fixed round trip and a modeled 1,200-byte card.',
  'Validation is the library’s own: bounded JSON parsing, a structural check of the card’s fields (not the full A2A JSON Schema) and the HTTPS interface policy. The card is unsigned and signatures are verified only when present, so no signature is verified; no Extended Agent Card is fetched.',
  'One request per attempt: no retries within an attempt (backoff between attempts only with the backoff control); no DNS, TLS or redirect failures.',
  'Credentials are a simulated boolean (a placeholder header); never enter real secrets.',
  'Discovery of a card does not authenticate later task calls: those need their own authentication and error handling.',
]);

/** Said when calls or a rollout are modeled: what is scripted, and what is the library's. */
const CALL_LIMITS = Object.freeze([
  'Calls are scripted, not made: each call’s outcome and latency are given, and a failure is worded as the orchestrator words it. What they lead to — the call figures, the health states and their reasons, the rollout’s assignment of sessions and its decisions — is decided by the library’s own CallHealth, HealthTracker and Rollouts.',
  'A rollout’s new sessions arrive one a model second, each with one turn that calls the modeled agent; it is judged after every turn.',
]);

/** The CardCache options a run uses: how each control maps onto the library. */
export function traceCacheSettings(inputs: TraceInputs): TraceLibrarySettings['cache'] {
  return {
    // Never used: the scripted endpoint always sends max-age.
    defaultTtlMs: CACHE_DEFAULTS.defaultTtlMs,
    // No floor, so max-age=0 means "revalidate every attempt" as in the model.
    minTtlMs: 0,
    // No ceiling below the largest max-age the explorer accepts.
    maxTtlMs: TRACE_LIMITS.maxAgeSeconds * 1000,
    expiryJitter: inputs.jitter ? CACHE_DEFAULTS.expiryJitter : 0,
    // Backoff off: a zero delay, so every attempt after a failure goes to the network again.
    backoffBaseMs: inputs.backoff ? CACHE_DEFAULTS.backoffBaseMs : 0,
    backoffMaxMs: inputs.backoff ? CACHE_DEFAULTS.backoffMaxMs : 0,
    backoffJitter: inputs.backoff && inputs.jitter ? CACHE_DEFAULTS.backoffJitter : 0,
    // Stale-on-error off: a card seen before is unusable as soon as a refresh past its expiry fails.
    maxStaleMs: inputs.staleOnError ? inputs.maxStaleSeconds * 1000 : 0,
    requestHeaders: { ...CACHE_DEFAULTS.requestHeaders, ...(inputs.credentials && { authorization: SIMULATED_CREDENTIAL }) },
    randomSeed: inputs.seed,
  };
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
    v2Breaking: inputs.v2Breaking,
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
  const calls = inputs.calls;
  const health = calls === null ? undefined : new HealthLane({ ...inputs, calls }, clock, inputs.rttMs);

  const attempts: TraceAttempt[] = [];
  const cacheStates: TraceCacheState[] = [];
  const events: TraceEvent[] = [];
  const push: PushStep = (e) => void events.push({ seq: events.length + 1, ...e });

  try {
    for (let i = 0; i < inputs.attempts; i++) {
      const index = i + 1;
      // Attempts are sequential: one that is still waiting on the network delays the next.
      await clock.advanceTo(Math.max(clock.now(), i * inputs.intervalSeconds * 1000));
      const startMs = clock.now();
      const before = cacheStates.at(-1);
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
      const serverVersion = endpoint.publishedAt(startMs);
      const classified = classify({ index, startMs, endMs, entry, error, seen, before, serverVersion, required, staleOnError: inputs.staleOnError, cache });
      const hiddenNewer = hiddenNewerOf(classified, before, inputs);
      const attempt: TraceAttempt = { ...classified, ...(hiddenNewer !== undefined && { hiddenNewer }) };
      attempts.push(attempt);
      push({
        attempt: index,
        atMs: startMs,
        stage: 'lookup',
        kind: 'attempt.start',
        message: `Attempt ${index}: discovery looks up ${TRACE_BASE_URL} in the card cache — ${attempt.why}.`,
        detail: { why: attempt.why, ...(before !== undefined && { entryBefore: before }) },
      });
      translate(seen, index, startMs, entry, entry !== undefined ? (versionLabel(entry.card) ?? entry.card.version) : undefined, push);
      push({
        attempt: index,
        atMs: endMs,
        stage: 'selection',
        kind: attempt.outcome === 'accepted' ? 'selection.accepted' : 'selection.rejected',
        message: selectionMessage(attempt),
        detail: {
          outcome: attempt.outcome,
          ...(attempt.cardVersion !== undefined && { cardVersion: attempt.cardVersion }),
          ...(attempt.lane !== undefined && { lane: attempt.lane }),
          ...(attempt.stage !== undefined && { stage: attempt.stage }),
          ...(attempt.reason !== undefined && { reason: attempt.reason }),
          ...(attempt.hiddenNewer !== undefined && { hiddenNewer: attempt.hiddenNewer }),
        },
      });
      cacheStates.push(await snapshot(cache, index, clock.now()));
      await health?.step(index, clock.now(), cache, TRACE_BASE_URL);
    }
  } finally {
    await cache.close();
    await endpoint.close();
    stream.close();
  }

  const stats = statsOf(attempts);
  const rollout = inputs.rollout ? await explainRollout(inputs) : undefined;
  return {
    schema: TRACE_SCHEMA,
    inputs,
    model: {
      baseUrl: TRACE_BASE_URL,
      cardUrl: `${TRACE_BASE_URL}.well-known/agent-card.json`,
      cardBytes: CARD_BYTES,
      cardVersions: CARD_VERSION_FIELD,
      cards: { v1: endpoint.cardBody('v1').toString('utf8'), v2: endpoint.cardBody('v2').toString('utf8') },
      units: {
        'attempts[].at': 'model seconds',
        'cacheStates[].expiresAt': 'model seconds',
        'events[].atMs': 'model milliseconds',
        'inputs.rttMs': 'milliseconds',
        'stats.bytesTransferred': 'bytes',
        'health.steps[].at': 'model seconds',
        'rollout.decisions[].at': 'model seconds',
        'rollout.steps[].from': 'model seconds',
      },
      limits: inputs.calls !== null || inputs.rollout ? [...LIMITS, ...CALL_LIMITS] : LIMITS,
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
    freshness: freshnessOf(attempts, inputs),
    summary: summarize(stats),
    ...(health !== undefined && { health: health.result() }),
    ...(rollout !== undefined && { rollout }),
  };
}

function selectionMessage(a: TraceAttempt): string {
  if (a.outcome === 'accepted') return `Selected card ${a.cardVersion ?? '?'}${a.stale ? ' (stale)' : ''}: it meets the client requirement.`;
  return `Rejected at ${rejectedAt(a)}: ${a.reason ?? ''}`;
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
