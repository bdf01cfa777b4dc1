/**
 * The A2A endpoint's bounded task store (packages/service/src/http/a2a/task-store.ts): at most
 * `maxTasks`, the least recently saved dropped first; each caller sees its own tasks only.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { BoundedTaskStore } from '../../packages/service/src/http/a2a/task-store.js';

const as = (userName: string) => new ServerCallContext({ user: { isAuthenticated: true, userName } });
const task = (id: string, contextId = 'c'): Task => ({ id, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: '2026-01-01T00:00:00.000Z', message: undefined }, artifacts: [], history: [], metadata: undefined });
const listAll = { tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined };

describe('BoundedTaskStore', () => {
  test('keeps at most maxTasks; a save makes a task the newest', async () => {
    const store = new BoundedTaskStore(2);
    const a = as('a');
    await store.save(task('1'), a);
    await store.save(task('2'), a);
    await store.save(task('1'), a);
    await store.save(task('3'), a);
    assert.equal(store.size, 2);
    assert.equal(await store.load('2', a), undefined, 'the least recently saved went first');
    assert.ok(await store.load('1', a));
    assert.ok(await store.load('3', a));
  });

  test('a caller never loads or lists another caller’s task', async () => {
    const store = new BoundedTaskStore(10);
    await store.save(task('t1'), as('a'));
    assert.equal(await store.load('t1', as('b')), undefined);
    assert.deepEqual((await store.list(listAll, as('b'))).tasks, []);
    assert.deepEqual((await store.list(listAll, as('a'))).tasks.map((t) => t.id), ['t1']);
  });

  test('lists newest first, by context, in pages', async () => {
    const store = new BoundedTaskStore(10);
    const a = as('a');
    for (const id of ['1', '2', '3']) await store.save(task(id, id === '2' ? 'other' : 'c'), a);
    assert.deepEqual((await store.list({ ...listAll, contextId: 'c' }, a)).tasks.map((t) => t.id), ['3', '1']);
    const page = await store.list({ ...listAll, pageSize: 2 }, a);
    assert.deepEqual([page.tasks.map((t) => t.id), page.nextPageToken, page.totalSize], [['3', '2'], '2', 3]);
    assert.deepEqual((await store.list({ ...listAll, pageSize: 2, pageToken: page.nextPageToken }, a)).tasks.map((t) => t.id), ['1']);
  });
});
