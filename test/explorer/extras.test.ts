/**
 * The explorer's extra controls (backoff, stale-on-error with "fail from", jitter), its playback
 * output, `compareTraces`, input checking, and the scripted endpoint itself.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { TraceResult } from '../../packages/core/src/explorer/index.js';
import {
  CARD_BYTES,
  compareTraces,
  malformedBody,
  modeledCardBody,
  resolveTraceInputs,
  runTrace,
  ScriptedEndpoint,
  traceCacheSettings,
  TIMELINE_STAGES,
  TRACE_SCHEMA,
} from '../../packages/core/src/explorer/index.js';
import { checkCard } from '../../packages/core/src/card/index.js';

const actions = (r: TraceResult) => r.attempts.map((a) => a.action);
const outcomes = (r: TraceResult) => r.attempts.map((a) => a.outcome);

describe('backoff (extra control: the library\'s capped exponential backoff)', () => {
  test('off: zero delay, so every failing attempt reaches the network (the settings say so)', async () => {
    const s = traceCacheSettings(resolveTraceInputs({}));
    assert.equal(s.backoffBaseMs, 0);
    assert.equal(s.backoffMaxMs, 0);
    assert.equal(s.minTtlMs, 0);
    assert.equal(s.expiryJitter, 0);
    assert.equal(s.maxStaleMs, 0);
  });

  test('on, 404: failures back off 5 s then 10 s, so two of five attempts send no request', async () => {
    const r = await runTrace({ condition: 'not-found', backoff: true });
    assert.deepEqual(actions(r), ['fetch', 'fetch', 'backoff', 'fetch', 'backoff']);
    assert.deepEqual(outcomes(r), Array(5).fill('rejected'));
    assert.equal(r.stats.networkFetches, 3);
    assert.equal(r.stats.backoffSkips, 2);
    assert.match(r.attempts[2]!.reason!, /no request: backing off until 16\.1 s after 2 failure\(s\)/);
    assert.equal(r.attempts[2]!.stage, 'fetch');
    assert.deepEqual(r.cacheStates.map((s) => s.failures), [1, 2, 2, 3, 3]);
    assert.deepEqual(r.cacheStates.map((s) => s.nextAttemptAt), [5.1, 16.1, 16.1, 38.1, 38.1]);
    assert.ok(r.events.some((e) => e.kind === 'cache.backing-off' && e.attempt === 3));
  });

  test('on, healthy: no failures, no difference', async () => {
    const r = await runTrace({ backoff: true });
    assert.deepEqual(r.stats, (await runTrace()).stats);
  });

  test('on with malformed cards: invalid content backs off too (fewer 1,200-byte downloads)', async () => {
    const r = await runTrace({ condition: 'malformed', backoff: true });
    assert.equal(r.stats.networkFetches, 3);
    assert.equal(r.stats.bytesTransferred, 3_600);
  });
});

describe('stale-on-error (extra control) with "fail from"', () => {
  test('on: after a card was seen, failures still select the stale card', async () => {
    const r = await runTrace({ condition: 'unavailable', failFromSeconds: 11, staleOnError: true });
    assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'fetch', 'fetch', 'fetch']);
    assert.deepEqual(r.attempts.map((a) => a.status), [200, undefined, 503, 503, 503]);
    assert.deepEqual(outcomes(r), Array(5).fill('accepted'));
    assert.deepEqual(r.attempts.map((a) => a.cardVersion), Array(5).fill('v1'), 'v2 was never received');
    assert.deepEqual(r.attempts.map((a) => a.stale), [undefined, undefined, true, true, true]);
    assert.match(r.attempts[2]!.note!, /503/);
    assert.equal(r.stats.staleSelections, 3);
    assert.deepEqual(r.cacheStates.map((s) => s.failures), [0, 0, 1, 2, 3]);
  });

  test('off: the same failures reject (the teaching model has no stale-on-error)', async () => {
    const r = await runTrace({ condition: 'unavailable', failFromSeconds: 11 });
    assert.deepEqual(outcomes(r), ['accepted', 'accepted', 'rejected', 'rejected', 'rejected']);
    assert.deepEqual(r.attempts.map((a) => a.stage), [undefined, undefined, 'fetch', 'fetch', 'fetch']);
    assert.match(r.attempts[2]!.reason!, /503.*stale-on-error is off/);
    assert.deepEqual(r.attempts.map((a) => a.cardVersion), ['v1', 'v1', undefined, undefined, undefined]);
  });

  test('accepted only while within the stale bound', async () => {
    // Stored at 0.1 s, fresh until 10.1 s; a 5 s bound ends at 15.1 s: 12.1 is inside, 18.1 and 24.1 are not.
    const r = await runTrace({ condition: 'not-found', failFromSeconds: 11, staleOnError: true, maxStaleSeconds: 5 });
    assert.deepEqual(outcomes(r), ['accepted', 'accepted', 'accepted', 'rejected', 'rejected']);
    assert.equal(r.attempts[2]!.stale, true);
    assert.match(r.attempts[3]!.reason!, /404.*past its stale bound/);
    assert.deepEqual(r.cacheStates.map((s) => s.usable), [true, true, true, false, false]);
  });

  test('an invalid update is NACKed: the old card keeps being served stale, and the new one is never stored', async () => {
    const r = await runTrace({ condition: 'malformed', failFromSeconds: 11, staleOnError: true });
    assert.deepEqual(r.attempts.map((a) => a.cacheOutcome), ['changed', 'hit', 'invalid', 'invalid', 'invalid']);
    assert.deepEqual(outcomes(r), Array(5).fill('accepted'));
    assert.deepEqual(r.attempts.map((a) => a.cardVersion), Array(5).fill('v1'));
    const insecure = await runTrace({ condition: 'insecure', failFromSeconds: 11 });
    assert.deepEqual(insecure.attempts.map((a) => a.stage), [undefined, undefined, 'policy', 'policy', 'policy']);
  });

  test('failing only from 30 s: all five attempts come before it, so the run is the healthy one', async () => {
    const r = await runTrace({ condition: 'unavailable', failFromSeconds: 30, staleOnError: true });
    assert.deepEqual(r.stats, (await runTrace()).stats);
  });

  test('backoff and stale together: a backed-off attempt returns the stale card without a request', async () => {
    const r = await runTrace({ condition: 'unavailable', failFromSeconds: 11, staleOnError: true, backoff: true });
    assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'fetch', 'fetch', 'backoff']);
    assert.deepEqual(outcomes(r), Array(5).fill('accepted'));
    assert.equal(r.attempts[4]!.stale, true);
  });
});

describe('jitter (extra control)', () => {
  test('same seed, same result; the expiry is shortened by up to 10 %', async () => {
    const a = await runTrace({ jitter: true, seed: 7 });
    const b = await runTrace({ jitter: true, seed: 7 });
    assert.deepEqual(a, b);
    const c = await runTrace({ jitter: true, seed: 8 });
    assert.notDeepEqual(
      a.cacheStates.map((s) => s.expiresAt),
      c.cacheStates.map((s) => s.expiresAt),
    );
    const first = a.cacheStates[0]!.expiresAt!;
    assert.ok(first < 10.1 && first >= 0.1 + 9, `expiry ${first} within 10 % below 10.1`);
    // With the seed's numbers jitter does not change a decision.
    assert.deepEqual(a.stats, (await runTrace()).stats);
  });

  test('off: exactly max-age', async () => {
    const r = await runTrace();
    assert.deepEqual(r.cacheStates.map((s) => s.expiresAt), [10.1, 10.1, 22.1, 22.1, 34.1]);
  });

  test('every run is deterministic', async () => {
    assert.deepEqual(await runTrace({ condition: 'malformed', backoff: true, jitter: true }), await runTrace({ condition: 'malformed', backoff: true, jitter: true }));
  });
});

describe('the result is self-describing', () => {
  test('inputs, model, library settings, and a playback timeline on the five lanes in the order the code runs', async () => {
    const r = await runTrace({ maxAgeSeconds: 0 });
    assert.equal(r.schema, TRACE_SCHEMA);
    assert.equal(r.inputs.maxAgeSeconds, 0);
    assert.equal(r.inputs.attempts, 5);
    assert.equal(r.model.cardBytes, 1_200);
    assert.equal(r.library.cache.minTtlMs, 0);
    assert.deepEqual(r.library.match.required, { streaming: false });
    assert.equal(r.cacheStates.length, 5);
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r, 'plain data');
    const stagesSeen = new Set(r.events.map((e) => e.stage));
    assert.deepEqual([...stagesSeen].sort(), ['lookup', 'request', 'selection', 'store', 'validation']);
    // Within each attempt the lanes come in the order CardCache.get runs them.
    for (const n of [1, 2, 3, 4, 5]) {
      const lanes = r.events.filter((e) => e.attempt === n).map((e) => TIMELINE_STAGES.indexOf(e.stage));
      assert.deepEqual(lanes, [...lanes].sort((a, b) => a - b), `attempt ${n}`);
    }
    assert.deepEqual(r.events.map((e) => e.seq), r.events.map((_, i) => i + 1));
    for (let i = 1; i < r.events.length; i++) assert.ok(r.events[i]!.atMs >= r.events[i - 1]!.atMs, 'events in time order');
    const second = r.events.filter((e) => e.attempt === 2).map((e) => e.kind);
    assert.deepEqual(second, ['attempt.start', 'request.sent', 'request.received', 'response.received', 'validation.skipped', 'cache.revalidated', 'selection.accepted']);
    const sent = r.events.find((e) => e.attempt === 2 && e.kind === 'request.received')!;
    assert.equal((sent.detail as { requestHeaders: Record<string, string> }).requestHeaders['if-none-match'], '"card-v1"');
  });

  test('credentials are a placeholder header, redacted in the timeline', async () => {
    const r = await runTrace({ condition: 'unauthorized', credentials: true });
    assert.equal(r.library.cache.requestHeaders.authorization !== undefined, true);
    const received = r.events.find((e) => e.kind === 'request.received')!;
    assert.equal((received.detail as { requestHeaders: Record<string, string> }).requestHeaders.authorization, '(simulated credential)');
  });
});

describe('compareTraces (capture a baseline)', () => {
  test('lists changed controls, attempts and stats', async () => {
    const base = await runTrace();
    const cmp = compareTraces(base, await runTrace({ maxAgeSeconds: 30 }));
    assert.equal(cmp.sameDecisions, false);
    assert.deepEqual(cmp.inputs, [{ field: 'maxAgeSeconds', baseline: 10, current: 30, text: 'Cache max-age 10 s → 30 s' }]);
    assert.deepEqual(cmp.attempts.map((a) => a.attempt), [3, 4, 5]);
    assert.deepEqual(cmp.attempts[0]!.changes.find((c) => c.field === 'action'), { field: 'action', baseline: 'fetch', current: 'cache-hit' });
    assert.deepEqual(cmp.attempts[0]!.changes.find((c) => c.field === 'cardVersion'), { field: 'cardVersion', baseline: 'v2', current: 'v1' });
    const fetches = cmp.stats.find((s) => s.field === 'networkFetches')!;
    assert.deepEqual(fetches, { field: 'networkFetches', baseline: 3, current: 1, delta: -2 });
    assert.ok(cmp.lines.includes('networkFetches: 3 → 1 (-2)'));
  });

  test('a change that alters no decision (malformed, max-age 30)', async () => {
    const cmp = compareTraces(await runTrace({ condition: 'malformed' }), await runTrace({ condition: 'malformed', maxAgeSeconds: 30 }));
    assert.equal(cmp.sameDecisions, true);
    assert.equal(cmp.inputs.length, 1);
  });

  test('different numbers of attempts', async () => {
    const cmp = compareTraces(await runTrace({ attempts: 3 }), await runTrace());
    assert.deepEqual(cmp.attempts.map((a) => a.attempt), [4, 5]);
    assert.equal(cmp.attempts[0]!.changes[0]!.field, 'attempt');
  });
});

describe('inputs', () => {
  test('bad controls are all reported as a config error', () => {
    assert.throws(
      () => resolveTraceInputs({ attempts: 0, rttMs: 0, maxAgeSeconds: 1.5, condition: 'weird' as never }),
      (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && err.problems.length === 4,
    );
    assert.throws(() => resolveTraceInputs({ nope: 1 } as never), /not a control/);
    assert.throws(() => resolveTraceInputs({ intervalSeconds: 0 }), /intervalSeconds must be more than 0/);
  });

  test('undefined fields keep their defaults', () => {
    assert.equal(resolveTraceInputs({ maxAgeSeconds: undefined }).maxAgeSeconds, 10);
  });
});

describe('the scripted endpoint', () => {
  test('every modeled card is exactly 1,200 bytes and passes the library\'s own checks', async () => {
    for (const version of ['v1', 'v2'] as const) {
      for (const streaming of [true, false]) {
        const body = modeledCardBody(version, { streaming, insecure: false });
        assert.equal(body.byteLength, CARD_BYTES);
        const r = await checkCard(body);
        assert.equal(r.ok, true, JSON.stringify(r.problems));
        assert.equal(r.card!.capabilities.streaming, streaming);
      }
      assert.equal(modeledCardBody(version, { streaming: true, insecure: true }).byteLength, CARD_BYTES);
    }
    assert.equal(malformedBody(true).byteLength, CARD_BYTES);
    assert.equal((await checkCard(malformedBody(true))).stage, 'parse');
  });

  test('answers by model time, spends the round trip on the clock, and honours If-None-Match', async () => {
    const clock = new VirtualClock();
    const ep = new ScriptedEndpoint({ clock, condition: 'healthy', publishV2AtMs: 12_000, failFromMs: null, maxAgeSeconds: 0, cardStreaming: true, rttMs: 200 });
    const url = 'https://orders.example.com/.well-known/agent-card.json';
    const first = await ep.fetch(url);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'max-age=0');
    assert.equal(first.headers.etag, '"card-v1"');
    assert.equal(first.durationMs, 200);
    assert.equal(clock.now(), 200);
    assert.equal((await ep.fetch(url, { headers: { 'If-None-Match': '"card-v1"' } })).status, 304);
    await clock.advanceTo(11_950); // the server sees the request at 12.05 s
    const v2 = await ep.fetch(url, { headers: { 'if-none-match': '"card-v1"' } });
    assert.equal(v2.status, 200);
    assert.equal(v2.headers.etag, '"card-v2"');
  });

  test('401 unless an authorization header is sent', async () => {
    const clock = new VirtualClock();
    const ep = new ScriptedEndpoint({ clock, condition: 'unauthorized', publishV2AtMs: null, failFromMs: null, maxAgeSeconds: 10, cardStreaming: true, rttMs: 1 });
    const url = 'https://orders.example.com/.well-known/agent-card.json';
    assert.equal((await ep.fetch(url)).status, 401);
    assert.equal((await ep.fetch(url, { headers: { authorization: 'Bearer x' } })).status, 200);
  });
});
