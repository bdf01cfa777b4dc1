/**
 * `a2a-discovery trace`, run as a real child process, against the seed's numbers; its table shows
 * the explorer's own fields (why, If-None-Match, the lanes by name, v2 hidden).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CliRun } from '../helpers/cli.js';
import { runCli } from '../helpers/cli.js';

const cli = (...args: string[]): Promise<CliRun> => runCli(args);

interface Attempt {
  at: number;
  action: string;
  status?: number;
  cardVersion?: string;
  outcome: string;
  stage?: string;
  reason?: string;
}
interface Json {
  attempts: Attempt[];
  stats: { networkFetches: number; cacheHits: number; notModified: number; bytesTransferred: number; accepted: number; rejected: number };
  inputs: Record<string, unknown>;
}

async function trace(...args: string[]): Promise<Json> {
  const r = await cli('trace', ...args, '--json');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Json;
}

const stats = (j: Json) => {
  const { networkFetches, cacheHits, notModified, bytesTransferred, accepted, rejected } = j.stats;
  return { networkFetches, cacheHits, notModified, bytesTransferred, accepted, rejected };
};
const five = <T>(v: T): T[] => Array<T>(5).fill(v);
const HEALTHY = { networkFetches: 3, cacheHits: 2, notModified: 1, bytesTransferred: 2_400, accepted: 5, rejected: 0 };

describe('a2a-discovery trace', () => {
  test('defaults: the seed\'s healthy run', async () => {
    const j = await trace();
    assert.deepEqual(
      j.attempts.map(({ at, action, status, cardVersion, outcome }) => ({ at, action, status, cardVersion, outcome })),
      [
        { at: 0, action: 'fetch', status: 200, cardVersion: 'v1', outcome: 'accepted' },
        { at: 6, action: 'cache-hit', status: undefined, cardVersion: 'v1', outcome: 'accepted' },
        { at: 12, action: 'fetch', status: 200, cardVersion: 'v2', outcome: 'accepted' },
        { at: 18, action: 'cache-hit', status: undefined, cardVersion: 'v2', outcome: 'accepted' },
        { at: 24, action: 'fetch', status: 304, cardVersion: 'v2', outcome: 'accepted' },
      ],
    );
    assert.deepEqual(stats(j), HEALTHY);
  });

  for (const [condition, status] of [['not-found', 404], ['unavailable', 503], ['unauthorized', 401]] as const) {
    test(`--condition ${condition}: five fetches, five rejections at the fetch stage`, async () => {
      const j = await trace('--condition', condition);
      assert.deepEqual(j.attempts.map((a) => [a.action, a.status, a.outcome, a.stage]), five(['fetch', status, 'rejected', 'fetch']));
      assert.deepEqual(stats(j), { networkFetches: 5, cacheHits: 0, notModified: 0, bytesTransferred: 0, accepted: 0, rejected: 5 });
    });
  }

  test('--condition unauthorized --credentials: identical to healthy', async () => {
    const j = await trace('--condition', 'unauthorized', '--credentials');
    assert.deepEqual(j.attempts.map((a) => a.cardVersion), ['v1', 'v1', 'v2', 'v2', 'v2']);
    assert.deepEqual(stats(j), HEALTHY);
  });

  test('--condition malformed (and with --max-age 30): 6,000 bytes, all rejected at parse', async () => {
    for (const extra of [[], ['--max-age', '30']]) {
      const j = await trace('--condition', 'malformed', ...extra);
      assert.deepEqual(j.attempts.map((a) => [a.action, a.status, a.outcome, a.stage]), five(['fetch', 200, 'rejected', 'parse']));
      assert.deepEqual(stats(j), { networkFetches: 5, cacheHits: 0, notModified: 0, bytesTransferred: 6_000, accepted: 0, rejected: 5 });
    }
  });

  test('--condition insecure: the same pattern, refused by policy', async () => {
    const j = await trace('--condition', 'insecure');
    assert.deepEqual(j.attempts.map((a) => [a.action, a.outcome, a.stage]), five(['fetch', 'rejected', 'policy']));
    assert.equal(j.stats.bytesTransferred, 6_000);
  });

  test('--require-streaming --no-card-streaming: cached as healthy, all rejected for capability', async () => {
    const j = await trace('--require-streaming', '--no-card-streaming');
    assert.deepEqual(j.attempts.map((a) => a.action), ['fetch', 'cache-hit', 'fetch', 'cache-hit', 'fetch']);
    assert.deepEqual(j.attempts.map((a) => [a.outcome, a.stage]), five(['rejected', 'match']));
    assert.deepEqual(stats(j), { ...HEALTHY, accepted: 0, rejected: 5 });
  });

  test('--max-age 0: five fetches, three 304s', async () => {
    const j = await trace('--max-age', '0');
    assert.deepEqual(j.attempts.map((a) => a.status), [200, 304, 200, 304, 304]);
    assert.equal(j.stats.networkFetches, 5);
    assert.equal(j.stats.notModified, 3);
  });

  test('--max-age 30: one fetch, all v1', async () => {
    const j = await trace('--max-age', '30');
    assert.deepEqual(j.attempts.map((a) => a.cardVersion), five('v1'));
    assert.equal(j.stats.networkFetches, 1);
    assert.equal(j.stats.cacheHits, 4);
  });

  test('--no-v2: v1 throughout; --publish-v2-at moves the change', async () => {
    assert.deepEqual((await trace('--no-v2')).attempts.map((a) => a.cardVersion), five('v1'));
    assert.deepEqual((await trace('--publish-v2-at', '20')).attempts.map((a) => a.cardVersion), ['v1', 'v1', 'v1', 'v1', 'v2']);
  });

  test('--interval and --rtt change the timeline, not the decisions', async () => {
    const j = await trace('--interval', '7', '--rtt', '300', '--attempts', '5');
    assert.deepEqual(j.attempts.map((a) => a.at), [0, 7, 14, 21, 28]);
    assert.deepEqual(stats(j), HEALTHY);
    assert.equal(j.inputs.rttMs, 300);
  });

  test('--attempts, --backoff, --stale-on-error --fail-from', async () => {
    assert.equal((await trace('--attempts', '2')).attempts.length, 2);
    const backoff = await trace('--condition', 'not-found', '--backoff');
    assert.deepEqual(backoff.attempts.map((a) => a.action), ['fetch', 'fetch', 'backoff', 'fetch', 'backoff']);
    assert.equal(backoff.stats.networkFetches, 3);
    const stale = await trace('--condition', 'unavailable', '--fail-from', '11', '--stale-on-error');
    assert.deepEqual(stale.attempts.map((a) => [a.status, a.cardVersion, a.outcome]), [
      [200, 'v1', 'accepted'],
      [undefined, 'v1', 'accepted'],
      [503, 'v1', 'accepted'],
      [503, 'v1', 'accepted'],
      [503, 'v1', 'accepted'],
    ]);
  });

  test('--jitter --seed is deterministic', async () => {
    const a = await cli('trace', '--jitter', '--seed', '3', '--json');
    const b = await cli('trace', '--jitter', '--seed', '3', '--json');
    assert.equal(a.stdout, b.stdout);
  });

  test('text output: a table of attempts and the stats; exit 0 even when every attempt is rejected', async () => {
    const r = await cli('trace', '--condition', 'malformed');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /#\s+time\s+action\s+If-None-Match\s+why\s+status\s+card\s+outcome\s+rejected at: reason \/ note/);
    assert.match(r.stdout, /24\.0 s\s+fetch\s+-\s+no card cached yet: the last attempt failed \(4 failure\(s\)\); backoff is off, so it asks again\s+200\s+-\s+rejected\s+Validation \(parse\): /);
    assert.match(r.stdout, /network fetches 5 · cache hits 0 · 304 Not Modified 0 · bytes transferred 6,000 · accepted 0 · rejected 5/);
  });

  test('text output carries the explorer\'s fields, not recomputed: why, If-None-Match, the lanes by name, v2 hidden, the freshness sentence', async () => {
    const rowsOf = (stdout: string): string[] => stdout.split('\n').filter((l) => /^\s+\d+\s+\d+\.\d s\s/.test(l));
    const healthy = await cli('trace');
    const json = await trace();
    const run = JSON.parse((await cli('trace', '--json')).stdout) as { attempts: Array<{ why: string; ifNoneMatch?: string }>; freshness: { sentence: string } };
    assert.equal(run.attempts.length, json.attempts.length);
    const rows = rowsOf(healthy.stdout);
    assert.equal(rows.length, 5);
    rows.forEach((row, i) => {
      const a = run.attempts[i]!;
      assert.ok(row.includes(a.why), `row ${i + 1} says why: ${a.why}`);
      if (a.ifNoneMatch !== undefined) assert.ok(row.includes(a.ifNoneMatch), `row ${i + 1} shows If-None-Match ${a.ifNoneMatch}`);
    });
    assert.match(rows[4]!, /fetch\s+"card-v2"\s+the cached card v2 expired at 22\.1 s\s+304\s+v2\s+accepted/);
    assert.match(healthy.stdout, /lanes, in the order the code runs them: Cache lookup → Request → Validation → Cache store → Selection/);
    assert.ok(healthy.stdout.includes(run.freshness.sentence));

    for (const [args, lane] of [
      [['--condition', 'not-found'], 'Request: '],
      [['--condition', 'insecure'], 'Validation \\(policy\\): '],
      [['--require-streaming', '--no-card-streaming'], 'Selection: '],
      [['--condition', 'not-found', '--backoff'], 'Cache lookup: '],
    ] as const) {
      const out = (await cli('trace', ...args)).stdout;
      assert.match(out, new RegExp(`rejected\\s+${lane}`), `${args.join(' ')} names the lane ${lane}`);
    }

    const hidden = await cli('trace', '--max-age', '30');
    assert.match(rowsOf(hidden.stdout)[2]!, /cache-hit\s+-\s+the cached card v1 is fresh until 30\.1 s\s+-\s+v1\s+accepted\s+v2 has been on the server since 12 s, but the cache still serves v1: v1 is fresh until 30\.1 s by max-age 30 s, so no request is sent/);
    assert.match(hidden.stdout, /v2 was published at 12 s but never used/);
  });

  test('--help describes the table\'s columns and the trace@2 JSON', async () => {
    const r = await cli('trace', '--help');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /If-None-Match it sent, why it went to the\s+network/);
    assert.match(r.stdout, /Cache lookup, Request, Validation, Cache store, Selection/);
    assert.match(r.stdout, /schema a2a-discovery\/trace@2/);
    assert.match(r.stdout, /trigger, why, status, conditional, ifNoneMatch/);
  });

  test('usage errors exit 2', async () => {
    for (const args of [
      ['--condition', 'bogus'],
      ['--max-age', 'ten'],
      ['--max-age', '1.5'],
      ['--attempts', '0'],
      ['--rtt', '0'],
      ['--no-v2', '--publish-v2-at', '3'],
      ['--unknown-flag'],
    ]) {
      const r = await cli('trace', ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /error/);
    }
  });

  test('--calls: the agent\'s health after each attempt, in the library\'s words, leaving after 5 failed calls and back after a good call', async () => {
    const r = await cli('trace', '--attempts', '9', '--calls', 'ok ok 500 500 500 500 500 ok ok');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Health of the agent from its card and its calls/);
    assert.match(r.stdout, /7 +500 +0 failed fetches, 5 failed call\(s\) in a row +removed \* +left new snapshots after 5 failed calls in a row; last: orders_agent answered 500 Internal Server Error/);
    assert.match(r.stdout, /Attempt 9 \(48\.1 s\): removed → healthy: card fresh\./);
    const j = JSON.parse((await cli('trace', '--attempts', '9', '--calls', 'ok ok 500 500 500 500 500 ok ok', '--call-leave-after', '3', '--json')).stdout) as { health: { steps: { state: string }[] } };
    assert.deepEqual(j.health.steps.map((s) => s.state), ['pending', 'healthy', 'degraded', 'degraded', 'removed', 'removed', 'removed', 'removed', 'healthy']);
  });

  test('--rollout: a breaking v2 whose calls fail half the time is rolled back at 5 %, the reason and the alert printed', async () => {
    const r = await cli('trace', '--rollout', '--v2-breaking', '--candidate-calls', 'ok 500');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /change: breaking — skill "order-status" removed/);
    assert.match(r.stdout, /rolled-back +0% +orders_agent: turn error rate 50% on the candidate \(5 of 10 turns\) against 0% on the current snapshot/);
    assert.match(r.stdout, /alert: rollout of orders_agent rolled back: orders_agent: turn error rate 50%/);
    const j = JSON.parse((await cli('trace', '--rollout', '--v2-breaking', '--rollout-steps', '10 50 100', '--json')).stdout) as { rollout: { status: string; decisions: { action: string; share: number }[] } };
    assert.equal(j.rollout.status, 'promoted');
    assert.deepEqual(j.rollout.decisions.map((d) => [d.action, d.share]), [['started', 10], ['advanced', 50], ['promoted', 100]]);
  });

  test('a bad call script is a usage error naming the control', async () => {
    const r = await cli('trace', '--calls', 'ok 200', '--json');
    assert.equal(r.code, 2);
    assert.match(r.stdout, /calls/);
  });
});
