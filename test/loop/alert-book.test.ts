/**
 * The alert book's edge triggering, as an operator reads it in the journal: one `alert` when a
 * condition starts, nothing while it holds, one `alert.resolved` after it has been absent for
 * `clearAfter` evaluations in a row, and alerts carried over from an earlier process neither
 * raised again nor lost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { AlertBook } from '../../packages/core/src/loop/alert-book.js';

function book(clearAfter: number): { alerts: AlertBook; seen: () => string[] } {
  const events = new EventStream();
  const log: DiscoveryEvent[] = [];
  events.subscribe((e) => log.push(e));
  return { alerts: new AlertBook(events, { clearAfter }), seen: () => log.splice(0).map((e) => `${e.type} ${'key' in e ? String(e.key) : ''}`) };
}

const A = { kind: 'unknown-tags', message: 'a: tags outside the vocabulary', endpoint: 'https://a.example.com/' };
const B = { kind: 'cap-reached', message: 'the cap left out b' };

test('a condition alerts once while it holds, and resolves once after clearAfter evaluations without it', () => {
  const { alerts, seen } = book(2);
  for (let i = 0; i < 5; i++) {
    alerts.raise('a', A);
    alerts.settle();
  }
  assert.deepEqual(seen(), ['alert a']);
  alerts.settle();
  assert.deepEqual(seen(), [], 'one evaluation without it is not enough');
  alerts.raise('a', A);
  alerts.settle();
  alerts.settle();
  assert.deepEqual(seen(), [], 'raised again in between: the count of absences starts over');
  alerts.settle();
  assert.deepEqual(seen(), ['alert.resolved a']);
  assert.deepEqual(alerts.active, []);
  alerts.raise('a', A);
  assert.deepEqual(seen(), ['alert a'], 'its next occurrence alerts again');
});

test('conditions are judged each on their own', () => {
  const { alerts, seen } = book(1);
  alerts.raise('a', A);
  alerts.raise('b', B);
  alerts.settle();
  alerts.raise('b', B);
  alerts.settle();
  assert.deepEqual(seen(), ['alert a', 'alert b', 'alert.resolved a']);
  assert.deepEqual(alerts.active, ['b']);
});

test('carried alerts are not raised again while they hold, resolve when they stop, and one raised before the carry in the same evaluation stays raised', () => {
  const { alerts, seen } = book(1);
  alerts.raise('b', B);
  seen();
  // An earlier process left `a` and `b` open; this evaluation had raised `b` already.
  alerts.carry([
    { key: 'a', ...A, raisedAt: 1_000 },
    { key: 'b', ...B, raisedAt: 2_000 },
  ]);
  alerts.settle();
  assert.deepEqual(seen(), ['alert.resolved a'], '`a` was not raised in this evaluation; `b` was');
  alerts.raise('b', B);
  alerts.settle();
  assert.deepEqual(seen(), [], '`b` holds: carried, not raised again');
});
