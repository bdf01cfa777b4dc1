/**
 * The store's writes take turns on one database (`WriteQueue`): in the order they were queued,
 * one at a time, and a conversation's history (urgent: a user waits on it) goes next after the
 * write in progress instead of behind every batch queued before it. Measured in `bench:service` at
 * 10,000 endpoints: a turn's history waited up to 2.5 s behind the first cycle's batches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteQueue } from '../../packages/store/src/write-queue.js';

/** Work that records when it starts and ends, and finishes when `release` is called. */
function gated(log: string[], name: string, running: { n: number; max: number }) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    work: async () => {
      running.n++;
      running.max = Math.max(running.max, running.n);
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      running.n--;
      return name;
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('writes run one at a time in their order; urgent work runs next after the write in progress, ahead of the queued ones', async () => {
  const queue = new WriteQueue();
  const log: string[] = [];
  const running = { n: 0, max: 0 };
  const [a, b, c, u1, u2] = ['a', 'b', 'c', 'u1', 'u2'].map((n) => gated(log, n, running));
  const results = [queue.run(a!.work), queue.run(b!.work), queue.run(c!.work)];
  await turn();
  assert.deepEqual(log, ['start a']);
  results.push(queue.run(u1!.work, { urgent: true }), queue.run(u2!.work, { urgent: true }));
  assert.equal(queue.size, 5);
  for (const g of [a, u1, u2, b, c]) {
    g!.release();
    await turn();
  }
  assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'u1', 'u2']);
  assert.deepEqual(log, ['start a', 'end a', 'start u1', 'end u1', 'start u2', 'end u2', 'start b', 'end b', 'start c', 'end c']);
  assert.equal(running.max, 1, 'never two at once');
  assert.equal(queue.size, 0);
});

test('a failed write is its caller\'s failure and the queue goes on; idle() waits for work queued meanwhile', async () => {
  const queue = new WriteQueue();
  const order: string[] = [];
  const failed = queue.run(async () => {
    order.push('failing');
    throw new Error('disk full');
  });
  const next = queue.run(async () => {
    order.push('next');
    return 1;
  });
  const idle = queue.idle();
  // Queued after idle() was asked for: idle() waits for it too.
  const late = queue.run(async () => {
    order.push('late');
  }, { urgent: true });
  // A work that throws before it returns a promise fails its caller alone too.
  const thrown = queue.run((): Promise<void> => {
    throw new Error('no connection');
  });
  await assert.rejects(failed, /disk full/);
  await assert.rejects(thrown, /no connection/);
  assert.equal(await next, 1);
  await idle;
  await late;
  assert.deepEqual(order, ['failing', 'late', 'next']);
  assert.equal(queue.size, 0);
  await queue.idle();
});

test('a write that waits for its rows (a snapshot being split) keeps its place: the writes after it wait, urgent work does not', async () => {
  const queue = new WriteQueue();
  const order: string[] = [];
  let split!: (rows: string) => void;
  const splitting = new Promise<string>((resolve) => (split = resolve));
  const write = (name: string) => async () => {
    order.push(name);
    return name;
  };
  const publication = queue.run(async () => {
    order.push(`publish ${await splitting}`);
  }, { ready: splitting });
  const pin = queue.run(write('pin'));
  await turn();
  assert.deepEqual(order, [], 'the publication waits for its rows, the pin behind it');
  assert.equal(await queue.run(write('history'), { urgent: true }), 'history', 'a turn\'s history is written meanwhile');
  assert.deepEqual(order, ['history']);
  split('rows');
  await publication;
  await pin;
  assert.deepEqual(order, ['history', 'publish rows', 'pin']);
  // A split that fails: the write sees it when it awaits the rows; the queue goes on.
  const failing = Promise.reject(new Error('a card that cannot be written'));
  const broken = queue.run(async () => {
    await failing;
  }, { ready: failing });
  const after = queue.run(write('after'));
  await assert.rejects(broken, /cannot be written/);
  assert.equal(await after, 'after');
  await queue.idle();
});
