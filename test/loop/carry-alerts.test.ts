/**
 * `DiscoveryLoop.carryAlerts`: the open alerts of an earlier process, handed over at a restart or
 * a takeover, are held without being raised again. A carried `repeated-failures` endpoint that
 * still fails stays out and its alert open (it is not resolved because this process never saw
 * the endpoint as a member); once it recovers the alert resolves once, with the original
 * `raisedAt`. A source error goes to its source (`SourceCore.carryError`); one of a source no
 * longer configured is resolved by the loop.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { DiscoveryError } from '../../packages/core/src/errors.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { SourceCore } from '../../packages/core/src/sources/source-core.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';

let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;

before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 300 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

const RAISED_AT = Date.UTC(2026, 11, 1, 9);

describe('carried alerts', () => {
  test('a repeated-failures endpoint still failing after a restart stays one open alert; its recovery resolves it once with the original raisedAt', async () => {
    const ep = fs.endpoint('carried', { card: cardFor(fs, 'carried', { skills: [{ id: 's', name: 's', description: 'x', tags: ['support'] }] }), cacheControl: 'max-age=10' });
    ep.set({ mode: 'status', status: 500 });
    const clock = new VirtualClock();
    const events: DiscoveryEvent[] = [];
    const stream = new EventStream({ wallNow: () => clock.wallNow() });
    stream.subscribe((e) => events.push(e));
    const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, minTtlMs: 0, backoffBaseMs: 1_000, backoffMaxMs: 1_000, check: { allowLoopback: true } });
    const loop = new DiscoveryLoop({
      sources: [staticSource({ id: 'config', agents: [{ name: 'carried', url: ep.baseUrl, description: 'Reviewed.', tags: ['support'] }] })],
      hostPolicy: policy,
      cache,
      select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
      clock,
      events: stream,
      health: { enterAfter: 2, leaveAfter: 2 },
      cycleIntervalMs: 86_400_000,
      resyncIntervalMs: 86_400_000,
    });
    const removed = `removed:${ep.baseUrl}`;
    const lasting = () => events.filter((e) => e.type === 'alert' || e.type === 'alert.resolved');
    try {
      loop.carryAlerts([
        { key: removed, kind: 'repeated-failures', endpoint: ep.baseUrl, message: `${ep.baseUrl} left new snapshots: 3 failed fetches`, raisedAt: RAISED_AT },
        { key: 'source-error:gone', kind: 'source-error', message: 'source gone: 503', raisedAt: RAISED_AT + 1 },
      ]);
      await loop.start();
      for (let i = 0; i < 4; i++) {
        await clock.advance(11_000);
        await loop.refreshNow();
      }
      assert.ok(loop.activeAlerts.includes(removed), 'still open while the endpoint fails');
      assert.deepEqual(loop.current()?.agents.map((a) => a.localName), [], 'and it stays out');
      const gone = lasting().filter((e) => e.type === 'alert.resolved' && e.key === 'source-error:gone');
      assert.equal(gone.length, 1, 'the error of a source no longer configured is resolved');
      assert.deepEqual(
        lasting().map((e) => `${e.type} ${e.type === 'alert' || e.type === 'alert.resolved' ? e.key : ''}`),
        ['alert.resolved source-error:gone'],
        'nothing raised again, nothing else resolved',
      );

      ep.set({ mode: 'ok' });
      for (let i = 0; i < 5; i++) {
        await clock.advance(11_000);
        await loop.refreshNow();
      }
      assert.deepEqual(loop.current()?.agents.map((a) => a.localName), ['carried'], 'recovered');
      const resolved = lasting().filter((e) => e.type === 'alert.resolved' && e.key === removed);
      assert.equal(resolved.length, 1, 'resolved once');
      assert.equal(resolved[0]?.type === 'alert.resolved' && resolved[0].raisedAt, RAISED_AT);
      assert.equal(lasting().filter((e) => e.type === 'alert').length, 0, 'never raised again');
    } finally {
      await loop.stop();
      await cache.close();
    }
  });

  test("a source's carried error: a failure raises nothing, the next good list resolves it with the original raisedAt", () => {
    const events: DiscoveryEvent[] = [];
    const stream = new EventStream();
    stream.subscribe((e) => events.push(e));
    const core = new SourceCore('partners', 'registry', { events: stream });
    core.carryError({ raisedAt: RAISED_AT });
    core.fail(new DiscoveryError('ERR_FETCH_STATUS', 'registry answered 500'));
    core.fail(new DiscoveryError('ERR_FETCH_STATUS', 'registry answered 500'));
    assert.deepEqual(events.map((e) => e.type), [], 'not raised again');
    core.succeed([]);
    assert.deepEqual(
      events.map((e) => [e.type, e.type === 'alert.resolved' ? [e.key, e.raisedAt] : undefined]),
      [['alert.resolved', ['source-error:partners', RAISED_AT]]],
    );
    // The next occurrence is a new alert.
    core.fail(new DiscoveryError('ERR_FETCH_STATUS', 'registry answered 500'));
    assert.equal(events.at(-1)?.type, 'alert');

    // A carried error whose source lists at once is resolved by that list.
    const other = new SourceCore('other', 'registry', { events: stream });
    other.carryError({ raisedAt: RAISED_AT + 5 });
    other.succeed([]);
    const last = events.at(-1);
    assert.ok(last?.type === 'alert.resolved' && last.key === 'source-error:other' && last.raisedAt === RAISED_AT + 5);
  });
});
