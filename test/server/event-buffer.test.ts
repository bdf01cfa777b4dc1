/**
 * The recent-event buffer behind `/api/events` and the SSE feed: a ring of the last `limit`
 * events in sequence order, what a reconnecting client asks for (`since`), and the journal's
 * older events put before the live ones after a restart (`seed`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventBuffer } from '../../packages/service/src/http/event-buffer.js';

const emitN = (stream: EventStream, n: number) => {
  for (let i = 0; i < n; i++) stream.emit({ type: 'tree.built', digest: `d${i}` });
};
const seqs = (events: readonly DiscoveryEvent[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('keeps the last `limit` events in order as it wraps, and answers what came after a sequence number', () => {
  const stream = new EventStream({ wallNow: () => 0 });
  const buffer = new EventBuffer(stream, 5);
  assert.deepEqual(buffer.since(0), []);
  assert.equal(buffer.newestSeq, 0);
  assert.equal(buffer.oldestSeq, 0);
  emitN(stream, 3);
  assert.deepEqual(seqs(buffer.since(0)), [1, 2, 3]);
  emitN(stream, 9); // 12 in all: the ring has wrapped twice
  assert.deepEqual(seqs(buffer.since(0)), range(8, 12));
  assert.equal(buffer.oldestSeq, 8);
  assert.equal(buffer.newestSeq, 12);
  assert.deepEqual(seqs(buffer.since(9)), [10, 11, 12]);
  assert.deepEqual(seqs(buffer.since(12)), []);
  assert.deepEqual(seqs(buffer.since(3)), range(8, 12), 'older than the ring: what it still has');
  assert.deepEqual(seqs(buffer.since(0, 2)), [11, 12], 'at most `max`, the newest');
  assert.deepEqual(seqs(buffer.since(0, 0)), []);
  buffer.close();
});

test('live events reach listeners; seeded events go before the live ones, within the limit', () => {
  const stream = new EventStream({ wallNow: () => 0, startSeq: 100 });
  const buffer = new EventBuffer(stream, 4);
  const heard: number[] = [];
  const off = buffer.listen((e) => heard.push(e.seq));
  emitN(stream, 2); // 101, 102
  const older: DiscoveryEvent[] = [97, 98, 99, 100, 101].map((seq) => ({ type: 'tree.built', digest: `old${seq}`, seq, at: 0 }) as DiscoveryEvent);
  buffer.seed(older);
  assert.deepEqual(seqs(buffer.since(0)), [99, 100, 101, 102], 'the newest four: the journal’s before the live, none twice');
  assert.equal((buffer.since(100)[0] as { digest: string }).digest, 'd0', 'the live event, not the journal’s copy of it');
  emitN(stream, 1); // 103
  assert.deepEqual(seqs(buffer.since(0)), [100, 101, 102, 103]);
  assert.deepEqual(heard, [101, 102, 103]);
  off();
  emitN(stream, 1);
  assert.deepEqual(heard, [101, 102, 103]);
  buffer.close();
  emitN(stream, 1);
  assert.equal(buffer.newestSeq, 104, 'closed: no longer buffering');
});
