/**
 * `/api/journal` and `/api/activity` behind the JournalReader: pages of the store's journal
 * newest first down to the horizon, the writer's not-yet-written events included once, a type
 * filter, a bounded limit; cache chatter only as per-endpoint counts and rates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { MemoryStateStore, StoreWriter } from '../../packages/store/src/index.js';
import { JournalReader, MAX_JOURNAL_PAGE, SERIES_HORIZON_MS, parseActivityQuery, parseJournalQuery } from '../../packages/service/src/telemetry/journal.js';

test('pages the journal newest first to the horizon, with unwritten events once, filtered by type; chatter only counted', async () => {
  let now = 1_700_000_000_000;
  const events = new EventStream({ wallNow: () => now });
  const store = new MemoryStateStore({ wallNow: () => now });
  const writer = new StoreWriter({ store, events, snapshot: () => undefined, pin: () => undefined });
  const reader = new JournalReader({ store, events, wallNow: () => now, pending: () => writer.pending() });
  const ep = 'https://a.example';
  for (let v = 1; v <= 30; v++) {
    now += 1_000;
    events.emit({ type: 'snapshot.published', version: v, digest: `d${v}`, agents: [] });
    // Chatter: never journaled, only counted.
    for (let i = 0; i < 10; i++) events.emit({ type: 'card.result', endpoint: ep, outcome: 'hit', failures: 0 });
    events.emit({ type: 'card.fetch', endpoint: ep, url: `${ep}/.well-known/agent-card.json`, conditional: true });
  }
  events.emit({ type: 'alert', kind: 'skills-changed', message: 'm', endpoint: ep });
  await writer.flush();
  // Not yet written: noted by the writer only.
  events.emit({ type: 'alert.resolved', kind: 'repeated-failures', key: 'k', message: 'ok', raisedAt: now, endpoint: ep });

  const first = await reader.page({ limit: 12 });
  assert.equal(first.events.length, 12);
  assert.deepEqual(first.events.slice(-2).map((e) => e.type), ['alert', 'alert.resolved']);
  assert.ok(first.events.every((e) => e.type !== 'card.result' && e.type !== 'card.fetch'));
  assert.ok(first.events.every((e) => e.replica === first.replica), 'the page names the replica serving it, whose seq numbers its stream carries');
  const seen: DiscoveryEvent[] = [...first.events];
  let before = first.nextBefore;
  while (before !== null) {
    const p = await reader.page({ before, limit: 12 });
    assert.ok(p.events.every((e) => e.journalId !== undefined && e.journalId < before!), 'below the cursor: journal positions');
    seen.unshift(...p.events);
    before = p.nextBefore;
  }
  assert.deepEqual(seen.filter((e) => e.type === 'snapshot.published').map((e) => (e as { version: number }).version), Array.from({ length: 30 }, (_, i) => i + 1));
  assert.equal(new Set(seen.map((e) => e.seq)).size, seen.length, 'no event twice');

  const alerts = await reader.page({ types: ['alert', 'alert.resolved'] });
  assert.deepEqual(alerts.events.map((e) => e.type), ['alert', 'alert.resolved']);
  assert.equal(alerts.nextBefore, null);

  const activity = await reader.activity();
  const a = activity.endpoints.find((x) => x.endpoint === ep)!;
  assert.equal(a.counts['card.result.hit'], 300);
  assert.equal(a.counts['card.fetch.conditional'], 30);
  assert.equal(a.recent['card.result.hit'], 300, 'all within the rate window');
  assert.equal(activity.totals['card.result.hit'], 300, 'the store counts them too');
  now += 10 * 60_000;
  assert.equal((await reader.activity()).endpoints[0]!.recent['card.result.hit'], undefined, 'out of the window');
  events.emit({ type: 'card.result', endpoint: ep, outcome: 'hit', failures: 0 });
  events.emit({ type: 'card.result', endpoint: ep, outcome: 'stale', failures: 1 });
  // Late news of a time before the window: in the totals only.
  events.emit({ type: 'card.result', endpoint: ep, outcome: 'failed', failures: 2, at: now - 6 * 60_000 });
  const later = (await reader.activity()).endpoints[0]!;
  assert.deepEqual(later.recent, { 'card.result.hit': 1, 'card.result.stale': 1 }, 'a bucket’s slot taken again counts from zero');
  assert.deepEqual(later.counts, { 'card.result.hit': 301, 'card.fetch.conditional': 30, 'card.result.stale': 1, 'card.result.failed': 1 });

  assert.deepEqual(parseJournalQuery({ limit: '999999' }), { limit: MAX_JOURNAL_PAGE });
  assert.equal(typeof parseJournalQuery({ before: '-1' }), 'string');
  assert.equal(typeof parseJournalQuery({ types: 'alert;drop' }), 'string');
  reader.close();
  await writer.close();
});

test('rate series: chatter per endpoint per bucket (hits, 304s, requests, failures), summed into the asked buckets, back to the horizon', async () => {
  const start = Date.UTC(2026, 10, 30, 9, 0);
  let now = start;
  const events = new EventStream({ wallNow: () => now });
  const store = new MemoryStateStore({ wallNow: () => now });
  const reader = new JournalReader({ store, events, wallNow: () => now });
  const ep = 'https://a.example';
  // Ten minutes: each minute 6 hits, 2 requests answered 304; the last three minutes 1 failure each.
  for (let m = 0; m < 10; m++) {
    now = start + m * 60_000 + 5_000;
    for (let i = 0; i < 6; i++) events.emit({ type: 'card.result', endpoint: ep, outcome: 'hit', failures: 0 });
    for (let i = 0; i < 2; i++) {
      events.emit({ type: 'card.fetch', endpoint: ep, url: `${ep}/.well-known/agent-card.json`, conditional: true });
      events.emit({ type: 'card.result', endpoint: ep, outcome: 'revalidated', failures: 0 });
    }
    if (m >= 7) events.emit({ type: 'card.result', endpoint: ep, outcome: 'failed', failures: m - 6 });
  }
  now = start + 10 * 60_000 - 1;

  assert.equal((await reader.activity()).endpoints[0]!.series, undefined, 'no series unless asked for');
  const perMinute = (await reader.activity({ from: start, bucketMs: 60_000 })).endpoints[0]!.series!;
  assert.equal(perMinute.from, start);
  assert.equal(perMinute.bucketMs, 60_000);
  assert.deepEqual(perMinute.hits, Array(10).fill(6));
  assert.deepEqual(perMinute.revalidated, Array(10).fill(2));
  assert.deepEqual(perMinute.fetches, Array(10).fill(2));
  assert.deepEqual(perMinute.failures, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]);

  // Five-minute buckets (a bucket width is rounded up to whole minutes).
  const perFive = (await reader.activity({ from: start, bucketMs: 299_000 })).endpoints[0]!.series!;
  assert.equal(perFive.bucketMs, 300_000);
  assert.deepEqual(perFive.hits, [30, 30]);
  assert.deepEqual(perFive.failures, [0, 3]);

  // Hours later: the old minutes fall behind the horizon; the series starts there.
  now = start + SERIES_HORIZON_MS + 3 * 60_000;
  const late = (await reader.activity({ from: start, bucketMs: 60_000 })).endpoints[0]!.series!;
  assert.ok(late.from > start);
  // 360 one-minute slots end with the current minute (scenario minute 363): minutes 4–9 remain.
  assert.equal(late.hits.reduce((a, b) => a + b, 0), 6 * 6, 'the minutes still within the horizon');
  // The ring reuses a slot for a new minute: the old count is gone, the new one counted alone.
  events.emit({ type: 'card.result', endpoint: ep, outcome: 'hit', failures: 0 });
  const reused = (await reader.activity({ from: now - 60_000, bucketMs: 60_000 })).endpoints[0]!.series!;
  assert.equal(reused.hits.at(-1), 1);
  // Late news of a minute the ring has moved past (its slot holds a newer minute): not counted,
  // and the newer minute keeps its count.
  events.emit({ type: 'card.result', endpoint: ep, outcome: 'hit', failures: 0, at: now - SERIES_HORIZON_MS });
  assert.equal((await reader.activity({ from: now - 60_000, bucketMs: 60_000 })).endpoints[0]!.series!.hits.at(-1), 1);

  assert.deepEqual(parseActivityQuery({ from: '5', bucketMs: '60000' }), { from: 5, bucketMs: 60_000 });
  assert.equal(typeof parseActivityQuery({ bucketMs: '0' }), 'string');
  assert.equal(typeof parseActivityQuery({ from: 'x' }), 'string');
  reader.close();
});

test('activity: an evicted endpoint’s counters go with it, at most maxEndpoints are counted (past it, newcomers are not, counted), answers come in pages', async () => {
  const now = 1_700_000_000_000;
  const events = new EventStream({ wallNow: () => now });
  const store = new MemoryStateStore({ wallNow: () => now });
  const reader = new JournalReader({ store, events, wallNow: () => now, maxEndpoints: 5 });
  const ep = (i: number) => `https://a.example/e${String(i).padStart(2, '0')}/`;
  for (let i = 0; i < 4; i++) events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'hit', failures: 0 });
  events.emit({ type: 'endpoint.evicted', endpoint: ep(1), sources: ['catalog'] });
  assert.deepEqual((await reader.activity()).endpoints.map((e) => e.endpoint), [ep(0), ep(2), ep(3)], 'the evicted endpoint is not listed');
  assert.deepEqual(reader.activityStats, { endpoints: 3, dropped: 0, uncounted: 0 });
  for (let i = 4; i < 8; i++) events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'hit', failures: 0 });
  assert.deepEqual(reader.activityStats, { endpoints: 5, dropped: 0, uncounted: 2 }, 'bounded: the last two found no room (none counted was idle)');
  const first = await reader.activity({ limit: 2 });
  assert.deepEqual(first.endpoints.map((e) => e.endpoint), [ep(0), ep(2)]);
  assert.equal(first.endpointCount, 5);
  assert.equal(first.nextAfter, ep(2));
  const rest = await reader.activity({ limit: 2, after: first.nextAfter! });
  assert.deepEqual(rest.endpoints.map((e) => e.endpoint), [ep(3), ep(4)]);
  const last = await reader.activity({ limit: 2, after: rest.nextAfter! });
  assert.deepEqual(last.endpoints.map((e) => e.endpoint), [ep(5)]);
  assert.equal(last.nextAfter, null);
  assert.deepEqual(parseActivityQuery({ limit: '5000', after: ep(3) }), { limit: 1_000, after: ep(3) });
  assert.equal(typeof parseActivityQuery({ limit: '0' }), 'string');
  reader.close();
});

test('server.limits.activityEndpoints bounds the service’s activity counters (/api/activity lists at most that many)', async () => {
  const { startService } = await import('../../packages/service/src/index.js');
  const { createLogger } = await import('../../packages/service/src/telemetry/logger.js');
  const s = await startService({ port: 0, policy: { allow: [] }, vocabulary: [], needs: [], limits: { activityEndpoints: 2 }, logger: createLogger({ level: 'silent' }) });
  try {
    for (let i = 0; i < 5; i++) s.events.emit({ type: 'card.result', endpoint: `https://a.example/e${i}/`, outcome: 'hit', failures: 0 });
    const res = await fetch(`${s.url}/api/activity`);
    const body = (await res.json()) as { endpointCount: number; endpoints: Array<{ endpoint: string }> };
    assert.equal(body.endpointCount, 2);
    assert.deepEqual(body.endpoints.map((e) => e.endpoint), ['https://a.example/e0/', 'https://a.example/e1/'], 'the endpoints counted first keep their counts');
  } finally {
    await s.close();
  }
});

test('a fleet past activityEndpoints, counted in the same order each cycle: the endpoints counted keep their counts, cycle after cycle', async () => {
  const now = 1_700_000_000_000;
  const events = new EventStream({ wallNow: () => now });
  const store = new MemoryStateStore({ wallNow: () => now });
  const reader = new JournalReader({ store, events, wallNow: () => now, pending: () => [], maxEndpoints: 16 });
  const ep = (i: number) => `https://a.example/e${String(i).padStart(2, '0')}/`;
  // Seventeen endpoints, one hit each per cycle, three cycles. Dropping the endpoints counted first
  // (the design before) had each newcomer drop the one due next: no count lasted a cycle.
  for (let cycle = 0; cycle < 3; cycle++) for (let i = 0; i < 17; i++) events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'hit', failures: 0 });
  const a = await reader.activity();
  assert.equal(a.endpointCount, 16);
  for (const e of a.endpoints) assert.deepEqual(e.counts, { 'card.result.hit': 3 }, `${e.endpoint}: every cycle's hit`);
  assert.equal(a.endpoints.find((e) => e.endpoint === ep(16)), undefined, 'the seventeenth is not counted');
  assert.deepEqual(reader.activityStats, { endpoints: 16, dropped: 0, uncounted: 3 });
  reader.close();
});

test('past activityEndpoints an endpoint idle for the whole window makes room, and a newcomer given its arrays counts from zero', async () => {
  let now = 1_700_000_000_000;
  const events = new EventStream({ wallNow: () => now });
  const store = new MemoryStateStore({ wallNow: () => now });
  const reader = new JournalReader({ store, events, wallNow: () => now, pending: () => [], maxEndpoints: 16 });
  const ep = (i: number) => `https://a.example/e${String(i).padStart(2, '0')}/`;
  // Sixteen endpoints with chatter of every kind the series and the window count.
  for (let i = 0; i < 16; i++) {
    events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'hit', failures: 0, count: 40 });
    events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'revalidated', failures: 0 });
    events.emit({ type: 'card.fetch', endpoint: ep(i), url: `${ep(i)}.well-known/agent-card.json`, conditional: true });
  }
  // Five minutes on, all but e14 and e15 chatter again; those two have been idle the whole window.
  now += 5 * 60_000;
  for (let i = 0; i < 14; i++) events.emit({ type: 'card.result', endpoint: ep(i), outcome: 'hit', failures: 0 });
  events.emit({ type: 'card.result', endpoint: ep(16), outcome: 'hit', failures: 0 });
  let activity = await reader.activity({ bucketMs: 60_000, from: now - 60_000 });
  assert.equal(activity.endpointCount, 15);
  assert.deepEqual(
    activity.endpoints.filter((e) => e.endpoint === ep(14) || e.endpoint === ep(15)),
    [],
    'e14 and e15 (idle) were dropped',
  );
  assert.equal(reader.activityStats.dropped, 2);
  // The newcomers reuse the dropped endpoints' arrays: nothing of theirs shows.
  events.emit({ type: 'card.result', endpoint: ep(17), outcome: 'stale', failures: 1 });
  activity = await reader.activity({ bucketMs: 60_000, from: now - 60_000 });
  for (const i of [16, 17]) {
    const a = activity.endpoints.find((e) => e.endpoint === ep(i))!;
    const own = i === 16 ? { 'card.result.hit': 1 } : { 'card.result.stale': 1 };
    assert.deepEqual(a.counts, own, `${ep(i)}: its own totals only`);
    assert.deepEqual(a.recent, own, `${ep(i)}: its own window only`);
    const series = a.series!;
    assert.deepEqual([series.hits.at(-1), series.revalidated.at(-1), series.fetches.at(-1), series.failures.at(-1)], i === 16 ? [1, 0, 0, 0] : [0, 0, 0, 1], `${ep(i)}: its own series only`);
  }
  assert.equal(activity.endpointCount, 16);
  // Full again, none idle: the next newcomer is not counted, and the bound holds.
  events.emit({ type: 'card.result', endpoint: ep(18), outcome: 'hit', failures: 0 });
  now += 60_000;
  events.emit({ type: 'card.result', endpoint: ep(18), outcome: 'hit', failures: 0 });
  assert.equal((await reader.activity()).endpointCount, 16);
  assert.deepEqual(reader.activityStats, { endpoints: 16, dropped: 2, uncounted: 2 });
  reader.close();
});
