/**
 * Every scenario the seed's discovery-trace model describes, run by `runTrace` (the real card
 * cache, validator and matcher on a virtual clock), against the seed's numbers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TraceResult } from '../../packages/core/src/explorer/index.js';
import { DEFAULT_TRACE_INPUTS, runTrace } from '../../packages/core/src/explorer/index.js';

const actions = (r: TraceResult) => r.attempts.map((a) => a.action);
const statuses = (r: TraceResult) => r.attempts.map((a) => a.status);
const versions = (r: TraceResult) => r.attempts.map((a) => a.cardVersion);
const outcomes = (r: TraceResult) => r.attempts.map((a) => a.outcome);
const stages = (r: TraceResult) => r.attempts.map((a) => a.stage);
const times = (r: TraceResult) => r.attempts.map((a) => a.at);
const decisions = (r: TraceResult) => r.attempts.map(({ action, status, cardVersion, outcome, stage, reason }) => ({ action, status, cardVersion, outcome, stage, reason }));
const five = <T>(v: T): T[] => Array<T>(5).fill(v);

/** The healthy run of the seed, checked in full (also used for "identical to healthy"). */
function assertHealthy(r: TraceResult): void {
  assert.deepEqual(times(r), [0, 6, 12, 18, 24]);
  assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'fetch', 'cache-hit', 'fetch']);
  assert.deepEqual(statuses(r), [200, undefined, 200, undefined, 304]);
  assert.deepEqual(versions(r), ['v1', 'v1', 'v2', 'v2', 'v2']);
  assert.deepEqual(outcomes(r), five('accepted'));
  assert.deepEqual(stages(r), five(undefined));
  assert.deepEqual(r.stats, { networkFetches: 3, cacheHits: 2, notModified: 1, bytesTransferred: 2_400, accepted: 5, rejected: 0, backoffSkips: 0, staleSelections: 0 });
}

describe('the seed: five discovery attempts against one endpoint', () => {
  test('the defaults are the seed\'s: five attempts 6 s apart, max-age 10 s, v2 at 12 s, backoff and jitter off', () => {
    assert.equal(DEFAULT_TRACE_INPUTS.attempts, 5);
    assert.equal(DEFAULT_TRACE_INPUTS.intervalSeconds, 6);
    assert.equal(DEFAULT_TRACE_INPUTS.maxAgeSeconds, 10);
    assert.equal(DEFAULT_TRACE_INPUTS.publishV2AtSeconds, 12);
    assert.equal(DEFAULT_TRACE_INPUTS.condition, 'healthy');
    assert.equal(DEFAULT_TRACE_INPUTS.backoff, false);
    assert.equal(DEFAULT_TRACE_INPUTS.jitter, false);
    assert.equal(DEFAULT_TRACE_INPUTS.staleOnError, false);
  });

  test('healthy: three network fetches and two cache hits give five accepted selections v1, v1, v2, v2, v2; one fetch is a 304', async () => {
    const r = await runTrace();
    assertHealthy(r);
    // The 304 refreshes the cached v2 card instead of downloading it again.
    const last = r.attempts[4]!;
    assert.equal(last.cacheOutcome, 'revalidated');
    assert.equal(last.conditional, true);
    assert.equal(last.bytes, 0);
    assert.equal(r.cacheStates[4]!.etag, '"card-v2"');
    // Each fetch waits the round trip before the card is validated and selected.
    assert.deepEqual(r.attempts.map((a) => a.endedAt), [0.1, 6, 12.1, 18, 24.1]);
  });
});

describe('the seed: unavailable cards stop discovery', () => {
  for (const [condition, status] of [['not-found', 404], ['unavailable', 503]] as const) {
    test(`${status}: all five attempts reach the network and are rejected; nothing is cached`, async () => {
      const r = await runTrace({ condition });
      assert.deepEqual(actions(r), five('fetch'));
      assert.deepEqual(statuses(r), five(status));
      assert.deepEqual(outcomes(r), five('rejected'));
      assert.deepEqual(stages(r), five('fetch'));
      assert.deepEqual(versions(r), five(undefined));
      for (const a of r.attempts) assert.match(a.reason!, new RegExp(`answered HTTP ${status}`));
      assert.deepEqual(r.stats, { networkFetches: 5, cacheHits: 0, notModified: 0, bytesTransferred: 0, accepted: 0, rejected: 5, backoffSkips: 0, staleSelections: 0 });
      assert.ok(r.cacheStates.every((s) => !s.present), 'nothing cached');
    });
  }

  test('401 unless credentials are supplied: rejected at every attempt without them', async () => {
    const r = await runTrace({ condition: 'unauthorized' });
    assert.deepEqual(actions(r), five('fetch'));
    assert.deepEqual(statuses(r), five(401));
    assert.deepEqual(outcomes(r), five('rejected'));
    assert.deepEqual(stages(r), five('fetch'));
    assert.match(r.attempts[0]!.reason!, /401.*credentials/);
    assert.equal(r.stats.networkFetches, 5);
    assert.equal(r.stats.accepted, 0);
    assert.ok(r.cacheStates.every((s) => !s.present));
  });

  test('401 with credentials supplied: the run matches the healthy one', async () => {
    const withCredentials = await runTrace({ condition: 'unauthorized', credentials: true });
    assertHealthy(withCredentials);
    assert.deepEqual(decisions(withCredentials), decisions(await runTrace()));
  });

  test('credentials change nothing for a healthy endpoint', async () => {
    assertHealthy(await runTrace({ credentials: true }));
  });
});

describe('the seed: invalid cards are never cached', () => {
  test('malformed JSON: each attempt downloads 1,200 bytes, fails parsing and is rejected: 6,000 bytes for nothing', async () => {
    const r = await runTrace({ condition: 'malformed' });
    assert.deepEqual(actions(r), five('fetch'));
    assert.deepEqual(statuses(r), five(200));
    assert.deepEqual(r.attempts.map((a) => a.bytes), five(1_200));
    assert.deepEqual(outcomes(r), five('rejected'));
    assert.deepEqual(stages(r), five('parse'));
    assert.deepEqual(r.attempts.map((a) => a.cacheOutcome), five('invalid'));
    assert.equal(r.stats.networkFetches, 5);
    assert.equal(r.stats.bytesTransferred, 6_000);
    assert.equal(r.stats.rejected, 5);
    assert.ok(r.cacheStates.every((s) => !s.present));
  });

  test('malformed JSON with max-age 30: nothing changes, because a card that fails validation is not stored', async () => {
    const base = await runTrace({ condition: 'malformed' });
    const longer = await runTrace({ condition: 'malformed', maxAgeSeconds: 30 });
    assert.deepEqual(decisions(longer), decisions(base));
    assert.deepEqual(longer.stats, base.stats);
  });

  test('non-HTTPS advertised interface: the same pattern, refused by the client HTTPS policy', async () => {
    const r = await runTrace({ condition: 'insecure' });
    assert.deepEqual(actions(r), five('fetch'));
    assert.deepEqual(statuses(r), five(200));
    assert.deepEqual(outcomes(r), five('rejected'));
    assert.deepEqual(stages(r), five('policy'));
    assert.deepEqual(r.attempts.map((a) => a.code), five('ERR_INSECURE_INTERFACE'));
    assert.match(r.attempts[0]!.reason!, /plain http is accepted only for a loopback host/);
    assert.equal(r.stats.networkFetches, 5);
    assert.equal(r.stats.bytesTransferred, 6_000);
    assert.ok(r.cacheStates.every((s) => !s.present));
    const longer = await runTrace({ condition: 'insecure', maxAgeSeconds: 30 });
    assert.deepEqual(longer.stats, r.stats);
  });

  test('a valid but unsuitable card (streaming required, not advertised) is fetched and cached, and all five are rejected for capability', async () => {
    const r = await runTrace({ requireStreaming: true, cardStreaming: false });
    assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'fetch', 'cache-hit', 'fetch']);
    assert.deepEqual(statuses(r), [200, undefined, 200, undefined, 304]);
    assert.deepEqual(versions(r), ['v1', 'v1', 'v2', 'v2', 'v2']);
    assert.deepEqual(outcomes(r), five('rejected'));
    assert.deepEqual(stages(r), five('match'));
    assert.match(r.attempts[0]!.reason!, /does not advertise streaming/);
    assert.deepEqual(r.stats, { networkFetches: 3, cacheHits: 2, notModified: 1, bytesTransferred: 2_400, accepted: 0, rejected: 5, backoffSkips: 0, staleSelections: 0 });
    assert.ok(r.cacheStates.every((s) => s.present && s.usable), 'the card is cached');
  });

  test('requiring streaming from a card that advertises it accepts all five', async () => {
    assertHealthy(await runTrace({ requireStreaming: true }));
  });

  test('a card without streaming is fine when the client does not require it', async () => {
    assertHealthy(await runTrace({ cardStreaming: false }));
  });
});

describe('the seed: caching inputs', () => {
  test('max-age 0: every attempt goes to the network; three of them are 304', async () => {
    const r = await runTrace({ maxAgeSeconds: 0 });
    assert.deepEqual(actions(r), five('fetch'));
    assert.deepEqual(statuses(r), [200, 304, 200, 304, 304]);
    assert.deepEqual(versions(r), ['v1', 'v1', 'v2', 'v2', 'v2']);
    assert.deepEqual(outcomes(r), five('accepted'));
    assert.equal(r.stats.networkFetches, 5);
    assert.equal(r.stats.cacheHits, 0);
    assert.equal(r.stats.notModified, 3);
    assert.equal(r.stats.bytesTransferred, 2_400);
  });

  test('max-age 30: one fetch serves all five attempts, all v1 even after v2 is published', async () => {
    const r = await runTrace({ maxAgeSeconds: 30 });
    assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'cache-hit', 'cache-hit', 'cache-hit']);
    assert.deepEqual(versions(r), five('v1'));
    assert.deepEqual(outcomes(r), five('accepted'));
    assert.deepEqual(r.stats, { networkFetches: 1, cacheHits: 4, notModified: 0, bytesTransferred: 1_200, accepted: 5, rejected: 0, backoffSkips: 0, staleSelections: 0 });
  });

  test('no v2: v1 throughout (the later fetches are 304s)', async () => {
    const r = await runTrace({ publishV2AtSeconds: null });
    assert.deepEqual(versions(r), five('v1'));
    assert.deepEqual(actions(r), ['fetch', 'cache-hit', 'fetch', 'cache-hit', 'fetch']);
    assert.deepEqual(statuses(r), [200, undefined, 304, undefined, 304]);
    assert.deepEqual(outcomes(r), five('accepted'));
    assert.equal(r.stats.networkFetches, 3);
    assert.equal(r.stats.cacheHits, 2);
  });

  test('discovery interval and network round trip change the timeline, not the decisions', async () => {
    const base = await runTrace();
    for (const change of [{ intervalSeconds: 7 }, { intervalSeconds: 6.5, rttMs: 300 }, { rttMs: 1 }, { rttMs: 2_000 }]) {
      const r = await runTrace(change);
      assert.deepEqual(
        r.attempts.map(({ action, status, cardVersion, outcome }) => ({ action, status, cardVersion, outcome })),
        base.attempts.map(({ action, status, cardVersion, outcome }) => ({ action, status, cardVersion, outcome })),
        JSON.stringify(change),
      );
      assert.deepEqual(r.stats, base.stats, JSON.stringify(change));
    }
    const slow = await runTrace({ intervalSeconds: 7, rttMs: 300 });
    assert.deepEqual(times(slow), [0, 7, 14, 21, 28]);
    assert.deepEqual(slow.attempts.map((a) => a.endedAt), [0.3, 7, 14.3, 21, 28.3]);
  });

  test('restoring defaults: an explicit default set equals an empty one', async () => {
    assert.deepEqual(await runTrace({ ...DEFAULT_TRACE_INPUTS }), await runTrace({}));
  });
});
