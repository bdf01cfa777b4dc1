/**
 * The store's write-behind gives way to conversation turns (issue 43): while a turn is in flight
 * nothing is written (its statements, and on SQLite the file's write lock the turn's own history
 * needs, stay out of the turn), the writes go a turn of the event loop after the last turn ends,
 * and never later than `maxDeferMs`, however busy the service. `Foreground.whenIdle` is the rule
 * under it: once per call, never inside the `leave()` that ends a turn, never held past its bound.
 * A SQL store's batches of card-entry writes (a wave's freshness rows, new cards) wait the same way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { Foreground } from '../../packages/core/src/cache/foreground.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { MemoryStateStore, StoreWriter } from '../../packages/store/src/index.js';
import { storeEngines } from '../helpers/stores.js';
import { entryFor, rawCard } from '../match/fixtures.js';

/** A memory store that records the journal events written to it. */
function recordingStore(): { store: MemoryStateStore; written: DiscoveryEvent[] } {
  const store = new MemoryStateStore();
  const written: DiscoveryEvent[] = [];
  const append = store.appendEvents.bind(store);
  store.appendEvents = (batch) => {
    written.push(...batch);
    return append(batch);
  };
  return { store, written };
}

async function turnsOfTheLoop(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await tick();
}

test('whenIdle: at once when idle; after the last turn ends (not inside leave); bounded by its wait; once each', async () => {
  const clock = new VirtualClock();
  const turns = new Foreground({ clock });
  const ran: string[] = [];
  turns.whenIdle(() => ran.push('idle'), 1_000);
  assert.deepEqual(ran, ['idle'], 'nothing in flight: the work runs at once');

  const leaveA = turns.enter();
  const leaveB = turns.enter();
  turns.whenIdle(() => ran.push('after turns'), 1_000);
  assert.equal(turns.waiting, 1);
  leaveA();
  await turnsOfTheLoop(3);
  assert.deepEqual(ran, ['idle'], 'one turn still in flight');
  leaveB();
  assert.deepEqual(ran, ['idle'], 'not inside the leave() that ended the last turn');
  await turnsOfTheLoop(2);
  assert.deepEqual(ran, ['idle', 'after turns']);
  assert.equal(turns.waiting, 0);

  // A turn that starts before the wake-up keeps the work waiting.
  const leaveC = turns.enter();
  turns.whenIdle(() => ran.push('after C'), 1_000);
  leaveC();
  const leaveD = turns.enter();
  await turnsOfTheLoop(3);
  assert.deepEqual(ran.slice(2), [], 'a new turn began before the wake-up');

  // Back-to-back turns never starve it: after maxWaitMs it runs anyway, once.
  await clock.advance(999);
  assert.deepEqual(ran.slice(2), []);
  await clock.advance(1);
  assert.deepEqual(ran.slice(2), ['after C']);
  assert.equal(turns.waiting, 0, 'nothing kept for a work that ran by its bound');
  leaveD();
  await turnsOfTheLoop(3);
  assert.deepEqual(ran.slice(2), ['after C'], 'each work runs once');
  assert.equal(clock.pendingTimers, 0, "no timer left behind");
});

test('the store writer writes nothing while a turn is in flight, then at once after it, and by maxDeferMs at the latest', async () => {
  const clock = new VirtualClock();
  const turns = new Foreground({ clock });
  const events = new EventStream();
  const { store, written } = recordingStore();
  const writer = new StoreWriter({ store, events, snapshot: () => undefined, pin: () => undefined, turns, maxDeferMs: 500 });
  const alert = { type: 'alert', kind: 'skills-changed', message: 'm', endpoint: 'https://a.example' } as const;

  // No turn: written at the next turn of the event loop, as before.
  events.emit(alert);
  await turnsOfTheLoop(4);
  assert.equal(written.length, 1);

  // A turn in flight: nothing written meanwhile; its end lets the write go.
  const leave = turns.enter();
  events.emit(alert);
  await turnsOfTheLoop(6);
  assert.equal(written.length, 1, 'nothing written during the turn');
  assert.equal(writer.pending().length, 1, 'the event waits in the writer (the journal reader shows it)');
  leave();
  await turnsOfTheLoop(6);
  assert.equal(written.length, 2, 'written once the turn ended');

  // Turns back to back: the write waits maxDeferMs at most.
  const busy = turns.enter();
  events.emit(alert);
  await turnsOfTheLoop(4);
  await clock.advance(499);
  await turnsOfTheLoop(2);
  assert.equal(written.length, 2);
  await clock.advance(1);
  await turnsOfTheLoop(4);
  assert.equal(written.length, 3, 'written after maxDeferMs although a turn is still in flight');

  // close() writes what is pending at once, turn or not.
  events.emit(alert);
  await writer.close();
  assert.equal(written.length, 4);
  busy();
});

for (const engine of storeEngines().filter((e) => e.name !== 'memory')) {
  test(`a ${engine.name} store's batch of card entries waits while a turn is in flight, and 1 s at most`, { skip: engine.skip }, async (t) => {
    await engine.setup();
    t.after(() => engine.teardown());
    const clock = new VirtualClock();
    const turns = new Foreground({ clock });
    const store = await engine.open({ turns });
    const writes = (): number => store.status().writes;
    const a = entryFor('https://a.example.com/', rawCard('https://a.example.com'));
    const b = entryFor('https://b.example.com/', rawCard('https://b.example.com'));

    // No turn: a write someone waits for goes at once.
    const before = writes();
    await store.cards.set(a.baseUrl, a);
    assert.equal(writes(), before + 1);

    // A turn in flight: the batch waits (the entry is served from memory meanwhile)...
    const leave = turns.enter();
    let done = false;
    const second = Promise.resolve(store.cards.set(b.baseUrl, b)).then(() => (done = true));
    await turnsOfTheLoop(10);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(done, false, 'not written while the turn runs');
    assert.equal(writes(), before + 1);
    assert.equal(store.cards.get(b.baseUrl), b, 'read from memory meanwhile');
    // ...and goes once the turn ends.
    leave();
    await second;
    assert.equal(writes(), before + 2);

    // Turns back to back: written at the bound all the same.
    const busy = turns.enter();
    let third = false;
    const last = Promise.resolve(store.cards.set(a.baseUrl, { ...a, failures: 1 })).then(() => (third = true));
    await turnsOfTheLoop(10);
    assert.equal(third, false);
    await clock.advance(1_000);
    await last;
    assert.equal(writes(), before + 3, 'written after 1 s although a turn is still in flight');
    busy();
  });
}

test('past its bound the writer keeps the newest journal events in order and counts the others dropped', async () => {
  const events = new EventStream();
  const { store, written } = recordingStore();
  const writer = new StoreWriter({ store, events, snapshot: () => undefined, pin: () => undefined, maxPendingEvents: 100 });
  const messages = (list: readonly DiscoveryEvent[]) => list.map((e) => (e as { message: string }).message);
  const newest = (last: number) => Array.from({ length: 100 }, (_, i) => `m${last - 99 + i}`);
  // 1,000 alerts raised in one turn (a selection's alerts over a large fleet); the bound is 100.
  for (let i = 0; i < 1_000; i++) {
    events.emit({ type: 'alert', kind: 'skills-changed', message: `m${i}`, endpoint: `https://a.example/${i}/` });
    if (i >= 99 && i % 37 === 0) assert.deepEqual(messages(writer.pending()), newest(i), `after ${i + 1} events`);
  }
  assert.deepEqual(messages(writer.pending()), newest(999), 'the newest 100, oldest first');
  assert.equal(writer.dropped, 900);
  await writer.flush();
  assert.deepEqual(messages(written), newest(999));
  assert.equal((await store.counters())['journal.dropped'], 900);
  assert.deepEqual(writer.pending(), []);
  await writer.close();
});
