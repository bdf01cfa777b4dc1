/**
 * Idle expiry with `usedElsewhere` (several replicas): a pin idle here is expired only when no
 * other replica used the session since. Used elsewhere on the same digest: the pin is renewed from
 * that use; moved elsewhere to another digest: the pin is dropped here, with no `session.expired`,
 * no history deletion and no store write; the question failing: every candidate is kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BaseAgent } from '@google/adk';
import { LlmAgent } from '@google/adk';
import { buildRootAgent, TreeFactory } from '../../packages/core/src/adk/index.js';
import type { PinRelease, TreeFactoryOptions } from '../../packages/core/src/adk/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { snapshotAgent as agent } from '../helpers/cards.js';


const buildRoot = (snapshot: Snapshot): BaseAgent =>
  buildRootAgent(
    'orchestrator',
    snapshot,
    snapshot.agents.map((a) => new LlmAgent({ name: a.localName, description: a.description, model: new ScriptedLlm('ok', `fake-${a.localName}`) })),
    { kind: 'routed', hints: [] },
  );

test('idle pins are checked with the other replicas before they expire', async () => {
  const clock = new VirtualClock({ wallStart: 1_767_225_600_000 });
  const events = new EventStream({ wallNow: () => clock.wallNow() });
  const seen: DiscoveryEvent[] = [];
  events.subscribe((e) => seen.push(e));
  const snapshots = new SnapshotStore();
  const v1 = buildSnapshot([agent('billing')], 1, clock.wallNow());
  snapshots.publish(v1);
  let answer: Map<string, { digest: string; lastUsedAtWall: number }> | Error = new Error('store unreachable');
  const asked: string[][] = [];
  const usedElsewhere: TreeFactoryOptions['usedElsewhere'] = (candidates) => {
    asked.push(candidates.map((c) => c.sessionId));
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
  const trees = new TreeFactory({ snapshots, buildRoot, clock, events, idleTimeoutMs: 60_000, usedElsewhere });
  const released: Array<[string, PinRelease]> = [];
  trees.onRelease((id, why) => released.push([id, why]));
  const changed: string[] = [];
  trees.onPinChange((id) => changed.push(id));
  for (const id of ['kept', 'moved', 'idle']) trees.rootFor(id);
  changed.length = 0;

  // The idle timer (every 15 s) finds the three idle at 75 s and asks; the question fails.
  await clock.advance(76_000);
  assert.deepEqual(asked.at(-1), ['kept', 'moved', 'idle']);
  // So every candidate is kept, and asked about again.
  assert.deepEqual(await trees.expireIdleEverywhere(), []);
  assert.deepEqual(trees.sessions().map((s) => s.sessionId).sort(), ['idle', 'kept', 'moved']);

  const v2 = buildSnapshot([agent('billing'), agent('returns')], 2, clock.wallNow());
  answer = new Map([
    ['kept', { digest: v1.digest, lastUsedAtWall: clock.wallNow() - 10_000 }],
    ['moved', { digest: v2.digest, lastUsedAtWall: clock.wallNow() - 5_000 }],
  ]);
  assert.deepEqual(await trees.expireIdleEverywhere(), ['idle']);
  assert.equal(trees.digestOf('kept'), v1.digest, 'renewed: used on another replica 10 s ago');
  assert.equal(trees.sessions().find((s) => s.sessionId === 'kept')?.idleMs, 10_000, 'its idle time runs from that use');
  assert.equal(trees.digestOf('moved'), undefined, 'dropped here: the other replica moved it');
  assert.deepEqual(released, [['moved', 'elsewhere'], ['idle', 'expired']]);
  assert.deepEqual(changed, ['idle'], 'only the expired pin is written to (deleted from) the store');
  assert.deepEqual(seen.filter((e) => e.type === 'session.expired').map((e) => (e as { sessionId: string }).sessionId), ['idle']);
  assert.deepEqual(trees.stats, { ...trees.stats, expired: 1, keptElsewhere: 2 });

  // Later, idle everywhere: the renewed pin expires at a check of the timer.
  answer = new Map();
  await clock.advance(61_000);
  assert.equal(trees.digestOf('kept'), undefined);
  assert.deepEqual(released.at(-1), ['kept', 'expired']);
  trees.close();
});
