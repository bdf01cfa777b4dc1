/**
 * What the explorer's result says for a person, point by point of seed 004: why each attempt
 * went to the network, the If-None-Match it sent, v2 hidden by a fresh v1, the max-age trade-off
 * in words, timing changes told apart from decision changes, rejections named by the diagram's
 * lanes, the modelled cards themselves, and limits that say what the model really does.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCard } from '../../packages/core/src/card/index.js';
import { attributeChanges, compareTraces, runTrace, TIMELINE_STAGE_NAMES, tradeOffOf } from '../../packages/core/src/explorer/index.js';

describe('why an attempt went to the network', () => {
  test('healthy: no card yet, fresh, expired at 10.1 s, fresh, expired at 22.1 s', async () => {
    const r = await runTrace();
    assert.deepEqual(r.attempts.map((a) => a.trigger), ['no-card', 'fresh', 'expired', 'fresh', 'expired']);
    assert.equal(r.attempts[2]!.why, 'the cached card v1 expired at 10.1 s');
    assert.equal(r.attempts[1]!.why, 'the cached card v1 is fresh until 10.1 s');
    assert.match(r.events.find((e) => e.attempt === 3 && e.kind === 'attempt.start')!.message, /expired at 10\.1 s/);
  });

  test('a conditional request names its If-None-Match value (the stored ETag)', async () => {
    const r = await runTrace();
    assert.deepEqual(r.attempts.map((a) => a.ifNoneMatch), [undefined, undefined, '"card-v1"', undefined, '"card-v2"']);
    const sent = r.events.find((e) => e.attempt === 5 && e.kind === 'request.sent')!;
    assert.match(sent.message, /If-None-Match: "card-v2"/);
    assert.equal(sent.detail?.['if-none-match'], '"card-v2"');
  });

  test('failures: retries say so; with backoff, the skipped attempts say until when', async () => {
    const r = await runTrace({ condition: 'not-found', backoff: true });
    assert.deepEqual(r.attempts.map((a) => a.trigger), ['no-card', 'retry', 'backing-off', 'retry', 'backing-off']);
    assert.match(r.attempts[2]!.why, /backing off until 16\.1 s after 2 failure\(s\)/);
    assert.match(r.attempts[1]!.why, /the backoff ended at 5\.1 s/);
    const plain = await runTrace({ condition: 'not-found' });
    assert.match(plain.attempts[1]!.why, /backoff is off, so it asks again/);
  });
});

describe('v2 on the server, v1 in the cache', () => {
  test('max-age 30: attempts 3 to 5 say v2 is on the server but v1 is fresh by max-age', async () => {
    const r = await runTrace({ maxAgeSeconds: 30 });
    assert.deepEqual(r.attempts.map((a) => a.serverVersion), ['v1', 'v1', 'v2', 'v2', 'v2']);
    assert.deepEqual(r.freshness.v2HiddenAttempts, [3, 4, 5]);
    assert.equal(r.freshness.v2FirstUsedAt, null);
    assert.match(r.attempts[2]!.hiddenNewer!, /v2 has been on the server since 12 s, but the cache still serves v1: v1 is fresh until 30\.1 s by max-age 30 s/);
    assert.match(r.freshness.sentence, /never used/);
  });

  test('the defaults: v2 is first used at 12 s and nothing is hidden', async () => {
    const r = await runTrace();
    assert.equal(r.freshness.v2FirstUsedAt, 12);
    assert.deepEqual(r.freshness.v2HiddenAttempts, []);
    assert.equal(r.freshness.sentence, 'v2 was published at 12 s and first used at 12 s (attempt 3).');
  });

  test('the trade-off in words, with the numbers of both runs', async () => {
    const base = await runTrace();
    assert.equal(
      tradeOffOf(base, await runTrace({ maxAgeSeconds: 30 })),
      'Longer max-age (30 s instead of 10 s): 1 network request instead of 3, but v2 is seen later: never in the run instead of at 12 s.',
    );
    assert.equal(tradeOffOf(base, await runTrace({ maxAgeSeconds: 0 })), 'Shorter max-age (0 s instead of 10 s): 5 network requests instead of 3; v2 is seen at 12 s in both runs.');
    assert.equal(tradeOffOf(base, await runTrace({ intervalSeconds: 7 })), undefined);
  });
});

describe('timeline versus decisions', () => {
  test('interval 7 s and round trip 300 ms: timeline changed, decisions the same', async () => {
    const cmp = compareTraces(await runTrace(), await runTrace({ intervalSeconds: 7, rttMs: 300 }));
    assert.equal(cmp.sameDecisions, true);
    assert.equal(cmp.timelineChanged, true);
    assert.equal(cmp.headline, 'Timeline changed, decisions the same');
  });

  test('interval 4 s changes decisions, and says so', async () => {
    const cmp = compareTraces(await runTrace(), await runTrace({ intervalSeconds: 4 }));
    assert.equal(cmp.sameDecisions, false);
    assert.equal(cmp.headline, 'Decisions changed');
  });

  test('the same inputs: nothing changed', async () => {
    assert.equal(compareTraces(await runTrace(), await runTrace()).headline, 'Nothing changed');
  });
});

describe('rejections use the diagram’s lanes', () => {
  for (const [patch, lane, stage] of [
    [{ condition: 'not-found' }, 'request', 'fetch'],
    [{ condition: 'malformed' }, 'validation', 'parse'],
    [{ condition: 'insecure' }, 'validation', 'policy'],
    [{ requireStreaming: true, cardStreaming: false }, 'selection', 'match'],
  ] as const) {
    test(`${JSON.stringify(patch)}: rejected at ${lane} (${stage})`, async () => {
      const r = await runTrace(patch);
      assert.deepEqual(r.attempts.map((a) => a.lane), Array(5).fill(lane));
      assert.deepEqual(r.attempts.map((a) => a.stage), Array(5).fill(stage));
      const last = r.events.filter((e) => e.kind === 'selection.rejected').map((e) => e.message);
      assert.ok(last.every((m) => m.startsWith(`Rejected at ${TIMELINE_STAGE_NAMES[lane]}`)), last.join('\n'));
    });
  }

  test('invalid content: validation fails, then the store lane says nothing is stored', async () => {
    const r = await runTrace({ condition: 'malformed', maxAgeSeconds: 30 });
    const kinds = r.events.filter((e) => e.attempt === 1).map((e) => `${e.stage}:${e.kind}`);
    assert.deepEqual(kinds.slice(4, 6), ['validation:validation.failed', 'store:cache.not-stored']);
    assert.ok(r.cacheStates.every((s) => !s.present));
  });
});

describe('the modelled card and the limits', () => {
  test('the run carries the v1 and v2 bodies it served; they pass the library’s checks', async () => {
    const r = await runTrace();
    assert.equal(JSON.parse(r.model.cards.v1).version, '1.0.0');
    assert.equal(JSON.parse(r.model.cards.v2).version, '2.0.0');
    assert.equal(Buffer.byteLength(r.model.cards.v2), 1_200);
    assert.equal((await checkCard(r.model.cards.v1)).ok, true);
    const insecure = await runTrace({ condition: 'insecure' });
    assert.match(insecure.model.cards.v1, /http:\/\/orders\.example\.com/);
    const malformed = await runTrace({ condition: 'malformed' });
    assert.throws(() => JSON.parse(malformed.model.cards.v1));
  });

  test('validation wording and limits say what the model does, and no more', async () => {
    const r = await runTrace();
    const passed = r.events.find((e) => e.kind === 'validation.passed')!.message;
    assert.doesNotMatch(passed, /schema valid/i);
    assert.match(passed, /not the full A2A JSON Schema/);
    const limits = r.model.limits.join(' ');
    assert.match(limits, /no retries within an attempt/i);
    assert.match(limits, /does not authenticate later task calls/);
    assert.match(limits, /no signature is verified/);
  });
});

describe('a comparison names the cause of its differences only when it knows it (issue 25)', () => {
  test('malformed JSON → "Cache max-age 30": two controls changed, so max-age is not credited with 1 request instead of 5', async () => {
    const malformed = await runTrace({ condition: 'malformed' });
    const maxAge30 = await runTrace({ maxAgeSeconds: 30 });
    const cmp = compareTraces(malformed, maxAge30);
    assert.equal(cmp.tradeOff, undefined);
    assert.equal(tradeOffOf(malformed, maxAge30), undefined);
    assert.ok(!cmp.lines.some((l) => /max-age.*network request/i.test(l)), cmp.lines.join('\n'));
    assert.equal(cmp.attribution.kind, 'several');
    assert.deepEqual(cmp.attribution.fields, ['condition', 'maxAgeSeconds']);
    assert.equal(
      cmp.attribution.sentence,
      '2 controls changed (Endpoint / card condition, Cache max-age): the differences below come from these changes together, and which one caused which is not known. Change one control at a time to see what each does.',
    );
    // The controls in the form's words, never internal names.
    assert.deepEqual(cmp.lines.slice(0, 2), ['Endpoint / card condition Malformed JSON → Healthy', 'Cache max-age 10 s → 30 s']);
  });

  test('max-age alone: every difference is its doing, and the trade-off is stated', async () => {
    const cmp = compareTraces(await runTrace(), await runTrace({ maxAgeSeconds: 30 }));
    assert.equal(cmp.attribution.kind, 'one');
    assert.equal(cmp.attribution.sentence, 'One control changed, so every difference below is its doing: Cache max-age 10 s → 30 s.');
    assert.match(cmp.tradeOff ?? '', /^Longer max-age \(30 s instead of 10 s\): 1 network request instead of 3/);
  });

  test('max-age with the round trip: no trade-off is claimed for max-age', async () => {
    const cmp = compareTraces(await runTrace(), await runTrace({ maxAgeSeconds: 30, rttMs: 300 }));
    assert.equal(cmp.tradeOff, undefined);
    assert.equal(cmp.attribution.kind, 'several');
  });

  test('one control that changes nothing says so; no control changed says so', async () => {
    const same = compareTraces(await runTrace({ condition: 'malformed' }), await runTrace({ condition: 'malformed', maxAgeSeconds: 30 }));
    assert.equal(same.attribution.sentence, 'One control changed (Cache max-age 10 s → 30 s), and no attempt or statistic changed with it.');
    assert.equal(compareTraces(await runTrace(), await runTrace()).attribution.kind, 'none');
  });

  test('stale-on-error and fail-from times in the form’s words', async () => {
    const cmp = compareTraces(await runTrace({ condition: 'unavailable' }), await runTrace({ condition: 'unavailable', failFromSeconds: 11, staleOnError: true }));
    assert.deepEqual(cmp.inputs.map((c) => c.text), ['Stale-on-error off → on', 'Fail from time T off → 11 s']);
    const v2 = compareTraces(await runTrace(), await runTrace({ publishV2AtSeconds: null, rttMs: 250 }));
    assert.deepEqual(v2.inputs.map((c) => c.text), ['Publish card v2 at 12 s → off', 'Network round trip 100 ms → 250 ms']);
  });
});

describe('a conditional request says why it got 200 or 304 (issue 25)', () => {
  test('attempt 3 sends If-None-Match "card-v1"; v2 is published, so it no longer matches: 200 with ETag "card-v2"', async () => {
    const r = await runTrace();
    const third = r.attempts[2]!;
    assert.equal(third.status, 200);
    assert.equal(
      third.revalidation,
      'If-None-Match "card-v1" no longer matched: the card changed on the server (its ETag is now "card-v2"), so the answer is 200 with the whole new card instead of 304 Not Modified',
    );
    const response = r.events.find((e) => e.attempt === 3 && e.kind === 'response.received')!;
    assert.match(response.message, /If-None-Match "card-v1" no longer matched: .*ETag is now "card-v2"/);
    assert.equal(response.detail?.revalidation, third.revalidation);
    assert.match(r.attempts[4]!.revalidation!, /^If-None-Match "card-v2" matched the card's ETag: .*304 Not Modified/);
    // Unconditional requests and error statuses have nothing to explain.
    assert.equal(r.attempts[0]!.revalidation, undefined);
    const failing = await runTrace({ condition: 'unavailable', failFromSeconds: 11 });
    assert.ok(failing.attempts.every((a) => a.revalidation === undefined));
  });
});

describe('several changes: each one tried alone, by the library (issue 25)', () => {
  test('malformed JSON → "Cache max-age 30": the condition alone gives 3 requests, max-age alone changes nothing', async () => {
    const effects = await attributeChanges(await runTrace({ condition: 'malformed' }), await runTrace({ maxAgeSeconds: 30 }));
    assert.deepEqual(
      effects?.map((e) => e.sentence),
      [
        'Endpoint / card condition Malformed JSON → Healthy alone: 3 network requests instead of 5, 5 accepted instead of 0.',
        'Cache max-age 10 s → 30 s alone changes no decision (the same 5 network requests, the same 0 accepted).',
      ],
    );
    assert.deepEqual(effects?.map((e) => [e.explainsAll, e.changesNothing]), [[false, false], [false, true]]);
  });

  test('one change that alone gives the whole result is said to; the others make no difference here', async () => {
    const effects = await attributeChanges(await runTrace(), await runTrace({ maxAgeSeconds: 30, rttMs: 300 }));
    assert.equal(effects?.[0]?.explainsAll, true);
    assert.match(effects?.[0]?.sentence ?? '', /^Cache max-age 10 s → 30 s alone: 1 network request instead of 3, the same 5 accepted — already this run’s decisions/);
    assert.equal(effects?.[1]?.changesNothing, true);
  });

  test('one control, or more than four: nothing is run', async () => {
    let runs = 0;
    const counting = async (i: Parameters<typeof runTrace>[0]) => (runs++, runTrace(i));
    assert.equal(await attributeChanges(await runTrace(), await runTrace({ maxAgeSeconds: 30 }), counting), undefined);
    const many = { maxAgeSeconds: 30, rttMs: 300, attempts: 4, intervalSeconds: 5, jitter: true };
    assert.equal(await attributeChanges(await runTrace(), await runTrace(many), counting), undefined);
    assert.equal(runs, 0);
    await attributeChanges(await runTrace(), await runTrace({ maxAgeSeconds: 30, rttMs: 300 }), counting);
    assert.equal(runs, 2);
  });
});
